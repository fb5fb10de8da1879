/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

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

/* Inflates one gzip member with zlib (a decoder independent of the compressor) and checks
 * that it is the whole body: curl decodes the first member only. */
static void assert_inflates_to(const char *gz, size_t gz_len, const char *want, size_t n) {
    _cleanup_(freep) char *back = malloc(n + 1);
    z_stream z = {0};

    assert_non_null(back);
    assert_true(gz_len >= 18); /* gzip header and trailer */
    assert_int_equal((unsigned char)gz[0], 0x1f);
    assert_int_equal((unsigned char)gz[1], 0x8b);
    assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
    z.next_in = (Bytef *)(uintptr_t)gz;
    z.avail_in = (uInt)gz_len;
    z.next_out = (Bytef *)back;
    z.avail_out = (uInt)(n + 1);
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.avail_in, 0);
    assert_int_equal(z.total_out, n);
    assert_memory_equal(back, want, n);
    (void)inflateEnd(&z);
}

/* Text like an exposition's: label sets repeated with changing values. */
static char *exposition_like(size_t n, uint64_t *seed) {
    char *in = malloc(n + 1);

    assert_non_null(in);
    for (size_t i = 0; i < n; i++)
        in[i] = i % 64 == 63 ? '\n' : (char)('0' + test_rand_below(seed, 10));
    return in;
}

/* Compresses in[0..n) fed in pieces of `piece` bytes (0: all to finish). */
static void compress_in_pieces(const char *in, size_t n, size_t piece, size_t hint, char **ret_out,
                               size_t *ret_len) {
    _cleanup_(gzip_stream_freep) struct gzip_stream *g = NULL;
    size_t off = 0;

    ASSERT_OK(gzip_stream_new(hint, &g));
    while (piece > 0 && n - off > piece) {
        ASSERT_OK(gzip_stream_write(g, in + off, piece));
        off += piece;
    }
    ASSERT_OK(gzip_stream_finish(g, in + off, n - off, ret_out, ret_len));
    assert_non_null(*ret_out);
}

/* The stream inflates back to the input, the empty input included, however it was fed and
 * whatever size the caller guessed for the output. */
static void test_round_trip(void **state) {
    static const size_t sizes[] = {0, 1, 4096, 1 << 20}, pieces[] = {0, 1000, 65536};
    static const size_t hints[] = {0, 1 << 20};
    uint64_t seed = 7;

    for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
        _cleanup_(freep) char *in = exposition_like(sizes[k], &seed);

        for (size_t p = 0; p < ARRAY_SIZE(pieces); p++)
            for (size_t h = 0; h < ARRAY_SIZE(hints); h++) {
                _cleanup_(freep) char *out = NULL;
                size_t out_len = 0;

                compress_in_pieces(in, sizes[k], pieces[p], hints[h], &out, &out_len);
                assert_inflates_to(out, out_len, in, sizes[k]);
            }
    }
}

/* Random bytes do not compress: the output outgrows both the hint and the input. */
static void test_output_grows(void **state) {
    size_t n = 300000, out_len = 0;
    _cleanup_(freep) char *in = malloc(n), *out = NULL;
    uint64_t seed = 11;

    assert_non_null(in);
    for (size_t i = 0; i < n; i++)
        in[i] = (char)test_rand_below(&seed, 256);
    compress_in_pieces(in, n, 4096, 0, &out, &out_len);
    assert_true(out_len > n);
    assert_inflates_to(out, out_len, in, n);
}

/* A restarted stream compresses anew with the state it kept: into the buffer it is given
 * (here the last output's, too small or larger than needed) or one of its own. */
