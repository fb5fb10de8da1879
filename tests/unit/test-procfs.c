/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "procfs.h"
#include "testutil.h"

/*
 * The scanner against fixture trees (tests/trees/procfs-*), each copied into a fresh
 * mkdtemp directory so a test can make processes start, exit and change between scans.
 * btime in every tree is 1700000000; the scanner runs with CLK_TCK 100.
 */

/* cmocka 1.1 has no assert_double_equal. */
static void assert_near(double got, double want, double eps) {
    if (got - want > eps || want - got > eps)
        fail_msg("%.9f is not %.9f", got, want);
}

struct fixture {
    char dir[PATH_MAX];
    int fd;
    struct procfs_scanner *s;
};

static const char *copy_dst_root;
static size_t copy_src_len;

static int copy_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    char dst[PATH_MAX], link[PATH_MAX];
    _cleanup_(freep) char *data = NULL;
    size_t size;
    ssize_t n;

    (void)ftw;
    (void)st;
    (void)snprintf(dst, sizeof(dst), "%s%s", copy_dst_root, path + copy_src_len);
    switch (flag) {
    case FTW_D:
        return mkdir(dst, 0755) < 0 && errno != EEXIST ? -1 : 0;
    case FTW_SL:
        n = readlink(path, link, sizeof(link) - 1);
        if (n < 0)
            return -1;
        link[n] = '\0';
        return symlink(link, dst);
    case FTW_F:
        if (read_virtual_file_at(AT_FDCWD, path, 1 << 20, &data, &size) < 0)
            return -1;
        return write_file_at(AT_FDCWD, dst, data, size) < 0 ? -1 : 0;
    default:
        return -1;
    }
}

static void fixture_setup(struct fixture *f, const char *tree) {
    char src[PATH_MAX], rel[128];
    /* Kept fds are on by default only on a real procfs: exercise them here too. */
    struct procfs_options opts = {.clk_tck = 100, .max_kept_fds = 100};

    (void)snprintf(rel, sizeof(rel), "tests/trees/%s", tree);
    test_source_path(src, sizeof(src), rel);
    ASSERT_OK(test_mkdtemp(f->dir, sizeof(f->dir)));
    copy_dst_root = f->dir;
    copy_src_len = strlen(src);
    assert_int_equal(nftw(src, copy_entry, 16, FTW_PHYS), 0);
    f->fd = open_root(f->dir);
    ASSERT_OK(f->fd);
    ASSERT_OK(procfs_scanner_new(f->fd, &opts, &f->s));
}

static void fixture_teardown(struct fixture *f) {
    f->s = procfs_scanner_free(f->s);
    assert_null(f->s);
    (void)close(f->fd);
    test_rm_rf(f->dir);
}

/* Writes <dir>/<rel> (creating directories). */
static void put(struct fixture *f, const char *rel, const char *content) {
    ASSERT_OK(test_write_file(f->dir, rel, content));
}

static void rm(struct fixture *f, const char *rel) {
    char path[PATH_MAX + 64];

    (void)snprintf(path, sizeof(path), "%s/%s", f->dir, rel);
    test_rm_rf(path);
}

static void put_stat(struct fixture *f, unsigned pid, const char *comm, char state,
                     unsigned long long utime, unsigned long long stime, unsigned long long start) {
    char rel[32], line[512];

    (void)snprintf(rel, sizeof(rel), "%u/stat", pid);
    put(f, rel, test_proc_stat_line(line, sizeof(line), pid, comm, state, utime, stime, start));
}

static const struct procfs_process *find(const struct procfs_process *rows, int n, uint32_t pid,
                                         unsigned flags) {
    for (int i = 0; i < n; i++)
        if (rows[i].pid == pid &&
            (rows[i].flags & PROCFS_PROCESS_EXITED) == (flags & PROCFS_PROCESS_EXITED))
            return &rows[i];
    return NULL;
}

static const struct procfs_process *must_find(const struct procfs_process *rows, int n,
                                              uint32_t pid, unsigned flags) {
    const struct procfs_process *p = find(rows, n, pid, flags);

    if (!p)
        fail_msg("pid %u (flags %u) not in scan", pid, flags);
    return p;
}

static int scan(struct fixture *f, const struct procfs_process **rows) {
    int n = procfs_scan(f->s, rows);

    ASSERT_OK(n);
    return n;
}

static struct procfs_stats stats(struct fixture *f) {
    struct procfs_stats st;

    procfs_get_stats(f->s, &st);
    return st;
}

