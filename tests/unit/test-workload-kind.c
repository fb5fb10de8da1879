/* SPDX-License-Identifier: MIT */
/* The workload kinds table: what each kind recognises from a cgroup path or the
 * environment, which workload a process is for ps (outermost) and for its CPU group
 * (innermost), and the labels a workload of each kind keeps and is ordered by. */
#include <string.h>

#include "cgroup_path.h"
#include "exposition.h"
#include "hashmap.h"
#include "ledger.h"
#include "strbuf.h"
#include "testutil.h"
#include "workload_kind.h"

#define POD_UID "6e311cce-9b94-4a94-b353-b9546b1a9c19"
#define CTR "65d752a38e1db784d521f48c3f1956f4f9a74ebb923377144f253f3aca9fa028"

static struct workload_identity parse(const char *line) {
    struct workload_identity w;

    ASSERT_OK(cgroup_file_parse(line, strlen(line), &w));
    return w;
}

static void test_recognised_from_cgroup(void **state) {
    struct workload_identity w =
        parse("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6e311cce_9b94_"
              "4a94_b353_b9546b1a9c19.slice/cri-containerd-" CTR ".scope\n");
    struct snap_identity id;

    identity_to_labels(&w, "python", &id);
    assert_string_equal(id.process_name, "python");
    assert_string_equal(id.pod_uid, POD_UID);
    assert_string_equal(id.container_id, CTR);
    assert_string_equal(id.slurm_job, "");
    assert_string_equal(workload_id(WORKLOAD_CONTAINER, &id), CTR);
    assert_string_equal(workload_id(WORKLOAD_POD, &id), POD_UID);
    /* ps says pod (the container lies in it); the CPU group is the container. */
    assert_int_equal(workload_kind_outermost(&id), WORKLOAD_POD);
    assert_int_equal(workload_kind_innermost(&id), WORKLOAD_CONTAINER);
    assert_int_equal(workload_group_key(&w), hash_bytes(CTR, strlen(CTR), 1));

    w = parse("0::/system.slice/docker-" CTR ".scope\n");
    identity_to_labels(&w, NULL, &id);
    assert_string_equal(id.process_name, "");
    assert_int_equal(workload_kind_outermost(&id), WORKLOAD_CONTAINER);

    w = parse("0::/kubepods/besteffort/pod" POD_UID "\n");
    identity_to_labels(&w, "pause", &id);
    assert_int_equal(workload_kind_outermost(&id), WORKLOAD_POD);
    assert_int_equal(workload_kind_innermost(&id), WORKLOAD_POD);
    assert_int_equal(workload_group_key(&w), hash_bytes(POD_UID, strlen(POD_UID), 2));
}

static void test_slurm_jobs(void **state) {
    struct workload_identity w = parse("12:freezer:/slurm/uid_1000/job_4824887/step_0/task_0\n");
    struct snap_identity id;

    struct snap_identity other, copy;
    uint64_t job_key = hash_u64(((uint64_t)3 << 32) | 4824887);

    identity_to_labels(&w, "python", &id);
    assert_string_equal(id.slurm_job, "4824887");
    assert_string_equal(id.slurm_step, "0");
    assert_string_equal(id.array_job_id, "");
    assert_int_equal(workload_kind_outermost(&id), WORKLOAD_JOB);
    /* The step is the CPU group, keyed within its job. */
    assert_int_equal(workload_kind_innermost(&id), WORKLOAD_STEP);
    assert_string_equal(workload_id(WORKLOAD_STEP, &id), "0");
    assert_int_equal(workload_group_key(&w), hash_bytes("0", 1, job_key));

    /* Step "0" of another job is another workload; the job's labels keep no step. */
    w = parse("12:freezer:/slurm/uid_1000/job_4824888/step_0/task_0\n");
    identity_to_labels(&w, "python", &other);
    assert_true(workload_key(WORKLOAD_STEP, &id) != workload_key(WORKLOAD_STEP, &other));
    workload_labels_copy(WORKLOAD_JOB, &id, &copy);
    assert_string_equal(copy.slurm_job, "4824887");
    assert_string_equal(copy.slurm_step, "");
    workload_labels_copy(WORKLOAD_STEP, &id, &copy);
    assert_string_equal(copy.slurm_job, "4824887");
    assert_string_equal(copy.slurm_step, "0");

    /* An array's element: the job's labels carry the array. */
    w.slurm.array_valid = true;
    w.slurm.array_job_id = 4824880;
    w.slurm.array_task_id = 0;
    identity_to_labels(&w, "python", &id);
    assert_string_equal(id.array_job_id, "4824880");
    assert_string_equal(id.array_task_id, "0");
    workload_labels_copy(WORKLOAD_JOB, &id, &copy);
    assert_string_equal(copy.array_job_id, "4824880");

    /* A process at the job level (no step): the job is its group. */
    w = parse("9:cpu,cpuacct:/slurm/uid_1000/job_4824887\n");
    identity_to_labels(&w, "python", &id);
    assert_string_equal(id.slurm_step, "");
    assert_int_equal(workload_kind_innermost(&id), WORKLOAD_JOB);
    assert_int_equal(workload_group_key(&w), job_key);

    /* A SLUID job dir names the job until environ gives its number. */
    w = parse("0::/system.slice/slurmstepd.scope/s0123456789ABC/step_0/user/task_0\n");
    identity_to_labels(&w, "lmp", &id);
    assert_string_equal(id.slurm_job, "s0123456789ABC");
    assert_string_equal(id.slurm_step, "0");
    assert_int_equal(workload_group_key(&w),
                     hash_bytes("0", 1, hash_bytes("s0123456789ABC", 14, 4)));
}

