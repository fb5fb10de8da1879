/* SPDX-License-Identifier: MIT */
/* Whole-string, range-checked number and duration parsing. */
#include "testutil.h"

#include <errno.h>
#include <inttypes.h>

#include "macro.h"
#include "parse_num.h"

#define SENTINEL UINT64_C(0x5a5a5a5a5a5a5a5a)

/* Expected result: error 0 with a value, or a negative errno and the output untouched. */
struct u64_case {
    const char *s;
    int error;
    uint64_t value;
};

static void test_atou64(void **state) {
    static const struct u64_case cases[] = {
        {"0", 0, 0},
        {"42", 0, 42},
        {"42\n", 0, 42}, /* sysfs files end in a newline */
        {"  7 \n", 0, 7},
        {"18446744073709551615", 0, UINT64_MAX},
        {"0x1F", 0, 31},
        {"0XfF\n", 0, 255},
        {"010", 0, 10}, /* decimal, not octal */
        {"08", 0, 8},
        {"000", 0, 0},
        {"18446744073709551616", -ERANGE, 0},
        {"99999999999999999999999", -ERANGE, 0},
        {"0x10000000000000000", -ERANGE, 0},
        {"-1", -EINVAL, 0}, /* strtoull would wrap it to 2^64-1 */
        {" -1", -EINVAL, 0},
        {"+1", -EINVAL, 0},
        {"", -EINVAL, 0},
        {"\n", -EINVAL, 0},
        {"12a", -EINVAL, 0},
        {"1 2", -EINVAL, 0},
        {"1\n2", -EINVAL, 0},
        {"0x", -EINVAL, 0},
        {"0x-1", -EINVAL, 0},
        {"0x 1", -EINVAL, 0},
        {"1.0", -EINVAL, 0},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        uint64_t v = SENTINEL;
        int r = safe_atou64(cases[i].s, &v);

        if (r != cases[i].error)
            fail_msg("safe_atou64(\"%s\") = %d, expected %d", cases[i].s, r, cases[i].error);
        assert_int_equal(v, cases[i].error == 0 ? cases[i].value : SENTINEL);
    }
}

static void test_atou32(void **state) {
    uint32_t v = 9;

    ASSERT_OK(safe_atou32("4294967295\n", &v));
    assert_int_equal(v, UINT32_MAX);
    ASSERT_OK(safe_atou32("0", &v));
    assert_int_equal(v, 0);
    v = 9;
    ASSERT_ERRNO(safe_atou32("4294967296", &v), ERANGE);
    ASSERT_ERRNO(safe_atou32("18446744073709551616", &v), ERANGE);
    ASSERT_ERRNO(safe_atou32("-1", &v), EINVAL);
    ASSERT_ERRNO(safe_atou32("x", &v), EINVAL);
    assert_int_equal(v, 9);
}

static void test_all_digits(void **state) {
    assert_true(all_digits_n("0", 1));
    assert_true(all_digits_n("4242x", 4)); /* only the n bytes asked */
    assert_false(all_digits_n("4242x", 5));
    assert_false(all_digits_n("", 0));
    assert_false(all_digits_n("12 ", 3));
    assert_false(all_digits_n("-1", 2));
}

static void test_atoi64(void **state) {
    int64_t v = 9;

    ASSERT_OK(safe_atoi64("-1", &v));
    assert_int_equal(v, -1);
    ASSERT_OK(safe_atoi64(" 123\n", &v));
    assert_int_equal(v, 123);
    ASSERT_OK(safe_atoi64("-9223372036854775808", &v));
    assert_true(v == INT64_MIN);
    ASSERT_OK(safe_atoi64("9223372036854775807", &v));
    assert_true(v == INT64_MAX);
    v = 9;
    ASSERT_ERRNO(safe_atoi64("9223372036854775808", &v), ERANGE);
    ASSERT_ERRNO(safe_atoi64("-9223372036854775809", &v), ERANGE);
    ASSERT_ERRNO(safe_atoi64("", &v), EINVAL);
    ASSERT_ERRNO(safe_atoi64("1.5", &v), EINVAL);
    ASSERT_ERRNO(safe_atoi64("--1", &v), EINVAL);
    ASSERT_ERRNO(safe_atoi64("5 5", &v), EINVAL);
    assert_int_equal(v, 9);
}

