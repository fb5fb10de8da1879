/* SPDX-License-Identifier: MIT */
/* The process connector on the real kernel: a child that runs for 50 ms is known after it
 * exited and was reaped, with its program name, its parent and the SLURM job of its
 * environment (this test's cgroup names no job), until its pid is taken again. Skipped
 * where the kernel refuses the subscription (not root, no CONFIG_PROC_EVENTS). */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec_watch.h"
#include "identity.h"
#include "macro.h"
#include "procfs.h"

static void sleep_ms(long ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void *nothing(void *arg) {
    return arg;
}

static void test_short_process_known_after_exit(void **state) {
    _cleanup_(closep) int procfs = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct exec_watch *w = NULL;
    struct exec_watch_stats st;
    struct exec_record rec;
    pid_t child;
    int r, status;

    (void)state;
    assert_true(procfs >= 0);
    r = exec_watch_start(procfs, &w);
    if (r == -EPERM || r == -EACCES || r == -EPROTONOSUPPORT || r == -ECONNREFUSED) {
        fprintf(stderr, "skipped: the process connector is not available here (%s)\n",
                strerror(-r));
        skip();
    }
    ASSERT_OK(r);
    sleep_ms(50); /* the subscription is in place before the child starts */

    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        static char a0[] = "sleep", a1[] = "0.05", e0[] = "SLURM_JOB_ID=4242",
                    e1[] = "PATH=/usr/bin:/bin";
        char *argv[] = {a0, a1, NULL}, *envp[] = {e0, e1, NULL};

        execve("/bin/sleep", argv, envp);
        _exit(127);
    }
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* Threads starting and ending (here, and anywhere on the machine meanwhile) make fork
     * and exit events the kernel's socket filter drops before they wake the watcher. */
    for (int i = 0; i < 8; i++) {
        pthread_t t;

        assert_int_equal(pthread_create(&t, NULL, nothing, NULL), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
    }

    /* the events arrive within moments; the child is gone from /proc already */
    for (int i = 0; i < 100; i++) {
        r = exec_watch_lookup(w, (uint32_t)child, &rec);
        if (r == 0 && rec.exited)
            break;
        sleep_ms(20);
    }
    exec_watch_get_stats(w, &st);
    if (st.execs == 0) { /* subscribed, but this network namespace gets no process events */
        fprintf(stderr, "skipped: no process events are delivered here\n");
        w = exec_watch_stop(w);
        skip();
    }
    ASSERT_OK(r);
    assert_true(rec.exited);
    assert_string_equal(rec.comm, "sleep");
    assert_true(rec.starttime > 0);
    assert_int_equal(rec.ppid, getpid()); /* who started it, once it is gone */
    assert_true(rec.identity.slurm.job_id_valid);
    assert_int_equal(rec.identity.slurm.job_id, 4242);
    assert_int_equal(exec_watch_lookup(w, 0x3fffff, &rec), -ESRCH);
    exec_watch_get_stats(w, &st);
    assert_true(st.execs >= 1 && st.read >= 1 && st.exits >= 1);
    assert_int_equal(st.ignored, 0);

    /* what the GPU accounting asks of a pid NVML reports: the scanner no longer finds it,
     * the watcher answers with the identity read at its exec */
    {
        struct procfs_options opts = {0};
        struct procfs_scanner *scanner = NULL;
        struct identity_resolver ir;
        struct process_info info;

        ASSERT_OK(procfs_scanner_new(procfs, &opts, &scanner));
        ir = (struct identity_resolver){.scanner = scanner, .watch = NULL};
        assert_int_equal(identity_resolve_watched(&ir, (uint32_t)child, &info), -ESRCH);
        ir.watch = w;
        ASSERT_OK(identity_resolve_watched(&ir, (uint32_t)child, &info));
        assert_int_equal(info.start_ticks, rec.starttime);
        assert_true(info.start_time_seconds > 1.6e9);
        assert_string_equal(info.id.process_name, "sleep");
        assert_string_equal(info.id.slurm_job, "4242");
        procfs_scanner_free(scanner);
    }

    /* The pid taken again by a process forked without an exec (ns_last_pid, where this may
     * write it): its exit, the pid's second with no exec between, sets the record aside, so
     * that process is never taken for the sleep. */
    {
        pid_t again = -1;

        for (int i = 0; i < 20 && again != child; i++) {
            FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "we");
            int written;

            if (!f)
                break;
            written = fprintf(f, "%d", (int)child - 1);
            if (fclose(f) != 0 || written < 0)
                break;
            again = fork();
            assert_true(again >= 0);
            if (again == 0) {
                sleep_ms(20);
                _exit(0);
            }
            assert_int_equal(waitpid(again, &status, 0), again);
        }
        if (again != child)
            fprintf(stderr, "note: pid %d not taken again here: a reused pid is not tested\n",
                    (int)child);
        else {
            for (int i = 0; i < 100 && exec_watch_lookup(w, (uint32_t)child, &rec) == 0; i++)
                sleep_ms(20);
            assert_int_equal(exec_watch_lookup(w, (uint32_t)child, &rec), -ESRCH);
        }
    }
    w = exec_watch_stop(w);
}

static bool has_exit(const struct exec_exit *v, int n, pid_t pid, pid_t parent) {
    for (int i = 0; i < n; i++)
        if (v[i].pid == (uint32_t)pid && v[i].parent == (uint32_t)parent)
            return true;
    return false;
}

