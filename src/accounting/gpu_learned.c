/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "gpu_accounting_internal.h"
#include "macro.h"

/*
 * A window shorter than the driver's sample period (--sample-interval 100ms beside its
 * 167 ms) holds a sample of some running processes and none of others, and its energy would
 * go to whichever were sampled in it: over many windows, a low-power process beside a busy
 * one gets the busy one's power in the windows it alone was sampled in (+40 % for a spin
 * loop beside a tensor-core job). So a running process sampled within the last period but
 * not in this window is credited its last utilisation over the window, ahead of its
 * sample, at most one period's worth; the sample, when it comes, counts only what was not
 * credited ahead. Over time each process's activity is still what its samples say. With
 * windows of a period or more every running process is sampled in each and nothing moves.
 */
void credit_ahead(struct gpu_accounting *a, struct gpu_track *t, size_t n_samples, size_t n,
                  uint64_t t0_us, uint64_t t1_us) {
    uint64_t period = sample_period_us(&t->period), dt = t1_us - t0_us;

    if (n > 0) /* with none, the arrays may not exist yet */
        memcpy(a->sampled, a->weights, n * sizeof(*a->sampled));
    for (size_t k = 0; k < n_samples; k++) {
        const struct util_sample *s = &a->samples[k];

        if (s->consumer < n && s->timestamp_us == a->last_sample_us[s->consumer])
            a->procs[s->consumer]->last_sm_util = s->sm_util;
    }
    for (size_t i = 0; i < n; i++) {
        struct ledger_process *p = a->procs[i];
        uint64_t credit, most;

        if (a->weights[i] > 0) {
            credit = MIN(p->ahead, a->weights[i]);
            a->weights[i] -= credit;
            p->ahead -= credit;
            continue;
        }
        if (i >= a->n_running || a->last_sample_us[i] == 0 ||
            t1_us - a->last_sample_us[i] >= period || p->last_sm_util == 0)
            continue;
        most = (uint64_t)p->last_sm_util * period;
        credit = MIN((uint64_t)p->last_sm_util * dt, most > p->ahead ? most - p->ahead : 0);
        p->ahead += credit;
        a->weights[i] = credit;
    }
}

int learned_activity(struct gpu_accounting *a, struct gpu_track *t, size_t n_samples, size_t n,
                     uint64_t t0_us, uint64_t t1_us, struct weights_stats *ret_stats) {
    /* A process that started in the window drew nothing before it, however far back its
     * first sample's period reaches: placed in the last row, that part was activity without
     * its energy, and a job started on the tick no longer counted as new in its own window
     * (-20 %). Without a row before (the first window learned from, or after a gap) the
     * part is dropped as for everyone: processes that started with the counter's baseline,
     * as in a replay, meet its lag there (counting it moved a first fit: a decode job from
     * +3 % to +15 %). */
    bool keep_started = t->intensity && intensity_has_row_before(t->intensity);
    int r;

    /* Every sample read now belongs to this window: one stamped after the tick's time was
     * taken (the driver went on sampling while the readings were made) would otherwise be
     * deferred, and nothing keeps it for the next window. */
    for (size_t k = 0; k < n_samples; k++)
        t1_us = MAX(t1_us, a->samples[k].timestamp_us);
    /* A last sample after the window's end: the wall clock went back, and the samples are
     * stamped by it from there on. */
    for (size_t i = 0; i < n; i++)
        a->last_sample_us[i] =
            a->procs[i]->last_sample_us <= t1_us ? a->procs[i]->last_sample_us : 0;
    r = process_window_weights(a->samples, n_samples, t0_us, t1_us, &t->period, n,
                               a->last_sample_us, a->weights, a->early, a->mem_weights, ret_stats);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        if (keep_started && a->procs[i]->start_time_seconds * 1e6 >= (double)t0_us)
            a->early[i] = 0;
        a->procs[i]->last_sample_us = a->last_sample_us[i];
    }
    return 0;
}

/*
 * The workload whose intensity a process learns with and shares: the same command in the
 * same container, pod, job or service, so the hundredth run of a short job starts from what
 * the ones before taught. A process of no workload learns alone.
 */
static uint64_t class_of(const struct ledger_process *p) {
    const struct snap_identity *id = p->id;
    uint64_t h;

    if (!id ||
        (!id->container_id[0] && !id->pod_uid[0] && !id->slurm_job[0] && !id->systemd_unit[0]))
        return p->key | 1; /* never 0, which means "not derived yet" */
    h = hash_bytes(id->process_name, strlen(id->process_name), 0x6a6f756c65737461ULL);
    h = hash_bytes(id->container_id, strlen(id->container_id), h);
    h = hash_bytes(id->pod_uid, strlen(id->pod_uid), h);
    h = hash_bytes(id->slurm_job, strlen(id->slurm_job), h);
    h = hash_bytes(id->systemd_unit, strlen(id->systemd_unit), h);
    return h | 1;
}