/* Exact equality, bit for bit: these values are all representable in binary. */
static void assert_double_is(double got, double expected) {
    assert_memory_equal(&got, &expected, sizeof(got));
}

static void test_atod(void **state) {
    double v = 9;

    ASSERT_OK(safe_atod("0.5", &v));
    assert_double_is(v, 0.5);
    ASSERT_OK(safe_atod(" 1e3\n", &v));
    assert_double_is(v, 1000.0);
    ASSERT_OK(safe_atod("-2.25", &v));
    assert_double_is(v, -2.25);
    v = 9;
    ASSERT_ERRNO(safe_atod("nan", &v), EINVAL);
    ASSERT_ERRNO(safe_atod("inf", &v), EINVAL);
    ASSERT_ERRNO(safe_atod("1e999", &v), ERANGE);
    ASSERT_ERRNO(safe_atod("", &v), EINVAL);
    ASSERT_ERRNO(safe_atod("1.5x", &v), EINVAL);
    ASSERT_ERRNO(safe_atod("abc", &v), EINVAL);
    assert_double_is(v, 9.0);
}

static void test_duration(void **state) {
    static const struct u64_case cases[] = {
        {"100ms", 0, UINT64_C(100000000)},
        {"5m", 0, UINT64_C(300000000000)},
        {"1h30m", 0, UINT64_C(5400000000000)},
        {"1h 30m", 0, UINT64_C(5400000000000)},
        {"0.5", 0, UINT64_C(500000000)}, /* a bare number is seconds */
        {"10", 0, UINT64_C(10000000000)},
        {"2s", 0, UINT64_C(2000000000)},
        {"250us", 0, UINT64_C(250000)},
        {"7ns", 0, 7},
        {"1.5h", 0, UINT64_C(5400000000000)},
        {"1m30s500ms", 0, UINT64_C(90500000000)},
        {"1.001", 0, UINT64_C(1001000000)}, /* 1.001 x 10^9 is 1000999999.99... in binary */
        {"1.001s", 0, UINT64_C(1001000000)},
        {"0", 0, 0},
        {"5\n", 0, UINT64_C(5000000000)},
        {"5000000000s", 0, UINT64_C(5000000000000000000)},
        {"20000000000s", -ERANGE, 0},
        {"6000000h", -ERANGE, 0},
        {"", -EINVAL, 0},
        {" ", -EINVAL, 0},
        {"ms", -EINVAL, 0},
        {"-1s", -EINVAL, 0},
        {"5x", -EINVAL, 0},
        {"5mss", -EINVAL, 0},
        {"5 m", -EINVAL, 0},
        {"1m30", -EINVAL, 0}, /* a bare number only on its own */
        {"1s2", -EINVAL, 0},
        {"1d", -EINVAL, 0},
        {"nan", -EINVAL, 0},
        {".", -EINVAL, 0},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        uint64_t v = SENTINEL;
        int r = parse_duration_ns(cases[i].s, &v);

        if (r != cases[i].error)
            fail_msg("parse_duration_ns(\"%s\") = %d, expected %d", cases[i].s, r, cases[i].error);
        if (cases[i].error == 0 && v != cases[i].value)
            fail_msg("parse_duration_ns(\"%s\") gave %" PRIu64 ", expected %" PRIu64, cases[i].s, v,
                     cases[i].value);
        if (cases[i].error != 0)
            assert_int_equal(v, SENTINEL);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atou64),   cmocka_unit_test(test_atou32),
        cmocka_unit_test(test_atoi64),   cmocka_unit_test(test_atod),
        cmocka_unit_test(test_duration), cmocka_unit_test(test_all_digits),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
