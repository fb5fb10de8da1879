/* SPDX-License-Identifier: MIT */
/*
 * Per-process utilisation samples, as the driver keeps them: each process is sampled at its
 * own phase of the sample period (from its pid, start and the seed, or 0 with
 * sample-phase=aligned); a sample holds the period's average, and a period without
 * utilisation leaves none. With util-entries=per-process, a utilisation call returns one
 * entry per process that has samples newer than lastSeenTimeStamp: its utilisation since
 * then, the average over its sample periods that ended after lastSeenTimeStamp (and after
 * its start, and after the oldest data the ring still holds) up to its newest sample, a
 * period without a sample counting as 0, stamped with that newest sample. With
 * every-sample, each sample is an entry.
 */
#include <errno.h>
#include <stdlib.h>

#include "macro.h"
#include "model_internal.h"

#define RING_MIN 256u
#define RING_PER_PROCESS 16u
#define RING_MAX (1u << 20)

int samples_init(struct sim_gpu_model *g) {
    g->ring_cap = MIN((size_t)RING_MAX, MAX((size_t)RING_MIN, g->n_procs * RING_PER_PROCESS));
    g->ring = calloc(g->ring_cap, sizeof(*g->ring));
    return g->ring ? 0 : -ENOMEM;
}

static uint64_t phase_us(const struct sim_gpu_model *g, const struct sim_process *p);

/* How many of the process's sample periods end in (after, last], last being one of its
 * boundaries: the periods its entry averages over. */
static uint64_t periods_since(const struct sim_gpu_model *g, const struct sim_proc_state *ps,
                              uint64_t after, uint64_t last) {
    uint64_t phase = phase_us(g, ps->proc), period = g->sample_period;
    uint64_t first = after < phase ? phase : phase + ((after - phase) / period + 1) * period;
    if (first < ps->first_sample)
        first = ps->first_sample;
    return (last - first) / period + 1;
}

static uint64_t phase_us(const struct sim_gpu_model *g, const struct sim_process *p) {
    if (g->sc->sample_phase == SIM_SAMPLE_PHASE_ALIGNED)
        return 0;
    return sim_mix64(g->sc->seed ^ sim_mix64(((uint64_t)p->pid << 40) ^ p->start_us)) %
           g->sample_period;
}

uint64_t samples_first_boundary(const struct sim_gpu_model *g, const struct sim_proc_state *ps) {
    uint64_t phase = phase_us(g, ps->proc), period = g->sample_period;
    if (g->t < phase)
        return phase;
    return phase + ((g->t - phase) / period + 1) * period;
}

static void push_sample(struct sim_gpu_model *g, const struct sim_sample *s) {
    if (g->ring_len == g->ring_cap) {
        /* full: the oldest sample falls out, as in the driver's rolling buffer */
        g->ring_floor = g->ring[g->ring_head].t_us;
        g->ring_head = (g->ring_head + 1) % g->ring_cap;
        g->ring_len--;
    }
    g->ring[(g->ring_head + g->ring_len) % g->ring_cap] = *s;
    g->ring_len++;
}

/*
 * What the driver saw of the period: while processes time-slice, each runs in whole slices
 * [Slicing], so the SM time of a period is the time delivered to it rounded down to whole
 * slices, the rest carried to the next (a process at 0.5 % runs one 2 ms slice about every
 * third period, not 0.5 % of each). MPS clients run side by side, and a process alone runs
 * its kernels as they come: their time is as delivered.
 */
static uint64_t period_util(const struct sim_gpu_model *g, struct sim_proc_state *ps) {
    uint64_t slice = 100 * g->gpu->time_slice_us, u = ps->util_acc + ps->slice_credit;

    ps->slice_credit = 0;
    ps->util_acc = 0;
    /* Its last period, once it has stopped, holds what is left. */
    if (!ps->sliced || !ps->running || slice == 0 || (ps->proc->kinds & SIM_KIND_MPS))
        return u;
    ps->slice_credit = u % slice;
    return u - ps->slice_credit;
}

