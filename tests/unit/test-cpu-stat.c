/* SPDX-License-Identifier: MIT */
/* The node `cpu` line of /proc/stat and the active/idle window the CPU split uses. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "fileio.h"
#include "proc_cpu_stat.h"

static void read_tree_stat(const char *file, struct cpu_times *ret) {
    char path[1024], rel[128];
    char *buf = NULL;
    size_t size = 0;

    (void)snprintf(rel, sizeof(rel), "tests/trees/cpu-stat/proc/%s", file);
    test_source_path(path, sizeof(path), rel);
    ASSERT_OK(read_virtual_file_at(AT_FDCWD, path, 1 << 20, &buf, &size));
    ASSERT_OK(proc_cpu_stat_parse(buf, size, ret));
    free(buf);
}

static void test_tree_window(void **state) {
    struct cpu_times a, b;
    uint64_t active = 0, total = 0;

    read_tree_stat("stat", &a);
    read_tree_stat("stat.later", &b);
    assert_int_equal(a.user, 10132153);
    assert_int_equal(a.nice, 290696);
    assert_int_equal(a.system, 3084719);
    assert_int_equal(a.idle, 46828483);
    assert_int_equal(a.iowait, 16683);
    assert_int_equal(a.irq, 0);
    assert_int_equal(a.softirq, 25195);
    assert_int_equal(a.steal, 0);
    assert_int_equal(a.guest, 175628);
    assert_int_equal(a.guest_nice, 0);
    assert_int_equal(cpu_times_active(&a), 10132153 + 290696 + 3084719 + 25195);
    assert_int_equal(cpu_times_idle(&a), 46828483 + 16683);
    assert_int_equal(a.n_cpus, 2);

    /* user +1000, system +500, softirq +100, steal +300 (active 1900); idle +2000 and
     * iowait -200, which counts as 0 (tickless kernels let it go back); guest +200 is
     * already inside user. */
    cpu_times_window(&a, &b, &active, &total);
    assert_int_equal(active, 1900);
    assert_int_equal(total, 3900);
    /* Backwards in time: nothing went forward except iowait. */
    cpu_times_window(&b, &a, &active, &total);
    assert_int_equal(active, 0);
    assert_int_equal(total, 200);
}

static void test_parse_variants(void **state) {
    struct cpu_times t = {.user = 99};

    /* A kernel older than 2.6.11 printed only seven fields; newer ones may add more. */
    ASSERT_OK(proc_cpu_stat_parse("cpu  1 2 3 4 5 6 7\n", 19, &t));
    assert_int_equal(t.softirq, 7);
    assert_int_equal(t.steal, 0);
    assert_int_equal(t.guest_nice, 0);
    ASSERT_OK(proc_cpu_stat_parse("intr 5\ncpu  1 2 3 4 5 6 7 8 9 10 11 12", 38, &t));
    assert_int_equal(t.user, 1);
    assert_int_equal(t.guest_nice, 10);
    /* The length bounds the read: the buffer need not be NUL-terminated. */
    ASSERT_OK(proc_cpu_stat_parse("cpu  4 3 2 1 99999", 12, &t));
    assert_int_equal(t.idle, 1);
    assert_int_equal(t.iowait, 0);
    assert_int_equal(t.n_cpus, 0); /* no per-CPU lines */
    /* CPUs are counted by their "cpu<N>" lines, wherever they are; "cpu " and others not. */
    ASSERT_OK(
        proc_cpu_stat_parse("cpu0 1 1 1 1\ncpu  2 2 2 2\ncpux 1\ncpu12 1 1 1 1\ncpu", 50, &t));
    assert_int_equal(t.n_cpus, 2);
    assert_int_equal(t.user, 2);
}

static void test_parse_errors(void **state) {
    static const char *const cases[][2] = {
        {"cpu0 1 2 3 4\ncpu1 1 2 3 4\n", "ENODATA"},
        {"", "ENODATA"},
        {"cpu  1 2 3\n", "EINVAL"},
        {"cpu  1 2 x 4\n", "EINVAL"},
        {"cpu  1 2 -3 4\n", "EINVAL"},
        {"cpu  1 2 3 99999999999999999999\n", "ERANGE"},
        {"cpu  1 2 3 1234567890123456789012345\n", "ERANGE"},
    };
    struct cpu_times t = {.user = 42};

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int want = strcmp(cases[i][1], "ENODATA") == 0  ? -ENODATA
                   : strcmp(cases[i][1], "EINVAL") == 0 ? -EINVAL
                                                        : -ERANGE;
        int r = proc_cpu_stat_parse(cases[i][0], strlen(cases[i][0]), &t);

        if (r != want)
            fail_msg("'%s': got %d, want %s", cases[i][0], r, cases[i][1]);
    }
    assert_int_equal(t.user, 42); /* untouched on failure */
}

static void test_this_machine(void **state) {
    struct cpu_times t;
    char *buf = NULL;
    size_t size = 0;

    /* The real file parses, and its total is not zero. */
    ASSERT_OK(read_virtual_file_at(AT_FDCWD, "/proc/stat", 1 << 22, &buf, &size));
    ASSERT_OK(proc_cpu_stat_parse(buf, size, &t));
    assert_true(cpu_times_active(&t) + cpu_times_idle(&t) > 0);
    assert_true(t.n_cpus >= 1);
    free(buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_window),
        cmocka_unit_test(test_parse_variants),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_this_machine),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