/* Its command, the family whose runs pool what they teach across workloads; 0 without a
 * name. A run's index at the end of the name ("infer-17", "worker_3") is not part of the
 * command: the runs of a job array differ only there. */
static uint64_t family_of(const struct ledger_process *p) {
    const char *name = p->id ? p->id->process_name : NULL;
    size_t len;

    if (!name || !name[0])
        return 0;
    len = strlen(name);
    while (len > 0 && name[len - 1] >= '0' && name[len - 1] <= '9')
        len--;
    if (len < strlen(name) && len > 1 && strchr("-_.:", name[len - 1]))
        len--;
    else
        len = strlen(name);
    return hash_bytes(name, len, 0x66616d696c790000ULL) | 1;
}

/*
 * How long each consumer held a context in (t0, t1]: a listed process from its start (when
 * known) to the window's end; one that is no longer listed until its last sample. Returns
 * the longest, the time at least one context was held as far as the readings tell.
 */
static uint64_t held_times(struct gpu_accounting *a, size_t n, uint64_t t0_us, uint64_t t1_us) {
    uint64_t longest = 0;

    for (size_t i = 0; i < n; i++) {
        const struct ledger_process *p = a->procs[i];
        uint64_t from = t0_us, until = t1_us;

        if (i < a->n_running) {
            double start_us = p->start_time_seconds * 1e6;

            if (start_us > (double)t0_us)
                from = start_us < (double)t1_us ? (uint64_t)start_us : t1_us;
        } else
            until = p->last_sample_us > t0_us ? MIN(p->last_sample_us, t1_us) : t0_us;
        a->held_us[i] = until - from;
        longest = MAX(longest, a->held_us[i]);
    }
    return longest;
}

void learned_sm_share(struct gpu_accounting *a, size_t n) {
    for (size_t i = 0; i < n; i++) {
        a->consumers[i].weight = a->weights[i];
        a->carries[i] = a->procs[i]->carry;
        a->procs[i]->intensity_valid = false;
    }
}

void learned_weights(struct gpu_accounting *a, struct gpu_track *t, size_t n, bool credited,
                     uint64_t t0_us, uint64_t t1_us, uint64_t energy_uj,
                     struct learned_window *ret) {
    struct intensity_window w;
    struct intensity_result res;
    uint64_t context_us = held_times(a, n, t0_us, t1_us);
    double idle_w = idle_power_watts(&t->idle);
    bool idle_known = idle_power_known(&t->idle) || t->typical_idle_known;

    if (!idle_power_known(&t->idle))
        idle_w = t->typical_idle_w;

    *ret = (struct learned_window){.method = SPLIT_NOT_IDENTIFIABLE};
    for (size_t i = 0; i < n; i++)
        a->carries[i] = a->procs[i]->carry;
    if (!t->intensity && !t->intensity_failed &&
        intensity_gpu_new(&a->opts.intensity, &a->intensity_scratch, &t->intensity) < 0)
        t->intensity_failed = true; /* out of memory: SM share from now on */
    if (!t->intensity) {
        learned_sm_share(a, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct ledger_process *p = a->procs[i];

        if (p->class_key == 0) {
            p->class_key = class_of(p);
            p->family_key = family_of(p);
        }
        /* The learner takes the samples as they are, in the rows their time fell in; the
         * split weighs the activity credited ahead of them (credit_ahead()). */
        a->intensity_in[i] = (struct intensity_consumer){
            .class_key = p->class_key,
            .family_key = p->family_key,
            .activity = credited ? a->sampled[i] : a->weights[i],
            .early = a->early[i],
            .split_given = credited,
            .split_activity = a->weights[i],
        };
    }
    w = (struct intensity_window){
        .duration_us = t1_us - t0_us,
        .context_us = MIN(context_us, t1_us - t0_us),
        .energy_uj = energy_uj,
        .learn = true, /* the windows not learned from drop the rows (intensity_drop_rows()) */
        .idle_prior_known = idle_known,
        .idle_prior_w = idle_w,
        .n = n,
        .consumers = a->intensity_in,
    };
    if (intensity_window(t->intensity, &w, a->intensity_out, &res) < 0) {
        learned_sm_share(a, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        a->consumers[i].weight = a->intensity_out[i].weight;
        a->procs[i]->intensity_valid = a->intensity_out[i].learned;
        a->procs[i]->intensity_watts = a->intensity_out[i].watts;
    }
    *ret = (struct learned_window){
        .method = res.reason,
        .context_uj = res.context_uj,
        .idle_known = res.idle_known || idle_known,
        .idle_watts = res.idle_known ? res.idle_watts : idle_w,
    };
}
