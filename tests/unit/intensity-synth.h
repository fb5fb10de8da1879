/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A synthetic GPU for the intensity tests, generated from the estimator's own model:
 * processes with a known intensity (W per 100 % SM, optionally changing at a time), a
 * utilisation schedule on 10 ms slots, a no-context idle and a context uplift, per-process
 * samples at each process's own phase within the sample period (the driver's behaviour:
 * one sample per period, only when the process used the SM), and the energy of each window
 * with optional noise. The truth of a process is its intensity x its SM time plus an even
 * part of the context uplift while it holds a context; idle is nobody's.
 *
 * A runner feeds the windows to the real weighting, estimator and split, and measures the
 * attribution error of the learned split and of SM share against the truth.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attribution.h"
#include "context_split.h"
#include "idle_power.h"
#include "intensity.h"
#include "process_weights.h"

#define SYNTH_MAX_PROCS 160
#define SYNTH_SLOT_US UINT64_C(10000)
#define SYNTH_DEAD 255 /* util value of a slot where the process holds no context */

struct synth_proc {
    uint64_t key;
    uint64_t class_key;
    uint64_t family_key;      /* 0: none */
    double kappa_w, kappa2_w; /* intensity before and after change_at_s */
    double change_at_s;       /* 0: no change */
    uint64_t phase_us;        /* sample phase within the period */
};

struct synth {
    size_t n_procs;
    struct synth_proc procs[SYNTH_MAX_PROCS];
    double idle_w, ctx_w;
    double noise; /* relative, on each window's energy */
    uint64_t period_us;
    size_t n_slots;
    uint8_t *util; /* [proc * n_slots + slot]: percent, or SYNTH_DEAD */
    uint64_t rng;
};

static inline double synth_uniform(uint64_t *rng) {
    return (double)(test_rand_next(rng) >> 11) / 9007199254740992.0;
}

/* Approximately normal (sum of four uniforms, variance 1). */
static inline double synth_normal(uint64_t *rng) {
    double s = 0;

    for (int i = 0; i < 4; i++)
        s += synth_uniform(rng);
    return (s - 2.0) * sqrt(3.0);
}

static inline int synth_init(struct synth *s, size_t n_procs, double seconds, uint64_t seed) {
    memset(s, 0, sizeof(*s));
    s->n_procs = n_procs;
    s->period_us = 167000;
    s->n_slots = (size_t)(seconds * 1e6 / (double)SYNTH_SLOT_US);
    s->rng = seed;
    s->util = malloc(n_procs * s->n_slots);
    if (!s->util)
        return -1;
    memset(s->util, SYNTH_DEAD, n_procs * s->n_slots);
    for (size_t p = 0; p < n_procs; p++)
        s->procs[p] = (struct synth_proc){
            .key = 1000 + p, .class_key = 1000 + p, .phase_us = (p * 42000) % s->period_us};
    return 0;
}

static inline void synth_done(struct synth *s) {
    free(s->util);
    s->util = NULL;
}

static inline uint8_t *synth_slot(struct synth *s, size_t p, size_t slot) {
    return &s->util[p * s->n_slots + slot];
}

/* Sets util (or SYNTH_DEAD) on [from_s, to_s). */
static inline void synth_set(struct synth *s, size_t p, double from_s, double to_s, uint8_t util) {
    size_t a = (size_t)(from_s * 100.0 + 0.5), b = (size_t)(to_s * 100.0 + 0.5);

    for (size_t i = a; i < b && i < s->n_slots; i++)
        *synth_slot(s, p, i) = util;
}

/* Random on/off phases: on at a random level in [lo, hi] for 1..max_on_s, off (alive, 0 %)
 * or gone for 1..max_off_s, from start_s to end_s. */
static inline void synth_random_duty(struct synth *s, size_t p, double start_s, double end_s,
                                     unsigned lo, unsigned hi, double max_on_s, double max_off_s,
                                     bool leaves) {
    double t = start_s;

    while (t < end_s) {
        double on = 0.5 + synth_uniform(&s->rng) * (max_on_s - 0.5);
        double off = 0.5 + synth_uniform(&s->rng) * (max_off_s - 0.5);
        unsigned u = lo + (unsigned)(synth_uniform(&s->rng) * (double)(hi - lo + 1));

        synth_set(s, p, t, fmin(t + on, end_s), (uint8_t)(u > hi ? hi : u));
        t += on;
        synth_set(s, p, t, fmin(t + off, end_s),
                  leaves && synth_uniform(&s->rng) < 0.5 ? SYNTH_DEAD : 0);
        t += off;
    }
}

static inline double synth_kappa(const struct synth_proc *p, double t_s) {
    return p->change_at_s > 0 && t_s >= p->change_at_s ? p->kappa2_w : p->kappa_w;
}

