/* SPDX-License-Identifier: MIT */
#include "model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "model_internal.h"
#include "profile.h"

/* 1 + the slot of the MIG instance a process runs in; 0 without MIG. */
static uint32_t instance_group(const struct sim_gpu *gpu, const struct sim_process *p) {
    for (size_t k = 0; gpu->mig && k < gpu->n_mig; k++)
        if (gpu->mig_instances[k].gpu_instance == p->gpu_instance &&
            gpu->mig_instances[k].compute_instance == p->compute_instance)
            return (uint32_t)k + 1;
    return 0;
}

static int gpu_model_init(struct sim_model *m, unsigned index) {
    const struct sim_scenario *sc = m->sc;
    struct sim_gpu_model *g = &m->gpus[index];
    size_t n = 0;
    int r;

    for (size_t i = 0; i < sc->n_procs; i++)
        if (sc->procs[i].gpu == index)
            n++;
    *g = (struct sim_gpu_model){
        .gpu = &sc->gpus[index],
        .sc = sc,
        .index = index,
        .sample_period = sc->sample_period_us,
        .n_procs = n,
        .counter_offset_mj = sc->gpus[index].energy_start_mj,
        .list_grow_pending = sc->gpus[index].list_grows_once,
    };
    g->procs = calloc(MAX(n, (size_t)1), sizeof(*g->procs));
    g->active = calloc(MAX(n, (size_t)1), sizeof(*g->active));
    if (!g->procs || !g->active)
        return -ENOMEM;
    r = samples_init(g);
    if (r < 0)
        return r;
    r = report_init(g);
    if (r < 0)
        return r;
    n = 0;
    for (size_t i = 0; i < sc->n_procs; i++)
        if (sc->procs[i].gpu == index) {
            m->procs[i].slot = (uint32_t)n;
            m->procs[i].group = instance_group(g->gpu, &sc->procs[i]);
            g->procs[n++] = &m->procs[i]; /* stays sorted by start */
        }
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
            report_done(&m->gpus[i]);
        }
    free(m->gpus);
    free(m->procs);
    free(m);
    return NULL;
}

/* The coefficient phase at time t, and the next change after it into *next. */
static void update_coef(struct sim_proc_state *ps, uint64_t t, uint64_t *next) {
    const struct sim_process *p = ps->proc;
    while (ps->coef_phase + 1 < p->n_coef && p->start_us + p->coef_at_us[ps->coef_phase + 1] <= t)
        ps->coef_phase++;
    ps->coef_mw = p->coef_mw[ps->coef_phase];
    if (ps->coef_phase + 1 < p->n_coef)
        *next = min_u64(*next, p->start_us + p->coef_at_us[ps->coef_phase + 1]);
}

/* Re-evaluates a process's demand and coefficient at time t (profile, phases, start, stop). */
static void update_demand(struct sim_gpu_model *g, struct sim_proc_state *ps, uint64_t t) {
    const struct sim_process *p = ps->proc;
    uint32_t grp = ps->group;
    bool was_alive = ps->running, was_working = ps->running && ps->demand > 0;
    uint32_t demand = 0;
    uint64_t next = SIM_TIME_NEVER;

    if (t >= p->start_us && t < p->stop_us) {
        uint64_t rel_next;
        demand = sim_profile_at(&p->sm, t - p->start_us, &rel_next);
        if (rel_next != SIM_TIME_NEVER)
            next = p->start_us + rel_next;
        update_coef(ps, t, &next);
        next = min_u64(next, p->stop_us);
        ps->running = true;
    } else {
        ps->running = false;
    }
    g->sum_demand = g->sum_demand - ps->demand + demand;
    g->group_demand[grp] = g->group_demand[grp] - ps->demand + demand;
    ps->demand = demand;
    ps->next_edge = next;
    g->n_alive = g->n_alive - was_alive + ps->running;
    g->group_working[grp] = g->group_working[grp] - was_working + (ps->running && demand > 0);
}

