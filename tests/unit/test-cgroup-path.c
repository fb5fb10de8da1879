/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_path.h"
#include "environ.h"
#include "macro.h"
#include "testutil.h"

/*
 * Rows of the real-line table in /work/shared/facts/workload-facts.md §1.3 (K = kepler
 * tests, KP = kepler procfs fixtures, C = ceems fixtures, CC = ceems comments, SD = Slurm
 * docs; CON = constructed from the format rules, marked synthetic there). Expected values
 * are written out in full, not derived from the line.
 */
struct row {
    const char *name;
    const char *line;
    enum identity_kind kind;
    enum container_runtime runtime;
    enum pod_qos qos;
    const char *pod_uid;
    const char *container_id;
    enum slurm_role role;
    long long job; /* -1: no numeric job id */
    const char *sluid;
    const char *step;
    const char *task;
    const char *unit;
};

#define CID_X1 "5f0e3c1d2b4a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0" /* synthetic */
#define CID_X2 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff" /* synthetic */

static const struct row rows[] = {
    {"K1",
     "0::/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-pod2c9f8a79_5391_454b_88cb_86190881cb96.slice/"
     "crio-a09343ca97901516c25036e2b954421254f8c68b384b536064e8999f0c4ed18d.scope",
     IDENTITY_POD, RUNTIME_CRIO, POD_QOS_BURSTABLE, "2c9f8a79-5391-454b-88cb-86190881cb96",
     "a09343ca97901516c25036e2b954421254f8c68b384b536064e8999f0c4ed18d", SLURM_ROLE_NONE, -1, "",
     "", "", "crio-a09343ca97901516c25036e2b954421254f8c68b384b536064e8999f0c4ed18d.scope"},
    {"K2",
     "0::/kubepods.slice/kubepods-besteffort.slice/"
     "kubepods-besteffort-poddbdd9718_6f63_40ef_987e_34776599d7d6.slice/"
     "crio-bdf2eeede4551b27acbbb05fb1b4f61925786681734bf128e68d39e17d115098.scope",
     IDENTITY_POD, RUNTIME_CRIO, POD_QOS_BESTEFFORT, "dbdd9718-6f63-40ef-987e-34776599d7d6",
     "bdf2eeede4551b27acbbb05fb1b4f61925786681734bf128e68d39e17d115098", SLURM_ROLE_NONE, -1, "",
     "", "", "crio-bdf2eeede4551b27acbbb05fb1b4f61925786681734bf128e68d39e17d115098.scope"},
    {"K3",
     "0::/kubepods.slice/kubepods-pod7922aa99_d4aa_4885_a953_82976860b23a.slice/"
     "crio-1c33afbc9e5aa6c69150d1af05254b562a4b17c313fc6153e3625cf456922bfe.scope",
     IDENTITY_POD, RUNTIME_CRIO, POD_QOS_GUARANTEED, "7922aa99-d4aa-4885-a953-82976860b23a",
     "1c33afbc9e5aa6c69150d1af05254b562a4b17c313fc6153e3625cf456922bfe", SLURM_ROLE_NONE, -1, "",
     "", "", "crio-1c33afbc9e5aa6c69150d1af05254b562a4b17c313fc6153e3625cf456922bfe.scope"},
    {"K4",
     "0::/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-pod2fc932ce_fdcc_454b_97bd_aadfdeb4c340.slice/"
     "cri-containerd-aaefb9d8feed2d453b543f6d928cede7a4dbefa6a0ae7c9b990dd234c56e93b9.scope",
     IDENTITY_POD, RUNTIME_CONTAINERD, POD_QOS_BURSTABLE, "2fc932ce-fdcc-454b-97bd-aadfdeb4c340",
     "aaefb9d8feed2d453b543f6d928cede7a4dbefa6a0ae7c9b990dd234c56e93b9", SLURM_ROLE_NONE, -1, "",
     "", "",
     "cri-containerd-aaefb9d8feed2d453b543f6d928cede7a4dbefa6a0ae7c9b990dd234c56e93b9.scope"},
    {"K5",
     "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/"
     "kubelet-kubepods-burstable-pod3cae2e45_052c_4b11_80d3_4d7b2d2d3464.slice/"
     "cri-containerd-2b180104511194aab36fd295d3e217439f3ddb5bc88277f37b4952abee85c40e.scope",
     IDENTITY_POD, RUNTIME_CONTAINERD, POD_QOS_BURSTABLE, "3cae2e45-052c-4b11-80d3-4d7b2d2d3464",
     "2b180104511194aab36fd295d3e217439f3ddb5bc88277f37b4952abee85c40e", SLURM_ROLE_NONE, -1, "",
     "", "",
     "cri-containerd-2b180104511194aab36fd295d3e217439f3ddb5bc88277f37b4952abee85c40e.scope"},
    {"K6",
     "0::/system.slice/"
     "docker-fd9d0ea06257a9780827cbc7fd92e3812a54fca26d63e191b73610d5d48b9cbd.scope/"
     "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
     "kubelet-kubepods-besteffort-podeab5a334_93fe_48a8_b139_9e8079c1f163.slice/"
     "cri-containerd-99f3a16ea25b7724cb56a4f0c0df1113ad9474fbf5545bead97fd5c7f61c13f4.scope",
     IDENTITY_POD, RUNTIME_CONTAINERD, POD_QOS_BESTEFFORT, "eab5a334-93fe-48a8-b139-9e8079c1f163",
     "99f3a16ea25b7724cb56a4f0c0df1113ad9474fbf5545bead97fd5c7f61c13f4", SLURM_ROLE_NONE, -1, "",
     "", "",
     "cri-containerd-99f3a16ea25b7724cb56a4f0c0df1113ad9474fbf5545bead97fd5c7f61c13f4.scope"},
    {"K7",
     "11:blkio:/kubepods/burstable/podf6adb0af-0855-4bab-b25b-c853f18d0ce2/"
     "35b97177dada20362ab90d90ac63cd54e8a41cf87bea34f270631b6da17f4a93",
     IDENTITY_POD, RUNTIME_UNKNOWN, POD_QOS_BURSTABLE, "f6adb0af-0855-4bab-b25b-c853f18d0ce2",
     "35b97177dada20362ab90d90ac63cd54e8a41cf87bea34f270631b6da17f4a93", SLURM_ROLE_NONE, -1, "",
     "", "", ""},
    {"K8",
     "0::/kubepods/pod51b64565-2b17-4d46-83ac-22e398f2f7fb/"
     "65d752a38e1db784d521f48c3f1956f4f9a74ebb923377144f253f3aca9fa028",
     IDENTITY_POD, RUNTIME_UNKNOWN, POD_QOS_GUARANTEED, "51b64565-2b17-4d46-83ac-22e398f2f7fb",
     "65d752a38e1db784d521f48c3f1956f4f9a74ebb923377144f253f3aca9fa028", SLURM_ROLE_NONE, -1, "",
     "", "", ""},
    {"K9",
     "0::/kubepods/burstable/pod5a89bcaa-3509-4375-83e1-b9e7a5712123/"
     "a069581483b00a498b3ba172612ffed06b3275a043bf3895c1b19e783e2793ee",
     IDENTITY_POD, RUNTIME_UNKNOWN, POD_QOS_BURSTABLE, "5a89bcaa-3509-4375-83e1-b9e7a5712123",
     "a069581483b00a498b3ba172612ffed06b3275a043bf3895c1b19e783e2793ee", SLURM_ROLE_NONE, -1, "",
     "", "", ""},
    {"K10",
     "13:memory:/system.slice/containerd.service/"
     "kubepods-besteffort-pod0043435f_1854_4327_b76b_730f681a781d.slice:cri-containerd:"
     "01fd96f7ad292b02a8317cde4ecb8c7ef3cc06ffdd113f13410e0837eb2b2a20",
     IDENTITY_POD, RUNTIME_CONTAINERD, POD_QOS_BESTEFFORT, "0043435f-1854-4327-b76b-730f681a781d",
     "01fd96f7ad292b02a8317cde4ecb8c7ef3cc06ffdd113f13410e0837eb2b2a20", SLURM_ROLE_NONE, -1, "",
     "", "", "containerd.service"},
    {"K11",
     "1:name=systemd:/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-podd0511cd2_29d2_4215_be0f_f77bc0609d99.slice/"
     "crio-f93ee491b8ed2680d5a909eb098b14a9430173b57ca1c4efedd8768566d67e8e.scope",
     IDENTITY_POD, RUNTIME_CRIO, POD_QOS_BURSTABLE, "d0511cd2-29d2-4215-be0f-f77bc0609d99",
     "f93ee491b8ed2680d5a909eb098b14a9430173b57ca1c4efedd8768566d67e8e", SLURM_ROLE_NONE, -1, "",
     "", "", "crio-f93ee491b8ed2680d5a909eb098b14a9430173b57ca1c4efedd8768566d67e8e.scope"},
    {"D1",
     "0::/system.slice/"
     "docker-b176419186d75a44628851daf7841d3374a2ec56d0b038ee3bd1e0c6d331e5b1.scope",
     IDENTITY_CONTAINER, RUNTIME_DOCKER, POD_QOS_UNKNOWN, "",
     "b176419186d75a44628851daf7841d3374a2ec56d0b038ee3bd1e0c6d331e5b1", SLURM_ROLE_NONE, -1, "",
     "", "", "docker-b176419186d75a44628851daf7841d3374a2ec56d0b038ee3bd1e0c6d331e5b1.scope"},
    {"D2",
     "13:hugetlb:/system.slice/"
     "docker-2fa3e04b676df750842faf017052dd37ea0cc5bc7259a3487a1718c7fe100c94.scope",
     IDENTITY_CONTAINER, RUNTIME_DOCKER, POD_QOS_UNKNOWN, "",
     "2fa3e04b676df750842faf017052dd37ea0cc5bc7259a3487a1718c7fe100c94", SLURM_ROLE_NONE, -1, "",
     "", "", "docker-2fa3e04b676df750842faf017052dd37ea0cc5bc7259a3487a1718c7fe100c94.scope"},
    {"D3", /* the source gives the path only; "0::" added */
     "0::/docker/ce82d94d69e1fbbc7feeb66930c69e9b96d9f151f594773e5d0e342741d15437",
     IDENTITY_CONTAINER, RUNTIME_DOCKER, POD_QOS_UNKNOWN, "",
     "ce82d94d69e1fbbc7feeb66930c69e9b96d9f151f594773e5d0e342741d15437", SLURM_ROLE_NONE, -1, "",
     "", "", ""},
    {"P1",
     "0::/user.slice/user-1000.slice/user@1000.service/user.slice/"
     "libpod-f992ec4ed807f76e5e54c9c67d78f0a4105bf945420271c2558ba905e38d2108.scope/container",
     IDENTITY_CONTAINER, RUNTIME_PODMAN, POD_QOS_UNKNOWN, "",
     "f992ec4ed807f76e5e54c9c67d78f0a4105bf945420271c2558ba905e38d2108", SLURM_ROLE_NONE, -1, "",
     "", "", "libpod-f992ec4ed807f76e5e54c9c67d78f0a4105bf945420271c2558ba905e38d2108.scope"},
    {"P2",
     "0::/machine.slice/"
     "libpod-8e363eb2287da4ccc9f52ffc5de11252ac5fe707e3ddb917a3c0bdf9bb64165b.scope",
     IDENTITY_CONTAINER, RUNTIME_PODMAN, POD_QOS_UNKNOWN, "",
     "8e363eb2287da4ccc9f52ffc5de11252ac5fe707e3ddb917a3c0bdf9bb64165b", SLURM_ROLE_NONE, -1, "",
     "", "", "libpod-8e363eb2287da4ccc9f52ffc5de11252ac5fe707e3ddb917a3c0bdf9bb64165b.scope"},
    {"P3", /* podman's monitor is not the container */
     "0::/machine.slice/"
     "libpod-conmon-6dd05e91f00f99281f70b1fd90a29e5cc30b0dab243cb7cfb6153d8017872394.scope",
     IDENTITY_NONE, RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_NONE, -1, "", "", "",
     "libpod-conmon-6dd05e91f00f99281f70b1fd90a29e5cc30b0dab243cb7cfb6153d8017872394.scope"},
    {"N1",
     "0::/user.slice/user-1000.slice/user@1000.service/"
     "tmux-spawn-e780eea5-fcf4-4010-88be-18150805c48e.scope",
     IDENTITY_NONE, RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_NONE, -1, "", "", "",
     "tmux-spawn-e780eea5-fcf4-4010-88be-18150805c48e.scope"},
    /* Below a user's own manager any name can be made: no pod, no SLURM job, no other
     * runtime's container there (a user would bill another's pod, job or container, whose
     * ids /proc shows to all); rootless podman's container (P1) stays the user's. */
    {"U1",
     "0::/user.slice/user-1000.slice/user@1000.service/x_slurmstepd.scope/job_42/step_0/user/"
     "task_0",
     IDENTITY_NONE, RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_NONE, -1, "", "", "",
     "x_slurmstepd.scope"},
    {"U2",
     "0::/user.slice/user-1000.slice/user@1000.service/"
     "kubepods-besteffort-pod2c9f8a79_5391_454b_88cb_86190881cb96.slice/"
     "cri-containerd-" CID_X1 ".scope",
     IDENTITY_NONE, RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_NONE, -1, "", "", "",
     "cri-containerd-" CID_X1 ".scope"},
    {"U4", /* another's docker container, by id */
     "0::/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" CID_X1 ".scope",
     IDENTITY_NONE, RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_NONE, -1, "", "", "",
     "docker-" CID_X1 ".scope"},
    {"U3",
     "0::/user.slice/user-1000.slice/user@1000.service/kubepods/burstable/"
     "podf6adb0af-0855-4bab-b25b-c853f18d0ce2/" CID_X2,
     IDENTITY_NONE, RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_NONE, -1, "", "", "",
     "user@1000.service"},
    {"N2", "2:pids:/user.slice/user-118.slice/session-18.scope", IDENTITY_NONE, RUNTIME_NONE,
     POD_QOS_UNKNOWN, "", "", SLURM_ROLE_NONE, -1, "", "", "", "session-18.scope"},
    {"N3", "0::/system.slice/slurmd.service", IDENTITY_NONE, RUNTIME_NONE, POD_QOS_UNKNOWN, "", "",
     SLURM_ROLE_NONE, -1, "", "", "", "slurmd.service"},
    {"S1", "0::/system.slice/slurmstepd.scope/job_1320003/step_0/user/task_0", IDENTITY_SLURM_JOB,
     RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_JOB, 1320003, "", "0", "0",
     "slurmstepd.scope"},
    {"S2", "9:cpu,cpuacct:/slurm/uid_1000/job_4824887", IDENTITY_SLURM_JOB, RUNTIME_NONE,
     POD_QOS_UNKNOWN, "", "", SLURM_ROLE_JOB, 4824887, "", "", "", ""},
    {"S3", "0::/system.slice/slurmstepd.scope/job_211/step_extern/user/task_0", IDENTITY_SLURM_JOB,
     RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_JOB, 211, "", "extern", "0",
     "slurmstepd.scope"},
    {"S4", "0::/system.slice/slurmstepd.scope/job_211/step_interactive", IDENTITY_SLURM_JOB,
     RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_JOB, 211, "", "interactive", "",
     "slurmstepd.scope"},
    {"S5", "0::/system.slice/slurmstepd.scope/s5K1KKYAYG5D00/step_0/user/task_0",
     IDENTITY_SLURM_JOB, RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_JOB, -1,
     "s5K1KKYAYG5D00", "0", "0", "slurmstepd.scope"},
    {"S6", "0::/system.slice/slurmstepd.scope/system", IDENTITY_NONE, RUNTIME_NONE, POD_QOS_UNKNOWN,
     "", "", SLURM_ROLE_INFRA, -1, "", "", "", "slurmstepd.scope"},
    {"S7", "0::/system.slice/slurmstepd.scope/job_36/step_batch/slurm", IDENTITY_SLURM_JOB,
     RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_STEPD, 36, "", "batch", "",
     "slurmstepd.scope"},
    {"S8", "4:memory:/slurm/uid_1000/job_4824887/step_0/task_0", IDENTITY_SLURM_JOB, RUNTIME_NONE,
     POD_QOS_UNKNOWN, "", "", SLURM_ROLE_JOB, 4824887, "", "0", "0", ""},
    {"S9", "0::/system.slice/node1_slurmstepd.scope/job_77/step_0/user/task_special",
     IDENTITY_SLURM_JOB, RUNTIME_NONE, POD_QOS_UNKNOWN, "", "", SLURM_ROLE_JOB, 77, "", "0",
     "special", "node1_slurmstepd.scope"},
    {"X1",
     "0::/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-pod9aac5b5c8815def09a2ef9e37b89da55.slice/cri-containerd-" CID_X1 ".scope",
     IDENTITY_POD, RUNTIME_CONTAINERD, POD_QOS_BURSTABLE, "9aac5b5c8815def09a2ef9e37b89da55",
     CID_X1, SLURM_ROLE_NONE, -1, "", "", "", "cri-containerd-" CID_X1 ".scope"},
    {"X2",
     "0::/../../../kubepods-besteffort.slice/"
     "kubepods-besteffort-pod0b3e7c1a_2d4f_4e6a_9b8c_7d6e5f4a3b2c.slice/cri-containerd-" CID_X2
     ".scope",
     IDENTITY_POD, RUNTIME_CONTAINERD, POD_QOS_BESTEFFORT, "0b3e7c1a-2d4f-4e6a-9b8c-7d6e5f4a3b2c",
     CID_X2, SLURM_ROLE_NONE, -1, "", "", "", "cri-containerd-" CID_X2 ".scope"},
};

