/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <libdeflate.h>
#include <stdlib.h>

#include "gzip.h"
#include "macro.h"

/* Accept-Encoding values as scrapers and proxies send them, and the answer for each. */
static void test_accepted(void **state) {
    static const struct {
        const char *header;
        bool gzip;
    } cases[] = {
        {"gzip", true},
        {"GZip", true},
        {"x-gzip", true},
        {"deflate, gzip;q=0.8", true},
        {"gzip;q=1", true},
        {"gzip;q=0.001", true},
        {"gzip;level=1;q=0.5", true},
        {",, gzip ,", true},
        {"gzip;q=0, x-gzip", true}, /* refused as gzip, still allowed as x-gzip */
        {"gzip;q=0", false},
        {"gzip;q=0.", false},
        {"gzip;q=0.000", false},
        {"gzip ; Q=0 ", false},
        {"gzip;level=1;q=0", false},
        {"br, gzip;q=0", false},
        {"", false},
        {"identity", false},
        {"*", false},
        {"gzipx", false},
        {"xgzip", false},
        {"deflate", false},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
        if (gzip_accepted(cases[i].header) != cases[i].gzip)
            fail_msg("\"%s\": expected %s", cases[i].header, cases[i].gzip ? "gzip" : "no gzip");
    assert_false(gzip_accepted(NULL));
}

/* The stream inflates back to the input, the empty input included. */
static void test_round_trip(void **state) {
    static const size_t sizes[] = {0, 1, 4096, 1 << 20};
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    uint64_t seed = 7;

    assert_non_null(d);
    for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
        size_t n = sizes[k], out_len = 0, back_len = 0;
        _cleanup_(freep) char *in = malloc(n + 1), *back = malloc(n + 1), *out = NULL;

        assert_true(in && back);
        /* Random digits in 64-byte lines. */
        for (size_t i = 0; i < n; i++)
            in[i] = i % 64 == 63 ? '\n' : (char)('0' + test_rand_below(&seed, 10));
        ASSERT_OK(gzip_compress(in, n, &out, &out_len));
        assert_non_null(out);
        assert_true(out_len >= 18); /* gzip header and trailer */
        assert_int_equal((unsigned char)out[0], 0x1f);
        assert_int_equal((unsigned char)out[1], 0x8b);
        assert_int_equal(libdeflate_gzip_decompress(d, out, out_len, back, n + 1, &back_len),
                         LIBDEFLATE_SUCCESS);
        assert_int_equal(back_len, n);
        assert_memory_equal(back, in, n);
    }
    libdeflate_free_decompressor(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
