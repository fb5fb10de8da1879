/* SPDX-License-Identifier: MIT */
/*
 * What the driver reports of the physics: the power sensor and its readings, the stepped
 * energy counter. The idle drift lives here too: it moves once per sensor update period.
 */
#include <errno.h>
#include <stdlib.h>

#include "macro.h"
#include "model_internal.h"

#define Q32 (UINT64_C(1) << 32)
#define SQRT3 1.7320508075688772

/* The sensed part of each update period, in µs (the period's first part). */
static uint64_t sense_us(const struct sim_gpu *gpu) {
    uint64_t us = SIM_POWER_UPDATE_US * gpu->sensor_duty_ppm / SIM_PPM;
    return MAX(us, (uint64_t)1);
}

/* Readings come from the sensor's periods rather than from the power of the instant. */
static bool reading_from_sensor(const struct sim_gpu *gpu) {
    return gpu->power_average_us || gpu->sensor_duty_ppm < SIM_PPM;
}

static bool periods_used(const struct sim_gpu *gpu) {
    return reading_from_sensor(gpu) || gpu->idle_drift_mw;
}

/* e^-x for x >= 0 without libm (which the exporter loading us would have to map): halve x
 * until the series is exact to double precision, then square back. */
static double exp_neg(double x) {
    unsigned k = 0;
    while (x > 1e-3 && k < 64) {
        x /= 2;
        k++;
    }
    double y = 1 - x + x * x / 2 - x * x * x / 6 + x * x * x * x / 24;
    while (k--)
        y *= y;
    return y;
}

int report_init(struct sim_gpu_model *g) {
    const struct sim_gpu *gpu = g->gpu;
    struct sim_sensor *s = &g->sensor;

    /* the grids run at driver-phase + k * period; what comes before is a partial period */
    s->next_update = gpu->driver_phase_us ? gpu->driver_phase_us : SIM_POWER_UPDATE_US;
    s->next_step = SIM_TIME_NEVER;
    if (gpu->energy_step_us) {
        uint64_t phase = gpu->driver_phase_us % gpu->energy_step_us;
        s->next_step = phase ? phase : gpu->energy_step_us;
        /* The counter runs since the driver loaded, and the board idled before t = 0: its
         * first step also holds the idle since the step before t = 0 (mW * µs = nJ). */
        if (phase)
            s->before_nj = (uint64_t)gpu->idle_mw * (gpu->energy_step_us - phase);
    }
    s->cap = MAX(gpu->power_average_us / SIM_POWER_UPDATE_US, (uint64_t)1);
    s->periods = calloc(s->cap, sizeof(*s->periods));
    if (!s->periods)
        return -ENOMEM;
    /* the board idled before t = 0: the readings' window starts full of idle periods */
    for (size_t i = 0; i < s->cap; i++)
        s->periods[i] = (uint64_t)gpu->idle_mw * sense_us(gpu);
    if (gpu->idle_drift_mw) {
        double keep = exp_neg((double)SIM_POWER_UPDATE_US / (double)gpu->idle_drift_tau_us);
        s->drift_keep_q = (uint64_t)(keep * (double)Q32 + 0.5);
    }
    return 0;
}

void report_done(struct sim_gpu_model *g) {
    free(g->sensor.periods);
    g->sensor.periods = NULL;
}

/* End of the sensed part of the current update period. The first period began before
 * t = 0 (at driver-phase - 100 ms): 0 when its sensed part ended before t = 0. */
static uint64_t sense_end(const struct sim_gpu_model *g) {
    uint64_t end = g->sensor.next_update + sense_us(g->gpu);
    return end > SIM_POWER_UPDATE_US ? end - SIM_POWER_UPDATE_US : 0;
}

uint64_t report_next_boundary(const struct sim_gpu_model *g) {
    const struct sim_sensor *s = &g->sensor;
    uint64_t next = s->next_step;
    if (periods_used(g->gpu)) {
        uint64_t end = sense_end(g);
        next = min_u64(next, g->t < end ? end : s->next_update);
    }
    return next;
}

uint64_t report_drift_energy(struct sim_gpu_model *g, uint64_t dt) {
    struct sim_sensor *s = &g->sensor;
    if (!s->drift_uw)
        return 0;
    /* µW * µs = pJ */
    unsigned __int128 pj = (unsigned __int128)s->drift_uw * dt + s->drift_rem;
    s->drift_rem = (uint64_t)(pj % 1000);
    return (uint64_t)(pj / 1000);
}