/* Every exit is listed once, with its parent, an exec'd program's and a forked copy's
 * alike (the CPU split reads a workload's cgroup after an exit in it). */
static void test_exits_listed_once(void **state) {
    _cleanup_(closep) int procfs = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    static struct exec_exit exits[EXEC_WATCH_MAX_EXITS];
    struct exec_watch *w = NULL;
    pid_t forked, execd;
    bool seen_forked = false, seen_execd = false;
    int r, n, status;

    (void)state;
    assert_true(procfs >= 0);
    r = exec_watch_start(procfs, &w);
    if (r < 0) {
        fprintf(stderr, "skipped: the process connector is not available here (%s)\n",
                strerror(-r));
        skip();
    }
    sleep_ms(50);
    forked = fork();
    assert_true(forked >= 0);
    if (forked == 0)
        _exit(0);
    execd = fork();
    assert_true(execd >= 0);
    if (execd == 0) {
        static char a0[] = "true";
        char *argv[] = {a0, NULL}, *envp[] = {NULL};

        execve("/bin/true", argv, envp);
        _exit(127);
    }
    assert_int_equal(waitpid(forked, &status, 0), forked);
    assert_int_equal(waitpid(execd, &status, 0), execd);
    for (int i = 0; i < 100 && !(seen_forked && seen_execd); i++) {
        sleep_ms(20);
        n = exec_watch_take_exits(w, exits);
        if (n < 0) /* the kernel dropped events on a busy machine: nothing to check */
            continue;
        seen_forked = seen_forked || has_exit(exits, n, forked, getpid());
        seen_execd = seen_execd || has_exit(exits, n, execd, getpid());
    }
    if (!seen_forked && !seen_execd) {
        fprintf(stderr, "skipped: no process events are delivered here\n");
        w = exec_watch_stop(w);
        skip();
    }
    assert_true(seen_forked && seen_execd);
    n = exec_watch_take_exits(w, exits);
    assert_true(n >= 0);
    assert_false(has_exit(exits, n, forked, getpid()) || has_exit(exits, n, execd, getpid()));

    /* More exits than the list holds before anyone takes them: the list says it is not
     * complete (the CPU split then reads every cgroup), once, and starts again. */
    for (unsigned i = 0; i < EXEC_WATCH_MAX_EXITS + 16; i++) {
        pid_t kid = fork();

        assert_true(kid >= 0);
        if (kid == 0)
            _exit(0);
        assert_int_equal(waitpid(kid, &status, 0), kid);
    }
    sleep_ms(200);
    assert_int_equal(exec_watch_take_exits(w, exits), -ENOBUFS);
    assert_true(exec_watch_take_exits(w, exits) >= 0);
    w = exec_watch_stop(w);
}

/*
 * Records kept by someone else (the simulated node writes each program's /proc files at its
 * exec): a lookup reads the newest record of the pid, whatever ran since, and a pid with no
 * record is unknown. A record with an unreadable stat is missed, not half read.
 */
static void test_records_read_at_lookup(void **state) {
    static struct exec_exit exits[EXEC_WATCH_MAX_EXITS];
    char root[256], stat[512];
    struct exec_watch *w = NULL;
    struct exec_watch_stats st;
    struct exec_record rec;

    (void)state;
    ASSERT_OK(test_mkdtemp(root, sizeof(root)));
    ASSERT_OK(
        test_write_file(root, "3101/stat",
                        test_proc_stat_line(stat, sizeof(stat), 3101, "infer-1", 'S', 0, 0, 270)));
    ASSERT_OK(test_write_file(root, "3101/cgroup",
                              "0::/system.slice/slurmstepd.scope/job_4201/step_0/user/task_0\n"));
    ASSERT_OK(test_write_file(root, "3102/stat", "3102 (broken"));
    ASSERT_OK(test_write_file(root, "3102/cgroup", "0::/\n"));
    ASSERT_OK(exec_watch_open_records(open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), &w));

    ASSERT_OK(exec_watch_lookup(w, 3101, &rec));
    assert_string_equal(rec.comm, "infer-1");
    assert_int_equal(rec.starttime, 270);
    assert_true(rec.identity.slurm.job_id_valid);
    assert_int_equal(rec.identity.slurm.job_id, 4201);
    assert_string_equal(rec.identity.slurm.step, "0");
    /* its pid starts another program: the newer record */
    ASSERT_OK(
        test_write_file(root, "3101/stat",
                        test_proc_stat_line(stat, sizeof(stat), 3101, "infer-9", 'S', 0, 0, 990)));
    ASSERT_OK(exec_watch_lookup(w, 3101, &rec));
    assert_string_equal(rec.comm, "infer-9");
    assert_int_equal(rec.starttime, 990);

    assert_int_equal(exec_watch_lookup(w, 3102, &rec), -ESRCH);
    assert_int_equal(exec_watch_lookup(w, 4000, &rec), -ESRCH);
    exec_watch_get_stats(w, &st);
    assert_int_equal(st.execs, 0);
    assert_int_equal(st.read, 2);
    assert_int_equal(st.missed, 2);
    assert_int_equal(exec_watch_take_exits(w, exits), 0); /* it notes no exits */
    w = exec_watch_stop(w);
    test_rm_rf(root);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_process_known_after_exit),
        cmocka_unit_test(test_exits_listed_once),
        cmocka_unit_test(test_records_read_at_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
