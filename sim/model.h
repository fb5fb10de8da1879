/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The physics of a simulated GPU. Each process demands a share of the SMs (its profile);
 * when the demands on one GPU add up to more than 100 % the GPU time-slices and delivers
 * demand_i * 100 / sum to each. Power is idle + sum(coef_i * delivered_i / 100), integrated
 * in segments over which every demand is constant (profile edges, process starts and stops,
 * sample boundaries, fault times), in nanojoules (mW * µs). The total is defined as the sum
 * of the idle part and of every process's part, so ground truth adds up by construction.
 * Utilisation is sampled like the driver does: at each sample boundary, one sample per
 * process that had non-zero utilisation in the period, with its average over the period.
 *
 * Times are scenario µs (t = 0 at scenario start). No allocation after sim_model_new().
 * Not thread-safe: the caller holds the simulator lock.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

struct sim_sample {
    uint64_t t_us; /* sample boundary, scenario µs */
    uint32_t pid;
    uint32_t sm;  /* percent, average over the period */
    uint32_t mem; /* percent */
};

struct sim_proc_state {
    const struct sim_process *proc;
    uint32_t demand;    /* percent, current */
    uint64_t next_edge; /* scenario µs when demand may next change */
    uint64_t util_acc;  /* delivered percent*µs in the current sample period */
    uint64_t active_nj; /* ground truth: this process's energy */
    bool running;       /* start <= t < stop */
};

struct sim_gpu_model {
    const struct sim_gpu *gpu;
    uint64_t t; /* integrated up to here */
    uint64_t next_sample;
    uint64_t sample_period;

    size_t n_procs; /* every process ever on this GPU, by start time */
    struct sim_proc_state **procs;
    size_t next_start; /* first of procs not yet started */
    size_t n_active;   /* started and not yet flushed by a sample */
    struct sim_proc_state **active;
    uint32_t sum_demand;

    uint64_t idle_nj;
    uint64_t active_nj;
    uint64_t counter_base_nj; /* total at the last counter reset */
    uint64_t counter_offset_mj;
    size_t next_fault;

    struct sim_sample *ring; /* oldest first from ring_head */
    size_t ring_cap;
    size_t ring_head;
    size_t ring_len;

    bool list_grow_pending; /* fault list-grows not yet delivered */
};

struct sim_model {
    const struct sim_scenario *sc;
    struct sim_proc_state *procs; /* same order as sc->procs */
    struct sim_gpu_model *gpus;
};

/* The model keeps pointers into sc, which must outlive it. Returns 0 or -ENOMEM. */
int sim_model_new(const struct sim_scenario *sc, struct sim_model **ret_model);
struct sim_model *sim_model_free(struct sim_model *m);

/* Integrates one GPU (or all) up to scenario time t; earlier times are ignored. */
void sim_model_advance_gpu(struct sim_model *m, unsigned gpu, uint64_t t);
void sim_model_advance(struct sim_model *m, uint64_t t);

/* Instantaneous board power now, in mW. */
uint32_t sim_model_power_mw(const struct sim_gpu_model *g);
/* The driver's energy counter now, in mJ (resets are applied). */
uint64_t sim_model_counter_mj(const struct sim_gpu_model *g);

/* Number of buffered samples with t_us > after (binary search); *ret_first is the ring
 * position (0 = oldest) of the first of them. */
size_t sim_model_samples_after(const struct sim_gpu_model *g, uint64_t after, size_t *ret_first);
/* The sample at ring position i (0 = oldest). */
const struct sim_sample *sim_model_sample(const struct sim_gpu_model *g, size_t i);

/* Index of a process state in m->procs, for ground truth lookups. */
static inline const struct sim_proc_state *sim_model_proc(const struct sim_model *m, size_t i) {
    return &m->procs[i];
}