static void test_basic_tree(void **state) {
    struct fixture f;
    const struct procfs_process *rows, *p;
    struct procfs_stats st;
    int n;

    fixture_setup(&f, "procfs-basic");
    n = scan(&f, &rows);
    /* 1, 2, 100, 200, 500, 600 live; 300 has no stat, 400 is malformed, 700 and self are
     * symlinks, 0123 and sys are not pid names. */
    assert_int_equal(n, 6);
    for (int i = 0; i < n; i++) {
        assert_int_equal(rows[i].flags, PROCFS_PROCESS_NEW);
        assert_int_equal(rows[i].cpu_ticks_delta, 0); /* first scan: baseline only */
        assert_non_null(rows[i].identity);
    }

    p = must_find(rows, n, 100, 0);
    assert_string_equal(p->comm, "bash");
    assert_int_equal(p->ppid, 1);
    assert_int_equal(p->state, 'S');
    assert_int_equal(p->starttime, 12345);
    assert_near(p->start_time_seconds, 1700000123.45, 1e-6);
    assert_int_equal(p->cpu_ticks, 225);
    assert_false(p->kernel_thread);
    assert_int_equal(p->identity->kind, IDENTITY_NONE);
    assert_string_equal(p->identity->systemd_unit, "session-3.scope");

    p = must_find(rows, n, 200, 0);
    assert_string_equal(p->comm, "my) (prog");
    assert_int_equal(p->cpu_ticks, 15);
    assert_int_equal(p->identity->kind, IDENTITY_CONTAINER);
    assert_int_equal(p->identity->runtime, RUNTIME_DOCKER);
    assert_string_equal(p->identity->container_id,
                        "b176419186d75a44628851daf7841d3374a2ec56d0b038ee3bd1e0c6d331e5b1");

    p = must_find(rows, n, 2, 0);
    assert_true(p->kernel_thread);
    assert_int_equal(p->identity->kind, IDENTITY_NONE);
    assert_int_equal(p->cpu_ticks, 3);

    p = must_find(rows, n, 500, 0); /* malformed cgroup: kept, no identity */
    assert_int_equal(p->identity->kind, IDENTITY_NONE);
    assert_string_equal(p->identity->systemd_unit, "");

    p = must_find(rows, n, 600, 0);
    assert_int_equal(p->state, 'Z');
    assert_int_equal(p->cpu_ticks, 42);

    st = stats(&f);
    assert_int_equal(st.scans, 1);
    assert_int_equal(st.stat_reads, 7);   /* 1 2 100 200 400 500 600 */
    assert_int_equal(st.cgroup_reads, 5); /* not the kernel thread, not 400 */
    assert_int_equal(st.environ_reads, 0);
    assert_int_equal(st.vanished, 1);     /* 300 */
    assert_int_equal(st.parse_errors, 2); /* 400 stat, 500 cgroup */
    assert_int_equal(st.read_errors, 1);  /* 700: a symlink, refused by O_NOFOLLOW */
    assert_int_equal(st.cached, 6);
    fixture_teardown(&f);
}

/* A known process whose stat cannot be read in one scan (cut short here; out of
 * descriptors on a real node) is still there: not reported exited, and not new with its
 * whole lifetime's CPU time at the next scan, which counts what it used since its last
 * read. */
static void test_unread_is_not_an_exit(void **state) {
    struct fixture f;
    const struct procfs_process *rows, *p;
    int n;

    (void)state;
    fixture_setup(&f, "procfs-basic");
    (void)scan(&f, &rows);
    put(&f, "100/stat", "100 (bash) S 1 100 100 0 -1 4194304 1000");
    n = scan(&f, &rows);
    assert_null(find(rows, n, 100, PROCFS_PROCESS_EXITED));
    put_stat(&f, 100, "bash", 'S', 153, 77, 12345); /* +5 since its last read */
    n = scan(&f, &rows);
    p = must_find(rows, n, 100, 0);
    assert_int_equal(p->flags, 0);
    assert_int_equal(p->cpu_ticks_delta, 5);
    fixture_teardown(&f);
}

static void test_deltas_exits_and_zombies(void **state) {
    struct fixture f;
    const struct procfs_process *rows, *p;
    const struct workload_identity *docker;
    int n;

    fixture_setup(&f, "procfs-basic");
    n = scan(&f, &rows);
    docker = must_find(rows, n, 200, 0)->identity;

    put_stat(&f, 100, "bash", 'S', 250, 80, 12345);  /* +100 +5 */
    put_stat(&f, 600, "defunct", 'Z', 45, 2, 25000); /* the zombie's last ticks count */
    put_stat(&f, 800, "make", 'R', 7, 3, 60000);     /* started since the last scan */
    put(&f, "800/cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n");
    /* Started before 600, which the last scan saw: there then, and missed (its identity
     * read failed for want of fds): its 30 days of CPU time are not this window's. */
    put_stat(&f, 900, "postgres", 'S', 500000, 2000, 20000);
    put(&f, "900/cgroup", "0::/system.slice/postgresql.service\n");
    rm(&f, "200"); /* exited */

    n = scan(&f, &rows);
    assert_int_equal(n, 8); /* 1 2 100 500 600 800 900 live + 200 exited */
    p = must_find(rows, n, 900, 0);
    assert_int_equal(p->flags, PROCFS_PROCESS_NEW);
    assert_int_equal(p->cpu_ticks_delta, 0);
    p = must_find(rows, n, 100, 0);
    assert_int_equal(p->flags, 0);
    assert_int_equal(p->cpu_ticks, 330);
    assert_int_equal(p->cpu_ticks_delta, 105);
    p = must_find(rows, n, 600, 0);
    assert_int_equal(p->cpu_ticks_delta, 5);
    p = must_find(rows, n, 800, 0);
    assert_int_equal(p->flags, PROCFS_PROCESS_NEW);
    assert_int_equal(p->cpu_ticks_delta, 10);
    p = must_find(rows, n, 1, 0);
    assert_int_equal(p->cpu_ticks_delta, 0);

    p = must_find(rows, n, 200, PROCFS_PROCESS_EXITED);
    assert_int_equal(p->flags, PROCFS_PROCESS_EXITED);
    assert_int_equal(p->cpu_ticks, 15);
    assert_int_equal(p->cpu_ticks_delta, 0);
    assert_ptr_equal(p->identity, docker); /* same cached identity, still valid */
    assert_string_equal(p->identity->container_id,
                        "b176419186d75a44628851daf7841d3374a2ec56d0b038ee3bd1e0c6d331e5b1");
    assert_string_equal(p->comm, "my) (prog");
    assert_int_equal(stats(&f).cached, 7);

    /* Counter going backwards never gives a negative or wrapped delta. */
    put_stat(&f, 100, "bash", 'S', 10, 10, 12345);
    put_stat(&f, 900, "postgres", 'S', 500003, 2000, 20000); /* counted from there */
    n = scan(&f, &rows);
    assert_int_equal(n, 7); /* the exited row is reported once */
    assert_int_equal(must_find(rows, n, 900, 0)->cpu_ticks_delta, 3);
    assert_null(find(rows, n, 200, PROCFS_PROCESS_EXITED));
    assert_int_equal(must_find(rows, n, 100, 0)->cpu_ticks_delta, 0);
    put_stat(&f, 100, "bash", 'S', 11, 10, 12345);
    n = scan(&f, &rows);
    assert_int_equal(must_find(rows, n, 100, 0)->cpu_ticks_delta, 1);

    /* The zombie is reaped: exited with its last ticks, no further delta. */
    rm(&f, "600");
    n = scan(&f, &rows);
    p = must_find(rows, n, 600, PROCFS_PROCESS_EXITED);
    assert_int_equal(p->cpu_ticks, 47);
    assert_int_equal(p->state, 'Z');
    fixture_teardown(&f);
}