static void check_row(const struct row *w, const struct workload_identity *id) {
    if (id->kind != w->kind)
        fail_msg("%s: kind %s, expected %s", w->name, identity_kind_to_string(id->kind),
                 identity_kind_to_string(w->kind));
    assert_int_equal(id->runtime, w->runtime);
    assert_int_equal(id->qos, w->qos);
    assert_string_equal(id->pod_uid, w->pod_uid);
    assert_string_equal(id->container_id, w->container_id);
    assert_int_equal(id->slurm.role, w->role);
    assert_int_equal(id->slurm.job_id_valid, w->job >= 0);
    if (w->job >= 0)
        assert_int_equal(id->slurm.job_id, w->job);
    assert_string_equal(id->slurm.sluid, w->sluid);
    assert_int_equal(id->slurm.needs_environ, w->sluid[0] != '\0');
    assert_string_equal(id->slurm.step, w->step);
    assert_string_equal(id->slurm.task, w->task);
    assert_string_equal(id->systemd_unit, w->unit);
}

static void test_table(void **state) {
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct workload_identity id;
        char buf[1024];

        ASSERT_OK(cgroup_file_parse(rows[i].line, strlen(rows[i].line), &id));
        check_row(&rows[i], &id);
        /* The same with the trailing newline the kernel prints. */
        (void)snprintf(buf, sizeof(buf), "%s\n", rows[i].line);
        ASSERT_OK(cgroup_file_parse(buf, strlen(buf), &id));
        check_row(&rows[i], &id);
    }
}