/* The mean utilisation of process p over (a_us, b_us], dead slots counting 0. */
static inline double synth_mean_util(struct synth *s, size_t p, uint64_t a_us, uint64_t b_us) {
    double sum = 0;

    for (uint64_t t = a_us - a_us % SYNTH_SLOT_US; t < b_us; t += SYNTH_SLOT_US) {
        size_t slot = (size_t)(t / SYNTH_SLOT_US);
        uint64_t lo = t > a_us ? t : a_us, hi = t + SYNTH_SLOT_US < b_us ? t + SYNTH_SLOT_US : b_us;
        uint8_t u = slot < s->n_slots ? *synth_slot(s, p, slot) : SYNTH_DEAD;

        if (u != SYNTH_DEAD && hi > lo)
            sum += (double)u * (double)(hi - lo);
    }
    return sum / (double)(b_us - a_us);
}

struct synth_window {
    uint64_t energy_uj;
    uint64_t context_us;
    double truth_j[SYNTH_MAX_PROCS];
    bool alive[SYNTH_MAX_PROCS];
    uint64_t held_us[SYNTH_MAX_PROCS];
    size_t n_samples;
    struct util_sample samples[SYNTH_MAX_PROCS * 64];
};

/* The window (t0, t1], on slot boundaries. */
static inline void synth_window(struct synth *s, uint64_t t0, uint64_t t1, struct synth_window *w) {
    double energy = 0;

    memset(w->truth_j, 0, sizeof(w->truth_j));
    memset(w->alive, 0, sizeof(w->alive));
    memset(w->held_us, 0, sizeof(w->held_us));
    w->context_us = 0;
    for (uint64_t t = t0; t < t1; t += SYNTH_SLOT_US) {
        size_t slot = (size_t)(t / SYNTH_SLOT_US), n_alive = 0;
        double dt = (double)SYNTH_SLOT_US / 1e6;

        for (size_t p = 0; p < s->n_procs; p++) {
            uint8_t u = *synth_slot(s, p, slot);

            if (u == SYNTH_DEAD)
                continue;
            n_alive++;
            w->alive[p] = true;
            w->held_us[p] += SYNTH_SLOT_US;
            w->truth_j[p] += synth_kappa(&s->procs[p], (double)t / 1e6) * u / 100.0 * dt;
        }
        energy += s->idle_w * dt;
        if (n_alive == 0)
            continue;
        w->context_us += SYNTH_SLOT_US;
        for (size_t p = 0; p < s->n_procs; p++)
            if (*synth_slot(s, p, slot) != SYNTH_DEAD)
                w->truth_j[p] += s->ctx_w * dt / (double)n_alive;
    }
    for (size_t p = 0; p < s->n_procs; p++)
        energy += w->truth_j[p];
    energy *= 1.0 + s->noise * synth_normal(&s->rng);
    w->energy_uj = (uint64_t)llround(fmax(energy, 0) * 1e6);

    /* Each process's samples at its own phase: one per period, only when it used the SM. */
    w->n_samples = 0;
    for (size_t p = 0; p < s->n_procs; p++) {
        uint64_t ph = s->procs[p].phase_us, k0 = t0 > ph ? (t0 - ph) / s->period_us : 0;

        for (uint64_t ts = ph + k0 * s->period_us; ts <= t1; ts += s->period_us) {
            double u;

            if (ts <= t0 || ts < s->period_us)
                continue;
            u = synth_mean_util(s, p, ts - s->period_us, ts);
            if (u < 0.5)
                continue;
            w->samples[w->n_samples++] = (struct util_sample){
                .consumer = (uint32_t)p, .sm_util = (uint32_t)lround(u), .timestamp_us = ts};
        }
    }
}

/* Feeds windows to the real weighting, estimator and split, measuring both splits. */
struct synth_run {
    struct intensity_gpu *est;
    struct sample_period period;
    uint64_t last_sample[SYNTH_MAX_PROCS];
    int64_t carries[SYNTH_MAX_PROCS];
    struct split_scratch scratch;
    struct synth_window win;
    uint64_t t_us;
    /* The idle power: configured (the synthetic truth), or learned as the daemon does,
     * from windows with no process on the GPU. */
    bool idle_configured;
    struct idle_power idle;
    /* measured from `measure_from_s` on */
    double measure_from_s;
    double energy_j;
    unsigned windows, windows_learned;
    struct intensity_result last;
    /* per process: the learned split's, SM share's and the truth */
    double got_j[SYNTH_MAX_PROCS], sm_j[SYNTH_MAX_PROCS], truth_j[SYNTH_MAX_PROCS];
};

/* The attribution error as the issue measures it: sum over processes of |attributed -
 * truth| over the measured time, as a part of the GPU's energy. */
static inline double synth_error(const struct synth *s, const struct synth_run *r, bool learned) {
    double err = 0;

    for (size_t p = 0; p < s->n_procs; p++)
        err += fabs((learned ? r->got_j[p] : r->sm_j[p]) - r->truth_j[p]);
    return r->energy_j > 0 ? err / r->energy_j : 0;
}

static inline int synth_run_init(struct synth_run *r, const struct intensity_options *o) {
    memset(r, 0, sizeof(*r));
    sample_period_init(&r->period, 0);
    r->idle_configured = true;
    if (split_scratch_reserve(&r->scratch, SYNTH_MAX_PROCS) < 0)
        return -1;
    return intensity_gpu_new(o, NULL, &r->est);
}

