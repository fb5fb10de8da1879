/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "macro.h"

static int compare_gpu_process(const void *a, const void *b) {
    const struct snap_gpu_process *x = a, *y = b;

    if (x->gpu != y->gpu)
        return x->gpu < y->gpu ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->start_time_seconds < y->start_time_seconds   ? -1
           : x->start_time_seconds > y->start_time_seconds ? 1
                                                           : 0;
}

static int compare_workload(const void *a, const void *b) {
    const struct snap_workload *x = a, *y = b;

    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return workload_labels_compare(x->kind, x->id, y->id);
}

static int compare_cpu_process(const void *a, const void *b) {
    const struct snap_cpu_process *x = a, *y = b;
    int c;

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    c = strcmp(x->id->process_name, y->id->process_name);
    for (enum workload_kind k = 0; c == 0 && k < _WORKLOAD_KIND_MAX; k++)
        c = strcmp(workload_id(k, x->id), workload_id(k, y->id));
    return c;
}

static int copy_cpu_processes(const struct ledger *l, struct snapshot *s) {
    void *value;

    if (grow_array(&s->cpu_processes, &s->cap_cpu_processes, MAX(l->cpu_processes.size, 1),
                   sizeof(*s->cpu_processes)) < 0)
        return -1;
    for (size_t i = 0; hashmap_next(&l->cpu_processes, &i, NULL, &value);) {
        const struct ledger_cpu_process *p = value;
        struct snap_cpu_process *d = &s->cpu_processes[s->n_cpu_processes++];

        *d = (struct snap_cpu_process){.pid = p->pid, .id = labels_ref(p->id), .active = p->active};
        memcpy(d->energy_uj, p->energy_uj, sizeof(d->energy_uj));
    }
    qsort(s->cpu_processes, s->n_cpu_processes, sizeof(*s->cpu_processes), compare_cpu_process);
    return 0;
}

/* A stable order makes scrapes diffable and tests deterministic. Entries share the
 * ledger's label sets (a reference each) rather than copying ~470 bytes of labels. */
struct snapshot *ledger_snapshot(const struct ledger *l, struct snapshot *recycled) {
    struct snapshot *s = recycled ? recycled : snapshot_new();
    size_t n_gpus = 0;
    void *value;

    if (!s)
        return NULL;

    if (!s->gpus)
        s->gpus = calloc(LEDGER_MAX_GPUS, sizeof(*s->gpus));
    if (!s->gpus ||
        grow_array(&s->gpu_processes, &s->cap_gpu_processes, MAX(l->processes.size, 1),
                   sizeof(*s->gpu_processes)) < 0 ||
        grow_array(&s->workloads, &s->cap_workloads, MAX(l->workloads.size, 1),
                   sizeof(*s->workloads)) < 0 ||
        grow_array(&s->rapl, &s->cap_rapl, MAX(l->n_rapl, 1), sizeof(*s->rapl)) < 0 ||
        copy_cpu_processes(l, s) < 0)
        return snapshot_unref(s);

    for (size_t i = 0; hashmap_next(&l->processes, &i, NULL, &value);) {
        const struct ledger_process *p = value;

        s->gpu_processes[s->n_gpu_processes++] = (struct snap_gpu_process){
            .pid = p->pid,
            .gpu = p->gpu,
            .id = labels_ref(p->id),
            .energy_measured_uj = p->measured_uj,
            .energy_estimated_uj = p->estimated_uj,
            .util_valid = p->util_valid,
            .sm_util_ratio = p->sm_util_ratio,
            .mem_util_ratio = p->mem_util_ratio,
            .memory_valid = p->memory_valid,
            .memory_used_bytes = p->memory_used_bytes,
            .start_time_seconds = p->start_time_seconds,
            .active = p->active,
            .intensity_valid = p->intensity_valid,
            .intensity_watts = p->intensity_watts,
            .mig = p->gpu_instance != LEDGER_NO_INSTANCE,
            .gpu_instance = p->gpu_instance,
            .compute_instance = p->compute_instance,
        };
        memcpy(s->gpu_processes[s->n_gpu_processes - 1].mig_profile, p->mig_profile,
               sizeof(p->mig_profile));
    }
    qsort(s->gpu_processes, s->n_gpu_processes, sizeof(*s->gpu_processes), compare_gpu_process);

    for (size_t i = 0; hashmap_next(&l->workloads, &i, NULL, &value);) {
        const struct ledger_workload *w = value;

        s->workloads[s->n_workloads++] = (struct snap_workload){
            .kind = w->kind,
            .id = labels_ref(w->id),
            .gpu_energy_uj = w->gpu_uj,
            .cpu_energy_uj = w->cpu_uj,
            .cpu_unseen_valid = w->cpu_unseen_valid,
            .active = w->active,
        };
        memcpy(s->workloads[s->n_workloads - 1].cpu_unseen_uj, w->cpu_unseen_uj,
               sizeof(w->cpu_unseen_uj));
    }
    qsort(s->workloads, s->n_workloads, sizeof(*s->workloads), compare_workload);

    for (unsigned i = 0; i < LEDGER_MAX_GPUS; i++) {
        const struct ledger_gpu *g = &l->gpus[i];
        struct snap_gpu *d;

        if (!g->present)
            continue;
        d = &s->gpus[n_gpus++];
        *d = (struct snap_gpu){
            .index = g->index,
            .up = g->up,
            .energy_estimated = g->energy_estimated,
            .energy_uj = g->energy_uj,
            .allocated_uj = g->allocated_uj,
            .power_valid = g->power_valid,
            .power_watts = g->power_watts,
            .idle_power_valid = g->idle_power_valid,
            .idle_power_watts = g->idle_power_watts,
            .process_count = g->process_count,
            .split_valid = g->split_valid,
            .split = g->split,
            .sharing = g->sharing,
            .mig_activity = g->mig_activity,
        };
        memcpy(d->uuid, g->uuid, sizeof(d->uuid));
        memcpy(d->model, g->model, sizeof(d->model));
        memcpy(d->unattributed_uj, g->unattributed_uj, sizeof(d->unattributed_uj));
        memcpy(d->split_windows, g->split_windows, sizeof(d->split_windows));
    }
    s->n_gpus = n_gpus;

    for (size_t i = 0; i < l->n_rapl; i++) {
        const struct ledger_rapl *r = &l->rapl[i];

        s->rapl[i] = (struct snap_rapl){.package = r->package,
                                        .energy_uj = r->energy_uj,
                                        .downtime_unknown_us = r->downtime_unknown_us};
        memcpy(s->rapl[i].domain, r->domain, sizeof(s->rapl[i].domain));
        memcpy(s->rapl[i].unattributed_uj, r->unattributed_uj, sizeof(r->unattributed_uj));
    }
    s->n_rapl = l->n_rapl;
    if (ledger_snapshot_allocations(l, s) < 0)
        return snapshot_unref(s);
    return s;
}
