/* SPDX-License-Identifier: MIT */
/*
 * Stat reads the scanner leaves out when the workload used no CPU (procfs_set_unchanged).
 * The tree is written here: pid 100 in idle.service, pid 200 in busy.service. The gate
 * answers by unit name, as the CPU accounting answers by the workload cgroup's usage, so
 * a test can make a stat file move while its "workload" claims it did not and see which
 * reads were made. btime 1700000000, CLK_TCK 100.
 */
#include "testutil.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "procfs.h"

struct fx {
    char dir[PATH_MAX];
    int fd;
    struct procfs_scanner *s;
    unsigned calls;
    uint64_t idle_scans_ago; /* the last scans_ago asked for idle.service */
    bool idle_is_unchanged;  /* what the gate says of idle.service */
};

static bool gate(void *userdata, const struct workload_identity *id, uint64_t scans_ago) {
    struct fx *f = userdata;

    f->calls++;
    if (strcmp(id->systemd_unit, "idle.service") != 0)
        return false;
    f->idle_scans_ago = scans_ago;
    return f->idle_is_unchanged;
}

static void put_process(struct fx *f, unsigned pid, const char *unit, unsigned long long utime,
                        unsigned long long start) {
    char rel[64], text[512];

    (void)snprintf(rel, sizeof(rel), "%u/stat", pid);
    ASSERT_OK(test_write_file(
        f->dir, rel, test_proc_stat_line(text, sizeof(text), pid, "worker", 'S', utime, 0, start)));
    (void)snprintf(rel, sizeof(rel), "%u/cgroup", pid);
    (void)snprintf(text, sizeof(text), "0::/system.slice/%s\n", unit);
    ASSERT_OK(test_write_file(f->dir, rel, text));
}

static void setup(struct fx *f, size_t max_kept, bool with_gate) {
    struct procfs_options opts = {.clk_tck = 100, .max_kept_fds = max_kept};

    *f = (struct fx){.idle_is_unchanged = true};
    ASSERT_OK(test_mkdtemp(f->dir, sizeof(f->dir)));
    ASSERT_OK(test_write_file(f->dir, "stat", "cpu  1 0 0 1 0 0 0 0 0 0\nbtime 1700000000\n"));
    put_process(f, 100, "idle.service", 50, 1000);
    put_process(f, 200, "busy.service", 70, 2000);
    f->fd = open_root(f->dir);
    ASSERT_OK(f->fd);
    ASSERT_OK(procfs_scanner_new(f->fd, &opts, &f->s));
    if (with_gate)
        procfs_set_unchanged(f->s, gate, f);
}

static void teardown(struct fx *f) {
    assert_null(procfs_scanner_free(f->s));
    (void)close(f->fd);
    test_rm_rf(f->dir);
}

static const struct procfs_process *row_of(const struct procfs_process *rows, int n, uint32_t pid,
                                           unsigned flags) {
    for (int i = 0; i < n; i++)
        if (rows[i].pid == pid && rows[i].flags == flags)
            return &rows[i];
    fail_msg("pid %u (flags %u) not in the scan", pid, flags);
    return NULL;
}

static int scan(struct fx *f, const struct procfs_process **rows) {
    int n = procfs_scan(f->s, rows);

    ASSERT_OK(n);
    return n;
}

static struct procfs_stats stats(struct fx *f) {
    struct procfs_stats st;

    procfs_get_stats(f->s, &st);
    return st;
}

/* The idle process is not read while its workload stays unchanged; the CPU time it gained
 * meanwhile (which a consistent node could not show) comes with its periodic read, whole.
 * The busy one is read every scan. */