static void test_path_only(void **state) {
    static const char path[] =
        "/docker/ce82d94d69e1fbbc7feeb66930c69e9b96d9f151f594773e5d0e342741d15437";
    struct workload_identity id = {.kind = _IDENTITY_KIND_MAX};

    ASSERT_OK(cgroup_path_parse(path, strlen(path), &id));
    assert_int_equal(id.kind, IDENTITY_CONTAINER);
    assert_int_equal(id.runtime, RUNTIME_DOCKER);
    assert_string_equal(id.container_id,
                        "ce82d94d69e1fbbc7feeb66930c69e9b96d9f151f594773e5d0e342741d15437");

    ASSERT_OK(cgroup_path_parse("/", 1, &id));
    assert_int_equal(id.kind, IDENTITY_NONE);
    assert_string_equal(id.systemd_unit, "");

    id.kind = _IDENTITY_KIND_MAX;
    ASSERT_ERRNO(cgroup_path_parse("", 0, &id), EINVAL);
    ASSERT_ERRNO(cgroup_path_parse("docker/x", 8, &id), EINVAL);
    ASSERT_ERRNO(cgroup_path_parse("/a\0b", 4, &id), EINVAL);
    assert_int_equal(id.kind, _IDENTITY_KIND_MAX);
}

/* ceems' SLURM v1 node: every controller, job level only on most, task level on memory. */
static void test_v1_file_picks_most_specific(void **state) {
    static const char file[] = "12:freezer:/slurm/uid_1000/job_4824887\n"
                               "11:devices:/slurm/uid_1000/job_4824887/step_0\n"
                               "10:net_cls,net_prio:/\n"
                               "9:cpu,cpuacct:/slurm/uid_1000/job_4824887/step_0\n"
                               "6:memory:/slurm/uid_1000/job_4824887/step_0/task_0\n"
                               "2:pids:/user.slice/user-1000.slice/session-3.scope\n"
                               "1:name=systemd:/system.slice/slurmd.service\n";
    struct workload_identity id;

    ASSERT_OK(cgroup_file_parse(file, sizeof(file) - 1, &id));
    assert_int_equal(id.kind, IDENTITY_SLURM_JOB);
    assert_int_equal(id.slurm.job_id, 4824887);
    assert_true(id.slurm.uid_valid);
    assert_int_equal(id.slurm.uid, 1000);
    assert_string_equal(id.slurm.step, "0");
    assert_string_equal(id.slurm.task, "0"); /* from the memory line */
}

