/* SPDX-License-Identifier: MIT */
#pragma once

/* Private to model.c, model_report.c and model_samples.c. */

#include "model.h"

static inline uint64_t min_u64(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

/* A well-mixed 64-bit value from x (the splitmix64 finaliser): seeds noise and phases. */
static inline uint64_t sim_mix64(uint64_t x) {
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* model_report.c: the power sensor, the stepped energy counter and the idle drift. */
int report_init(struct sim_gpu_model *g);
void report_done(struct sim_gpu_model *g);
/* The next instant the sensor or the counter needs a segment to end at. */
uint64_t report_next_boundary(const struct sim_gpu_model *g);
/* The drift's energy over dt at its current level (nJ, remainder carried). */
uint64_t report_drift_energy(struct sim_gpu_model *g, uint64_t dt);
/* A segment [g->t, g->t + dt) drew seg_nj in all. */
void report_integrate(struct sim_gpu_model *g, uint64_t seg_nj, uint64_t dt);
/* At a segment end (g->t): completes update periods and counter steps due now. */
void report_at(struct sim_gpu_model *g);

/* model_samples.c: per-process utilisation samples. */
int samples_init(struct sim_gpu_model *g);
/* A just-started process's first sample boundary (after its start, at its phase). */
uint64_t samples_first_boundary(const struct sim_gpu_model *g, const struct sim_proc_state *ps);
/* At a segment end (g->t): samples every process whose boundary it is; processes that have
 * stopped leave the active set with their last sample. */
void samples_emit(struct sim_gpu_model *g);

/* model_profiling.c: the next profiling sample (SIM_TIME_NEVER when unwatched), and at a
 * segment end (g->t) the sample due now. */
uint64_t profiling_next_boundary(const struct sim_gpu_model *g);
void profiling_at(struct sim_gpu_model *g);
