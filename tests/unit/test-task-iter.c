/* SPDX-License-Identifier: MIT */
/*
 * The eBPF task iterator (src/proc/task_iter.c) on the running kernel, and the process
 * scanner reading it or, forced off, /proc. Busy children: the iterator's CPU time of each
 * must lie between its schedstat read just before and just after (the same kernel clock,
 * se.sum_exec_runtime, summed over threads). Where the kernel refuses BPF (no root, no
 * BTF, a sandbox) the iterator's cases are skipped and say why; the forced-off case always
 * runs.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "fileio.h"
#include "procfs.h"
#include "syscall_filter.h"
#include "task_iter.h"

#define CHILDREN 3
#define SPIN_THREADS 3 /* besides the main thread, in the last child */

static void *spin(void *arg) {
    for (;;)
        ;
    return arg;
}

/* A busy child; with_threads: SPIN_THREADS more spinning threads. */
static pid_t busy_child(bool with_threads) {
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (int i = 0; with_threads && i < SPIN_THREADS; i++) {
            pthread_t t;

            if (pthread_create(&t, NULL, spin, NULL) != 0)
                _exit(3);
        }
        spin(NULL);
    }
    return pid;
}

static void reap(pid_t pid) {
    int status;

    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
}

/* Sum of schedstat's on-CPU ns over the process's threads. */
static uint64_t schedstat_ns(pid_t pid) {
    char path[64], buf[128];
    uint64_t sum = 0;
    struct dirent *de;
    DIR *d;

    (void)snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    d = opendir(path);
    assert_non_null(d);
    while ((de = readdir(d))) {
        unsigned long long ns;
        char rel[352];
        int n;

        if (de->d_name[0] == '.')
            continue;
        (void)snprintf(rel, sizeof(rel), "%s/%s/schedstat", path, de->d_name);
        n = read_file_into_at(AT_FDCWD, rel, buf, sizeof(buf));
        if (n < 0)
            continue; /* a thread just starting or gone */
        assert_int_equal(sscanf(buf, "%llu", &ns), 1);
        sum += ns;
    }
    (void)closedir(d);
    return sum;
}

/* Without scheduler statistics the kernel writes "0 0 0". The running task's own on-CPU
 * time may still read 0 (it is brought up to date when the task is switched out), but its
 * count of times it was scheduled is at least 1. */
static bool schedstat_works(void) {
    unsigned long long ns, wait, slices;
    char buf[128];
    int n = read_file_into_at(AT_FDCWD, "/proc/self/schedstat", buf, sizeof(buf));

    return n > 0 && sscanf(buf, "%llu %llu %llu", &ns, &wait, &slices) == 3 && slices > 0;
}

/* The iterator, or NULL after skipping with the reason when the kernel refuses it. */
static struct task_iter *open_or_skip(void) {
    struct task_iter *ti = NULL;
    const char *reason = NULL;
    int fd = open_root("/proc"), r;

    ASSERT_OK(fd);
    r = task_iter_open(fd, &ti, &reason);
    (void)close(fd);
    /* Refused: no permission (not root, a container's seccomp profile), no BTF, a build
     * without libbpf, a kernel without task iterators or lacking a field, another pid
     * namespace. Anything else is a failure. */
    if (r == -EPERM || r == -EACCES || r == -ENOENT || r == -EOPNOTSUPP || r == -EINVAL ||
        r == -ELIBACC || r == -ENOSYS || r == -EXDEV || r == -E2BIG || r == -ESRCH) {
        print_message("skipped: no eBPF task iterator here: %s (%s)\n", reason, strerror(-r));
        return NULL;
    }
    ASSERT_OK(r);
    return ti;
}