static void test_controller_preference(void **state) {
    /* Equal specificity, different paths: cpu,cpuacct wins over pids and blkio. */
    static const char file[] =
        "3:pids:/docker/1111111111111111111111111111111111111111111111111111111111111111\n"
        "5:blkio:/docker/2222222222222222222222222222222222222222222222222222222222222222\n"
        "4:cpu,cpuacct:/docker/3333333333333333333333333333333333333333333333333333333333333333\n";
    /* v2 names a workload: it wins over a more specific-looking v1 line. */
    static const char hybrid_v2[] =
        "4:memory:/kubepods/burstable/pod5a89bcaa-3509-4375-83e1-b9e7a5712123/"
        "a069581483b00a498b3ba172612ffed06b3275a043bf3895c1b19e783e2793ee\n"
        "0::/system.slice/"
        "docker-4444444444444444444444444444444444444444444444444444444444444444.scope\n";
    /* Hybrid node: the container is only on the v1 lines, 0:: is an unrelated unit. */
    static const char hybrid_v1[] =
        "12:freezer:/docker/5555555555555555555555555555555555555555555555555555555555555555\n"
        "1:name=systemd:/docker/5555555555555555555555555555555555555555555555555555555555555555\n"
        "0::/system.slice/dockerd.service\n";
    /* Nothing anywhere: the v2 line gives the unit. */
    static const char nothing[] = "1:name=systemd:/init.scope\n0::/system.slice/cron.service\n";
    /* A bare v2 root on a hybrid node says nothing: systemd's hierarchy names the session,
     * which is no job's whatever its environment says. */
    static const char bare_v2[] =
        "1:name=systemd:/user.slice/user-1000.slice/session-3.scope\n0::/\n";
    struct workload_identity id;

    ASSERT_OK(cgroup_file_parse(file, sizeof(file) - 1, &id));
    assert_string_equal(id.container_id,
                        "3333333333333333333333333333333333333333333333333333333333333333");

    ASSERT_OK(cgroup_file_parse(hybrid_v2, sizeof(hybrid_v2) - 1, &id));
    assert_int_equal(id.kind, IDENTITY_CONTAINER);
    assert_string_equal(id.container_id,
                        "4444444444444444444444444444444444444444444444444444444444444444");

    ASSERT_OK(cgroup_file_parse(hybrid_v1, sizeof(hybrid_v1) - 1, &id));
    assert_int_equal(id.kind, IDENTITY_CONTAINER);
    assert_int_equal(id.runtime, RUNTIME_DOCKER);
    assert_string_equal(id.container_id,
                        "5555555555555555555555555555555555555555555555555555555555555555");

    ASSERT_OK(cgroup_file_parse(nothing, sizeof(nothing) - 1, &id));
    assert_int_equal(id.kind, IDENTITY_NONE);
    assert_string_equal(id.systemd_unit, "cron.service");

    ASSERT_OK(cgroup_file_parse(bare_v2, sizeof(bare_v2) - 1, &id));
    assert_int_equal(id.kind, IDENTITY_NONE);
    assert_string_equal(id.systemd_unit, "session-3.scope");
    assert_false(workload_identity_wants_slurm_environ(&id));
}