static void test_pid_reuse(void **state) {
    struct fixture f;
    const struct procfs_process *rows, *p;
    int n;

    fixture_setup(&f, "procfs-basic");
    (void)scan(&f, &rows);
    assert_int_equal(stats(&f).cgroup_reads, 5);

    /* pid 100 exits and the pid comes back as another process in a container. */
    put_stat(&f, 100, "python", 'R', 30, 2, 99999);
    put(&f, "100/cgroup",
        "0::/system.slice/"
        "docker-2fa3e04b676df750842faf017052dd37ea0cc5bc7259a3487a1718c7fe100c94.scope\n");
    n = scan(&f, &rows);
    p = must_find(rows, n, 100, 0);
    assert_int_equal(p->flags, PROCFS_PROCESS_NEW);
    assert_int_equal(p->starttime, 99999);
    assert_string_equal(p->comm, "python");
    assert_int_equal(p->cpu_ticks_delta, 32); /* its own ticks, not 32 - 225 */
    assert_int_equal(p->identity->kind, IDENTITY_CONTAINER);
    assert_string_equal(p->identity->container_id,
                        "2fa3e04b676df750842faf017052dd37ea0cc5bc7259a3487a1718c7fe100c94");

    p = must_find(rows, n, 100, PROCFS_PROCESS_EXITED);
    assert_int_equal(p->starttime, 12345);
    assert_string_equal(p->comm, "bash");
    assert_string_equal(p->identity->systemd_unit, "session-3.scope");
    assert_int_equal(stats(&f).cgroup_reads, 6);
    fixture_teardown(&f);
}

static void test_identity_read_once(void **state) {
    struct fixture f;
    const struct procfs_process *rows, *p;
    int n;

    fixture_setup(&f, "procfs-basic");
    (void)scan(&f, &rows);
    rm(&f, "200/cgroup");
    put(&f, "100/cgroup", "0::/system.slice/moved.service\n");
    for (int i = 0; i < 3; i++) {
        n = scan(&f, &rows);
        p = must_find(rows, n, 200, 0);
        assert_int_equal(p->identity->kind, IDENTITY_CONTAINER);
        assert_int_equal(p->identity->runtime, RUNTIME_DOCKER);
        /* Cached: a running process's cgroup is not re-read. */
        assert_string_equal(must_find(rows, n, 100, 0)->identity->systemd_unit, "session-3.scope");
    }
    assert_int_equal(stats(&f).cgroup_reads, 5);
    assert_int_equal(stats(&f).stat_reads, 28); /* 7 per scan */
    assert_int_equal(stats(&f).scans, 4);
    fixture_teardown(&f);
}

/* slurmstepd forks a task, attaches it to the step's cgroup, then execs the program: a scan
 * between fork and attach saw slurmstepd's cgroup. At the exec (a new comm, the same start)
 * the identity is read again, once: neither a comm that stays nor a later rename reads it. */
static void test_identity_after_exec(void **state) {
    struct fixture f;
    const struct procfs_process *rows, *p;
    int n;

    fixture_setup(&f, "procfs-basic");
    n = scan(&f, &rows);
    assert_string_equal(must_find(rows, n, 100, 0)->identity->systemd_unit, "session-3.scope");
    put(&f, "100/cgroup", "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n");
    n = scan(&f, &rows); /* moved, but no exec yet: kept */
    assert_string_equal(must_find(rows, n, 100, 0)->identity->systemd_unit, "session-3.scope");
    put_stat(&f, 100, "python3", 'R', 300, 75, 12345);
    n = scan(&f, &rows);
    p = must_find(rows, n, 100, 0);
    assert_int_equal(p->identity->kind, IDENTITY_SLURM_JOB);
    assert_int_equal(p->identity->slurm.job_id, 77);
    assert_string_equal(p->comm, "python3");
    assert_int_equal(stats(&f).exec_rereads, 1);
    assert_int_equal(stats(&f).exec_stat_reads, 1); /* its start checked first */
    (void)scan(&f, &rows);
    assert_int_equal(stats(&f).exec_rereads, 1);
    /* Later renames (setproctitle) read nothing: the exec after placement is the first. */
    put_stat(&f, 100, "python3: worker", 'R', 400, 75, 12345);
    n = scan(&f, &rows);
    assert_string_equal(must_find(rows, n, 100, 0)->comm, "python3: worker");
    assert_int_equal(stats(&f).exec_rereads, 1);
    fixture_teardown(&f);

    /* No fd to spare at the exec (EMFILE): nothing is cached from it, and the next scan
     * reads the identity once there is one. */
    fixture_setup(&f, "procfs-basic");
    (void)scan(&f, &rows);
    put(&f, "100/cgroup", "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n");
    put_stat(&f, 100, "python3", 'R', 300, 75, 12345);
    {
        struct rlimit old, none;
        int lowest = dup(0);

        assert_true(lowest >= 0);
        (void)close(lowest);
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
        none = (struct rlimit){.rlim_cur = (rlim_t)lowest, .rlim_max = old.rlim_max};
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &none), 0);
        n = scan(&f, &rows);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    }
    p = find(rows, n, 100, 0);
    assert_true(p == NULL || p->identity->kind != IDENTITY_SLURM_JOB);
    assert_int_equal(stats(&f).exec_rereads, 0);
    n = scan(&f, &rows);
    assert_int_equal(must_find(rows, n, 100, 0)->identity->kind, IDENTITY_SLURM_JOB);
    assert_int_equal(stats(&f).exec_rereads, 1);
    fixture_teardown(&f);
}

