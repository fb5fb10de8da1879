/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "environ.h"
#include "fileio.h"
#include "procfs.h"
#include "testutil.h"

/*
 * The SLURM_JOB_ID fallback for nodes where Slurm does not put jobs in cgroups
 * (proctrack/linuxproc): which processes may be read, what the environment gives, and the
 * scanner on tests/trees/procfs-slurm-environ (read in place, never modified).
 */

#define ENV(s) (s), sizeof(s) - 1

static struct workload_identity none_in_unit(const char *unit) {
    struct workload_identity id = {0};

    (void)snprintf(id.systemd_unit, sizeof(id.systemd_unit), "%s", unit);
    return id;
}

static void test_wants(void **state) {
    struct workload_identity id;

    id = none_in_unit("");
    assert_true(workload_identity_wants_slurm_environ(&id));
    id = none_in_unit("slurmd.service");
    assert_true(workload_identity_wants_slurm_environ(&id));

    id = none_in_unit("sshd.service");
    assert_false(workload_identity_wants_slurm_environ(&id));
    id = none_in_unit("session-18.scope");
    assert_false(workload_identity_wants_slurm_environ(&id));
    id = none_in_unit("slurmd.service.d"); /* exact names only */
    assert_false(workload_identity_wants_slurm_environ(&id));

    id = none_in_unit("");
    id.kind = IDENTITY_POD;
    assert_false(workload_identity_wants_slurm_environ(&id));
    id = none_in_unit("");
    id.kind = IDENTITY_CONTAINER;
    assert_false(workload_identity_wants_slurm_environ(&id));
    id = none_in_unit("slurmstepd.scope");
    id.slurm.role = SLURM_ROLE_INFRA; /* slurmstepd.scope/system: the cgroup plugin is on */
    assert_false(workload_identity_wants_slurm_environ(&id));
    id = none_in_unit("");
    id.kind = IDENTITY_SLURM_JOB;
    id.slurm.role = SLURM_ROLE_JOB;
    assert_false(workload_identity_wants_slurm_environ(&id));
}

static void test_apply(void **state) {
    struct workload_identity id = none_in_unit("slurmd.service");

    ASSERT_OK(workload_identity_apply_slurm_environ(
        &id, ENV("HOME=/root\0SLURM_STEP_ID=3\0SLURM_JOBID=9\0SLURM_JOB_ID=4294967295")));
    assert_int_equal(id.kind, IDENTITY_SLURM_JOB);
    assert_int_equal(id.slurm.role, SLURM_ROLE_JOB);
    assert_true(id.slurm.job_id_valid);
    assert_int_equal(id.slurm.job_id, 4294967295u); /* SLURM_JOB_ID wins over SLURM_JOBID */
    assert_true(id.slurm.from_environ);
    assert_false(id.slurm.needs_environ);
    assert_string_equal(id.slurm.step, "3");
    assert_string_equal(id.slurm.task, "");
    assert_string_equal(id.systemd_unit, "slurmd.service");

    /* Applied once: the identity is a job now and is not rewritten. */
    ASSERT_ERRNO(workload_identity_apply_slurm_environ(&id, ENV("SLURM_JOB_ID=5\0")), EALREADY);
    assert_int_equal(id.slurm.job_id, 4294967295u);

    /* Legacy name only (batch scripts have no step variable); step 0 is valid. */
    id = none_in_unit("");
    ASSERT_OK(workload_identity_apply_slurm_environ(&id, ENV("SLURM_JOBID=78")));
    assert_int_equal(id.slurm.job_id, 78);
    assert_string_equal(id.slurm.step, "");
    id = none_in_unit("");
    ASSERT_OK(workload_identity_apply_slurm_environ(&id, ENV("SLURM_STEP_ID=0\0SLURM_JOB_ID=1\0")));
    assert_string_equal(id.slurm.step, "0");
}

/* An array job's element: its array from the environment of a process whose SLURM_JOB_ID
 * is the job of its cgroup path (real values from an sbatch --array=0-1 element on
 * slurm-wlm 22.05: SLURM_JOB_ID=505492, SLURM_ARRAY_JOB_ID=505491, SLURM_ARRAY_TASK_ID=0). */
