/* SPDX-License-Identifier: MIT */
/* Unseen CPU time per workload (cgroup usage beyond the seen processes), the clamp to the
 * node's busy time, and the workload cgroup directory found from /proc/<pid>/cgroup. */
#include "testutil.h"

#include <errno.h>

#include "cgroup_path.h"
#include "cgroup_workload_dir.h"
#include "cpu_unseen.h"
#include "macro.h"

static void test_unseen_no_clamp(void **state) {
    struct cpu_unseen_group g[] = {
        {.seen_us = 200000, .cgroup_delta_us = 500000, .cgroup_valid = true}, /* 300 000 */
        {.seen_us = 300000, .cgroup_delta_us = 300000, .cgroup_valid = true}, /* equal: 0 */
        {.seen_us = 400000, .cgroup_delta_us = 100000, .cgroup_valid = true}, /* less: 0 */
        {.seen_us = 0, .cgroup_delta_us = 900000, .cgroup_valid = false},     /* no delta */
    };

    /* cap = 2 000 000 - 900 000 = 1 100 000 >= 300 000 */
    assert_int_equal(cpu_unseen_compute(g, ARRAY_SIZE(g), 2000000, 900000), 300000);
    assert_int_equal(g[0].unseen_us, 300000);
    assert_int_equal(g[1].unseen_us, 0);
    assert_int_equal(g[2].unseen_us, 0);
    assert_int_equal(g[3].unseen_us, 0);
    assert_int_equal(cpu_unseen_compute(NULL, 0, 10, 0), 0);
}

static void test_unseen_clamp(void **state) {
    struct cpu_unseen_group g[] = {
        {.seen_us = 50000, .cgroup_delta_us = 450000, .cgroup_valid = true},  /* 400 000 */
        {.seen_us = 200000, .cgroup_delta_us = 400000, .cgroup_valid = true}, /* 200 000 */
    };

    /* cap = 500 000 - 250 000; 400 000 * 250 000 / 600 000 = 166 666.67 -> 166 666,
     * 200 000 * 250 000 / 600 000 = 83 333.33 -> 83 333: 249 999 <= cap. */
    assert_int_equal(cpu_unseen_compute(g, 2, 500000, 250000), 249999);
    assert_int_equal(g[0].unseen_us, 166666);
    assert_int_equal(g[1].unseen_us, 83333);

    /* Seen time over the node's busy time: no room at all, never negative. */
    g[0] = (struct cpu_unseen_group){.seen_us = 1, .cgroup_delta_us = 7, .cgroup_valid = true};
    assert_int_equal(cpu_unseen_compute(g, 1, 100, 200), 0);
    assert_int_equal(g[0].unseen_us, 0);

    /* Huge values: the product needs 128 bits. */
    g[0] = (struct cpu_unseen_group){.cgroup_delta_us = UINT64_MAX, .cgroup_valid = true};
    g[1] = (struct cpu_unseen_group){.cgroup_delta_us = UINT64_MAX, .cgroup_valid = true};
    assert_int_equal(cpu_unseen_compute(g, 2, UINT64_MAX, 1), UINT64_MAX - 1);
    assert_int_equal(g[0].unseen_us, (UINT64_MAX - 1) / 2);
}

#define CID "aaefb9d8feed2d453b543f6d928cede7a4dbefa6a0ae7c9b990dd234c56e93b9"
#define DOCKER "fd9d0ea06257a9780827cbc7fd92e3812a54fca26d63e191b73610d5d48b9cbd"

static void dir_of(const char *text, char *buf, size_t size, int expect) {
    struct workload_identity w;

    ASSERT_OK(cgroup_file_parse(text, strlen(text), &w));
    assert_int_equal(cgroup_workload_dir(text, strlen(text), &w, buf, size), expect);
}