static void test_no_workload(void **state) {
    struct workload_identity w = parse("0::/user.slice/user-1000.slice/session-3.scope\n");
    struct snap_identity id;

    identity_to_labels(&w, "bash", &id);
    assert_int_equal(workload_kind_outermost(&id), WORKLOAD_KIND_NONE);
    assert_int_equal(workload_kind_innermost(&id), WORKLOAD_KIND_NONE);
    assert_int_equal(workload_group_key(&w), 0);
}

/* A host process run by a service is a systemd_service workload; a scope, or a service's
 * process inside a container or job, is not. */
static void test_systemd_service(void **state) {
    struct workload_identity w = parse("0::/system.slice/foo.service\n");
    struct snap_identity id;

    identity_to_labels(&w, "foo", &id);
    assert_string_equal(id.systemd_unit, "foo.service");
    assert_int_equal(workload_kind_outermost(&id), WORKLOAD_SYSTEMD_SERVICE);
    assert_int_equal(workload_kind_innermost(&id), WORKLOAD_SYSTEMD_SERVICE);
    assert_int_equal(workload_group_key(&w), hash_bytes("foo.service", 11, 5));

    w = parse("0::/user.slice/user-1000.slice/user@1000.service/app.slice/bar.service\n");
    identity_to_labels(&w, "bar", &id);
    assert_string_equal(id.systemd_unit, "bar.service");

    w = parse("0::/init.scope\n");
    identity_to_labels(&w, "systemd", &id);
    assert_string_equal(id.systemd_unit, "");
    assert_int_equal(workload_kind_outermost(&id), WORKLOAD_KIND_NONE);

    w = parse("0::/system.slice/docker-" CTR ".scope\n");
    identity_to_labels(&w, "app", &id);
    assert_string_equal(id.systemd_unit, "");
    w = parse("0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n");
    identity_to_labels(&w, "lmp", &id);
    assert_string_equal(id.systemd_unit, "");
}

/* Its energy reaches its own families, labelled by unit, through the ledger. */
static void test_systemd_service_exposition(void **state) {
    struct workload_identity w = parse("0::/system.slice/llm-server.service\n");
    struct snap_identity id;
    struct ledger_process *p;
    struct snapshot *snap;
    struct strbuf out;
    struct ledger l;

    identity_to_labels(&w, "llm-server", &id);
    ledger_init(&l);
    assert_int_equal(ledger_process_get(&l, 0, 4242, 7, &id, &p), 1);
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 2500000, false, 1));
    ASSERT_OK(ledger_add_cpu_energy(&l, &id, 1000, 1));
    snap = ledger_snapshot(&l, NULL);
    assert_non_null(snap);
    strbuf_init(&out);
    ASSERT_OK(exposition_render(snap, NULL, &out));
    assert_non_null(strstr(out.buf, "# TYPE joulestat_systemd_service_energy_joules_total counter\n"
                                    "joulestat_systemd_service_energy_joules_total{unit=\""
                                    "llm-server.service\",component=\"gpu\"} 2.500000\n"
                                    "joulestat_systemd_service_energy_joules_total{unit=\""
                                    "llm-server.service\",component=\"cpu\"} 0.001000\n"));
    assert_non_null(
        strstr(out.buf, "joulestat_systemd_service_active{unit=\"llm-server.service\"} 1\n"));
    strbuf_done(&out);
    assert_null(snapshot_unref(snap));
    ledger_done(&l);
}

