/* SPDX-License-Identifier: MIT */
#include "model.h"

#include <errno.h>
#include <stdlib.h>

#include "macro.h"
#include "profile.h"

#define RING_MIN 256u
#define RING_PER_PROCESS 16u
#define RING_MAX (1u << 20)

static uint64_t min_u64(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

/* a * b / c without overflow in the product. */
static uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c) {
    return (uint64_t)((unsigned __int128)a * b / c);
}

static int gpu_model_init(struct sim_model *m, unsigned index) {
    const struct sim_scenario *sc = m->sc;
    struct sim_gpu_model *g = &m->gpus[index];
    size_t n = 0;

    for (size_t i = 0; i < sc->n_procs; i++)
        if (sc->procs[i].gpu == index)
            n++;
    *g = (struct sim_gpu_model){
        .gpu = &sc->gpus[index],
        .sample_period = sc->sample_period_us,
        .next_sample = sc->sample_period_us,
        .n_procs = n,
        .counter_offset_mj = sc->gpus[index].energy_start_mj,
        .list_grow_pending = sc->gpus[index].list_grows_once,
    };
    g->ring_cap = MIN((size_t)RING_MAX, MAX((size_t)RING_MIN, n * RING_PER_PROCESS));
    g->ring = calloc(g->ring_cap, sizeof(*g->ring));
    g->procs = calloc(MAX(n, (size_t)1), sizeof(*g->procs));
    g->active = calloc(MAX(n, (size_t)1), sizeof(*g->active));
    if (!g->ring || !g->procs || !g->active)
        return -ENOMEM;
    n = 0;
    for (size_t i = 0; i < sc->n_procs; i++)
        if (sc->procs[i].gpu == index)
            g->procs[n++] = &m->procs[i]; /* stays sorted by start */
    return 0;
}

int sim_model_new(const struct sim_scenario *sc, struct sim_model **ret_model) {
    struct sim_model *m = calloc(1, sizeof(*m));
    int r;
    if (!m)
        return -ENOMEM;
    m->sc = sc;
    m->procs = calloc(MAX(sc->n_procs, (size_t)1), sizeof(*m->procs));
    m->gpus = calloc(sc->n_gpus, sizeof(*m->gpus));
    if (!m->procs || !m->gpus) {
        sim_model_free(m);
        return -ENOMEM;
    }
    for (size_t i = 0; i < sc->n_procs; i++)
        m->procs[i] = (struct sim_proc_state){.proc = &sc->procs[i]};
    for (unsigned i = 0; i < sc->n_gpus; i++) {
        r = gpu_model_init(m, i);
        if (r < 0) {
            sim_model_free(m);
            return r;
        }
    }
    *ret_model = m;
    return 0;
}

struct sim_model *sim_model_free(struct sim_model *m) {
    if (!m)
        return NULL;
    if (m->gpus)
        for (size_t i = 0; i < m->sc->n_gpus; i++) {
            free(m->gpus[i].ring);
            free(m->gpus[i].procs);
            free(m->gpus[i].active);
        }
    free(m->gpus);
    free(m->procs);
    free(m);
    return NULL;
}

/* Re-evaluates a process's demand at time t (its profile, start and stop). */
static void update_demand(struct sim_gpu_model *g, struct sim_proc_state *ps, uint64_t t) {
    const struct sim_process *p = ps->proc;
    uint32_t demand = 0;
    uint64_t next = SIM_TIME_NEVER;

    if (t >= p->start_us && t < p->stop_us) {
        uint64_t rel_next;
        demand = sim_profile_at(&p->sm, t - p->start_us, &rel_next);
        if (rel_next != SIM_TIME_NEVER)
            next = p->start_us + rel_next;
        next = min_u64(next, p->stop_us);
        ps->running = true;
    } else {
        ps->running = false;
    }
    g->sum_demand = g->sum_demand - ps->demand + demand;
    ps->demand = demand;
    ps->next_edge = next;
}

static void activate_started(struct sim_gpu_model *g) {
    while (g->next_start < g->n_procs && g->procs[g->next_start]->proc->start_us <= g->t) {
        struct sim_proc_state *ps = g->procs[g->next_start++];
        g->active[g->n_active++] = ps;
        update_demand(g, ps, g->t);
    }
}

static void apply_due_faults(struct sim_gpu_model *g) {
    const struct sim_gpu *gpu = g->gpu;
    while (g->next_fault < gpu->n_faults && gpu->faults[g->next_fault].at_us <= g->t) {
        if (gpu->faults[g->next_fault].kind == SIM_FAULT_COUNTER_RESET) {
            g->counter_base_nj = g->idle_nj + g->active_nj;
            g->counter_offset_mj = 0;
        }
        g->next_fault++;
    }
}

