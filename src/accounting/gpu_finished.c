/* SPDX-License-Identifier: MIT */
/*
 * Processes that started and exited between two polls, as accounting mode reports them
 * (nvidia-smi -am 1): the driver kept each one's start, how long its context was active
 * and its utilisation over its life. One that left utilisation samples is split by them as
 * any other; one that left none would otherwise be invisible, and its energy given to the
 * processes beside it.
 */
#include "process_weights.h"
#include "gpu_accounting_internal.h"
#include "macro.h"

int finished_collect(struct gpu_accounting *a, const struct gpu_device_reading *d, size_t *n,
                     size_t n_sorted) {
    int r;

    if (d->n_unsampled > 0) {
        r = grow_array(&a->unsampled_idx, &a->unsampled_cap, d->n_unsampled,
                       sizeof(*a->unsampled_idx));
        if (r < 0)
            return r;
        for (size_t k = 0; k < d->n_unsampled; k++) {
            r = consumer_index(a, n, n_sorted, d->unsampled[k].pid, &a->unsampled_idx[k]);
            if (r < 0)
                return r;
        }
    }
    if (d->n_finished == 0)
        return 0;
    r = grow_array(&a->finished_idx, &a->finished_cap, d->n_finished, sizeof(*a->finished_idx));
    if (r < 0)
        return r;
    for (size_t k = 0; k < d->n_finished; k++) {
        const struct gpu_finished_process *f = &d->finished[k];
        size_t idx;

        r = consumer_index(a, n, n_sorted, f->pid, &idx);
        if (r < 0)
            return r;
        a->finished_idx[k] = idx;
        if (!a->memory_valid[idx] && f->max_memory_bytes > 0) {
            a->memory_valid[idx] = true;
            a->consumers[idx].memory = f->max_memory_bytes;
        }
    }
    return 0;
}

/* Start times of one process from the driver and from /proc differ by the clocks' rounding
 * (/proc's boot time is whole seconds). */
#define SAME_START_SLACK_S 2.0

bool finished_pid_taken_again(const struct gpu_device_reading *d, uint32_t pid,
                              double start_time_seconds) {
    if (start_time_seconds <= 0)
        return false;
    for (size_t k = 0; k < d->n_finished; k++) {
        const struct gpu_finished_process *f = &d->finished[k];

        /* A pid is taken again only once its holder is gone: a process that started after
         * the one the driver reports is another. */
        if (f->pid == pid && f->start_us > 0 &&
            start_time_seconds > (double)f->start_us / 1e6 + SAME_START_SLACK_S)
            return true;
    }
    return false;
}

bool finished_has_pid(const struct gpu_device_reading *d, uint32_t pid) {
    for (size_t k = 0; k < d->n_finished; k++)
        if (d->finished[k].pid == pid)
            return true;
    return false;
}

/*
 * A job that started shortly before the reading and has not been sampled yet drew its
 * energy in this window, while its first sample comes in the next. With per-process
 * samples (credited), the driver's utilisation over its life so far is credited here,
 * ahead of its samples (credit_ahead() then has them count only what was not credited);
 * should it finish unsampled, finished_activity() gives only the rest of its lifetime.
 */
void unsampled_activity(struct gpu_accounting *a, const struct gpu_device_reading *d, bool credited,
                        uint64_t t1_us) {
    for (size_t k = 0; credited && k < d->n_unsampled; k++) {
        const struct gpu_unsampled_process *u = &d->unsampled[k];
        size_t i = a->unsampled_idx[k];
        struct ledger_process *p = a->procs[i];
        uint64_t so_far;

        if (p->last_sample_us != 0 || u->start_us >= t1_us)
            continue; /* sampled (in this window too): its samples say more */
        if (p->start_time_seconds <= 0)
            p->start_time_seconds = (double)u->start_us / 1e6;
        so_far = (uint64_t)u->gpu_util * (t1_us - u->start_us);
        if (so_far <= p->ahead)
            continue;
        a->weights[i] += so_far - p->ahead;
        p->ahead = so_far;
    }
}

/*
 * A process that never left a sample is given its lifetime utilisation times its active
 * time, in the window in which it is reported: its life lies in this window or the one
 * before. One that ended within the last sample period may still leave its last sample in
 * the next window, but its energy is in this one: with per-process samples (credited), it
 * is credited here ahead of that sample, which then counts only what was not credited
 * (credit_ahead()), and the learner, which takes the samples as they come, waits for it.
 * One that was sampled is credited so the time since its last sample, at its lifetime
 * utilisation.
 */
void finished_activity(struct gpu_accounting *a, struct gpu_track *t,
                       const struct gpu_device_reading *d, bool credited, uint64_t t1_us) {
    uint64_t period = d->n_finished ? sample_period_us(&t->period) : 0;

    for (size_t k = 0; k < d->n_finished; k++) {
        const struct gpu_finished_process *f = &d->finished[k];
        size_t i = a->finished_idx[k];
        struct ledger_process *p = a->procs[i];
        uint64_t end = f->start_us + f->active_us, activity = (uint64_t)f->gpu_util * f->active_us;
        uint64_t given; /* credited while it ran unsampled (unsampled_activity()) */

        if (p->start_time_seconds <= 0 && f->start_us > 0)
            p->start_time_seconds = (double)f->start_us / 1e6;
        if (p->last_sample_us != 0) {
            /* Sampled: its samples say more than its lifetime average, but the last one,
             * for the time since the one before, may still be to come. */
            if (credited && end + period > t1_us && end > p->last_sample_us) {
                uint64_t tail = (uint64_t)f->gpu_util * (end - p->last_sample_us);

                p->ahead += tail;
                a->weights[i] += tail;
            }
            continue;
        }
        given = MIN(p->ahead, activity);
        if (end + period > t1_us) {
            if (!credited)
                continue; /* no crediting ahead: it waits for its sample */
            p->ahead += activity - given;
        } else if (credited)
            a->sampled[i] = activity;
        a->weights[i] = activity - given;
    }
}