/* Lines that must give IDENTITY_NONE (and no partial strings). */
static const char *const none_lines[] = {
    /* truncated / overlong / uppercase / non-hex container ids */
    "0::/system.slice/docker-b176419186d75a44628851daf7841d3374a2ec56d0b038ee3bd1e0c6d331e5b.scope",
    "0::/system.slice/"
    "docker-b176419186d75a44628851daf7841d3374a2ec56d0b038ee3bd1e0c6d331e5b11.scope",
    "0::/system.slice/"
    "docker-B176419186D75A44628851DAF7841D3374A2EC56D0B038EE3BD1E0C6D331E5B1.scope",
    "0::/system.slice/"
    "docker-g176419186d75a44628851daf7841d3374a2ec56d0b038ee3bd1e0c6d331e5b1.scope",
    "0::/system.slice/rkt-b176419186d75a44628851daf7841d3374a2ec56d0b038ee3bd1e0c6d331e5b1.scope",
    /* a bare id with no runtime parent and no pod */
    "0::/lxc/b176419186d75a44628851daf7841d3374a2ec56d0b038ee3bd1e0c6d331e5b1",
    /* pod UIDs: truncated, wrong separator, mixed separators, no kubepods word */
    "0::/kubepods/burstable/pod5a89bcaa-3509-4375-83e1-b9e7a571212",
    "0::/kubepods/burstable/pod5a89bcaa_3509_4375_83e1_b9e7a5712123",
    "0::/kubepods.slice/kubepods-pod7922aa99_d4aa-4885_a953_82976860b23a.slice",
    "0::/kubepods.slice/kubepods-pod7922aa99-d4aa-4885-a953-82976860b23a.slice",
    "0::/user.slice/tmux-spawn-pod7922aa99_d4aa_4885_a953_82976860b23a.slice",
    "0::/kubepods/burstable/podzz89bcaa-3509-4375-83e1-b9e7a5712123",
    /* SLURM look-alikes */
    "0::/system.slice/slurmstepd.scope/job_0/step_0",
    "0::/system.slice/slurmstepd.scope/job_01/step_0",
    "0::/system.slice/slurmstepd.scope/job_4294967296/step_0",
    "0::/system.slice/slurmstepd.scope/job_/step_0",
    "0::/system.slice/slurmstepd.scope/s5K1KKYAYG5DI0/step_0", /* 'I' not Crockford */
    "0::/system.slice/slurmstepd.scope/s5k1kkyayg5d00/step_0", /* lowercase */
    "0::/system.slice/slurmstepd.scope/s5K1KKYAYG5D0/step_0",  /* 13 chars */
    "0::/system.slice/slurmstepd.scope/slurmd",
    "0::/system.slice/other.scope/job_42/step_0", /* no slurmstepd root */
    "4:memory:/slurm/job_42/step_0",              /* v1 without uid level */
    "4:memory:/slurm/uid_x/job_42",
    "0::/job_42",
    "0::/",
};

static void test_none_lines(void **state) {
    for (size_t i = 0; i < ARRAY_SIZE(none_lines); i++) {
        struct workload_identity id;

        ASSERT_OK(cgroup_file_parse(none_lines[i], strlen(none_lines[i]), &id));
        if (id.kind != IDENTITY_NONE)
            fail_msg("line %zu (%s): kind %s", i, none_lines[i], identity_kind_to_string(id.kind));
        assert_string_equal(id.container_id, "");
        assert_string_equal(id.pod_uid, "");
        assert_int_equal(id.runtime, RUNTIME_NONE);
        assert_false(id.slurm.job_id_valid);
        assert_string_equal(id.slurm.sluid, "");
        assert_string_equal(id.slurm.step, "");
    }
}

