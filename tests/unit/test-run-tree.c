/* SPDX-License-Identifier: MIT */
/* joulestat run's process tree on a fake /proc: descendants, pid reuse, and whose GPU
 * series are the command's. */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "run_tree.h"

struct fx {
    char root[256];
    int proc_fd;
    struct run_tree t;
};

static int setup(void **state) {
    struct fx *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    ASSERT_OK(test_mkdtemp(f->root, sizeof(f->root)));
    f->proc_fd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(f->proc_fd >= 0);
    run_tree_init(&f->t, f->proc_fd);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    struct fx *f = *state;

    run_tree_done(&f->t);
    (void)close(f->proc_fd);
    test_rm_rf(f->root);
    free(f);
    return 0;
}

/* <pid>/stat as the kernel writes it: ppid (4), utime (14), starttime (22). */
static void process(struct fx *f, int pid, int ppid, unsigned utime, unsigned long long start) {
    char rel[64], line[512];

    (void)snprintf(rel, sizeof(rel), "%d/stat", pid);
    (void)snprintf(line, sizeof(line),
                   "%d (worker) S %d %d %d 0 -1 4194560 120 0 0 0 %u 0 0 0 20 0 1 0 %llu "
                   "12345678 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
                   "0 0 0 0 0 0 0 0\n",
                   pid, ppid, pid, pid, utime, start);
    ASSERT_OK(test_write_file(f->root, rel, line));
}

static void gone(struct fx *f, int pid) {
    char path[512];

    (void)snprintf(path, sizeof(path), "%s/%d", f->root, pid);
    test_rm_rf(path);
}

/* As procfs converts a start: boot at unix time 1000, 100 ticks a second. */
static double to_seconds(uint64_t starttime, void *userdata) {
    (void)userdata;
    return 1000.0 + (double)starttime / 100.0;
}

static bool owns(struct fx *f, uint32_t pid, double start_seconds) {
    return run_tree_owns(&f->t, pid, start_seconds, to_seconds, NULL);
}

static void test_descendants_and_ticks(void **state) {
    struct fx *f = *state;

    process(f, 100, 1, 10, 500);  /* the command */
    process(f, 101, 100, 5, 600); /* its child */
    process(f, 102, 101, 2, 650); /* a grandchild */
    process(f, 200, 1, 99, 640);  /* someone else's */
    run_tree_set_root(&f->t, 100);
    assert_int_equal(run_tree_member_start(&f->t, 100), 500);
    run_tree_scan(&f->t);
    assert_true(run_tree_has(&f->t, 101));
    assert_true(run_tree_has(&f->t, 102));
    assert_false(run_tree_has(&f->t, 200));
    assert_int_equal(f->t.n_members, 3);
    assert_int_equal(f->t.cpu_ticks, 17);
    assert_int_equal(run_tree_alive_start(&f->t, 200), 640);
    assert_int_equal(run_tree_alive_start(&f->t, 300), 0);
}

/* A member's pid taken by another's program: that program's series is not the command's,
 * the member's own series still is. */
static void test_pid_reused(void **state) {
    struct fx *f = *state;

    process(f, 100, 1, 10, 500);
    process(f, 101, 100, 5, 600);
    run_tree_set_root(&f->t, 100);
    run_tree_scan(&f->t);
    assert_true(owns(f, 101, 1006.0));
    assert_true(owns(f, 101, 1007.5));  /* its GPU work began later (the driver's start) */
    assert_true(owns(f, 101, -1));      /* the series' start unknown */
    assert_false(owns(f, 101, 1005.0)); /* an earlier holder of the pid */
    assert_false(owns(f, 300, 1006.0)); /* never a member */

    gone(f, 101);
    process(f, 101, 1, 1, 900); /* another user's job, started at 1009 */
    run_tree_scan(&f->t);
    assert_false(run_tree_has(&f->t, 101));
    assert_true(owns(f, 101, 1006.0)); /* the command's process, before the reuse */
    assert_true(owns(f, 101, 1008.0));
    assert_false(owns(f, 101, 1009.0)); /* the new holder's series */
    assert_false(owns(f, 101, 1012.0));
    assert_int_equal(f->t.cpu_ticks, 10); /* the new holder's time is not the command's */

    /* Adopted through the exec events (never seen at a scan): by the start they gave. */
    ASSERT_OK(run_tree_adopt(&f->t, 150, 700));
    assert_true(owns(f, 150, 1007.0));
    assert_false(owns(f, 150, 1006.0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_descendants_and_ticks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pid_reused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