static void test_kubepods(void **state) {
    struct fixture f;
    const struct procfs_process *rows, *p;
    int n;

    fixture_setup(&f, "procfs-kubepods");
    n = scan(&f, &rows);
    assert_int_equal(n, 5);

    p = must_find(rows, n, 1001, 0); /* systemd driver, containerd */
    assert_int_equal(p->identity->kind, IDENTITY_POD);
    assert_int_equal(p->identity->runtime, RUNTIME_CONTAINERD);
    assert_int_equal(p->identity->qos, POD_QOS_BURSTABLE);
    assert_string_equal(p->identity->pod_uid, "2fc932ce-fdcc-454b-97bd-aadfdeb4c340");
    assert_string_equal(p->identity->container_id,
                        "aaefb9d8feed2d453b543f6d928cede7a4dbefa6a0ae7c9b990dd234c56e93b9");

    p = must_find(rows, n, 1002, 0); /* cgroupfs driver, v2 */
    assert_int_equal(p->identity->kind, IDENTITY_POD);
    assert_int_equal(p->identity->runtime, RUNTIME_UNKNOWN);
    assert_int_equal(p->identity->qos, POD_QOS_BURSTABLE);
    assert_string_equal(p->identity->pod_uid, "5a89bcaa-3509-4375-83e1-b9e7a5712123");
    assert_string_equal(p->identity->container_id,
                        "a069581483b00a498b3ba172612ffed06b3275a043bf3895c1b19e783e2793ee");

    p = must_find(rows, n, 1003, 0); /* guaranteed, CRI-O */
    assert_int_equal(p->identity->qos, POD_QOS_GUARANTEED);
    assert_int_equal(p->identity->runtime, RUNTIME_CRIO);
    assert_string_equal(p->identity->pod_uid, "7922aa99-d4aa-4885-a953-82976860b23a");

    p = must_find(rows, n, 1004, 0); /* hybrid v1 cgroupfs, 0::/ */
    assert_int_equal(p->identity->kind, IDENTITY_POD);
    assert_int_equal(p->identity->qos, POD_QOS_BESTEFFORT);
    assert_string_equal(p->identity->pod_uid, "f6adb0af-0855-4bab-b25b-c853f18d0ce2");
    assert_string_equal(p->identity->container_id,
                        "35b97177dada20362ab90d90ac63cd54e8a41cf87bea34f270631b6da17f4a93");

    p = must_find(rows, n, 1005, 0); /* the kubelet itself */
    assert_int_equal(p->identity->kind, IDENTITY_NONE);
    assert_string_equal(p->identity->systemd_unit, "kubelet.service");
    fixture_teardown(&f);
}

static void test_slurm(void **state) {
    struct fixture f;
    const struct procfs_process *rows, *p;
    struct procfs_stats st;
    int n;

    fixture_setup(&f, "procfs-slurm");
    n = scan(&f, &rows);
    assert_int_equal(n, 9);

    p = must_find(rows, n, 2001, 0); /* v1 */
    assert_int_equal(p->identity->kind, IDENTITY_SLURM_JOB);
    assert_int_equal(p->identity->slurm.job_id, 4824887);
    assert_int_equal(p->identity->slurm.uid, 1000);
    assert_string_equal(p->identity->slurm.step, "0");
    assert_string_equal(p->identity->slurm.task, "0");

    p = must_find(rows, n, 2002, 0); /* v2 */
    assert_int_equal(p->identity->kind, IDENTITY_SLURM_JOB);
    assert_true(p->identity->slurm.job_id_valid);
    assert_int_equal(p->identity->slurm.job_id, 1320003);

    p = must_find(rows, n, 2003, 0); /* SLUID: job id from environ */
    assert_int_equal(p->identity->kind, IDENTITY_SLURM_JOB);
    assert_string_equal(p->identity->slurm.sluid, "s5K1KKYAYG5D00");
    assert_true(p->identity->slurm.job_id_valid);
    assert_int_equal(p->identity->slurm.job_id, 1320099);
    assert_false(p->identity->slurm.needs_environ);

    p = must_find(rows, n, 2004, 0); /* SLUID, environ without SLURM_JOB_ID (ssh adopt) */
    assert_int_equal(p->identity->kind, IDENTITY_SLURM_JOB);
    assert_string_equal(p->identity->slurm.sluid, "sEKNKTV3WPV500");
    assert_string_equal(p->identity->slurm.step, "extern");
    assert_false(p->identity->slurm.job_id_valid);
    assert_true(p->identity->slurm.needs_environ);

    p = must_find(rows, n, 2005, 0); /* environ claims another job's SLUID: not trusted */
    assert_false(p->identity->slurm.job_id_valid);
    assert_string_equal(p->identity->slurm.sluid, "s5K1KKYAYG5D00");

    p = must_find(rows, n, 2006, 0);
    assert_int_equal(p->identity->slurm.role, SLURM_ROLE_STEPD);
    assert_int_equal(p->identity->slurm.job_id, 36);

    p = must_find(rows, n, 2007, 0);
    assert_int_equal(p->identity->kind, IDENTITY_NONE);
    assert_int_equal(p->identity->slurm.role, SLURM_ROLE_INFRA);

    /* v1 slurmstepd: in the job's freezer directory, in no cpuacct one, with the job's
     * SLURM_JOB_ID: Slurm's, not the job's work. (It runs as root: the fixture's files are
     * root's only when the test is.) */
    p = must_find(rows, n, 2008, 0);
    if (geteuid() == 0) {
        assert_int_equal(p->identity->kind, IDENTITY_NONE);
        assert_int_equal(p->identity->slurm.role, SLURM_ROLE_INFRA);
    }

    /* An array element (real environment of sbatch --array=0-1 on slurm-wlm 22.05). */
    p = must_find(rows, n, 2009, 0);
    assert_int_equal(p->identity->slurm.job_id, 505492);
    assert_string_equal(p->identity->slurm.step, "batch");
    assert_true(p->identity->slurm.array_valid);
    assert_int_equal(p->identity->slurm.array_job_id, 505491);
    assert_int_equal(p->identity->slurm.array_task_id, 0);

    st = stats(&f);
    assert_int_equal(st.cgroup_reads, 9);
    /* the SLUID processes, and 2009 for its array (2001 and 2002 have no environ file) */
    assert_int_equal(st.environ_reads, 4);
    (void)scan(&f, &rows);
    assert_int_equal(stats(&f).environ_reads, 4);
    fixture_teardown(&f);
}