static void test_array(void **state) {
    static const char *path = "/slurm_vm/uid_0/job_505492/step_batch/task_0";
    struct workload_identity id, before;

    ASSERT_OK(cgroup_path_parse(path, strlen(path), &id));
    ASSERT_OK(workload_identity_apply_array_environ(
        &id, ENV("SLURM_ARRAY_TASK_ID=0\0SLURM_JOB_ID=505492\0SLURM_ARRAY_JOB_ID=505491\0")));
    assert_true(id.slurm.array_valid);
    assert_int_equal(id.slurm.array_job_id, 505491);
    assert_int_equal(id.slurm.array_task_id, 0);

    /* Not an array job; another job's environment; malformed values; an environment that
     * names no job (slurmstepd's child before its exec): nothing changes. */
    ASSERT_OK(cgroup_path_parse(path, strlen(path), &id));
    before = id;
    ASSERT_ERRNO(workload_identity_apply_array_environ(&id, ENV("SLURM_JOB_ID=505492\0")), ENOENT);
    ASSERT_ERRNO(workload_identity_apply_array_environ(
                     &id, ENV("SLURM_JOB_ID=7\0SLURM_ARRAY_JOB_ID=7\0SLURM_ARRAY_TASK_ID=1")),
                 EINVAL);
    ASSERT_ERRNO(workload_identity_apply_array_environ(
                     &id, ENV("SLURM_JOB_ID=505492\0SLURM_ARRAY_JOB_ID=1\0SLURM_ARRAY_TASK_ID=01")),
                 EINVAL);
    ASSERT_ERRNO(workload_identity_apply_array_environ(
                     &id, ENV("SLURM_JOB_ID=505492\0SLURM_ARRAY_JOB_ID=0\0SLURM_ARRAY_TASK_ID=1")),
                 EINVAL);
    ASSERT_ERRNO(workload_identity_apply_array_environ(&id, ENV("SLURM_ARRAY_JOB_ID=1\0")), ESRCH);
    assert_false(id.slurm.array_valid);
    assert_memory_equal(&id, &before, sizeof(id));

    /* No numeric job id yet (a SLUID directory before environ): not applied. */
    id = none_in_unit("");
    ASSERT_ERRNO(workload_identity_apply_array_environ(
                     &id, ENV("SLURM_JOB_ID=5\0SLURM_ARRAY_JOB_ID=4\0SLURM_ARRAY_TASK_ID=1")),
                 EALREADY);
}

static void test_apply_bad_step(void **state) {
    static const char *const steps[] = {"SLURM_STEP_ID=01", "SLURM_STEP_ID=", "SLURM_STEP_ID=x",
                                        "SLURM_STEP_ID=4294967296", "SLURM_STEP_ID=-1"};

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        struct workload_identity id = none_in_unit("");
        char env[128];
        int n = snprintf(env, sizeof(env), "SLURM_JOB_ID=12%c%s", '\0', steps[i]);

        ASSERT_OK(workload_identity_apply_slurm_environ(&id, env, (size_t)n));
        assert_int_equal(id.slurm.job_id, 12); /* the job stays, the step is dropped */
        assert_string_equal(id.slurm.step, "");
    }
}

static void test_apply_errors(void **state) {
    static const char *const bad[] = {
        "SLURM_JOB_ID=0",   "SLURM_JOB_ID=007",        "SLURM_JOB_ID=",  "SLURM_JOB_ID=12a",
        "SLURM_JOB_ID= 12", "SLURM_JOB_ID=4294967296", "SLURM_JOB_ID=-5"};
    struct workload_identity id = none_in_unit(""), before;

    before = id;
    ASSERT_ERRNO(workload_identity_apply_slurm_environ(&id, ENV("PATH=/bin\0SLURM_JOB=3\0")),
                 ENOENT);
    ASSERT_ERRNO(workload_identity_apply_slurm_environ(&id, "", 0), ENOENT);
    /* slurmd's epilog (and prolog) scripts have the job's id; they are not the job. */
    ASSERT_ERRNO(workload_identity_apply_slurm_environ(
                     &id, ENV("SLURM_JOB_ID=7\0SLURM_SCRIPT_CONTEXT=epilog_slurmd\0")),
                 ENOENT);
    assert_memory_equal(&id, &before, sizeof(id));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ASSERT_ERRNO(workload_identity_apply_slurm_environ(&id, bad[i], strlen(bad[i])), EINVAL);
        assert_memory_equal(&id, &before, sizeof(id)); /* untouched on error */
    }
    /* A malformed SLURM_JOB_ID is not replaced by the legacy variable. */
    ASSERT_ERRNO(workload_identity_apply_slurm_environ(&id, ENV("SLURM_JOB_ID=x\0SLURM_JOBID=5")),
                 EINVAL);

    id = none_in_unit("sshd.service");
    before = id;
    ASSERT_ERRNO(workload_identity_apply_slurm_environ(&id, ENV("SLURM_JOB_ID=5")), EALREADY);
    assert_memory_equal(&id, &before, sizeof(id));
}

static const struct procfs_process *find(const struct procfs_process *rows, int n, uint32_t pid) {
    for (int i = 0; i < n; i++)
        if (rows[i].pid == pid)
            return &rows[i];
    fail_msg("pid %u not in the scan", pid);
    __builtin_unreachable(); /* fail_msg() jumps back into cmocka */
}