/* A thread that waits until its pipe closes. */
static void *park(void *arg) {
    char c;

    while (read(*(int *)arg, &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* With another thread running, the loader is not forked (the child could hang on a lock
 * that thread held at the fork): -EBUSY, with the reason, whatever the kernel allows. */
static void test_refused_beside_threads(void **state) {
    struct task_iter *ti = NULL;
    const char *reason = NULL;
    int fd = open_root("/proc"), p[2], r;
    pthread_t t;

    ASSERT_OK(fd);
    assert_int_equal(pipe(p), 0);
    assert_int_equal(pthread_create(&t, NULL, park, &p[0]), 0);
    r = task_iter_open(fd, &ti, &reason);
    (void)close(p[1]);
    assert_int_equal(pthread_join(t, NULL), 0);
    (void)close(p[0]);
    (void)close(fd);
    if (r == -EOPNOTSUPP || r == -ENOENT) { /* no eBPF in this build, no BTF: said first */
        print_message("skipped: %s\n", reason);
        skip();
    }
    assert_int_equal(r, -EBUSY);
    assert_null(ti);
    assert_non_null(strstr(reason, "threads"));
}

static const struct task_iter_process *find(const struct task_iter_process *rows, int n,
                                            pid_t pid) {
    for (int i = 0; i < n; i++)
        if (rows[i].pid == (uint32_t)pid)
            return &rows[i];
    return NULL;
}

/* Each busy child's CPU time from the iterator, walking processes (one record each, their
 * threads summed in the kernel, Linux 6.7 and later) or every task. */
static void cpu_matches_schedstat(bool walk_tasks) {
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 200000000L};
    uint64_t before[CHILDREN], after[CHILDREN];
    const struct task_iter_process *rows;
    pid_t kids[CHILDREN];
    struct task_iter *ti;
    int n;

    if (!schedstat_works()) {
        print_message("skipped: this kernel keeps no scheduler statistics to compare with\n");
        skip();
    }
    ti = open_or_skip();
    if (!ti)
        skip();
    if (walk_tasks)
        task_iter_limit_processes(ti, 0);
    else if (!task_iter_walks_processes(ti)) {
        print_message("skipped: this kernel has no open-coded task iterator (Linux 6.7)\n");
        task_iter_free(ti);
        skip();
    }
    for (int i = 0; i < CHILDREN; i++)
        kids[i] = busy_child(i == CHILDREN - 1);
    (void)nanosleep(&nap, NULL);
    for (int i = 0; i < CHILDREN; i++)
        before[i] = schedstat_ns(kids[i]);
    n = task_iter_read(ti, &rows);
    for (int i = 0; i < CHILDREN; i++)
        after[i] = schedstat_ns(kids[i]);
    ASSERT_OK(n);
    assert_int_equal(task_iter_walks_processes(ti), !walk_tasks);
    for (int i = 0; i < n; i++)
        if (i > 0)
            assert_true(rows[i - 1].pid < rows[i].pid); /* ascending, one row a process */
    for (int i = 0; i < CHILDREN; i++) {
        const struct task_iter_process *p = find(rows, n, kids[i]);

        assert_non_null(p);
        print_message("pid %d: schedstat %llu .. %llu ns, iterator %llu ns, %u threads\n",
                      (int)kids[i], (unsigned long long)before[i], (unsigned long long)after[i],
                      (unsigned long long)p->cpu_ns, p->threads);
        assert_true(before[i] > 0);
        assert_true(p->cpu_ns >= before[i]);
        assert_true(p->cpu_ns <= after[i]);
        assert_int_equal(p->ppid, (uint32_t)getpid());
        assert_int_equal(p->threads, i == CHILDREN - 1 ? SPIN_THREADS + 1 : 1);
        assert_true(p->state == 'R' || p->state == 'S');
    }
    /* A kernel thread: kthreadd is pid 2 in the initial pid namespace. */
    {
        const struct task_iter_process *k = find(rows, n, 2);

        assert_non_null(k);
        assert_true(k->flags & PROC_PF_KTHREAD);
        assert_string_equal(k->comm, "kthreadd");
    }
    for (int i = 0; i < CHILDREN; i++)
        reap(kids[i]);
    task_iter_free(ti);
}

/* More processes than one window of the process walk's array holds (32 KiB, 512 records):
 * each is read, with its parent, through the windows mapped in turn; and, when the process
 * walk may serve fewer, by the walk of every task instead. */
static void test_many_processes(void **state) {
    enum { MANY = 1300 };
    const struct task_iter_process *rows;
    struct task_iter *ti;
    bool processes;
    pid_t *kids;
    int n;

    (void)state;
    ti = open_or_skip();
    if (!ti)
        skip();
    kids = calloc(MANY, sizeof(*kids));
    assert_non_null(kids);
    for (int i = 0; i < MANY; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
            for (;;)
                pause();
        }
    }
    /* Then with the process walk allowed fewer than there are, twice (the second read
     * does not try it): every task is walked, and nobody is missing. Then with room for
     * all again: the process walk is back. */
    processes = task_iter_walks_processes(ti);
    for (int pass = 0; pass < 4; pass++) {
        if (pass == 1)
            task_iter_limit_processes(ti, MANY / 2);
        if (pass == 3)
            task_iter_limit_processes(ti, UINT32_MAX);
        n = task_iter_read(ti, &rows);
        ASSERT_OK(n);
        print_message("%d processes, walking %s\n", n,
                      task_iter_walks_processes(ti) ? "processes" : "tasks");
        assert_int_equal(task_iter_walks_processes(ti), (pass == 0 || pass == 3) && processes);
        for (int i = 1; i < n; i++)
            assert_true(rows[i - 1].pid < rows[i].pid);
        for (int i = 0; i < MANY; i++) {
            const struct task_iter_process *p = find(rows, n, kids[i]);

            assert_non_null(p);
            assert_int_equal(p->ppid, (uint32_t)getpid());
            assert_int_equal(p->threads, 1);
        }
    }
    for (int i = 0; i < MANY; i++)
        reap(kids[i]);
    free(kids);
    task_iter_free(ti);
}

static void test_cpu_matches_schedstat(void **state) {
    (void)state;
    cpu_matches_schedstat(false);
}

static void test_cpu_matches_schedstat_task_walk(void **state) {
    (void)state;
    cpu_matches_schedstat(true);
}

/* A busy child's CPU time between two scans and its start time, from a scanner that reads
 * the iterator (when allowed) and from one forced to list /proc: both as its stat says. */
static void scan_busy_child(bool try_bpf) {
    struct procfs_options opts = {.try_bpf = try_bpf};
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 300000000L};
    const struct procfs_process *rows;
    struct procfs_scanner *s = NULL;
    struct procfs_lookup look;
    struct procfs_stats st0, st;
    uint64_t before, after, delta = UINT64_MAX, starttime = 0;
    const char *reason = NULL;
    bool uses, is_new = false;
    pid_t kid;
    int fd, n, error = 0, live = 0, fresh = 0;

    fd = open_root("/proc");
    ASSERT_OK(fd);
    ASSERT_OK(procfs_scanner_new(fd, &opts, &s));
    (void)close(fd);
    uses = procfs_uses_bpf(s, &reason, &error);
    if (!try_bpf) {
        assert_false(uses);
        assert_string_equal(reason, "turned off");
        assert_int_equal(error, 0);
    } else if (!uses) {
        print_message("skipped: the scanner lists /proc: %s (%s)\n", reason, strerror(-error));
        procfs_scanner_free(s);
        skip();
    }
    ASSERT_OK(procfs_scan(s, &rows));
    kid = busy_child(false);
    (void)nanosleep(&nap, NULL);
    ASSERT_OK(procfs_lookup(s, (uint32_t)kid, &look)); /* as NVML's pids are resolved */
    n = procfs_scan(s, &rows);                         /* new: its whole CPU time */
    ASSERT_OK(n);
    for (int i = 0; i < n; i++)
        if (rows[i].pid == (uint32_t)kid) {
            is_new = rows[i].flags & PROCFS_PROCESS_NEW;
            starttime = rows[i].starttime;
        }
    assert_true(is_new);
    assert_int_equal(starttime, look.starttime); /* the cache key is stat's start time */
    before = schedstat_ns(kid);
    ASSERT_OK(procfs_scan(s, &rows));
    procfs_get_stats(s, &st0);
    (void)nanosleep(&nap, NULL);
    n = procfs_scan(s, &rows);
    after = schedstat_ns(kid);
    ASSERT_OK(n);
    procfs_get_stats(s, &st);
    for (int i = 0; i < n; i++) {
        if (rows[i].flags & PROCFS_PROCESS_EXITED)
            continue;
        live++;
        fresh += (rows[i].flags & PROCFS_PROCESS_NEW) != 0;
        if (rows[i].pid == (uint32_t)kid)
            delta = rows[i].cpu_ticks_delta;
    }
    assert_true(procfs_uses_bpf(s, NULL, NULL) == uses);
    /* The last scan's rows by pid, as the CPU split asks after an exit: the iterator's are
     * in pid order; a listing's are not looked up. */
    for (int i = 0; i < n; i++)
        if (rows[i].pid == (uint32_t)kid)
            assert_ptr_equal(procfs_scanned_identity(s, (uint32_t)kid),
                             uses ? rows[i].identity : NULL);
    if (uses)
        assert_ptr_equal(procfs_scanned_identity(s, 1), rows[0].pid == 1 ? rows[0].identity : NULL);
    assert_null(procfs_scanned_identity(s, PROC_PID_LIMIT - 1));
    reap(kid);
    procfs_scanner_free(s);
    assert_true(delta != UINT64_MAX);
    /* 300 ms of a spinning child (fewer on a loaded machine), in 10 ms ticks: the window
     * between the two scans is inside the schedstat window around them, within the ticks
     * cut off at each end, */
    print_message("%s: %llu ticks between scans, schedstat around them %llu ns\n",
                  uses ? "iterator" : "/proc", (unsigned long long)delta,
                  (unsigned long long)(after - before));
    assert_true(delta * 10000000ULL <= after - before + 20000000ULL);
    /* and covers most of it: the schedstat window is wider only by the first scan's own
     * time (longer on a loaded machine, hence the slack) */
    assert_true(delta * 10000000ULL * 3 + 30000000ULL >= after - before);
    /* The listing reads a file of every process; the iterator reads stat only for the
     * processes new in that scan, and for those whose first exec it saw (a busy machine
     * starts programs meanwhile), and for a new one that exited before the rest of its
     * identity was read (vanished, not a row: seen in a CI run beside other tests). */
    if (uses)
        assert_true(st.stat_reads - st0.stat_reads <= (uint64_t)fresh + st.exec_stat_reads -
                                                          st0.exec_stat_reads + st.vanished -
                                                          st0.vanished);
    else
        assert_true(st.stat_reads - st0.stat_reads + st.schedstat_reads - st0.schedstat_reads +
                        st.vanished - st0.vanished >=
                    (uint64_t)live);
}

