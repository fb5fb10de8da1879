/* SPDX-License-Identifier: MIT */
/*
 * What a GPU's accounting carries across a restart (--state-dir, docs/DEPLOY.md
 * "Restarts"): the raw energy counter when last read, from which the energy drawn while
 * joulestat was down is booked as downtime, and the idle power the GPU was seen drawing.
 */
#include <string.h>

#include "gpu_accounting_internal.h"
#include "macro.h"

/* The saved observations are the estimator's history as it is. */
_Static_assert(GPU_BASELINE_IDLE_MAX == IDLE_POWER_HISTORY, "idle history sizes differ");

void gpu_accounting_baselines(const struct gpu_accounting *a, struct gpu_baseline *ret) {
    for (size_t i = 0; i < LEDGER_MAX_GPUS; i++) {
        const struct gpu_track *t = &a->tracks[i];

        ret[i] = (struct gpu_baseline){
            .valid = t->seen && t->counter.primed && t->window_open,
            .raw_mj = t->counter.last_raw,
            .at_us = t->window_start_us,
        };
        ret[i].n_idle = idle_power_history(&t->idle, ret[i].idle_mw);
    }
}

void gpu_accounting_restore_baselines(struct gpu_accounting *a, const struct gpu_baseline *b) {
    for (size_t i = 0; i < LEDGER_MAX_GPUS; i++) {
        struct gpu_track *t = &a->tracks[i];
        unsigned n_idle = MIN(b[i].n_idle, (unsigned)GPU_BASELINE_IDLE_MAX);

        if (t->seen || (!b[i].valid && n_idle == 0))
            continue;
        copy_cut(t->saved_uuid, sizeof(t->saved_uuid), b[i].uuid);
        idle_power_restore(&t->idle, b[i].idle_mw, n_idle);
        if (!b[i].valid)
            continue;
        t->seen = true;
        (void)energy_counter_init(&t->counter, 0, ENERGY_UNIT_MJ, 0);
        t->counter.primed = true;
        t->counter.last_raw = b[i].raw_mj;
        t->window_open = true;
        t->window_start_us = b[i].at_us;
        t->downtime = true;
    }
}

void gpu_track_start_over(struct gpu_accounting *a, struct gpu_track *t) {
    (void)energy_counter_init(&t->counter, 0, ENERGY_UNIT_MJ, 0);
    idle_power_init(&t->idle, a->opts.idle_power_watts);
    t->window_open = t->downtime = t->power_primed = t->after_glitch = false;
    t->energy_read_ns = t->energy_since_ns = 0;
    /* What was learned of the other board (its idle, context power and intensities, its
     * model's typical idle, its sample period) is not this one's: learned again. */
    t->intensity = intensity_gpu_free(t->intensity);
    t->intensity_failed = false;
    t->typical_idle_checked = t->typical_idle_known = false;
    sample_period_init(&t->period, 0);
    hashmap_clear(&t->pids_now);
    hashmap_clear(&t->pids_prev);
    t->n_last = 0;
}

bool gpu_restart_forget_another(struct gpu_accounting *a, struct gpu_track *t, const char *uuid) {
    bool other;

    if (!uuid[0]) /* not read yet: the check waits for a reading that names the GPU */
        return false;
    other = strcmp(t->saved_uuid, uuid) != 0;
    t->saved_uuid[0] = '\0';
    if (!other)
        return false;
    gpu_track_start_over(a, t);
    return true;
}