/* slurmstepd runs as root: a job's own program named slurmstepd (comm is its to choose)
 * stays the job's work, not Slurm's. */
static void test_slurmstepd_by_name_alone(void **state) {
    char path[PATH_MAX + 16];
    const struct procfs_process *rows, *p;
    struct fixture f;
    int n;

    if (geteuid() != 0)
        skip(); /* a fixture owned by another uid: root's to make */
    fixture_setup(&f, "procfs-slurm");
    (void)snprintf(path, sizeof(path), "%s/2008", f.dir);
    assert_int_equal(chown(path, 1000, 1000), 0);
    n = scan(&f, &rows);
    p = must_find(rows, n, 2008, 0);
    assert_int_equal(p->identity->kind, IDENTITY_SLURM_JOB);
    assert_int_equal(p->identity->slurm.job_id, 4824887);
    fixture_teardown(&f);
}

static void test_environ_vanished(void **state) {
    struct fixture f;
    const struct procfs_process *rows;
    int n;

    fixture_setup(&f, "procfs-slurm");
    rm(&f, "2003/environ"); /* a live process always has environ: ENOENT means it is gone */
    n = scan(&f, &rows);
    assert_int_equal(n, 8);
    assert_null(find(rows, n, 2003, 0));
    assert_int_equal(stats(&f).vanished, 1);
    assert_int_equal(stats(&f).cached, 8);
    fixture_teardown(&f);
}

static void test_lookup(void **state) {
    struct fixture f;
    const struct procfs_process *rows, *p;
    struct procfs_lookup l = {.starttime = 42};
    int n;

    fixture_setup(&f, "procfs-basic");
    /* Before any scan: identity read and cached. */
    ASSERT_OK(procfs_lookup(f.s, 200, &l));
    assert_int_equal(l.starttime, 20000);
    assert_near(l.start_time_seconds, 1700000200.0, 1e-6);
    assert_string_equal(l.comm, "my) (prog");
    assert_false(l.kernel_thread);
    assert_int_equal(l.identity->kind, IDENTITY_CONTAINER);
    assert_int_equal(stats(&f).cgroup_reads, 1);

    n = scan(&f, &rows);
    assert_ptr_equal(must_find(rows, n, 200, 0)->identity, l.identity);
    assert_int_equal(stats(&f).cgroup_reads, 5); /* 200 not read again */

    /* A process that started between scans, looked up by pid (NVML reports it). */
    put_stat(&f, 900, "train", 'R', 40, 2, 70000);
    put(&f, "900/cgroup",
        "0::/kubepods.slice/kubepods-besteffort.slice/"
        "kubepods-besteffort-poddbdd9718_6f63_40ef_987e_34776599d7d6.slice/"
        "crio-bdf2eeede4551b27acbbb05fb1b4f61925786681734bf128e68d39e17d115098.scope\n");
    ASSERT_OK(procfs_lookup(f.s, 900, &l));
    assert_int_equal(l.identity->kind, IDENTITY_POD);
    assert_string_equal(l.identity->pod_uid, "dbdd9718-6f63-40ef-987e-34776599d7d6");
    assert_int_equal(stats(&f).cgroup_reads, 6);
    ASSERT_OK(procfs_lookup(f.s, 900, &l)); /* cached */
    assert_int_equal(stats(&f).cgroup_reads, 6);

    put_stat(&f, 900, "train", 'R', 50, 2, 70000);
    n = scan(&f, &rows);
    p = must_find(rows, n, 900, 0);
    assert_int_equal(p->flags, PROCFS_PROCESS_NEW); /* first scan to see it */
    assert_int_equal(p->cpu_ticks_delta, 52);       /* all of it, lookup did not eat it */
    assert_ptr_equal(p->identity, l.identity);
    assert_int_equal(stats(&f).cgroup_reads, 6);

    /* Looked up, then gone before a scan saw it: no row, cache cleaned. */
    put_stat(&f, 901, "blip", 'R', 1, 0, 70100);
    put(&f, "901/cgroup", "0::/init.scope\n");
    ASSERT_OK(procfs_lookup(f.s, 901, &l));
    rm(&f, "901");
    n = scan(&f, &rows);
    assert_null(find(rows, n, 901, 0));
    assert_null(find(rows, n, 901, PROCFS_PROCESS_EXITED));
    assert_int_equal(stats(&f).cached, 7);

    /* Kernel thread: no identity read. */
    ASSERT_OK(procfs_lookup(f.s, 2, &l));
    assert_true(l.kernel_thread);
    assert_int_equal(l.identity->kind, IDENTITY_NONE);

    /* Errors leave *ret alone. */
    l.starttime = 42;
    ASSERT_ERRNO(procfs_lookup(f.s, 300, &l), ESRCH);  /* no stat */
    ASSERT_ERRNO(procfs_lookup(f.s, 4242, &l), ESRCH); /* no such pid */
    ASSERT_ERRNO(procfs_lookup(f.s, 400, &l), EINVAL); /* malformed stat */
    ASSERT_ERRNO(procfs_lookup(f.s, 0, &l), EINVAL);
    ASSERT_ERRNO(procfs_lookup(f.s, PROC_PID_LIMIT, &l), EINVAL);
    ASSERT_ERRNO(procfs_lookup(f.s, 700, &l), ENOTDIR); /* symlink, not followed */
    assert_int_equal(l.starttime, 42);
    fixture_teardown(&f);
}