static void test_scanner_reads_iterator(void **state) {
    (void)state;
    scan_busy_child(true);
}

static void test_scanner_forced_off(void **state) {
    (void)state;
    scan_busy_child(false);
}

/* A process that exits between two scans of the iterator comes once more, flagged exited
 * (its series is marked inactive from it), then no more. */
static void test_scanner_iterator_exit(void **state) {
    struct procfs_options opts = {.try_bpf = true};
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 200000000L};
    const struct procfs_process *rows;
    struct procfs_scanner *s = NULL;
    const char *reason = NULL;
    int fd, n, exited = 0, listed = 0, error = 0;
    pid_t kid;

    (void)state;
    fd = open_root("/proc");
    ASSERT_OK(fd);
    ASSERT_OK(procfs_scanner_new(fd, &opts, &s));
    (void)close(fd);
    if (!procfs_uses_bpf(s, &reason, &error)) {
        print_message("skipped: the scanner lists /proc: %s (%s)\n", reason, strerror(-error));
        procfs_scanner_free(s);
        skip();
    }
    kid = busy_child(false);
    ASSERT_OK(procfs_scan(s, &rows));
    (void)nanosleep(&nap, NULL);
    ASSERT_OK(procfs_scan(s, &rows)); /* a baseline of its CPU time */
    (void)nanosleep(&nap, NULL);
    reap(kid);
    n = procfs_scan(s, &rows);
    ASSERT_OK(n);
    for (int i = 0; i < n; i++)
        if (rows[i].pid == (uint32_t)kid) {
            assert_true(rows[i].flags & PROCFS_PROCESS_EXITED);
            exited++;
        }
    assert_int_equal(exited, 1);
    n = procfs_scan(s, &rows);
    ASSERT_OK(n);
    for (int i = 0; i < n; i++)
        listed += rows[i].pid == (uint32_t)kid;
    assert_int_equal(listed, 0);
    procfs_scanner_free(s);
}

