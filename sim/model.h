/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The physics of a simulated GPU, and what its driver reports of it (docs/SCENARIOS.md,
 * "The model").
 *
 * Each process demands a share of the SMs (its profile); when the demands on one GPU add up
 * to more than 100 % the GPU time-slices and delivers demand_i * 100 / sum to each. On a
 * MIG-enabled GPU each instance has SMs of its own: a process's demand is a share of its
 * instance's SMs, and only the processes of one instance time-slice with each other. The board
 * draws idle + drift + context-idle (while any process is alive) + sum(coef_i(t) *
 * delivered_i / 100). Everything is integrated in segments over which nothing changes
 * (profile and coefficient edges, starts and stops, sample and sensor boundaries, fault
 * times, the moments asked), in nanojoules (mW * µs), with each part's sub-nanojoule
 * remainder carried from segment to segment, so where a segment is cut never changes the
 * truth. The GPU total is the sum of its parts: idle (drift included, nobody's) plus every
 * process's truth (its coef * delivered energy and its even share of context-idle).
 *
 * The driver's view: the energy counter is that total, moved in steps of energy-step; the
 * power reading averages what the sensor saw of the last power-average (sensing only the
 * first power-sensor-duty of every 100 ms update period), with seeded noise; each process
 * is sampled at its own phase of the sample period (model_samples.c).
 *
 * Times are scenario µs (t = 0 at scenario start). No allocation after sim_model_new().
 * Not thread-safe: the caller holds the simulator lock.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

/* The power sensor's update period: readings change at multiples of it. */
#define SIM_POWER_UPDATE_US UINT64_C(100000)

struct sim_sample {
    uint64_t t_us; /* the process's sample boundary, scenario µs */
    uint32_t proc; /* index into the GPU model's procs */
    uint32_t sm;   /* percent, average over the period */
    uint32_t mem;  /* percent */
};

/* One process's entry in a utilisation call: the average over its samples in the call. */
struct sim_util_entry {
    uint64_t t_us; /* its newest sample */
    uint32_t pid;
    uint32_t sm;
    uint32_t mem;
};

struct sim_proc_state {
    const struct sim_process *proc;
    uint32_t slot;         /* index in its GPU model's procs */
    uint32_t group;        /* who it time-slices with: 0, or 1 + its MIG instance's slot */
    uint32_t demand;       /* percent, current */
    uint32_t coef_mw;      /* current coefficient */
    size_t coef_phase;     /* index of coef_mw in the process's list */
    uint64_t next_edge;    /* scenario µs when demand or coefficient may next change */
    uint64_t first_sample; /* this process's first sample boundary */
    uint64_t next_sample;  /* this process's next sample boundary */
    uint64_t util_acc;     /* sampled percent*µs in the current sample period */
    uint64_t slice_credit; /* SM time delivered but not yet a whole slice (percent*µs) */
    bool sliced;           /* it time-sliced with others in the current sample period */
    uint64_t life_util;    /* sampled percent*µs since its start (accounting mode) */
    uint64_t delivered;    /* truth: delivered percent*µs, before the slice overhead */
    uint64_t active_rem;   /* carried remainder of the coef energy (over the GPU's divisor) */
    uint64_t context_rem;  /* carried remainder of the context share (over n_alive) */
    uint64_t active_nj;    /* ground truth: coef energy plus context share */
    uint64_t context_nj;   /* of which context share */
    bool running;          /* start <= t < stop */

    /* scratch of one utilisation call (model_samples.c) */
    uint64_t call_mark;
    uint64_t call_last;
    uint64_t call_sm, call_mem;
};

/* What the power sensor saw: one entry per completed update period (model_report.c). */
struct sim_sensor {
    uint64_t next_update;   /* end of the current update period */
    uint64_t sensed_nj;     /* energy drawn in the sensed part of the current period */
    uint64_t *periods;      /* sensed energy of the latest completed periods, a ring */
    size_t cap, head;       /* ring, always full (idle before t = 0): oldest at head */
    uint64_t busy_us;       /* time with any delivered SM in the current period (drift) */
    uint64_t drift_uw;      /* idle drift now, in µW */
    uint64_t drift_rem;     /* carried sub-nJ remainder of the drift energy */
    uint64_t drift_keep_q;  /* drift's decay per update period, as a fraction of 2^32 */
    uint64_t next_step;     /* the energy counter's next step */
    uint64_t stepped_total; /* GPU total at the last step */
    uint64_t before_nj;     /* idle drawn from the last step before t = 0 to t = 0 */
};

/* DCGM's profiling module as nv-hostengine runs it (model_profiling.c): while a client
 * watches, at every multiple of the watch period it samples the busy share of each group's
 * SMs (the whole GPU, or each MIG instance) over the period just ended. */
#define SIM_PROF_RING 64u
struct sim_prof_sample {
    uint64_t t_us;                        /* the period's end, scenario µs */
    uint32_t active_ppm[SIM_MAX_MIG + 1]; /* per group (model.h, group_busy) */
};

struct sim_profiling {
    uint64_t period;                     /* 0: nobody watches */
    uint64_t next;                       /* the next sample */
    uint64_t last_busy[SIM_MAX_MIG + 1]; /* group_busy at the previous sample */
    struct sim_prof_sample ring[SIM_PROF_RING];
    size_t head, len; /* ring: oldest at head */
};

struct sim_gpu_model {
    const struct sim_gpu *gpu;
    const struct sim_scenario *sc;
    unsigned index;
    uint64_t t; /* integrated up to here */
    uint64_t sample_period;

    size_t n_procs; /* every process ever on this GPU, by start time */
    struct sim_proc_state **procs;
    size_t next_start; /* first of procs not yet started */
    size_t n_active;   /* started and not yet flushed by their last sample */
    struct sim_proc_state **active;
    uint32_t sum_demand; /* of every group */
    uint32_t n_alive;    /* running processes (they hold a context) */
    /* Per group: MIG instances have SMs of their own and never time-slice with each other;
     * the processes of one instance (or of a GPU without MIG, group 0) do. */
    uint32_t group_demand[SIM_MAX_MIG + 1];
    uint32_t group_working[SIM_MAX_MIG + 1]; /* running with non-zero demand */
    uint64_t group_busy[SIM_MAX_MIG + 1];    /* cumulative percent * µs of its SMs busy (GPM) */

    uint64_t idle_nj;         /* idle and drift: nobody's */
    uint64_t drift_nj;        /* of which drift */
    uint64_t active_nj;       /* every process's truth */
    uint64_t context_nj;      /* of which context-idle */
    uint64_t counter_base_nj; /* total at the last counter reset */
    uint64_t counter_offset_mj;
    size_t next_fault;
    struct sim_sensor sensor;

    struct sim_sample *ring; /* oldest first from ring_head */
    size_t ring_cap;
    size_t ring_head;
    size_t ring_len;
    uint64_t ring_floor; /* newest sample dropped from the ring: nothing is known up to it */
    uint64_t call_mark;  /* utilisation calls so far (model_samples.c) */

    bool list_grow_pending; /* fault list-grows not yet delivered */
    struct sim_profiling prof;
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

/* What a group's coefficients and demands are divided by: 100, or the sum when time-sliced. */
static inline uint64_t sim_group_divisor(const struct sim_gpu_model *g, uint32_t group) {
    return g->group_demand[group] > 100 ? g->group_demand[group] : 100;
}

/* GPU total (idle + every process's truth) in nJ. */
static inline uint64_t sim_model_total_nj(const struct sim_gpu_model *g) {
    return g->idle_nj + g->active_nj;
}

/* model_report.c: what nvmlDeviceGetPowerUsage and nvmlDeviceGetTotalEnergyConsumption
 * return now (mW; mJ with resets applied). */
uint32_t sim_model_power_mw(const struct sim_gpu_model *g);
uint64_t sim_model_counter_mj(const struct sim_gpu_model *g);

/* model_samples.c: the utilisation call. Counts the entries for the samples newer than
 * `after`; when put is not NULL, hands put() each entry, k = 0, 1, ..., in time order. */
typedef void sim_util_put_fn(void *ctx, size_t k, const struct sim_util_entry *e);
size_t sim_model_util_entries(struct sim_gpu_model *g, uint64_t after, sim_util_put_fn *put,
                              void *ctx);

/* model_profiling.c: starts sampling the groups' SM activity every period µs from the next
 * multiple of it (0: stops), forgetting earlier samples. */
void sim_model_watch_profiling(struct sim_gpu_model *g, uint64_t period);

/* Process state i, in m->procs (the scenario's order), for ground truth lookups. */
static inline const struct sim_proc_state *sim_model_proc(const struct sim_model *m, size_t i) {
    return &m->procs[i];
}