static void test_stat_mismatch_and_huge_starttime(void **state) {
    struct fixture f;
    const struct procfs_process *rows;
    char line[512];
    int n;

    fixture_setup(&f, "procfs-basic");
    /* stat of pid 100 claims to be pid 101 (another pid namespace's view): skipped. */
    put(&f, "100/stat", test_proc_stat_line(line, sizeof(line), 101, "bash", 'S', 1, 1, 12345));
    /* starttime beyond the exact cache key range (2^42 ticks): skipped. */
    put_stat(&f, 200, "old", 'S', 1, 1, 4398046511104ULL);
    n = scan(&f, &rows);
    assert_int_equal(n, 4);
    assert_null(find(rows, n, 100, 0));
    assert_null(find(rows, n, 200, 0));
    assert_int_equal(stats(&f).parse_errors, 4);
    fixture_teardown(&f);
}

static void test_new_errors(void **state) {
    struct procfs_scanner *s = (struct procfs_scanner *)&s;
    char dir[PATH_MAX];
    int fd;

    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    fd = open_root(dir);
    ASSERT_OK(fd);
    ASSERT_ERRNO(procfs_scanner_new(fd, NULL, &s), ENOENT); /* no <procfs>/stat */
    ASSERT_OK(test_write_file(dir, "stat", "cpu  1 2 3 4\nctxt 5\n"));
    ASSERT_ERRNO(procfs_scanner_new(fd, NULL, &s), EINVAL); /* no btime */
    ASSERT_OK(test_write_file(dir, "stat", "btime twelve\n"));
    ASSERT_ERRNO(procfs_scanner_new(fd, NULL, &s), EINVAL);
    ASSERT_ERRNO(procfs_scanner_new(-1, NULL, &s), EBADF);
    assert_ptr_equal(s, (struct procfs_scanner *)&s); /* untouched */

    /* btime as the last line without newline works; sysconf's CLK_TCK by default. */
    ASSERT_OK(test_write_file(dir, "stat", "cpu  1 2 3 4\nbtime 1600000000"));
    ASSERT_OK(procfs_scanner_new(fd, NULL, &s));
    s = procfs_scanner_free(s);
    assert_null(procfs_scanner_free(NULL));
    (void)close(fd);

    {
        char file[PATH_MAX + 8];

        (void)snprintf(file, sizeof(file), "%s/stat", dir);
        fd = open(file, O_RDONLY | O_CLOEXEC);
        ASSERT_OK(fd);
        ASSERT_ERRNO(procfs_scanner_new(fd, NULL, &s), ENOTDIR);
        (void)close(fd);
    }
    test_rm_rf(dir);
}

/* The real /proc of this machine: our own process is found, with its real identity. */
static void test_real_proc(void **state) {
    struct procfs_scanner *s = NULL;
    const struct procfs_process *rows, *me;
    struct procfs_lookup l;
    int fd, n;

    fd = open_root("/proc");
    ASSERT_OK(fd);
    ASSERT_OK(procfs_scanner_new(fd, NULL, &s));
    (void)close(fd); /* the scanner keeps its own duplicate */
    n = procfs_scan(s, &rows);
    ASSERT_OK(n);
    me = find(rows, n, (uint32_t)getpid(), 0);
    assert_non_null(me);
    {
        /* /proc/self/comm is a different kernel file: same name (valgrind renames us). */
        _cleanup_(freep) char *comm = NULL;
        size_t len;

        ASSERT_OK(read_virtual_file_at(AT_FDCWD, "/proc/self/comm", 256, &comm, &len));
        assert_true(len > 0 && comm[len - 1] == '\n');
        comm[len - 1] = '\0';
        assert_string_equal(me->comm, comm);
    }
    assert_false(me->kernel_thread);
    assert_true(me->start_time_seconds > 1.0e9);
    ASSERT_OK(procfs_lookup(s, (uint32_t)getpid(), &l));
    assert_int_equal(l.starttime, me->starttime);
    assert_ptr_equal(l.identity, me->identity);
    n = procfs_scan(s, &rows);
    ASSERT_OK(n);
    assert_int_equal(must_find(rows, n, (uint32_t)getpid(), 0)->flags, 0);
    s = procfs_scanner_free(s);
}

/* Replaces <dir>/<rel> by writing a temporary file and renaming it over (as the test and
 * benchmark writers do): a kept fd still shows the old, now unlinked file. */
static void put_by_rename(struct fixture *f, const char *rel, const char *content) {
    char tmp_rel[128], from[PATH_MAX + 128], to[PATH_MAX + 128];

    (void)snprintf(tmp_rel, sizeof(tmp_rel), "%s.tmp", rel);
    put(f, tmp_rel, content);
    (void)snprintf(from, sizeof(from), "%s/%s", f->dir, tmp_rel);
    (void)snprintf(to, sizeof(to), "%s/%s", f->dir, rel);
    assert_int_equal(rename(from, to), 0);
}

/* Kept stat fds: unchanged processes cost no open; every way a fixture writer can change
 * a process is still seen. procfs-basic has 6 processes (kept) and 400 with a malformed
 * stat, opened by path on every scan because it never gets a cache entry. */
