/* SPDX-License-Identifier: MIT */
#include "sample-snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "labels.h"

#define SET(field, value) (void)strncpy(field, value, sizeof(field) - 1)

/* A label set, as the ledger shares it with snapshots (the snapshot drops it). */
static const struct snap_identity *identity(const char *name, const char *ns, const char *pod,
                                            const char *container, const char *pod_uid,
                                            const char *container_id, const char *job) {
    struct snap_identity id = {0};

    SET(id.process_name, name);
    SET(id.namespace_, ns);
    SET(id.pod, pod);
    SET(id.container, container);
    SET(id.pod_uid, pod_uid);
    SET(id.container_id, container_id);
    SET(id.slurm_job, job);
    return labels_new(&id);
}

struct snapshot *sample_snapshot_new(void) {
    struct snapshot *s = snapshot_new();
    struct snap_gpu_process *p;
    struct snap_gpu *g;
    struct snap_rapl *r;
    struct snap_workload *w;
    struct snap_source *src;

    if (!s)
        return NULL;
    s->generation = 42;
    s->timestamp_seconds = 1700000000.25;
    s->last_sample_duration_seconds = 0.000731;
    s->samples_total = 1234;

    s->gpu_processes = p = calloc(4, sizeof(*p));
    s->gpus = g = calloc(2, sizeof(*g));
    s->rapl = r = calloc(2, sizeof(*r));
    s->workloads = w = calloc(5, sizeof(*w));
    s->sources = src = calloc(2, sizeof(*src));
    if (!p || !g || !r || !w || !src)
        return snapshot_unref(s);
    s->n_gpu_processes = 4;
    s->n_gpus = 2;
    s->n_rapl = 2;
    s->n_workloads = 5;
    s->n_sources = 2;

    /* GPU 0: three pods time-slicing; 2071 J measured = 2019.999999 J to processes +
     * 50 J idle + 1.000001 J with no consumer. */
    p[0] = (struct snap_gpu_process){.pid = 4242,
                                     .gpu = 0,
                                     .energy_measured_uj = 0,
                                     .energy_estimated_uj = 1979249999,
                                     .util_valid = true,
                                     .sm_util_ratio = 0.39,
                                     .mem_util_ratio = 0.125,
                                     .memory_valid = true,
                                     .memory_used_bytes = 8589934592,
                                     .start_time_seconds = 1699999000,
                                     .active = true};
    p[0].id = identity("python", "ml", "train-a", "trainer", "7f1c6a52-0c1e-4a4e-9d1b-1f2e3d4c5b6a",
                       "containerd://0a1b2c3d", "");
    p[1] = (struct snap_gpu_process){.pid = 4343,
                                     .gpu = 0,
                                     .energy_measured_uj = 0,
                                     .energy_estimated_uj = 40000000,
                                     .util_valid = true,
                                     .sm_util_ratio = 0.01,
                                     .mem_util_ratio = 0,
                                     .memory_valid = true,
                                     .memory_used_bytes = 1048576,
                                     .start_time_seconds = 1699999100.5,
                                     .active = true};
    /* A process name with a quote, a backslash, a newline and an invalid UTF-8 byte. */
    p[1].id = identity("we\"ird\\na\nme\xff", "ml", "train-b", "trainer",
                       "8e2d7b63-1d2f-4b5f-8e2c-2a3f4e5d6c7b", "containerd://1b2c3d4e", "");
    p[2] = (struct snap_gpu_process){.pid = 4444,
                                     .gpu = 0,
                                     .energy_measured_uj = 0,
                                     .energy_estimated_uj = 750000,
                                     .util_valid = false,
                                     .memory_valid = false,
                                     .start_time_seconds = 0,
                                     .active = false};
    p[2].id = identity("idle-ñ", "", "", "", "", "", "");
    /* GPU 1: one process alone on it, so all its energy is measured. */
    p[3] = (struct snap_gpu_process){.pid = 5151,
                                     .gpu = 1,
                                     .energy_measured_uj = 99999999,
                                     .energy_estimated_uj = 0,
                                     .util_valid = true,
                                     .sm_util_ratio = 1,
                                     .mem_util_ratio = 0.5,
                                     .memory_valid = true,
                                     .memory_used_bytes = 123,
                                     .start_time_seconds = 1699999200,
                                     .active = true};
    p[3].id = identity("bench", "", "", "", "", "", "1001");

    g[0] = (struct snap_gpu){.index = 0,
                             .up = true,
                             .energy_uj = SAMPLE_GPU0_ENERGY_UJ,
                             .power_valid = true,
                             .power_watts = 70.5,
                             .idle_power_valid = true,
                             .idle_power_watts = 25,
                             .process_count = 3};
    g[0].unattributed_uj[UNATTR_IDLE] = 50000000;
    g[0].unattributed_uj[UNATTR_NO_CONSUMER] = 1000001;
    SET(g[0].uuid, "GPU-11111111-2222-3333-4444-555555555555");
    SET(g[0].model, "NVIDIA H100 80GB HBM3");
    g[1] = (struct snap_gpu){.index = 1,
                             .up = true,
                             .energy_estimated = true,
                             .energy_uj = 100000000,
                             .power_valid = false,
                             .idle_power_valid = false,
                             .process_count = 1};
    g[1].unattributed_uj[UNATTR_NO_DATA] = 1;
    SET(g[1].uuid, "GPU-66666666-7777-8888-9999-000000000000");
    SET(g[1].model, "Tesla V100-SXM2-16GB");

    r[0] = (struct snap_rapl){.package = 0, .energy_uj = 123456789012};
    SET(r[0].domain, "package");
    r[0].unattributed_uj[UNATTR_IDLE] = 23456789012;
    r[1] = (struct snap_rapl){.package = 0, .energy_uj = 5000000};
    SET(r[1].domain, "dram");

    w[0] = (struct snap_workload){.kind = WORKLOAD_POD,
                                  .gpu_energy_uj = 1979249999,
                                  .cpu_energy_uj = 3000000,
                                  .active = true};
    w[0].id = identity("", "ml", "train-a", "", "7f1c6a52-0c1e-4a4e-9d1b-1f2e3d4c5b6a", "", "");
    w[1] = (struct snap_workload){
        .kind = WORKLOAD_POD, .gpu_energy_uj = 40000000, .cpu_energy_uj = 0, .active = true};
    w[1].id = identity("", "ml", "train-b", "", "8e2d7b63-1d2f-4b5f-8e2c-2a3f4e5d6c7b", "", "");
    w[2] = (struct snap_workload){.kind = WORKLOAD_CONTAINER,
                                  .gpu_energy_uj = 1979249999,
                                  .cpu_energy_uj = 3000000,
                                  .active = true};
    w[2].id = identity("", "ml", "train-a", "trainer", "", "containerd://0a1b2c3d", "");
    w[3] = (struct snap_workload){
        .kind = WORKLOAD_CONTAINER, .gpu_energy_uj = 40000000, .cpu_energy_uj = 0, .active = false};
    w[3].id = identity("", "ml", "train-b", "trainer", "", "containerd://1b2c3d4e", "");
    w[4] = (struct snap_workload){
        .kind = WORKLOAD_JOB, .gpu_energy_uj = 99999999, .cpu_energy_uj = 1500000, .active = true};
    w[4].id = identity("", "", "", "", "", "", "1001");

    src[0] = (struct snap_source){.up = true, .errors = 0};
    SET(src[0].name, "nvml");
    src[1] = (struct snap_source){.up = false, .errors = 7};
    SET(src[1].name, "rapl-powercap");
    return s;
}