void samples_emit(struct sim_gpu_model *g) {
    uint64_t period = g->sample_period;
    size_t i = 0;

    while (i < g->n_active) {
        struct sim_proc_state *ps = g->active[i];
        if (ps->next_sample != g->t) {
            i++;
            continue;
        }
        uint64_t util = ps->util_acc > 0 || ps->slice_credit > 0 ? period_util(g, ps) : 0;

        ps->sliced = false;
        if (util > 0) {
            uint64_t sm = (util + period / 2) / period;
            uint64_t mem = (util * ps->proc->mem_ratio / 100 + period / 2) / period;
            struct sim_sample s = {
                .t_us = g->t,
                .proc = ps->slot,
                .sm = (uint32_t)MIN(sm, (uint64_t)100),
                .mem = (uint32_t)MIN(mem, (uint64_t)100),
            };
            push_sample(g, &s);
        }
        ps->next_sample += period;
        if (!ps->running && ps->demand == 0) {
            g->active[i] = g->active[--g->n_active];
            continue;
        }
        i++;
    }
}

static const struct sim_sample *sample_at(const struct sim_gpu_model *g, size_t i) {
    return &g->ring[(g->ring_head + i) % g->ring_cap];
}

/* Ring position (0 = oldest) of the first sample with t_us > after; the ring is in time
 * order. */
static size_t first_after(const struct sim_gpu_model *g, uint64_t after) {
    size_t lo = 0, hi = g->ring_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sample_at(g, mid)->t_us > after)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* util-entries=every-sample: each sample is an entry. */
static size_t every_sample(const struct sim_gpu_model *g, size_t first, sim_util_put_fn *put,
                           void *ctx) {
    if (put)
        for (size_t i = first; i < g->ring_len; i++) {
            const struct sim_sample *s = sample_at(g, i);
            struct sim_util_entry e = {
                .t_us = s->t_us,
                .pid = g->procs[s->proc]->proc->pid,
                .sm = s->sm,
                .mem = s->mem,
            };
            put(ctx, i - first, &e);
        }
    return g->ring_len - first;
}

size_t sim_model_util_entries(struct sim_gpu_model *g, uint64_t after, sim_util_put_fn *put,
                              void *ctx) {
    uint64_t mark = ++g->call_mark;
    size_t first, n = 0;

    if (g->sc->util_entries == SIM_UTIL_EVERY_SAMPLE)
        return every_sample(g, first_after(g, after), put, ctx);
    /* The periods averaged and the samples summed start at the same place: after what the
     * buffer still holds when the caller last saw less. */
    if (after < g->ring_floor)
        after = g->ring_floor;
    first = first_after(g, after);
    for (size_t i = first; i < g->ring_len; i++) {
        const struct sim_sample *s = sample_at(g, i);
        struct sim_proc_state *ps = g->procs[s->proc];
        if (ps->call_mark != mark) {
            ps->call_mark = mark;
            ps->call_sm = ps->call_mem = 0;
            n++;
        }
        ps->call_last = s->t_us;
        ps->call_sm += s->sm;
        ps->call_mem += s->mem;
    }
    if (!put)
        return n;

    size_t k = 0;
    for (size_t i = first; i < g->ring_len; i++) {
        const struct sim_sample *s = sample_at(g, i);
        const struct sim_proc_state *ps = g->procs[s->proc];
        if (s->t_us != ps->call_last)
            continue; /* the entry goes out at the process's newest sample */
        uint64_t periods = periods_since(g, ps, after, ps->call_last);
        struct sim_util_entry e = {
            .t_us = s->t_us,
            .pid = ps->proc->pid,
            .sm = (uint32_t)((ps->call_sm + periods / 2) / periods),
            .mem = (uint32_t)((ps->call_mem + periods / 2) / periods),
        };
        put(ctx, k++, &e);
    }
    return n;
}