static void test_restart(void **state) {
    _cleanup_(gzip_stream_freep) struct gzip_stream *g = NULL;
    _cleanup_(freep) char *big = NULL, *small = NULL;
    size_t big_n = 1 << 20, len = 0, cap = 0;
    char *out = NULL;
    uint64_t seed = 5;

    big = exposition_like(big_n, &seed);
    small = exposition_like(5000, &seed);
    ASSERT_OK(gzip_stream_new(0, &g));
    ASSERT_OK(gzip_stream_finish_cap(g, small, 5000, &out, &len, &cap));
    assert_true(cap >= len);
    assert_inflates_to(out, len, small, 5000);
    for (int i = 0; i < 3; i++) { /* small's buffer grows for big, big's holds small */
        const char *in = i == 1 ? small : big;
        size_t n = i == 1 ? 5000 : big_n;

        ASSERT_OK(gzip_stream_restart(g, out, cap, 0));
        ASSERT_OK(gzip_stream_write(g, in, n / 2));
        ASSERT_OK(gzip_stream_finish_cap(g, in + n / 2, n - n / 2, &out, &len, &cap));
        assert_inflates_to(out, len, in, n);
    }
    ASSERT_OK(gzip_stream_restart(g, NULL, 0, 4096));
    free(out);
    ASSERT_OK(gzip_stream_finish(g, small, 5000, &out, &len));
    assert_inflates_to(out, len, small, 5000);
    free(out);
}

/* A finished stream takes nothing more. */
static void test_finished(void **state) {
    _cleanup_(gzip_stream_freep) struct gzip_stream *g = NULL;
    _cleanup_(freep) char *out = NULL;
    char *again = NULL;
    size_t len = 0;

    ASSERT_OK(gzip_stream_new(0, &g));
    ASSERT_OK(gzip_stream_finish(g, "a\n", 2, &out, &len));
    assert_int_equal(gzip_stream_write(g, "b", 1), -EINVAL);
    assert_int_equal(gzip_stream_finish(g, "b", 1, &again, &len), -EINVAL);
    assert_null(again);
    assert_inflates_to(out, len, "a\n", 2);
}

/* Allocations failing on demand: the test links with -Wl,--wrap=malloc,--wrap=reallocarray
 * (tests/http.cmake). 0: off; n: the n-th call from now fails. */
static unsigned alloc_countdown;
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *__real_reallocarray(void *p, size_t n, size_t size);
void *__wrap_reallocarray(void *p, size_t n, size_t size);

static bool alloc_fails(void) {
    return alloc_countdown > 0 && --alloc_countdown == 0;
}

void *__wrap_malloc(size_t size) {
    return alloc_fails() ? NULL : __real_malloc(size);
}

void *__wrap_reallocarray(void *p, size_t n, size_t size) {
    return alloc_fails() ? NULL : __real_reallocarray(p, n, size);
}

/* Out of memory for the state, for the first output, or for more output mid-stream:
 * -ENOMEM, *ret untouched, nothing leaked (the sanitizer and valgrind runs check). */
static void test_out_of_memory(void **state) {
    struct gzip_stream *untouched = (struct gzip_stream *)state, *g = untouched;
    size_t n = 300000;
    _cleanup_(freep) char *in = malloc(n);
    uint64_t seed = 5;

    assert_non_null(in);
    for (size_t i = 0; i < n; i++)
        in[i] = (char)test_rand_below(&seed, 256);
    for (unsigned fail = 1; fail <= 2; fail++) {
        alloc_countdown = fail;
        assert_int_equal(gzip_stream_new(0, &g), -ENOMEM);
        assert_ptr_equal(g, untouched);
    }
    alloc_countdown = 0;
    ASSERT_OK(gzip_stream_new(0, &g));
    alloc_countdown = 1; /* random bytes outgrow the 16 KiB first output at once */
    assert_int_equal(gzip_stream_write(g, in, n), -ENOMEM);
    alloc_countdown = 0;
    g = gzip_stream_free(g);
    assert_null(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),     cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_output_grows), cmocka_unit_test(test_finished),
        cmocka_unit_test(test_restart),      cmocka_unit_test(test_out_of_memory),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