static void activate_started(struct sim_gpu_model *g) {
    while (g->next_start < g->n_procs && g->procs[g->next_start]->proc->start_us <= g->t) {
        struct sim_proc_state *ps = g->procs[g->next_start++];
        g->active[g->n_active++] = ps;
        ps->next_sample = ps->first_sample = samples_first_boundary(g, ps);
        update_demand(g, ps, g->t);
    }
}

/* The carried remainders are fractions of a nanojoule over the group's divisor (coef
 * energy) and over the number of context holders; when those change, they are rescaled. */
static void rescale_remainders(struct sim_gpu_model *g, const uint32_t *old_demand,
                               uint32_t old_alive) {
    for (size_t i = 0; i < g->n_active; i++) {
        struct sim_proc_state *ps = g->active[i];
        uint64_t old_div = MAX((uint64_t)old_demand[ps->group], (uint64_t)100);
        uint64_t div = sim_group_divisor(g, ps->group);

        if (div != old_div)
            ps->active_rem = ps->active_rem * div / old_div;
        if (g->n_alive != old_alive)
            ps->context_rem =
                old_alive && g->n_alive ? ps->context_rem * g->n_alive / old_alive : 0;
    }
}

static void apply_due_faults(struct sim_gpu_model *g) {
    const struct sim_gpu *gpu = g->gpu;
    while (g->next_fault < gpu->n_faults && gpu->faults[g->next_fault].at_us <= g->t) {
        if (gpu->faults[g->next_fault].kind == SIM_FAULT_COUNTER_RESET) {
            /* a stepped counter holds the idle before t = 0 too (model_report.c) */
            g->counter_base_nj = sim_model_total_nj(g) + g->sensor.before_nj;
            g->counter_offset_mj = 0;
        }
        g->next_fault++;
    }
}

/* a * b * c + add into *ret when it fits in 64 bits: the model's products nearly always
 * do, and a 64-bit division is several times cheaper than the 128-bit one it replaces
 * (the same quotient and remainder). */
static inline bool mul3_add_fits(uint64_t a, uint64_t b, uint64_t c, uint64_t add, uint64_t *ret) {
    uint64_t v;

    if (__builtin_mul_overflow(a, b, &v) || __builtin_mul_overflow(v, c, &v) ||
        __builtin_add_overflow(v, add, &v))
        return false;
    *ret = v;
    return true;
}

/* A process's share of context-idle over dt: even among the processes alive now. */
static uint64_t context_share(struct sim_proc_state *ps, uint64_t ctx_nj, uint32_t n_alive) {
    ps->context_rem += ctx_nj;
    uint64_t e = ps->context_rem / n_alive;
    ps->context_rem %= n_alive;
    ps->context_nj += e;
    return e;
}

/* A process's coef energy over dt at its delivered share (its SM time, before the slice
 * overhead is taken off). */
static uint64_t coef_energy(struct sim_proc_state *ps, uint64_t dt, uint64_t div) {
    uint64_t num64;

    if (mul3_add_fits(ps->coef_mw, ps->demand, dt, ps->active_rem, &num64)) {
        ps->active_rem = num64 % div;
        return num64 / div;
    }
    unsigned __int128 num = (unsigned __int128)ps->coef_mw * ps->demand * dt + ps->active_rem;
    ps->active_rem = (uint64_t)(num % div);
    return (uint64_t)(num / div);
}

/* The delivered SM time of dt (percent * µs). */
static uint64_t delivered_util(const struct sim_gpu_model *g, const struct sim_proc_state *ps,
                               uint64_t dt) {
    uint64_t num64;

    if (mul3_add_fits(ps->demand, 100, dt, 0, &num64))
        return num64 / sim_group_divisor(g, ps->group);
    return (uint64_t)((unsigned __int128)ps->demand * 100 * dt / sim_group_divisor(g, ps->group));
}

/* What the process's samples show of its delivered SM time u: less the part lost to
 * context switches while others have work too (percent * µs). */