static void test_scanner(void **state) {
    struct procfs_options opts = {.clk_tck = 100};
    struct procfs_scanner *s = NULL;
    const struct procfs_process *rows, *p;
    struct procfs_stats st;
    char root[PATH_MAX];
    int fd, n;

    fd = open_root(test_source_path(root, sizeof(root), "tests/trees/procfs-slurm-environ"));
    ASSERT_OK(fd);
    ASSERT_OK(procfs_scanner_new(fd, &opts, &s));
    n = procfs_scan(s, &rows);
    assert_int_equal(n, 10);

    p = find(rows, n, 3001); /* srun task, no systemd */
    assert_int_equal(p->identity->kind, IDENTITY_SLURM_JOB);
    assert_int_equal(p->identity->slurm.job_id, 77);
    assert_string_equal(p->identity->slurm.step, "0");
    assert_true(p->identity->slurm.from_environ);

    p = find(rows, n, 3002); /* batch script in slurmd.service */
    assert_int_equal(p->identity->kind, IDENTITY_SLURM_JOB);
    assert_int_equal(p->identity->slurm.job_id, 78);
    assert_string_equal(p->identity->slurm.step, "");
    assert_string_equal(p->identity->systemd_unit, "slurmd.service");

    p = find(rows, n, 3003); /* an ssh session claiming a job: not read */
    assert_int_equal(p->identity->kind, IDENTITY_NONE);
    assert_false(p->identity->slurm.job_id_valid);

    assert_int_equal(find(rows, n, 3004)->identity->kind, IDENTITY_NONE); /* no variables */
    assert_int_equal(find(rows, n, 3005)->identity->kind, IDENTITY_NONE); /* job id 0079 */
    assert_int_equal(find(rows, n, 3006)->identity->kind, IDENTITY_NONE); /* no environ */
    assert_int_equal(find(rows, n, 3007)->identity->kind, IDENTITY_NONE); /* kernel thread */

    p = find(rows, n, 3008); /* the cgroup wins; environ read for the array only */
    assert_int_equal(p->identity->slurm.job_id, 4824887);
    assert_false(p->identity->slurm.array_valid); /* its SLURM_JOB_ID is another job's */
    assert_false(p->identity->slurm.from_environ);

    p = find(rows, n, 3009); /* slurmd.service on cgroup v2, step too large: dropped */
    assert_int_equal(p->identity->slurm.job_id, 80);
    assert_string_equal(p->identity->slurm.step, "");

    p = find(rows, n, 3010); /* slurmstepd.scope/system: the cgroup plugin's, not read */
    assert_int_equal(p->identity->kind, IDENTITY_NONE);
    assert_int_equal(p->identity->slurm.role, SLURM_ROLE_INFRA);

    procfs_get_stats(s, &st);
    /* 3001, 3002, 3004, 3005, 3009: processes that may be linuxproc tasks; 3008: a job's
     * process, for its array */
    assert_int_equal(st.environ_reads, 6);
    assert_int_equal(st.read_errors, 0); /* a missing environ (3006) is not an error */
    assert_int_equal(st.cgroup_reads, 9);

    /* Read once per process: a second scan reads nothing again. */
    assert_int_equal(procfs_scan(s, &rows), 10);
    procfs_get_stats(s, &st);
    assert_int_equal(st.environ_reads, 6);
    assert_int_equal(st.cgroup_reads, 9);

    procfs_scanner_free(s);
    (void)close(fd);
}

/* An environ that cannot be read (EACCES for another user's process without
 * CAP_SYS_PTRACE; here EISDIR, which root cannot bypass the way it bypasses file modes):
 * no job, counted as a read error, the process is kept and the read is not retried. */
static void test_scanner_unreadable(void **state) {
    struct procfs_options opts = {.clk_tck = 100};
    struct procfs_scanner *s = NULL;
    const struct procfs_process *rows;
    struct procfs_stats st;
    char dir[PATH_MAX], path[PATH_MAX + 16];
    int fd, n;

    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    ASSERT_OK(test_write_file(dir, "stat", "btime 1700000000\n"));
    ASSERT_OK(test_write_file(dir, "42/stat",
                              "42 (x) S 1 42 42 0 -1 4194560 0 0 0 0 5 5 0 0 20 0 1 0 900 0 0\n"));
    ASSERT_OK(test_write_file(dir, "42/cgroup", "0::/\n"));
    (void)snprintf(path, sizeof(path), "%s/42/environ", dir);
    assert_int_equal(mkdir(path, 0755), 0);

    fd = open_root(dir);
    ASSERT_OK(fd);
    ASSERT_OK(procfs_scanner_new(fd, &opts, &s));
    n = procfs_scan(s, &rows);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].pid, 42);
    assert_int_equal(rows[0].identity->kind, IDENTITY_NONE);
    procfs_get_stats(s, &st);
    assert_int_equal(st.read_errors, 1);
    assert_int_equal(st.environ_reads, 0);
    assert_int_equal(procfs_scan(s, &rows), 1);
    procfs_get_stats(s, &st);
    assert_int_equal(st.read_errors, 1); /* not retried */
    procfs_scanner_free(s);
    (void)close(fd);
    test_rm_rf(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wants),
        cmocka_unit_test(test_apply),
        cmocka_unit_test(test_apply_bad_step),
        cmocka_unit_test(test_apply_errors),
        cmocka_unit_test(test_array),
        cmocka_unit_test(test_scanner),
        cmocka_unit_test(test_scanner_unreadable),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