/* A container keeps its own labels and its pod's; a pod only its own. */
static void test_labels_copy(void **state) {
    struct snap_identity p = {0}, c, d;

    strcpy(p.process_name, "python");
    strcpy(p.pod, "trainer");
    strcpy(p.namespace_, "ml");
    strcpy(p.container, "main");
    strcpy(p.pod_uid, POD_UID);
    strcpy(p.container_id, CTR);
    strcpy(p.slurm_job, "77");

    workload_labels_copy(WORKLOAD_CONTAINER, &p, &c);
    assert_string_equal(c.process_name, "");
    assert_string_equal(c.pod, "trainer");
    assert_string_equal(c.namespace_, "ml");
    assert_string_equal(c.container, "main");
    assert_string_equal(c.pod_uid, POD_UID);
    assert_string_equal(c.container_id, CTR);
    assert_string_equal(c.slurm_job, "");
    assert_true(workload_labels_equal(WORKLOAD_CONTAINER, &p, &c));

    workload_labels_copy(WORKLOAD_POD, &p, &d);
    assert_string_equal(d.container, "");
    assert_string_equal(d.container_id, "");
    assert_string_equal(d.pod, "trainer");
    assert_true(workload_labels_equal(WORKLOAD_POD, &p, &d));
    /* A name arriving later makes the workload's copy stale. */
    strcpy(p.pod, "trainer-2");
    assert_false(workload_labels_equal(WORKLOAD_POD, &p, &d));
    assert_false(workload_labels_equal(WORKLOAD_CONTAINER, &p, &c));
    assert_false(workload_labels_equal(WORKLOAD_JOB, &p, &d));
}

/* Containers are ordered by their pod first, then by their own id. */
static void test_compare(void **state) {
    struct snap_identity a = {0}, b = {0};

    strcpy(a.pod_uid, "b");
    strcpy(a.container_id, "1");
    strcpy(b.pod_uid, "a");
    strcpy(b.container_id, "2");
    assert_true(workload_labels_compare(WORKLOAD_CONTAINER, &a, &b) > 0);
    assert_true(workload_labels_compare(WORKLOAD_POD, &a, &b) > 0);
    strcpy(b.pod_uid, "b");
    assert_true(workload_labels_compare(WORKLOAD_CONTAINER, &a, &b) < 0);
    assert_int_equal(workload_labels_compare(WORKLOAD_POD, &a, &b), 0);
}

/* Every kind is named, has its id among the fields and labels that exist. */
static void test_table(void **state) {
    for (size_t k = 0; k < _WORKLOAD_KIND_MAX; k++) {
        const struct workload_kind_info *info = &workload_kinds[k];

        assert_non_null(info->name);
        assert_non_null(info->recognise);
        assert_non_null(info->energy_help);
        assert_non_null(info->active_help);
        assert_true(info->id > LABEL_PROCESS_NAME && info->id < _LABEL_FIELD_MAX);
        assert_true(info->n_labels >= 1 && info->n_labels <= WORKLOAD_LABELS_MAX);
        assert_true(info->parent == WORKLOAD_KIND_NONE || info->parent > k);
        if (info->parent != WORKLOAD_KIND_NONE) /* one level: a parent has none */
            assert_int_equal(workload_kinds[info->parent].parent, WORKLOAD_KIND_NONE);
        for (size_t j = 0; j < k; j++)
            assert_string_not_equal(workload_kinds[j].name, info->name);
    }
    for (size_t f = 0; f < _LABEL_FIELD_MAX; f++) /* the length the exposition copies */
        assert_int_equal(label_fields[f].label_len, strlen(label_fields[f].label));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recognised_from_cgroup),
        cmocka_unit_test(test_slurm_jobs),
        cmocka_unit_test(test_no_workload),
        cmocka_unit_test(test_systemd_service),
        cmocka_unit_test(test_systemd_service_exposition),
        cmocka_unit_test(test_labels_copy),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