/* Lines as the kernel and systemd write them that are easy to misread: a cgroup removed
 * before its zombie was reaped (" (deleted)"), unit names holding ':', and pure cgroup v1
 * where only systemd's own hierarchy names the unit. */
static void test_kernel_and_systemd_spellings(void **state) {
    static const char deleted[] = "0::/system.slice/docker-" CID_X1 ".scope (deleted)\n";
    static const char backlight[] = "0::/system.slice/system-systemd\\x2dbacklight.slice/"
                                    "systemd-backlight@backlight:acpi_video0.service\n";
    static const char pvscan[] = "0::/system.slice/lvm2-pvscan@8:2.service\n";
    static const char triple[] =
        "0::/kubepods.slice/kubepods-besteffort.slice:cri-containerd:" CID_X1 "\n";
    static const char v1_sshd[] = "11:cpuset:/\n9:devices:/system.slice/sshd.service\n"
                                  "4:cpu,cpuacct:/\n1:name=systemd:/system.slice/sshd.service\n";
    static const char v1_session[] = "4:cpu,cpuacct:/user.slice\n"
                                     "1:name=systemd:/user.slice/user-1000.slice/session-3.scope\n";
    static const char v1_job[] = "4:cpu,cpuacct:/slurm/uid_0/job_42/step_0\n"
                                 "1:name=systemd:/system.slice/slurmd.service\n";
    struct workload_identity id;

    ASSERT_OK(cgroup_file_parse(deleted, sizeof(deleted) - 1, &id));
    assert_int_equal(id.kind, IDENTITY_CONTAINER);
    assert_string_equal(id.container_id, CID_X1);
    ASSERT_OK(cgroup_file_parse(backlight, sizeof(backlight) - 1, &id));
    assert_string_equal(id.systemd_unit, "systemd-backlight@backlight:acpi_video0.service");
    ASSERT_OK(cgroup_file_parse(pvscan, sizeof(pvscan) - 1, &id));
    assert_string_equal(id.systemd_unit, "lvm2-pvscan@8:2.service");
    /* the driver-mismatch triple is still split at its ':' */
    ASSERT_OK(cgroup_file_parse(triple, sizeof(triple) - 1, &id));
    assert_string_equal(id.container_id, CID_X1);

    ASSERT_OK(cgroup_file_parse(v1_sshd, sizeof(v1_sshd) - 1, &id));
    assert_int_equal(id.kind, IDENTITY_NONE);
    assert_string_equal(id.systemd_unit, "sshd.service");
    assert_false(workload_identity_wants_slurm_environ(&id));
    ASSERT_OK(cgroup_file_parse(v1_session, sizeof(v1_session) - 1, &id));
    assert_string_equal(id.systemd_unit, "session-3.scope");
    assert_false(workload_identity_wants_slurm_environ(&id));
    /* a workload in the cpu hierarchy still wins over systemd's unit */
    ASSERT_OK(cgroup_file_parse(v1_job, sizeof(v1_job) - 1, &id));
    assert_int_equal(id.kind, IDENTITY_SLURM_JOB);
    assert_string_equal(id.slurm.step, "0");
}

static void test_partial_matches(void **state) {
    struct workload_identity id;
    const char *l;

    /* CRI-O's conmon in the pod slice: the pod, but no container. */
    l = "0::/kubepods.slice/kubepods-pod7922aa99_d4aa_4885_a953_82976860b23a.slice/"
        "crio-conmon-1c33afbc9e5aa6c69150d1af05254b562a4b17c313fc6153e3625cf456922bfe.scope";
    ASSERT_OK(cgroup_file_parse(l, strlen(l), &id));
    assert_int_equal(id.kind, IDENTITY_POD);
    assert_string_equal(id.pod_uid, "7922aa99-d4aa-4885-a953-82976860b23a");
    assert_string_equal(id.container_id, "");
    assert_int_equal(id.runtime, RUNTIME_NONE);

    /* cgroupfs pod seen from another cgroup namespace: QoS level hidden. */
    l = "0::/../../pod51b64565-2b17-4d46-83ac-22e398f2f7fb/"
        "65d752a38e1db784d521f48c3f1956f4f9a74ebb923377144f253f3aca9fa028";
    ASSERT_OK(cgroup_file_parse(l, strlen(l), &id));
    assert_int_equal(id.kind, IDENTITY_POD);
    assert_int_equal(id.qos, POD_QOS_UNKNOWN);
    assert_int_equal(id.runtime, RUNTIME_UNKNOWN);

    /* Uppercase UID hex is lowered; CRI-O cgroupfs names have no ".scope". */
    l = "0::/kubepods/besteffort/pod5A89BCAA-3509-4375-83E1-B9E7A5712123/"
        "crio-a069581483b00a498b3ba172612ffed06b3275a043bf3895c1b19e783e2793ee";
    ASSERT_OK(cgroup_file_parse(l, strlen(l), &id));
    assert_string_equal(id.pod_uid, "5a89bcaa-3509-4375-83e1-b9e7a5712123");
    assert_int_equal(id.qos, POD_QOS_BESTEFFORT);
    assert_int_equal(id.runtime, RUNTIME_CRIO);

    /* A job with an unknown step name keeps the job, not the step. */
    l = "0::/system.slice/slurmstepd.scope/job_99/step_foo/user/task_0";
    ASSERT_OK(cgroup_file_parse(l, strlen(l), &id));
    assert_int_equal(id.kind, IDENTITY_SLURM_JOB);
    assert_int_equal(id.slurm.job_id, 99);
    assert_string_equal(id.slurm.step, "");
    assert_string_equal(id.slurm.task, "");

    /* Heterogeneous step, v1 depth with task_special refused (v2 only). */
    l = "0::/system.slice/slurmstepd.scope/job_5/step_0+1/user/task_3";
    ASSERT_OK(cgroup_file_parse(l, strlen(l), &id));
    assert_string_equal(id.slurm.step, "0+1");
    assert_string_equal(id.slurm.task, "3");
    l = "4:memory:/slurm_node7/uid_0/job_5/step_batch/task_special";
    ASSERT_OK(cgroup_file_parse(l, strlen(l), &id));
    assert_int_equal(id.slurm.job_id, 5);
    assert_int_equal(id.slurm.uid, 0);
    assert_string_equal(id.slurm.step, "batch");
    assert_string_equal(id.slurm.task, "");
}

