/* SPDX-License-Identifier: MIT */
/*
 * CPU time from <pid>/schedstat between stat reads (src/proc/procfs_cpu.c). The tree is
 * written here, CLK_TCK 100 (10 ms a tick): pid 105 has one thread and reads its stat at
 * scans 5, 15, ... ((scan + pid) % PROCFS_FULL_READ_SCANS == 0), schedstat at the others;
 * pid 200 has four threads, so only stat tells its CPU time, every scan.
 */
#include "testutil.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "proc_pid_stat.h"
#include "procfs.h"

#define TICK_NS 10000000ULL

struct fx {
    char dir[PATH_MAX];
    int fd;
    struct procfs_scanner *s;
};

static void put_stat(struct fx *f, unsigned pid, unsigned threads, unsigned long long ticks) {
    char rel[64], text[512];

    (void)snprintf(rel, sizeof(rel), "%u/stat", pid);
    (void)snprintf(text, sizeof(text),
                   "%u (worker) S 1 %u %u 0 -1 4194560 120 0 3 0 %llu 0 0 0 20 0 %u 0 %u "
                   "12345678 900 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
                   "0 0 0 0 0 0 0 0\n",
                   pid, pid, pid, ticks, threads, pid * 10);
    ASSERT_OK(test_write_file(f->dir, rel, text));
}

static void put_sched(struct fx *f, unsigned pid, unsigned long long ns) {
    char rel[64], text[128];

    (void)snprintf(rel, sizeof(rel), "%u/schedstat", pid);
    (void)snprintf(text, sizeof(text), "%llu 4242 17\n", ns);
    ASSERT_OK(test_write_file(f->dir, rel, text));
}

static void put_process(struct fx *f, unsigned pid, unsigned threads, unsigned long long ticks,
                        bool with_schedstat) {
    char rel[64];

    put_stat(f, pid, threads, ticks);
    if (with_schedstat)
        put_sched(f, pid, ticks * TICK_NS);
    (void)snprintf(rel, sizeof(rel), "%u/cgroup", pid);
    ASSERT_OK(test_write_file(f->dir, rel, "0::/system.slice/work.service\n"));
}

static void setup(struct fx *f, bool with_schedstat, size_t max_kept) {
    struct procfs_options opts = {.clk_tck = 100, .max_kept_fds = max_kept};

    *f = (struct fx){0};
    ASSERT_OK(test_mkdtemp(f->dir, sizeof(f->dir)));
    ASSERT_OK(test_write_file(f->dir, "stat", "cpu  1 0 0 1 0 0 0 0 0 0\nbtime 1700000000\n"));
    put_process(f, 105, 1, 50, with_schedstat);
    put_process(f, 200, 4, 70, with_schedstat);
    f->fd = open_root(f->dir);
    ASSERT_OK(f->fd);
    ASSERT_OK(procfs_scanner_new(f->fd, &opts, &f->s));
}

static void teardown(struct fx *f) {
    assert_null(procfs_scanner_free(f->s));
    (void)close(f->fd);
    test_rm_rf(f->dir);
}

static const struct procfs_process *row_of(const struct procfs_process *rows, int n, uint32_t pid) {
    for (int i = 0; i < n; i++)
        if (rows[i].pid == pid)
            return &rows[i];
    fail_msg("pid %u not in the scan", pid);
    return NULL;
}

static int scan(struct fx *f, const struct procfs_process **rows) {
    int n = procfs_scan(f->s, rows);

    ASSERT_OK(n);
    assert_int_equal(n, 2);
    return n;
}

static struct procfs_stats stats(struct fx *f) {
    struct procfs_stats st;

    procfs_get_stats(f->s, &st);
    return st;
}

/* Between its stat reads a single-threaded process costs one schedstat read, and its CPU
 * time follows schedstat; the threaded one is read through stat every scan. */
static void test_schedstat_between_stat_reads(void **state) {
    const struct procfs_process *rows;
    struct procfs_stats a, b;
    struct fx f;
    int n;

    (void)state;
    setup(&f, true, 100);
    n = scan(&f, &rows); /* scan 1: both new, stat read; 105 keeps schedstat open */
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks, 50);
    assert_int_equal(row_of(rows, n, 105)->flags, PROCFS_PROCESS_NEW);
    a = stats(&f);
    assert_int_equal(a.schedstat_reads, 1);
    assert_int_equal(a.stat_reads, 2);
    assert_int_equal(a.kept_fds, 2);

    /* stat would say 90 ticks: it is not read, schedstat is (+3 ticks). */
    put_stat(&f, 105, 1, 90);
    put_sched(&f, 105, 53 * TICK_NS);
    put_stat(&f, 200, 4, 75);
    put_sched(&f, 200, 1); /* the leader alone: never read for a threaded process */
    n = scan(&f, &rows);   /* scan 2 */
    b = stats(&f);
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks_delta, 3);
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks, 53);
    assert_int_equal(row_of(rows, n, 200)->cpu_ticks_delta, 5);
    assert_int_equal(b.schedstat_reads - a.schedstat_reads, 1);
    assert_int_equal(b.stat_reads - a.stat_reads, 1);
    assert_int_equal(b.stat_opens, a.stat_opens);

    /* Sub-tick growth adds up: 4 ms twice is no tick, then 12 ms is one more. */
    put_sched(&f, 105, 53 * TICK_NS + 4000000);
    n = scan(&f, &rows); /* scan 3 */
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks_delta, 0);
    put_sched(&f, 105, 53 * TICK_NS + 12000000);
    n = scan(&f, &rows); /* scan 4 */
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks_delta, 1);
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks, 54);
    teardown(&f);
}