static void test_kept_fds(void **state) {
    struct fixture f;
    const struct procfs_process *rows, *p;
    char line[512], from[PATH_MAX + 16], to[PATH_MAX + 16];
    int n;

    fixture_setup(&f, "procfs-basic");
    (void)scan(&f, &rows);
    assert_int_equal(stats(&f).kept_fds, 6);
    assert_int_equal(stats(&f).stat_opens, 7);
    n = scan(&f, &rows);
    assert_int_equal(n, 6);
    assert_int_equal(stats(&f).stat_opens, 8); /* only 400 again */
    assert_int_equal(stats(&f).stat_reads, 14);

    /* Rewritten in place: read through the kept fd. */
    put_stat(&f, 100, "bash", 'S', 160, 75, 12345);
    n = scan(&f, &rows);
    assert_int_equal(must_find(rows, n, 100, 0)->cpu_ticks_delta, 10);
    assert_int_equal(stats(&f).stat_opens, 9);

    /* Replaced by rename: the kept file has no link left, reopened by path. */
    put_by_rename(&f, "100/stat",
                  test_proc_stat_line(line, sizeof(line), 100, "bash", 'S', 170, 75, 12345));
    n = scan(&f, &rows);
    p = must_find(rows, n, 100, 0);
    assert_int_equal(p->flags, 0);
    assert_int_equal(p->cpu_ticks_delta, 10);
    assert_int_equal(stats(&f).stat_opens, 11);
    assert_int_equal(stats(&f).kept_fds, 6);

    /* The whole pid directory replaced (moved away, not deleted: its stat keeps a link),
     * with a reused pid: the listing shows another directory inode. */
    (void)snprintf(from, sizeof(from), "%s/200", f.dir);
    (void)snprintf(to, sizeof(to), "%s/old-200", f.dir);
    assert_int_equal(rename(from, to), 0);
    put_stat(&f, 200, "new", 'R', 4, 1, 70000);
    put(&f, "200/cgroup", "0::/system.slice/new.service\n");
    n = scan(&f, &rows);
    assert_int_equal(n, 7);
    p = must_find(rows, n, 200, 0);
    assert_int_equal(p->flags, PROCFS_PROCESS_NEW);
    assert_int_equal(p->starttime, 70000);
    assert_int_equal(p->cpu_ticks_delta, 5);
    assert_string_equal(p->identity->systemd_unit, "new.service");
    assert_int_equal(must_find(rows, n, 200, PROCFS_PROCESS_EXITED)->starttime, 20000);
    assert_int_equal(stats(&f).stat_opens, 13);
    assert_int_equal(stats(&f).kept_fds, 6);

    /* Exits close their fds. */
    rm(&f, "100");
    rm(&f, "600");
    n = scan(&f, &rows);
    assert_int_equal(n, 6); /* 4 live, 2 exited */
    assert_int_equal(stats(&f).kept_fds, 4);
    assert_int_equal(stats(&f).stat_opens, 14);
    fixture_teardown(&f);
}

/* PROCFS_KEEP_FDS_ANYWHERE (--procfs-keep-fds=on): the tree is declared rewritten in
 * place, so a kept fd is read as on procfs, with no fstat() for a file replaced by rename:
 * such a file goes unnoticed (the old one is read), a replaced pid directory does not. */
static void test_kept_fds_in_place_tree(void **state) {
    struct procfs_options opts = {.clk_tck = 100, .max_kept_fds = PROCFS_KEEP_FDS_ANYWHERE};
    struct procfs_scanner *s = NULL;
    const struct procfs_process *rows;
    char line[512], from[PATH_MAX + 16], to[PATH_MAX + 16];
    struct procfs_stats st;
    struct fixture f;
    int n;

    (void)state;
    fixture_setup(&f, "procfs-basic");
    ASSERT_OK(procfs_scanner_new(f.fd, &opts, &s));
    ASSERT_OK(procfs_scan(s, &rows));
    procfs_get_stats(s, &st);
    assert_int_equal(st.kept_fds, 6);

    put_stat(&f, 100, "bash", 'S', 160, 75, 12345); /* in place: read */
    n = procfs_scan(s, &rows);
    assert_int_equal(must_find(rows, n, 100, 0)->cpu_ticks_delta, 10);

    put_by_rename(&f, "100/stat",
                  test_proc_stat_line(line, sizeof(line), 100, "bash", 'S', 170, 75, 12345));
    n = procfs_scan(s, &rows);
    assert_int_equal(must_find(rows, n, 100, 0)->cpu_ticks_delta, 0); /* the old file */

    (void)snprintf(from, sizeof(from), "%s/200", f.dir);
    (void)snprintf(to, sizeof(to), "%s/old-200", f.dir);
    assert_int_equal(rename(from, to), 0);
    put_stat(&f, 200, "new", 'R', 4, 1, 70000);
    put(&f, "200/cgroup", "0::/system.slice/new.service\n");
    n = procfs_scan(s, &rows);
    assert_int_equal(must_find(rows, n, 200, 0)->starttime, 70000);
    assert_int_equal(must_find(rows, n, 200, PROCFS_PROCESS_EXITED)->starttime, 20000);
    assert_null(procfs_scanner_free(s));
    fixture_teardown(&f);
}

static void scan_with_cap(size_t cap, size_t want_kept, uint64_t want_opens_per_scan) {
    struct procfs_options opts = {.clk_tck = 100, .max_kept_fds = cap};
    struct procfs_scanner *s = NULL;
    const struct procfs_process *rows;
    struct procfs_stats st;
    struct fixture f;
    int n;

    fixture_setup(&f, "procfs-basic");
    ASSERT_OK(procfs_scanner_new(f.fd, &opts, &s));
    ASSERT_OK(procfs_scan(s, &rows));
    procfs_get_stats(s, &st);
    assert_int_equal(st.kept_fds, want_kept);
    assert_int_equal(st.stat_opens, 7);
    put_stat(&f, 100, "bash", 'S', 250, 80, 12345);
    put_stat(&f, 1, "systemd", 'S', 60, 30, 1);
    n = procfs_scan(s, &rows);
    ASSERT_OK(n);
    assert_int_equal(must_find(rows, n, 100, 0)->cpu_ticks_delta, 105);
    assert_int_equal(must_find(rows, n, 1, 0)->cpu_ticks_delta, 10);
    procfs_get_stats(s, &st);
    assert_int_equal(st.stat_opens, 7 + want_opens_per_scan);
    assert_int_equal(st.stat_reads, 14);
    assert_int_equal(st.kept_fds, want_kept);
    s = procfs_scanner_free(s);
    fixture_teardown(&f);
}