/* Adds dt µs at the current (constant) demands. */
static void integrate(struct sim_gpu_model *g, uint64_t dt) {
    uint64_t sum = g->sum_demand;

    g->idle_nj += (uint64_t)g->gpu->idle_mw * dt;
    if (sum == 0)
        return;
    for (size_t i = 0; i < g->n_active; i++) {
        struct sim_proc_state *ps = g->active[i];
        uint64_t e, u;
        if (ps->demand == 0)
            continue;
        if (sum <= 100) {
            /* mW * (percent / 100) * µs = nJ */
            e = mul_div((uint64_t)ps->proc->coef_mw * ps->demand, dt, 100);
            u = (uint64_t)ps->demand * dt;
        } else {
            /* time-sliced: delivered = demand * 100 / sum */
            e = mul_div((uint64_t)ps->proc->coef_mw * ps->demand, dt, sum);
            u = mul_div((uint64_t)ps->demand * 100, dt, sum);
        }
        ps->active_nj += e;
        ps->util_acc += u;
        g->active_nj += e;
    }
}

static void push_sample(struct sim_gpu_model *g, const struct sim_sample *s) {
    if (g->ring_len == g->ring_cap) {
        /* full: the oldest sample falls out, as in the driver's rolling buffer */
        g->ring_head = (g->ring_head + 1) % g->ring_cap;
        g->ring_len--;
    }
    g->ring[(g->ring_head + g->ring_len) % g->ring_cap] = *s;
    g->ring_len++;
}

/* At a sample boundary: one sample per process with utilisation in the period; processes
 * that have stopped leave the active set. */
static void emit_samples(struct sim_gpu_model *g) {
    uint64_t period = g->sample_period;
    size_t i = 0;

    while (i < g->n_active) {
        struct sim_proc_state *ps = g->active[i];
        if (ps->util_acc > 0) {
            uint64_t sm = (ps->util_acc + period / 2) / period;
            uint64_t mem = (ps->util_acc * ps->proc->mem_ratio / 100 + period / 2) / period;
            struct sim_sample s = {
                .t_us = g->t,
                .pid = ps->proc->pid,
                .sm = (uint32_t)MIN(sm, (uint64_t)100),
                .mem = (uint32_t)MIN(mem, (uint64_t)100),
            };
            push_sample(g, &s);
            ps->util_acc = 0;
        }
        if (!ps->running && ps->demand == 0) {
            g->active[i] = g->active[--g->n_active];
            continue;
        }
        i++;
    }
    g->next_sample += period;
}

void sim_model_advance_gpu(struct sim_model *m, unsigned gpu, uint64_t t) {
    struct sim_gpu_model *g = &m->gpus[gpu];
    const struct sim_gpu *sg = g->gpu;

    apply_due_faults(g);
    activate_started(g);
    while (g->t < t) {
        uint64_t end = min_u64(t, g->next_sample);
        if (g->next_start < g->n_procs)
            end = min_u64(end, g->procs[g->next_start]->proc->start_us);
        if (g->next_fault < sg->n_faults)
            end = min_u64(end, sg->faults[g->next_fault].at_us);
        for (size_t i = 0; i < g->n_active; i++)
            end = min_u64(end, g->active[i]->next_edge);

        integrate(g, end - g->t);
        g->t = end;

        for (size_t i = 0; i < g->n_active; i++)
            if (g->active[i]->next_edge <= end)
                update_demand(g, g->active[i], end);
        apply_due_faults(g);
        if (end == g->next_sample)
            emit_samples(g);
        activate_started(g);
    }
}

void sim_model_advance(struct sim_model *m, uint64_t t) {
    for (unsigned i = 0; i < m->sc->n_gpus; i++)
        sim_model_advance_gpu(m, i, t);
}

uint32_t sim_model_power_mw(const struct sim_gpu_model *g) {
    uint64_t div = MAX((uint64_t)g->sum_demand, (uint64_t)100);
    uint64_t p = g->gpu->idle_mw;
    for (size_t i = 0; i < g->n_active; i++) {
        const struct sim_proc_state *ps = g->active[i];
        p += (uint64_t)ps->proc->coef_mw * ps->demand / div;
    }
    return (uint32_t)MIN(p, (uint64_t)UINT32_MAX);
}

uint64_t sim_model_counter_mj(const struct sim_gpu_model *g) {
    uint64_t total = g->idle_nj + g->active_nj;
    return g->counter_offset_mj + (total - g->counter_base_nj) / 1000000;
}

size_t sim_model_samples_after(const struct sim_gpu_model *g, uint64_t after, size_t *ret_first) {
    size_t lo = 0, hi = g->ring_len;
    /* first position whose t_us > after; the ring is ordered by time */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sim_model_sample(g, mid)->t_us > after)
            hi = mid;
        else
            lo = mid + 1;
    }
    *ret_first = lo;
    return g->ring_len - lo;
}

const struct sim_sample *sim_model_sample(const struct sim_gpu_model *g, size_t i) {
    return &g->ring[(g->ring_head + i) % g->ring_cap];
}
