/* SPDX-License-Identifier: MIT */
#include "ps.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "sampler.h"
#include "snapshot.h"

static void print_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void print_table(const struct snapshot *snap) {
    printf("%-8s %-4s %-16s %-14s %-36s %-10s %12s %s\n", "PID", "GPU", "NAME", "CONTAINER",
           "POD_UID", "JOB", "ENERGY_J", "HOW");
    for (size_t i = 0; i < snap->n_gpu_processes; i++) {
        const struct snap_gpu_process *p = &snap->gpu_processes[i];
        uint64_t total = p->energy_measured_uj + p->energy_estimated_uj;

        printf("%-8u %-4u %-16s %-14.12s %-36s %-10s %12.6f %s\n", p->pid, p->gpu,
               p->id.process_name[0] ? p->id.process_name : "?",
               p->id.container_id[0] ? p->id.container_id : "-",
               p->id.pod_uid[0] ? p->id.pod_uid : "-", p->id.slurm_job[0] ? p->id.slurm_job : "-",
               (double)total / 1e6,
               p->energy_estimated_uj == 0  ? "measured"
               : p->energy_measured_uj == 0 ? "estimated"
                                            : "mixed");
    }
    if (snap->n_gpu_processes == 0)
        printf("(no process used a GPU during the sample)\n");
}

static void print_json(const struct snapshot *snap) {
    printf("[");
    for (size_t i = 0; i < snap->n_gpu_processes; i++) {
        const struct snap_gpu_process *p = &snap->gpu_processes[i];

        printf("%s\n  {\"pid\": %u, \"gpu\": %u, \"name\": ", i ? "," : "", p->pid, p->gpu);
        print_json_string(p->id.process_name);
        printf(", \"container_id\": ");
        print_json_string(p->id.container_id);
        printf(", \"pod_uid\": ");
        print_json_string(p->id.pod_uid);
        printf(", \"slurm_job\": ");
        print_json_string(p->id.slurm_job);
        printf(", \"energy_measured_joules\": %.6f, \"energy_estimated_joules\": %.6f}",
               (double)p->energy_measured_uj / 1e6, (double)p->energy_estimated_uj / 1e6);
    }
    printf("\n]\n");
}

int ps_run(const struct config *cfg) {
    struct snapshot_slot *slot = snapshot_slot_new();
    struct sampler *sampler = NULL;
    struct snapshot *snap = NULL;
    struct tick_time t;
    struct timespec pause = {
        .tv_sec = (time_t)(cfg->sample_interval_ns / NSEC_PER_SEC),
        .tv_nsec = (long)(cfg->sample_interval_ns % NSEC_PER_SEC),
    };
    int r;

    if (!slot)
        return -ENOMEM;
    r = sampler_new(cfg, slot, &sampler);
    if (r < 0) {
        log_error_errno(r, "ps: cannot sample: %m");
        goto finish;
    }
    /* Two ticks one interval apart: one window of energy, per process. */
    t = sampler_now();
    (void)sampler_tick(sampler, &t);
    (void)nanosleep(&pause, NULL);
    t = sampler_now();
    r = sampler_tick(sampler, &t);
    if (r < 0)
        goto finish;
    snap = snapshot_slot_get(slot);
    if (!snap) {
        r = -ENODATA;
        goto finish;
    }
    if (cfg->json)
        print_json(snap);
    else
        print_table(snap);

finish:
    (void)snapshot_unref(snap);
    sampler_free(sampler);
    snapshot_slot_free(slot);
    return r;
}