/* At its periodic stat read, a stat that shows less than schedstat counted (stat cuts to
 * whole ticks) takes nothing back; one that shows more (a thread that came and went) adds
 * the difference; a second thread moves the process to stat reads. */
static void test_periodic_stat_read(void **state) {
    const struct procfs_process *rows;
    struct procfs_stats a, b;
    struct fx f;
    int n;

    (void)state;
    setup(&f, true, 100);
    (void)scan(&f, &rows);                      /* scan 1 */
    put_sched(&f, 105, 55 * TICK_NS + 9000000); /* 55.9 ticks */
    (void)scan(&f, &rows);                      /* scan 2: 55 */
    (void)scan(&f, &rows);                      /* scan 3 */
    (void)scan(&f, &rows);                      /* scan 4 */
    put_stat(&f, 105, 1, 55);                   /* stat shows 55 whole ticks: 0.9 less */
    n = scan(&f, &rows);                        /* scan 5: stat read */
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks_delta, 0);
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks, 55);
    put_sched(&f, 105, 56 * TICK_NS + 9000000); /* +1 tick since scan 5's pairing */
    n = scan(&f, &rows);                        /* scan 6 */
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks_delta, 1);
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks, 56);

    for (int i = 7; i < 15; i++)
        (void)scan(&f, &rows);
    /* A second thread: the group ran 80 ticks, the leader alone 57. */
    put_stat(&f, 105, 2, 80);
    put_sched(&f, 105, 57 * TICK_NS);
    n = scan(&f, &rows); /* scan 15: stat read */
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks_delta, 24);
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks, 80);
    a = stats(&f);
    put_stat(&f, 105, 2, 83);
    n = scan(&f, &rows); /* scan 16: read through stat now */
    b = stats(&f);
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks_delta, 3);
    assert_int_equal(b.schedstat_reads, a.schedstat_reads);
    assert_int_equal(b.stat_reads - a.stat_reads, 2);
    assert_int_equal(b.kept_fds, 2);
    teardown(&f);
}

/* Schedstat's overshoot over stat's whole ticks, kept at one stat read, stays kept at the
 * next while stat has not passed it: the counter never goes back, and no tick is counted
 * twice (it went 56 -> 55 at scan 15, and tick 56 came again). */
static void test_overshoot_kept_until_passed(void **state) {
    const struct procfs_process *rows;
    uint64_t counted = 0;
    struct fx f;
    int n;

    (void)state;
    setup(&f, true, 100);
    (void)scan(&f, &rows);                      /* scan 1: 50 ticks */
    put_sched(&f, 105, 56 * TICK_NS + 2000000); /* 56.2 ticks */
    for (int i = 2; i <= 14; i++) {
        if (i == 5)
            put_stat(&f, 105, 1, 55); /* stat's whole ticks: 55 */
        n = scan(&f, &rows);          /* scan 5 and 15 read stat */
        counted += row_of(rows, n, 105)->cpu_ticks_delta;
        assert_int_equal(row_of(rows, n, 105)->cpu_ticks, 56);
    }
    n = scan(&f, &rows); /* scan 15: stat still 55, the process idle */
    counted += row_of(rows, n, 105)->cpu_ticks_delta;
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks, 56);
    put_stat(&f, 105, 1, 57);
    put_sched(&f, 105, 57 * TICK_NS + 5000000);
    n = scan(&f, &rows); /* scan 16 */
    counted += row_of(rows, n, 105)->cpu_ticks_delta;
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks, 57);
    assert_int_equal(counted, 57 - 50);
    teardown(&f);
}

/* No schedstat in the tree (a kernel without CONFIG_SCHED_INFO): stat every scan. */
static void test_no_schedstat(void **state) {
    const struct procfs_process *rows;
    struct procfs_stats a, b;
    struct fx f;
    int n;

    (void)state;
    setup(&f, false, 100);
    (void)scan(&f, &rows);
    a = stats(&f);
    put_stat(&f, 105, 1, 52);
    n = scan(&f, &rows);
    b = stats(&f);
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks_delta, 2);
    assert_int_equal(b.schedstat_reads, 0);
    assert_int_equal(b.stat_reads - a.stat_reads, 2);
    assert_int_equal(b.stat_opens, a.stat_opens); /* both through kept stat fds */
    assert_int_equal(b.kept_fds, 2);
    teardown(&f);
}