static void test_skips_and_periodic_read(void **state) {
    const struct procfs_process *rows;
    uint64_t idle_delta = 0, busy_delta = 0, skips_before;
    struct fx f;
    int n;

    (void)state;
    setup(&f, 100, true);
    n = scan(&f, &rows); /* scan 1: both new, read */
    assert_int_equal(n, 2);
    assert_int_equal(f.calls, 0);
    assert_int_equal(stats(&f).stat_skips, 0);

    put_process(&f, 100, "idle.service", 60, 1000);
    put_process(&f, 200, "busy.service", 80, 2000);
    n = scan(&f, &rows); /* scan 2 */
    assert_int_equal(n, 2);
    assert_int_equal(row_of(rows, n, 100, 0)->cpu_ticks_delta, 0);
    assert_int_equal(row_of(rows, n, 100, 0)->cpu_ticks, 50);
    assert_string_equal(row_of(rows, n, 100, 0)->comm, "worker");
    assert_string_equal(row_of(rows, n, 100, 0)->identity->systemd_unit, "idle.service");
    assert_int_equal(row_of(rows, n, 200, 0)->cpu_ticks_delta, 10);
    assert_int_equal(f.calls, 2);
    assert_int_equal(f.idle_scans_ago, 1);
    assert_int_equal(stats(&f).stat_skips, 1);
    assert_int_equal(stats(&f).stat_reads, 3);

    /* Scans 3..10: pid 100 is due when (scan + 100) % 10 == 0, i.e. at scan 10. */
    skips_before = stats(&f).stat_skips;
    for (int scan_no = 3; scan_no <= 10; scan_no++) {
        put_process(&f, 200, "busy.service", 80 + (unsigned long long)scan_no, 2000);
        n = scan(&f, &rows);
        idle_delta += row_of(rows, n, 100, 0)->cpu_ticks_delta;
        busy_delta += row_of(rows, n, 200, 0)->cpu_ticks_delta;
        if (scan_no == 9)
            assert_int_equal(f.idle_scans_ago, 8); /* last read at scan 1 */
    }
    assert_int_equal(idle_delta, 10); /* 50 -> 60, read at scan 10 */
    assert_int_equal(busy_delta, 90 - 80);
    assert_int_equal(stats(&f).stat_skips - skips_before, 7); /* scans 3..9 */

    /* Read at scan 10, so asked again from scan 11 with scans_ago 1. */
    n = scan(&f, &rows);
    assert_int_equal(row_of(rows, n, 100, 0)->cpu_ticks_delta, 0);
    assert_int_equal(row_of(rows, n, 100, 0)->cpu_ticks, 60);
    teardown(&f);
}

/* pid 100 gains 15 ticks between two scans and the second scan reads them, with
 * `max_kept` kept fds, the gate set or not, and what the gate says of idle.service. */
static void assert_read(size_t max_kept, bool with_gate, bool idle_is_unchanged,
                        unsigned want_calls) {
    const struct procfs_process *rows;
    struct fx f;
    int n;

    setup(&f, max_kept, with_gate);
    f.idle_is_unchanged = idle_is_unchanged;
    (void)scan(&f, &rows);
    put_process(&f, 100, "idle.service", 65, 1000);
    n = scan(&f, &rows);
    assert_int_equal(row_of(rows, n, 100, 0)->cpu_ticks_delta, 15);
    assert_int_equal(stats(&f).stat_skips, 0);
    assert_int_equal(f.calls, want_calls);
    teardown(&f);
}

/* The gate saying "moved" makes the next scan read; no gate, or no kept fd, reads always. */
static void test_reads_when_not_unchanged(void **state) {
    (void)state;
    assert_read(100, true, false, 2);               /* asked for both, "moved" */
    assert_read(100, false, true, 0);               /* no gate */
    assert_read(PROCFS_KEEP_NO_FDS, true, true, 0); /* no kept fd: never asked */
}

/* Exits and reused pids are seen even while the workload claims no change: the listing
 * says who is gone, and a new pid directory (another inode) is always read. */
static void test_exit_and_reuse_are_seen(void **state) {
    const struct procfs_process *rows;
    char from[PATH_MAX + 16], to[PATH_MAX + 16];
    struct fx f;
    int n;

    (void)state;
    setup(&f, 100, true);
    (void)scan(&f, &rows);
    (void)snprintf(from, sizeof(from), "%s/100", f.dir);
    (void)snprintf(to, sizeof(to), "%s/old-100", f.dir);
    assert_int_equal(rename(from, to), 0);
    put_process(&f, 100, "idle.service", 3, 9000);
    n = scan(&f, &rows);
    assert_int_equal(n, 3);
    assert_int_equal(row_of(rows, n, 100, PROCFS_PROCESS_NEW)->starttime, 9000);
    assert_int_equal(row_of(rows, n, 100, PROCFS_PROCESS_NEW)->cpu_ticks_delta, 3);
    assert_int_equal(row_of(rows, n, 100, PROCFS_PROCESS_EXITED)->starttime, 1000);
    assert_int_equal(stats(&f).stat_skips, 0);

    test_rm_rf(from);
    n = scan(&f, &rows);
    assert_int_equal(n, 2);
    assert_int_equal(row_of(rows, n, 100, PROCFS_PROCESS_EXITED)->starttime, 9000);
    assert_int_equal(stats(&f).stat_skips, 0); /* gone, so not asked */
    teardown(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skips_and_periodic_read),
        cmocka_unit_test(test_reads_when_not_unchanged),
        cmocka_unit_test(test_exit_and_reuse_are_seen),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
