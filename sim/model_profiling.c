/* SPDX-License-Identifier: MIT */
/*
 * DCGM's profiling sampler (DCGM_FI_PROF_SM_ACTIVE): nv-hostengine reads the SMs' activity
 * counters once per watch period and stores, stamped with the period's end, the share of
 * the period the SMs of each entity were busy; on a MIG GPU each GPU instance is an entity
 * with its own SMs. The model's cumulative busy time per group (model.h, group_busy) is
 * what the counters count.
 */
#include <string.h>

#include "macro.h"
#include "model_internal.h"

void sim_model_watch_profiling(struct sim_gpu_model *g, uint64_t period) {
    struct sim_profiling *p = &g->prof;

    p->period = period;
    p->head = p->len = 0;
    if (!period)
        return;
    p->next = (g->t / period + 1) * period;
    memcpy(p->last_busy, g->group_busy, sizeof(p->last_busy));
}

uint64_t profiling_next_boundary(const struct sim_gpu_model *g) {
    return g->prof.period ? g->prof.next : SIM_TIME_NEVER;
}

void profiling_at(struct sim_gpu_model *g) {
    struct sim_profiling *p = &g->prof;
    struct sim_prof_sample *s;

    if (!p->period || g->t != p->next)
        return;
    if (p->len == SIM_PROF_RING) { /* the oldest is overwritten */
        p->head = (p->head + 1) % SIM_PROF_RING;
        p->len--;
    }
    s = &p->ring[(p->head + p->len++) % SIM_PROF_RING];
    s->t_us = g->t;
    for (size_t k = 0; k <= SIM_MAX_MIG; k++) {
        /* percent * µs over µs is percent; 10^4 ppm each */
        uint64_t busy = g->group_busy[k] - p->last_busy[k];
        s->active_ppm[k] = (uint32_t)MIN(busy * 10000 / p->period, UINT64_C(1000000));
    }
    memcpy(p->last_busy, g->group_busy, sizeof(p->last_busy));
    p->next += p->period;
}