/* Scheduler statistics off: "0 0 0" for a process that stat shows has run. */
static void test_schedstat_zero(void **state) {
    const struct procfs_process *rows;
    struct procfs_stats a, b;
    struct fx f;
    int n;

    (void)state;
    setup(&f, true, 100);
    put_sched(&f, 105, 0);
    (void)scan(&f, &rows);
    a = stats(&f);
    put_stat(&f, 105, 1, 58);
    n = scan(&f, &rows);
    b = stats(&f);
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks_delta, 8);
    assert_int_equal(b.schedstat_reads, a.schedstat_reads);
    assert_int_equal(b.stat_reads - a.stat_reads, 2);
    teardown(&f);
}

/* No fd kept (cap 0, or beyond the cap): stat by path every scan, schedstat never opened. */
static void test_no_kept_fds(void **state) {
    const struct procfs_process *rows;
    struct fx f;
    int n;

    (void)state;
    setup(&f, true, PROCFS_KEEP_NO_FDS);
    (void)scan(&f, &rows);
    put_stat(&f, 105, 1, 51);
    put_sched(&f, 105, 99 * TICK_NS);
    n = scan(&f, &rows);
    assert_int_equal(row_of(rows, n, 105)->cpu_ticks_delta, 1);
    assert_int_equal(stats(&f).schedstat_reads, 0);
    assert_int_equal(stats(&f).kept_fds, 0);
    teardown(&f);
}

/* A process that exits between stat reads: its kept schedstat fd goes (on a fixture tree
 * the pid directory is gone from the listing) and it is reported exited. */
static void test_exit_between_stat_reads(void **state) {
    const struct procfs_process *rows;
    char path[PATH_MAX + 8];
    struct fx f;
    int n;

    (void)state;
    setup(&f, true, 100);
    (void)scan(&f, &rows);
    (void)snprintf(path, sizeof(path), "%s/105", f.dir);
    test_rm_rf(path);
    n = procfs_scan(f.s, &rows);
    assert_int_equal(n, 2);
    assert_int_equal(row_of(rows, n, 105)->flags, PROCFS_PROCESS_EXITED);
    assert_int_equal(stats(&f).kept_fds, 1);
    teardown(&f);
}

static bool self_schedstat_works(void) {
    char buf[128];
    int n = read_file_into_at(AT_FDCWD, "/proc/self/schedstat", buf, sizeof(buf));

    return n > 0 && buf[0] != '0';
}

static uint64_t stat_ticks(pid_t pid) {
    char path[64], buf[1024];
    struct proc_pid_stat st;
    int n;

    (void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    n = read_file_into_at(AT_FDCWD, path, buf, sizeof(buf));
    ASSERT_OK(n);
    ASSERT_OK(proc_pid_stat_parse(buf, (size_t)n, &st));
    return st.utime + st.stime;
}

/* On the kernel's own /proc: a busy single-threaded child's CPU time between two scans is
 * what its stat shows, within the ticks stat cuts off at each end. */
static void test_real_busy_child(void **state) {
    const struct procfs_process *rows;
    struct procfs_scanner *s = NULL;
    struct procfs_stats a, b;
    uint64_t before, after, delta = UINT64_MAX;
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 300000000L};
    pid_t child;
    int fd, n, status;

    (void)state;
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
            ;
    }
    fd = open_root("/proc");
    ASSERT_OK(fd);
    ASSERT_OK(procfs_scanner_new(fd, NULL, &s));
    (void)close(fd);
    ASSERT_OK(procfs_scan(s, &rows));
    before = stat_ticks(child);
    procfs_get_stats(s, &a);
    (void)nanosleep(&nap, NULL);
    n = procfs_scan(s, &rows);
    after = stat_ticks(child);
    ASSERT_OK(n);
    procfs_get_stats(s, &b);
    for (int i = 0; i < n; i++)
        if (rows[i].pid == (uint32_t)child && !(rows[i].flags & PROCFS_PROCESS_EXITED))
            delta = rows[i].cpu_ticks_delta;
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, &status, 0), child);
    s = procfs_scanner_free(s);
    assert_true(delta != UINT64_MAX);
    /* Each scan came just before a stat reading, 300 ms apart (about 30 ticks of a spinning
     * child, fewer on a loaded machine): the two windows differ by the scans' own time and
     * by the ticks stat cuts off at each end. */
    assert_true(after >= before);
    assert_true(delta + 5 >= after - before);
    assert_true(delta <= after - before + 5);
    /* Where the kernel keeps scheduler statistics, the child (one thread) was read through
     * schedstat by the second scan. */
    if (self_schedstat_works())
        assert_true(b.schedstat_reads > a.schedstat_reads);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedstat_between_stat_reads),
        cmocka_unit_test(test_periodic_stat_read),
        cmocka_unit_test(test_overshoot_kept_until_passed),
        cmocka_unit_test(test_no_schedstat),
        cmocka_unit_test(test_schedstat_zero),
        cmocka_unit_test(test_no_kept_fds),
        cmocka_unit_test(test_exit_between_stat_reads),
        cmocka_unit_test(test_real_busy_child),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
