/* SPDX-License-Identifier: MIT */
/* The growable string buffer and its number formatting. */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "macro.h"
#include "strbuf.h"

static void test_growth(void **state) {
    struct strbuf sb;
    char expected[10001];

    strbuf_init(&sb);
    assert_null(sb.buf);
    assert_int_equal(sb.len, 0);
    /* 10 000 bytes in pieces of 1..9: several doublings from the first 256. */
    size_t len = 0;
    for (unsigned i = 0; len < 10000; i++) {
        char piece[9];
        size_t n = MIN((size_t)(i % 9 + 1), 10000 - len);

        for (size_t k = 0; k < n; k++)
            piece[k] = expected[len + k] = (char)('a' + (len + k) % 26);
        strbuf_append(&sb, piece, n);
        len += n;
        assert_int_equal(sb.len, len);
        assert_int_equal(sb.buf[len], '\0');
    }
    expected[len] = '\0';
    assert_string_equal(sb.buf, expected);
    assert_int_equal(sb.cap, 16384); /* 256 doubled six times */
    ASSERT_OK(strbuf_error(&sb));

    /* reset empties but keeps the memory */
    char *before = sb.buf;
    strbuf_reset(&sb);
    assert_int_equal(sb.len, 0);
    assert_string_equal(sb.buf, "");
    assert_ptr_equal(sb.buf, before);
    assert_int_equal(sb.cap, 16384);
    strbuf_puts(&sb, "x");
    strbuf_putc(&sb, 'y');
    strbuf_append(&sb, "zzz", 0);
    assert_string_equal(sb.buf, "xy");
    strbuf_done(&sb);
    assert_null(sb.buf);
    assert_int_equal(sb.cap, 0);
    strbuf_done(&sb);
}

static void test_printf(void **state) {
    struct strbuf sb;
    char big[1001];

    strbuf_init(&sb);
    strbuf_printf(&sb, "%s=%d", "gpu", 3);
    assert_string_equal(sb.buf, "gpu=3");
    /* Longer than what is left in the buffer: the second vsnprintf must complete it. */
    memset(big, 'q', 1000);
    big[1000] = '\0';
    strbuf_printf(&sb, "[%s]", big);
    assert_int_equal(sb.len, 5 + 1002);
    assert_int_equal(sb.buf[5], '[');
    assert_int_equal(sb.buf[5 + 1001], ']');
    assert_int_equal(sb.buf[sb.len], '\0');
    assert_int_equal(strlen(sb.buf), sb.len);
    strbuf_printf(&sb, "%s", "");
    assert_int_equal(sb.len, 1007);
    strbuf_done(&sb);
}

static void test_put_u64(void **state) {
    static const struct {
        unsigned long long v;
        const char *text;
    } rows[] = {
        {0, "0"}, {7, "7"}, {10, "10"}, {1000000, "1000000"}, {ULLONG_MAX, "18446744073709551615"},
    };
    struct strbuf sb;

    strbuf_init(&sb);
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        strbuf_reset(&sb);
        strbuf_put_u64(&sb, rows[i].v);
        assert_string_equal(sb.buf, rows[i].text);
    }
    strbuf_done(&sb);
}

/* Microjoules as joules with exactly six decimals: sums stay checkable by eye. */
static void test_put_micro(void **state) {
    static const struct {
        unsigned long long micro;
        const char *text;
    } rows[] = {
        {0, "0.000000"},
        {1, "0.000001"},
        {999999, "0.999999"},
        {1000000, "1.000000"},
        {1234567, "1.234567"},
        {10000010, "10.000010"},
        {560000000, "560.000000"},
        {2071000000, "2071.000000"},
        {ULLONG_MAX, "18446744073709.551615"},
    };
    struct strbuf sb;

    strbuf_init(&sb);
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        strbuf_reset(&sb);
        strbuf_put_micro(&sb, rows[i].micro);
        assert_string_equal(sb.buf, rows[i].text);
        assert_int_equal(sb.len, strlen(rows[i].text));
    }
    /* Appends after what is there. */
    strbuf_reset(&sb);
    strbuf_puts(&sb, "e ");
    strbuf_put_micro(&sb, 42);
    assert_string_equal(sb.buf, "e 0.000042");
    strbuf_done(&sb);
}

static void test_steal(void **state) {
    struct strbuf sb;
    size_t len = 99;
    char *p;

    /* Stealing from an empty buffer still gives an allocated "" */
    strbuf_init(&sb);
    p = strbuf_steal(&sb, &len);
    assert_non_null(p);
    assert_string_equal(p, "");
    assert_int_equal(len, 0);
    free(p);

    strbuf_puts(&sb, "hello");
    p = strbuf_steal(&sb, &len);
    assert_string_equal(p, "hello");
    assert_int_equal(len, 5);
    assert_null(sb.buf);
    assert_int_equal(sb.len, 0);
    free(p);
    p = strbuf_steal(&sb, NULL);
    free(p);
    strbuf_done(&sb);
}

/* A size that cannot be represented fails without allocating, and the error is sticky:
 * nothing is appended afterwards and steal gives NULL. reset clears it. */
static void test_overflow_sticky(void **state) {
    struct strbuf sb;
    size_t len = 99;

    strbuf_init(&sb);
    strbuf_puts(&sb, "ab");
    ASSERT_ERRNO(strbuf_reserve(&sb, SIZE_MAX - 2), ENOMEM);
    ASSERT_ERRNO(strbuf_error(&sb), ENOMEM);
    strbuf_puts(&sb, "cd");
    strbuf_printf(&sb, "%d", 5);
    strbuf_put_micro(&sb, 5);
    assert_int_equal(sb.len, 2);
    assert_string_equal(sb.buf, "ab");
    ASSERT_ERRNO(strbuf_reserve(&sb, 1), ENOMEM);

    strbuf_reset(&sb);
    ASSERT_OK(strbuf_error(&sb));
    strbuf_puts(&sb, "ok");
    assert_string_equal(sb.buf, "ok");

    ASSERT_ERRNO(strbuf_reserve(&sb, SIZE_MAX), ENOMEM);
    assert_null(strbuf_steal(&sb, &len));
    assert_int_equal(len, 99);
    assert_null(sb.buf); /* steal released the buffer */
    ASSERT_OK(strbuf_error(&sb));
    strbuf_done(&sb);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_growth),  cmocka_unit_test(test_printf),
        cmocka_unit_test(test_put_u64), cmocka_unit_test(test_put_micro),
        cmocka_unit_test(test_steal),   cmocka_unit_test(test_overflow_sticky),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