static inline void synth_run_done(struct synth_run *r) {
    r->est = intensity_gpu_free(r->est);
    split_scratch_done(&r->scratch);
}

/* One window of `dt_us`. Returns 0 or a negative errno from the code under test. */
static inline int synth_step(struct synth *s, struct synth_run *r, uint64_t dt_us) {
    uint64_t t0 = r->t_us, t1 = t0 + dt_us, weights[SYNTH_MAX_PROCS], early[SYNTH_MAX_PROCS];
    uint64_t parts[SYNTH_MAX_PROCS], sm_parts[SYNTH_MAX_PROCS];
    struct intensity_consumer ic[SYNTH_MAX_PROCS];
    struct intensity_share shares[SYNTH_MAX_PROCS];
    struct split_consumer sc[SYNTH_MAX_PROCS], sm_sc[SYNTH_MAX_PROCS];
    int64_t carries[SYNTH_MAX_PROCS];
    uint64_t held[SYNTH_MAX_PROCS];
    size_t idx[SYNTH_MAX_PROCS], n = 0;
    struct intensity_window iw;
    struct split_result res;
    uint64_t idle_uj, conserved;
    int ret;

    if (t0 == 0)
        idle_power_init(&r->idle, r->idle_configured ? s->idle_w : -1);
    idle_uj = idle_power_energy_uj(&r->idle, dt_us);

    synth_window(s, t0, t1, &r->win);
    ret = process_window_weights(r->win.samples, r->win.n_samples, t0, t1, &r->period, s->n_procs,
                                 r->last_sample, weights, early, NULL, NULL);
    if (ret < 0)
        return ret;
    for (size_t p = 0; p < s->n_procs; p++) {
        if (!r->win.alive[p] && weights[p] == 0)
            continue;
        idx[n] = p;
        ic[n] = (struct intensity_consumer){.class_key = s->procs[p].class_key,
                                            .family_key = s->procs[p].family_key,
                                            .activity = weights[p],
                                            .early = early[p]};
        held[n] = r->win.held_us[p];
        n++;
    }
    iw = (struct intensity_window){
        .duration_us = dt_us,
        .context_us = r->win.context_us,
        .energy_uj = r->win.energy_uj,
        .learn = true,
        .idle_prior_known = idle_power_known(&r->idle),
        .idle_prior_w = idle_power_watts(&r->idle),
        .n = n,
        .consumers = ic,
    };
    ret = intensity_window(r->est, &iw, shares, &r->last);
    if (ret < 0)
        return ret;
    /* In fallback the weights are SM share's, exactly. */
    for (size_t i = 0; i < n && !r->last.learned; i++)
        if (shares[i].weight != ic[i].activity)
            return -EPROTO;
    for (size_t i = 0; i < n; i++) {
        sc[i] = (struct split_consumer){.key = s->procs[idx[i]].key, .weight = shares[i].weight};
        sm_sc[i] = (struct split_consumer){.key = s->procs[idx[i]].key, .weight = weights[idx[i]]};
        carries[i] = r->carries[idx[i]];
    }
    ret = split_with_context(&(struct split_request){.energy_uj = r->win.energy_uj,
                                                     .idle_uj = idle_uj,
                                                     .policy = IDLE_POLICY_UNATTRIBUTED,
                                                     .n = n,
                                                     .consumers = sc,
                                                     .carries = carries},
                             r->last.context_uj, held, &r->scratch, parts, &res);
    if (ret < 0)
        return ret;
    /* Whatever was learned, the window is split exactly. */
    conserved = res.unattributed_idle_uj + res.unattributed_no_consumer_uj;
    for (size_t i = 0; i < n; i++)
        conserved += parts[i];
    if (conserved != r->win.energy_uj)
        return -EPROTO;
    ret = split_energy(&(struct split_request){.energy_uj = r->win.energy_uj,
                                               .idle_uj = idle_uj,
                                               .policy = IDLE_POLICY_UNATTRIBUTED,
                                               .n = n,
                                               .consumers = sm_sc},
                       &r->scratch, sm_parts, &res);
    if (ret < 0)
        return ret;
    for (size_t i = 0; i < n; i++)
        r->carries[idx[i]] = carries[i];
    if (n == 0)
        idle_power_observe(&r->idle, r->win.energy_uj, dt_us);

    if ((double)t0 / 1e6 >= r->measure_from_s) {
        for (size_t i = 0; i < n; i++) {
            r->got_j[idx[i]] += (double)parts[i] / 1e6;
            r->sm_j[idx[i]] += (double)sm_parts[i] / 1e6;
        }
        for (size_t p = 0; p < s->n_procs; p++)
            r->truth_j[p] += r->win.truth_j[p];
        r->energy_j += (double)r->win.energy_uj / 1e6;
        r->windows++;
        r->windows_learned += r->last.learned;
    }
    r->t_us = t1;
    return 0;
}