void report_integrate(struct sim_gpu_model *g, uint64_t seg_nj, uint64_t dt) {
    struct sim_sensor *s = &g->sensor;
    if (!periods_used(g->gpu))
        return;
    if (g->t < sense_end(g))
        s->sensed_nj += seg_nj;
    if (g->sum_demand)
        s->busy_us += dt;
}

/* First-order approach of the drift to its target, once per update period: the target is
 * the full drift times the part of the period in which anything computed. */
static void update_drift(struct sim_gpu_model *g) {
    struct sim_sensor *s = &g->sensor;
    uint64_t target = (uint64_t)g->gpu->idle_drift_mw * 1000 * s->busy_us / SIM_POWER_UPDATE_US;
    __int128 diff = (__int128)s->drift_uw - (__int128)target;

    s->drift_uw = (uint64_t)((__int128)target + diff * (__int128)s->drift_keep_q / (__int128)Q32);
    s->busy_us = 0;
}

/* The latest period replaces the oldest. */
static void push_period(struct sim_sensor *s) {
    s->periods[s->head] = s->sensed_nj;
    s->head = (s->head + 1) % s->cap;
}

void report_at(struct sim_gpu_model *g) {
    struct sim_sensor *s = &g->sensor;

    if (periods_used(g->gpu) && g->t == s->next_update) {
        /* the first period's sensed part before t = 0 saw the idle board */
        if (s->next_update < SIM_POWER_UPDATE_US)
            s->sensed_nj += (uint64_t)g->gpu->idle_mw * (sense_us(g->gpu) - sense_end(g));
        push_period(s);
        s->sensed_nj = 0;
        if (g->gpu->idle_drift_mw)
            update_drift(g);
        s->next_update += SIM_POWER_UPDATE_US;
    }
    if (g->t == s->next_step) {
        s->stepped_total = sim_model_total_nj(g) + s->before_nj;
        s->next_step += g->gpu->energy_step_us;
    }
}

/* The power the board draws at this instant, in mW. */
static uint64_t instant_mw(const struct sim_gpu_model *g) {
    uint64_t p = g->gpu->idle_mw + g->sensor.drift_uw / 1000;
    if (g->n_alive)
        p += g->gpu->context_idle_mw;
    for (size_t i = 0; i < g->n_active; i++) {
        const struct sim_proc_state *ps = g->active[i];
        p += (uint64_t)ps->coef_mw * ps->demand / sim_group_divisor(g, ps->group);
    }
    return p;
}

/* Average power over the sensed parts of the latest power-average of update periods. */
static uint64_t sensed_mw(const struct sim_gpu_model *g) {
    const struct sim_sensor *s = &g->sensor;
    uint64_t nj = 0;
    for (size_t i = 0; i < s->cap; i++)
        nj += s->periods[i];
    return nj / (s->cap * sense_us(g->gpu)); /* nJ / µs = mW */
}

/* The reading with its noise: zero mean, standard deviation power-noise, uniform; the same
 * for every reading within one update period, and the same for the same seed. */
static uint64_t with_noise(const struct sim_gpu_model *g, uint64_t mw) {
    uint32_t ppm = g->gpu->power_noise_ppm;
    if (!ppm)
        return mw;
    /* the driver's update periods: on its grid, driver-phase + k x 100 ms */
    uint64_t phase = g->gpu->driver_phase_us % SIM_POWER_UPDATE_US;
    uint64_t period = (g->t + SIM_POWER_UPDATE_US - phase) / SIM_POWER_UPDATE_US;
    uint64_t x = sim_mix64(g->sc->seed ^ sim_mix64(((uint64_t)g->index << 48) ^ period));
    double u = (double)(x >> 11) / (double)(UINT64_C(1) << 53); /* [0, 1) */
    double v = (double)mw * (1.0 + (2.0 * u - 1.0) * SQRT3 * ppm / SIM_PPM);
    return v > 0 ? (uint64_t)(v + 0.5) : 0;
}

uint32_t sim_model_power_mw(const struct sim_gpu_model *g) {
    uint64_t p = with_noise(g, reading_from_sensor(g->gpu) ? sensed_mw(g) : instant_mw(g));
    return (uint32_t)MIN(p, (uint64_t)UINT32_MAX);
}

uint64_t sim_model_counter_mj(const struct sim_gpu_model *g) {
    uint64_t total = g->gpu->energy_step_us ? g->sensor.stepped_total : sim_model_total_nj(g);
    /* reset since the last step: the counter restarted and has not stepped yet */
    if (total < g->counter_base_nj)
        return g->counter_offset_mj;
    return g->counter_offset_mj + (total - g->counter_base_nj) / 1000000;
}