static uint64_t sampled_util(const struct sim_gpu_model *g, const struct sim_proc_state *ps,
                             uint64_t u) {
    uint64_t part;

    /* MPS clients run side by side, without the context switches of time slicing
     * ([Slicing] in SCENARIOS.md): no overhead is taken off theirs. */
    if (g->group_working[ps->group] >= 2 && g->gpu->slice_overhead_ppm &&
        !(ps->proc->kinds & SIM_KIND_MPS)) {
        if (mul3_add_fits(u, g->gpu->slice_overhead_ppm, 1, 0, &part))
            u -= part / SIM_PPM;
        else
            u -= (uint64_t)((unsigned __int128)u * g->gpu->slice_overhead_ppm / SIM_PPM);
    }
    return u;
}

/* Adds dt µs at the current (constant) demands. */
static void integrate(struct sim_gpu_model *g, uint64_t dt) {
    uint64_t ctx_nj = g->n_alive ? (uint64_t)g->gpu->context_idle_mw * dt : 0;
    uint64_t drift = report_drift_energy(g, dt);
    uint64_t seg = (uint64_t)g->gpu->idle_mw * dt + drift;

    g->idle_nj += seg;
    g->drift_nj += drift;
    for (size_t i = 0; i < g->n_active; i++) {
        struct sim_proc_state *ps = g->active[i];
        uint64_t e = 0;
        if (ps->running && ctx_nj) {
            uint64_t c = context_share(ps, ctx_nj, g->n_alive);
            g->context_nj += c;
            e += c;
        }
        if (ps->demand > 0) {
            e += coef_energy(ps, dt, sim_group_divisor(g, ps->group));
            uint64_t delivered = delivered_util(g, ps, dt);
            uint64_t u = sampled_util(g, ps, delivered);

            ps->delivered += delivered;
            ps->util_acc += u;
            ps->life_util += u;
            ps->sliced = ps->sliced || g->group_working[ps->group] >= 2;
        }
        ps->active_nj += e;
        g->active_nj += e;
        seg += e;
    }
    for (size_t k = 0; k <= g->gpu->n_mig; k++)
        g->group_busy[k] += (uint64_t)MIN(g->group_demand[k], (uint32_t)100) * dt;
    report_integrate(g, seg, dt);
}

void sim_model_advance_gpu(struct sim_model *m, unsigned gpu, uint64_t t) {
    struct sim_gpu_model *g = &m->gpus[gpu];
    const struct sim_gpu *sg = g->gpu;

    apply_due_faults(g);
    activate_started(g);
    while (g->t < t) {
        uint64_t end = min_u64(t, min_u64(report_next_boundary(g), profiling_next_boundary(g)));
        if (g->next_start < g->n_procs)
            end = min_u64(end, g->procs[g->next_start]->proc->start_us);
        if (g->next_fault < sg->n_faults)
            end = min_u64(end, sg->faults[g->next_fault].at_us);
        uint64_t first_edge = SIM_TIME_NEVER;
        for (size_t i = 0; i < g->n_active; i++) {
            first_edge = min_u64(first_edge, g->active[i]->next_edge);
            end = min_u64(end, g->active[i]->next_sample);
        }
        end = min_u64(end, first_edge);

        integrate(g, end - g->t);
        g->t = end;

        uint32_t old_demand[SIM_MAX_MIG + 1];
        uint32_t old_alive = g->n_alive;

        memcpy(old_demand, g->group_demand, sizeof(old_demand));
        /* Most segments end at a sample boundary only: no demand changes then. */
        if (first_edge <= end)
            for (size_t i = 0; i < g->n_active; i++)
                if (g->active[i]->next_edge <= end)
                    update_demand(g, g->active[i], end);
        apply_due_faults(g);
        report_at(g);
        profiling_at(g);
        samples_emit(g);
        activate_started(g);
        /* With the same demands and holders, every remainder keeps its divisor. */
        if (g->n_alive != old_alive || memcmp(old_demand, g->group_demand, sizeof(old_demand)))
            rescale_remainders(g, old_demand, old_alive);
    }
}

void sim_model_advance(struct sim_model *m, uint64_t t) {
    for (unsigned i = 0; i < m->sc->n_gpus; i++)
        sim_model_advance_gpu(m, i, t);
}