/* Beyond the cap, pids are opened by path on every scan, with the same results. */
static void test_kept_fds_cap(void **state) {
    scan_with_cap(2, 2, 5);
    scan_with_cap(PROCFS_KEEP_NO_FDS, 0, 7);
    scan_with_cap(1000, 6, 1);
    scan_with_cap(0, 0, 7); /* the default on a filesystem that is not procfs */
}

static bool self_schedstat_works(void) {
    char buf[128];
    int n = read_file_into_at(AT_FDCWD, "/proc/self/schedstat", buf, sizeof(buf));

    return n > 0 && buf[0] != '0';
}

/* On the real procfs a kept fd follows its process: an exited and reaped child is reported
 * exited, and live processes are not reopened. */
static void test_real_proc_kept_fds(void **state) {
    struct procfs_scanner *s = NULL;
    const struct procfs_process *rows;
    struct procfs_stats before, after;
    int fd, n, news = 0, due = 0, status;
    pid_t child;

    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed assertion leaves no child behind */
        pause();
        _exit(0);
    }
    fd = open_root("/proc");
    ASSERT_OK(fd);
    ASSERT_OK(procfs_scanner_new(fd, NULL, &s));
    (void)close(fd);
    ASSERT_OK(procfs_scan(s, &rows));
    procfs_get_stats(s, &before);
    assert_true(before.kept_fds > 0);
    n = procfs_scan(s, &rows);
    ASSERT_OK(n);
    assert_int_equal(must_find(rows, n, (uint32_t)child, 0)->flags, 0);
    for (int i = 0; i < n; i++) {
        news += (rows[i].flags & PROCFS_PROCESS_NEW) != 0;
        /* a single-threaded process keeps schedstat open: its periodic stat read opens */
        due += (2 + rows[i].pid) % PROCFS_FULL_READ_SCANS == 0;
    }
    procfs_get_stats(s, &after);
    /* Every open by path is a process new to this scan, one that vanished meanwhile, or
     * the periodic stat read of a process whose kept fd is schedstat. */
    assert_true(after.stat_opens - before.stat_opens <=
                (uint64_t)news + (uint64_t)due + (after.vanished - before.vanished));
    /* This process has one thread: its on-CPU time comes from schedstat where the kernel
     * keeps it (scheduler statistics on: a running process shows a non-zero first field). */
    if (self_schedstat_works())
        assert_true(after.schedstat_reads > before.schedstat_reads);

    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, &status, 0), child);
    n = procfs_scan(s, &rows);
    ASSERT_OK(n);
    assert_non_null(must_find(rows, n, (uint32_t)child, PROCFS_PROCESS_EXITED));
    assert_null(find(rows, n, (uint32_t)child, 0));
    s = procfs_scanner_free(s);
}

/* Known processes without a kept fd read "<pid>/stat" in one open that still refuses a
 * pid entry that became a symlink (it would show another process's stat). */
static void test_direct_open_refuses_symlinks(void **state) {
    struct procfs_options opts = {.clk_tck = 100, .max_kept_fds = PROCFS_KEEP_NO_FDS};
    struct procfs_scanner *s = NULL;
    const struct procfs_process *rows;
    struct procfs_stats st;
    char path[PATH_MAX + 16];
    struct fixture f;
    int n;

    fixture_setup(&f, "procfs-basic");
    ASSERT_OK(procfs_scanner_new(f.fd, &opts, &s));
    ASSERT_OK(procfs_scan(s, &rows));
    rm(&f, "500");
    (void)snprintf(path, sizeof(path), "%s/500", f.dir);
    assert_int_equal(symlink("100", path), 0);
    put_stat(&f, 100, "bash", 'S', 151, 75, 12345);
    n = procfs_scan(s, &rows);
    assert_int_equal(n, 6); /* 1 2 100 200 600 live, 500 exited */
    assert_null(find(rows, n, 500, 0));
    assert_non_null(must_find(rows, n, 500, PROCFS_PROCESS_EXITED));
    assert_int_equal(must_find(rows, n, 100, 0)->cpu_ticks_delta, 1);
    procfs_get_stats(s, &st);
    assert_int_equal(st.read_errors, 3); /* the symlink 700 in both scans, 500 now */
    s = procfs_scanner_free(s);
    fixture_teardown(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_tree),
        cmocka_unit_test(test_deltas_exits_and_zombies),
        cmocka_unit_test(test_unread_is_not_an_exit),
        cmocka_unit_test(test_pid_reuse),
        cmocka_unit_test(test_identity_read_once),
        cmocka_unit_test(test_identity_after_exec),
        cmocka_unit_test(test_kubepods),
        cmocka_unit_test(test_slurm),
        cmocka_unit_test(test_slurmstepd_by_name_alone),
        cmocka_unit_test(test_environ_vanished),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_stat_mismatch_and_huge_starttime),
        cmocka_unit_test(test_new_errors),
        cmocka_unit_test(test_real_proc),
        cmocka_unit_test(test_kept_fds),
        cmocka_unit_test(test_kept_fds_cap),
        cmocka_unit_test(test_kept_fds_in_place_tree),
        cmocka_unit_test(test_real_proc_kept_fds),
        cmocka_unit_test(test_direct_open_refuses_symlinks),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