static void test_malformed_files(void **state) {
    static const char *const bad[] = {
        "",
        "\n\n",
        "garbage",
        "0:/kubepods",           /* one colon */
        "x::/kubepods",          /* hierarchy not a number */
        "-1::/",                 /* negative */
        "1::/docker/x",          /* v1 without controllers */
        "0:cpu:/",               /* v2 with controllers */
        "0::kubepods/burstable", /* relative path */
        "0::",                   /* empty path */
        "3:cpu set:/",           /* space in controllers */
        "99999999999:cpu:/",     /* hierarchy id overflow */
    };
    struct workload_identity id = {.kind = _IDENTITY_KIND_MAX};

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
        if (cgroup_file_parse(bad[i], strlen(bad[i]), &id) != -EINVAL)
            fail_msg("'%s' accepted", bad[i]);
    assert_int_equal(id.kind, _IDENTITY_KIND_MAX);

    /* A malformed line among good ones is skipped; an embedded NUL kills only its line. */
    {
        static const char mixed[] =
            "5:memory\0:/docker/1111111111111111111111111111111111111111111111111111111111111111\n"
            "what:ever\n"
            "0::/system.slice/"
            "docker-2222222222222222222222222222222222222222222222222222222222222222.scope\n";

        ASSERT_OK(cgroup_file_parse(mixed, sizeof(mixed) - 1, &id));
        assert_string_equal(id.container_id,
                            "2222222222222222222222222222222222222222222222222222222222222222");
        ASSERT_ERRNO(cgroup_file_parse(mixed, 20, &id), EINVAL);
    }
}

static void test_long_lines(void **state) {
    static const char cid[] = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789";
    size_t n = 200000, len = 0;
    char *buf = malloc(n + 200);
    struct workload_identity id;

    assert_non_null(buf);
    /* 100k levels of nesting, then a docker scope: still found, no recursion, no limits. */
    len += (size_t)sprintf(buf, "0::");
    while (len < n)
        len += (size_t)sprintf(buf + len, "/a");
    len += (size_t)sprintf(buf + len, "/docker-%s.scope\n", cid);
    ASSERT_OK(cgroup_file_parse(buf, len, &id));
    assert_int_equal(id.kind, IDENTITY_CONTAINER);
    assert_string_equal(id.container_id, cid);

    /* One 200k component: not a unit (too long), not an id. */
    len = (size_t)sprintf(buf, "0::/");
    memset(buf + len, 'x', n);
    len += n;
    memcpy(buf + len, ".service", 8);
    len += 8;
    ASSERT_OK(cgroup_file_parse(buf, len, &id));
    assert_int_equal(id.kind, IDENTITY_NONE);
    assert_string_equal(id.systemd_unit, "");
    free(buf);

    /* Every prefix of a real line parses without error or garbage (truncated reads). */
    {
        const char *l = rows[0].line;

        for (size_t k = 4; k <= strlen(l); k++) {
            ASSERT_OK(cgroup_file_parse(l, k, &id));
            assert_true(id.container_id[0] == '\0' || strlen(id.container_id) == 64);
            assert_true(id.pod_uid[0] == '\0' || strlen(id.pod_uid) == 36);
        }
        assert_string_equal(id.container_id, rows[0].container_id);
    }
}

/* Random mixes of meaningful tokens: whatever comes out is well formed. */
static void test_random_token_soup(void **state) {
    static const char *const tokens[] = {
        "/",
        ":",
        "\n",
        "0::",
        "4:memory:",
        "kubepods",
        ".slice",
        "-pod",
        "pod",
        "burstable",
        "_",
        "-",
        "job_",
        "step_",
        "task_",
        "user",
        "slurm",
        "slurmstepd.scope",
        "uid_",
        "12",
        "s5K1KKYAYG5D00",
        "docker-",
        "cri-containerd",
        ".scope",
        "7922aa99",
        "d4aa",
        "82976860b23a",
        "..",
        "\0",
        CID_X1,
    };
    uint64_t rng = 20260521;
    char buf[512];

    for (int iter = 0; iter < 20000; iter++) {
        struct workload_identity id;
        size_t len = 0;
        unsigned parts = (unsigned)test_rand_below(&rng, 24);

        for (unsigned i = 0; i < parts; i++) {
            const char *t = tokens[test_rand_below(&rng, ARRAY_SIZE(tokens))];
            size_t tl = t[0] ? strlen(t) : 1;

            memcpy(buf + len, t, tl);
            len += tl;
        }
        if (cgroup_file_parse(buf, len, &id) < 0)
            continue;
        assert_true(id.container_id[0] == '\0' || strlen(id.container_id) == 64);
        assert_true(id.pod_uid[0] == '\0' || strlen(id.pod_uid) == 36 || strlen(id.pod_uid) == 32);
        assert_true((id.kind == IDENTITY_POD) == (id.pod_uid[0] != '\0'));
        assert_true((id.runtime == RUNTIME_NONE) == (id.container_id[0] == '\0'));
        assert_true(strlen(id.slurm.sluid) == 0 || strlen(id.slurm.sluid) == 14);
        assert_true(strlen(id.systemd_unit) < SYSTEMD_UNIT_MAX);
    }
}

