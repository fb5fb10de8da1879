/* SPDX-License-Identifier: MIT */
/* The /proc/<pid>/schedstat parser: the first field, and everything it refuses. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "proc_pid_schedstat.h"

static int parse(const char *text, uint64_t *ret) {
    return proc_pid_schedstat_parse(text, strlen(text), ret);
}

static void test_valid(void **state) {
    uint64_t ns = 7;

    (void)state;
    ASSERT_OK(parse("197702242 13009418 560\n", &ns));
    assert_int_equal(ns, 197702242);
    ASSERT_OK(parse("0 0 0", &ns)); /* scheduler statistics off */
    assert_int_equal(ns, 0);
    ASSERT_OK(parse("18446744073709551615 1 1\n", &ns));
    assert_int_equal(ns, UINT64_MAX);
    /* Not NUL-terminated: only len bytes count. */
    ASSERT_OK(proc_pid_schedstat_parse("12 3 4\nXYZ", 7, &ns));
    assert_int_equal(ns, 12);
}

static void test_invalid(void **state) {
    static const char *const bad[] = {
        "",
        "\n",
        "12",
        "12 3",
        "12 3 4 5",
        "12  3 4",
        " 12 3 4",
        "12 3 4 \n",
        "12 3 4\n\n",
        "-1 3 4",
        "1a 3 4",
        "12 3 x",
        "18446744073709551616 1 1",
    };
    uint64_t ns = 42;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(bad[i], &ns), -EINVAL);
        assert_int_equal(ns, 42); /* untouched on failure */
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_invalid),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