/* Under the steady state's system-call filter a new iterator is made and read each scan
 * (bpf(BPF_ITER_CREATE), read, close), and no other bpf() command gets through. In a
 * child, which keeps the filter to itself. */
static void test_read_under_filter(void **state) {
    struct task_iter *ti;
    pid_t pid;
    int status;

    (void)state;
    if (!syscall_filter_supported()) {
        print_message("skipped: this build cannot run under the filter\n");
        skip();
    }
    ti = open_or_skip();
    if (!ti)
        skip();
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const struct task_iter_process *rows;
        union bpf_attr attr = {0};
        int n;

        if (syscall_filter_install(true) < 0)
            _exit(2);
        (void)task_iter_read(ti, &rows); /* twice: a new iterator each time */
        n = task_iter_read(ti, &rows);
        if (n <= 0 || !find(rows, n, getpid()))
            _exit(3);
        if (syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)) != -1 || errno != EPERM)
            _exit(4);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    task_iter_free(ti);
}

static void test_state_letters(void **state) {
    (void)state;
    assert_int_equal(task_iter_state_letter(0x0, 0), 'R');
    assert_int_equal(task_iter_state_letter(0x1, 0), 'S');
    assert_int_equal(task_iter_state_letter(0x2, 0), 'D');
    assert_int_equal(task_iter_state_letter(0x4, 0), 'T');
    assert_int_equal(task_iter_state_letter(0x8, 0), 't');
    assert_int_equal(task_iter_state_letter(0x0, 0x20), 'Z');      /* EXIT_ZOMBIE */
    assert_int_equal(task_iter_state_letter(0x0, 0x10), 'X');      /* EXIT_DEAD */
    assert_int_equal(task_iter_state_letter(0x402, 0), 'I');       /* TASK_IDLE */
    assert_int_equal(task_iter_state_letter(0x40, 0), 'P');        /* TASK_PARKED */
    assert_int_equal(task_iter_state_letter(0x1 | 0x100, 0), 'S'); /* bits beyond report */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_letters),
        cmocka_unit_test(test_cpu_matches_schedstat),
        cmocka_unit_test(test_many_processes),
        cmocka_unit_test(test_cpu_matches_schedstat_task_walk),
        cmocka_unit_test(test_scanner_reads_iterator),
        cmocka_unit_test(test_scanner_forced_off),
        cmocka_unit_test(test_scanner_iterator_exit),
        cmocka_unit_test(test_read_under_filter),
        cmocka_unit_test(test_refused_beside_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