static void test_workload_dir(void **state) {
    char buf[512];

    dir_of("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod2fc932ce_fdcc_454b_"
           "97bd_aadfdeb4c340.slice/cri-containerd-" CID ".scope\n",
           buf, sizeof(buf), 0);
    assert_string_equal(buf, "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-"
                             "pod2fc932ce_fdcc_454b_97bd_aadfdeb4c340.slice/cri-containerd-" CID
                             ".scope");
    /* Read in another cgroup namespace: the climb stays, for cgroup_cpu_open() to resolve. */
    dir_of("0::/../../kubepods-burstable.slice/kubepods-burstable-pod2fc932ce_fdcc_454b_"
           "97bd_aadfdeb4c340.slice/cri-containerd-" CID ".scope\n",
           buf, sizeof(buf), 0);
    assert_string_equal(buf, "/../../kubepods-burstable.slice/kubepods-burstable-"
                             "pod2fc932ce_fdcc_454b_97bd_aadfdeb4c340.slice/cri-containerd-" CID
                             ".scope");
    /* kubelet inside a docker container: the deepest id wins (not the docker scope). */
    dir_of("0::/system.slice/docker-" DOCKER ".scope/kubelet.slice/kubelet-kubepods.slice/"
           "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-podeab5a334_93fe_48a8_"
           "b139_9e8079c1f163.slice/cri-containerd-" CID ".scope\n",
           buf, sizeof(buf), 0);
    assert_string_equal(buf + strlen(buf) - strlen(CID ".scope"), CID ".scope");
    /* podman: the scope, not its /container leaf */
    dir_of("0::/machine.slice/libpod-" CID ".scope/container\n", buf, sizeof(buf), 0);
    assert_string_equal(buf, "/machine.slice/libpod-" CID ".scope");
    /* SLURM v2 task -> its step's dir; SLUID dir (Slurm 26.05) */
    dir_of("0::/system.slice/slurmstepd.scope/job_1320003/step_0/user/task_0\n", buf, sizeof(buf),
           0);
    assert_string_equal(buf, "/system.slice/slurmstepd.scope/job_1320003/step_0");
    dir_of("0::/system.slice/slurmstepd.scope/s5K1KKYAYG5D00/step_batch/user/task_0\n", buf,
           sizeof(buf), 0);
    assert_string_equal(buf, "/system.slice/slurmstepd.scope/s5K1KKYAYG5D00/step_batch");
    /* v1: the cpuacct line's path, not the freezer's */
    dir_of("12:freezer:/slurm/uid_1000/job_4824887\n"
           "9:cpu,cpuacct:/slurm_x/uid_1000/job_4824887/step_extern/task_0\n",
           buf, sizeof(buf), 0);
    assert_string_equal(buf, "/slurm_x/uid_1000/job_4824887/step_extern");
    /* A job id that only prefixes the component does not match ("job_12" vs "job_123"). */
    dir_of("0::/system.slice/slurmstepd.scope/job_123/step_0\n", buf, sizeof(buf), 0);
    assert_string_equal(buf, "/system.slice/slurmstepd.scope/job_123/step_0");
    /* A process at the job level (no step): the job's directory. */
    dir_of("0::/system.slice/slurmstepd.scope/job_123\n", buf, sizeof(buf), 0);
    assert_string_equal(buf, "/system.slice/slurmstepd.scope/job_123");
    /* A step's process whose cpuacct line stops at the job: no directory of its own (the
     * job's holds every step's time). */
    dir_of("12:freezer:/slurm/uid_1000/job_4824887/step_0\n"
           "9:cpu,cpuacct:/slurm/uid_1000/job_4824887\n",
           buf, sizeof(buf), -ENOENT);
}

static void test_workload_dir_errors(void **state) {
    struct workload_identity w = {0};
    char small[16], buf[256];
    const char *text = "0::/system.slice/slurmstepd.scope/job_77/step_0\n";

    /* host process; pod-level process; a job whose id is in no usable line */
    dir_of("0::/system.slice/sshd.service\n", buf, sizeof(buf), -ENOENT);
    dir_of("0::/kubepods.slice/kubepods-pod7922aa99_d4aa_4885_a953_82976860b23a.slice\n", buf,
           sizeof(buf), -ENOENT);
    ASSERT_OK(cgroup_file_parse(text, strlen(text), &w));
    assert_int_equal(cgroup_workload_dir("4:memory:/slurm/job_77\n", 23, &w, buf, sizeof(buf)),
                     -ENOENT);
    ASSERT_ERRNO(cgroup_workload_dir(text, strlen(text), &w, small, sizeof(small)), ENAMETOOLONG);
    ASSERT_ERRNO(cgroup_workload_dir(NULL, 0, &w, buf, sizeof(buf)), EINVAL);
    ASSERT_ERRNO(cgroup_workload_dir(text, strlen(text), NULL, buf, sizeof(buf)), EINVAL);
    /* malformed lines are skipped */
    assert_int_equal(
        cgroup_workload_dir("garbage\n0:x\n0::relative/job_77\n", 31, &w, buf, sizeof(buf)),
        -ENOENT);
    w.slurm.job_id_valid = false;
    ASSERT_ERRNO(cgroup_workload_dir(text, strlen(text), &w, buf, sizeof(buf)), ENOENT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unseen_no_clamp),
        cmocka_unit_test(test_unseen_clamp),
        cmocka_unit_test(test_workload_dir),
        cmocka_unit_test(test_workload_dir_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
