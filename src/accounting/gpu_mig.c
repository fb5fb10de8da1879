/* SPDX-License-Identifier: MIT */
/*
 * A MIG-enabled GPU: per-process utilisation does not exist and power only for the whole
 * board, but each GPU instance has SMs of its own and GPM says how busy they were. An
 * instance's activity is its busy share times its size (its compute slices of the GPU's
 * 7), in the same unit as a time-sliced process's SM activity, so the learned split can
 * learn each instance's watts per unit of activity as it does a process's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "own_math.h"
#include "gpu_accounting_internal.h"

#define MIG_GPU_SLICES 7.0

/* Whether every instance's size is known: otherwise they all count as one slice. */
static bool sizes_known(const struct gpu_device_reading *d) {
    for (size_t k = 0; k < d->n_mig; k++)
        if (d->mig[k].slices == 0)
            return false;
    return true;
}

/* Shares an instance's activity among its consumers: by the memory each uses when every
 * one reports it, else evenly. */
static void share_instance(struct gpu_accounting *a, size_t n, uint32_t gi, double activity) {
    size_t members = 0;
    bool by_memory = true;
    double memory = 0.0;

    for (size_t i = 0; i < n; i++)
        if (a->gpu_instance[i] == gi) {
            members++;
            by_memory = by_memory && a->memory_valid[i];
            memory += (double)a->consumers[i].memory;
        }
    if (members == 0)
        return;
    by_memory = by_memory && memory > 0.0;
    for (size_t i = 0; i < n; i++)
        if (a->gpu_instance[i] == gi) {
            double share =
                by_memory ? (double)a->consumers[i].memory / memory : 1.0 / (double)members;
            a->weights[i] = (uint64_t)own_llround(activity * share);
        }
}

bool mig_activity(struct gpu_accounting *a, const struct gpu_device_reading *d, size_t n,
                  uint64_t dt_us) {
    bool measured = d->n_mig > 0, sized = sizes_known(d);

    for (size_t k = 0; k < d->n_mig; k++)
        measured = measured && d->mig[k].activity_valid;
    if (n > 0) /* no consumers: the scratch may not exist yet */
        memset(a->weights, 0, n * sizeof(*a->weights));
    for (size_t k = 0; k < d->n_mig; k++) {
        const struct gpu_mig_instance *m = &d->mig[k];
        double size = sized ? (double)m->slices / MIG_GPU_SLICES : 1.0 / MIG_GPU_SLICES;
        double busy = measured ? m->sm_activity : 1.0;

        share_instance(a, n, m->gpu_instance, busy * size * 100.0 * (double)dt_us);
    }
    return measured;
}

static int compare_pid(const void *key, const void *elem) {
    uint32_t pid = *(const uint32_t *)key, other = ((const struct gpu_process *)elem)->pid;
    return pid < other ? -1 : pid > other;
}

void mig_label(struct ledger_process *p, const struct gpu_device_reading *d) {
    const struct gpu_process *gp;

    if (!d->mig_enabled || p->gpu_instance != LEDGER_NO_INSTANCE)
        return;
    /* the source lists processes in increasing pid order */
    gp = bsearch(&p->pid, d->processes, d->n_processes, sizeof(*d->processes), compare_pid);
    if (!gp || gp->gpu_instance == GPU_INSTANCE_NONE)
        return;
    p->gpu_instance = gp->gpu_instance;
    p->compute_instance = gp->compute_instance;
    for (size_t k = 0; k < d->n_mig; k++)
        if (d->mig[k].gpu_instance == gp->gpu_instance) {
            size_t len = strnlen(d->mig[k].profile, sizeof(p->mig_profile) - 1);

            memcpy(p->mig_profile, d->mig[k].profile, len);
            p->mig_profile[len] = '\0';
        }
}