static void test_environ(void **state) {
    static const char env[] = "HOME=/root\0SLURM_JOB_IDX=1\0SLURM_JOB_ID=1320003\0"
                              "SLURM_JOB_SLUID=s5K1KKYAYG5D00\0EMPTY=\0LAST=tail";
    const char *line = "0::/system.slice/slurmstepd.scope/s5K1KKYAYG5D00/step_0/user/task_0";
    struct workload_identity id, copy;
    const char *v;
    size_t vl;

    ASSERT_OK(environ_get(env, sizeof(env) - 1, "SLURM_JOB_ID", &v, &vl));
    assert_int_equal(vl, 7);
    assert_memory_equal(v, "1320003", 7);
    ASSERT_OK(environ_get(env, sizeof(env) - 1, "EMPTY", &v, &vl));
    assert_int_equal(vl, 0);
    ASSERT_OK(environ_get(env, sizeof(env) - 1, "LAST", &v, &vl)); /* no final NUL */
    assert_int_equal(vl, 4);
    assert_memory_equal(v, "tail", 4);
    ASSERT_ERRNO(environ_get(env, sizeof(env) - 1, "SLURM_JOB", &v, &vl), ENOENT);
    ASSERT_ERRNO(environ_get(env, sizeof(env) - 1, "HOME=/root", &v, &vl), ENOENT);
    ASSERT_ERRNO(environ_get("", 0, "HOME", &v, &vl), ENOENT);

    ASSERT_OK(cgroup_file_parse(line, strlen(line), &id));
    assert_true(id.slurm.needs_environ);
    copy = id;
    ASSERT_OK(workload_identity_apply_environ(&id, env, sizeof(env) - 1));
    assert_true(id.slurm.job_id_valid);
    assert_int_equal(id.slurm.job_id, 1320003);
    assert_false(id.slurm.needs_environ);
    assert_string_equal(id.slurm.sluid, "s5K1KKYAYG5D00");
    ASSERT_ERRNO(workload_identity_apply_environ(&id, env, sizeof(env) - 1), EALREADY);

    /* Legacy name only. */
    {
        static const char legacy[] = "SLURM_JOB_SLUID=s5K1KKYAYG5D00\0SLURM_JOBID=77";

        id = copy;
        ASSERT_OK(workload_identity_apply_environ(&id, legacy, sizeof(legacy) - 1));
        assert_int_equal(id.slurm.job_id, 77);
    }

    /* Failures leave the identity untouched. */
    {
#define SLUID_AND(x)                                                                               \
    {                                                                                              \
        "SLURM_JOB_SLUID=s5K1KKYAYG5D00\0" x,                                                      \
            sizeof("SLURM_JOB_SLUID=s5K1KKYAYG5D00") + sizeof(x) - 1                               \
    }
        static const char other_job[] = "SLURM_JOB_SLUID=sEKNKTV3WPV500\0SLURM_JOB_ID=5";
        static const char no_id[] = "PATH=/bin\0SLURM_JOB_SLUID=s5K1KKYAYG5D00";
        static const char no_sluid[] = "PATH=/bin\0SLURM_JOB_ID=777"; /* env -u SLURM_JOB_SLUID */
        static const struct {
            const char *env;
            size_t len;
        } bad_ids[] = {SLUID_AND("SLURM_JOB_ID="),           SLUID_AND("SLURM_JOB_ID=0"),
                       SLUID_AND("SLURM_JOB_ID=012"),        SLUID_AND("SLURM_JOB_ID=12a"),
                       SLUID_AND("SLURM_JOB_ID=4294967296"), SLUID_AND("SLURM_JOB_ID=-3")};
#undef SLUID_AND

        id = copy;
        ASSERT_ERRNO(workload_identity_apply_environ(&id, other_job, sizeof(other_job) - 1),
                     EINVAL);
        ASSERT_ERRNO(workload_identity_apply_environ(&id, no_id, sizeof(no_id) - 1), ENOENT);
        ASSERT_ERRNO(workload_identity_apply_environ(&id, no_sluid, sizeof(no_sluid) - 1), ENOENT);
        ASSERT_ERRNO(workload_identity_apply_environ(&id, "", 0), ENOENT);
        for (size_t i = 0; i < ARRAY_SIZE(bad_ids); i++)
            ASSERT_ERRNO(workload_identity_apply_environ(&id, bad_ids[i].env, bad_ids[i].len),
                         EINVAL);
        assert_memory_equal(&id, &copy, sizeof(id));
    }
}

static void test_names(void **state) {
    assert_string_equal(identity_kind_to_string(IDENTITY_SLURM_JOB), "slurm_job");
    assert_string_equal(container_runtime_to_string(RUNTIME_CRIO), "cri-o");
    assert_string_equal(container_runtime_to_string(RUNTIME_UNKNOWN), "unknown");
    assert_string_equal(pod_qos_to_string(POD_QOS_BESTEFFORT), "besteffort");
    assert_string_equal(slurm_role_to_string(SLURM_ROLE_STEPD), "slurmstepd");
    assert_null(identity_kind_to_string(_IDENTITY_KIND_MAX));
    assert_null(container_runtime_to_string(_RUNTIME_MAX));
    assert_null(pod_qos_to_string((enum pod_qos) - 1));
    assert_null(slurm_role_to_string(_SLURM_ROLE_MAX));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_path_only),
        cmocka_unit_test(test_v1_file_picks_most_specific),
        cmocka_unit_test(test_controller_preference),
        cmocka_unit_test(test_none_lines),
        cmocka_unit_test(test_kernel_and_systemd_spellings),
        cmocka_unit_test(test_partial_matches),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_random_token_soup),
        cmocka_unit_test(test_environ),
        cmocka_unit_test(test_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
