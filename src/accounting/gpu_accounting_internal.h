/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribution.h"
#include "counter.h"
#include "gpu_accounting.h"
#include "hashmap.h"
#include "idle_power.h"
#include "intensity.h"
#include "process_weights.h"
#include "weights.h"

/* Per-device state carried from one window to the next. */
struct gpu_track {
    bool seen;
    bool window_open; /* a baseline exists: the next reading closes a window */
    bool gap;         /* readings were missing since the last window */
    bool downtime;    /* the counter's baseline is from before a restart */
    /* The GPU whose state was restored here, until checked against the one read. */
    char saved_uuid[SNAP_LABEL_MAX];
    unsigned unnamed_ticks;   /* ticks the restored board went without a UUID read */
    uint64_t window_start_us; /* in the sample clock (the wall clock NVML stamps with) */
    uint64_t window_start_ns; /* monotonic: the wall clock may step (NTP, a VM resumed) */
    struct energy_counter counter;
    /* Monotonic: the counter's last reading taken, and the one before the reading at which
     * it last moved (what it moved by was drawn since; 0: unknown, the window's start). */
    uint64_t energy_read_ns, energy_since_ns;
    bool after_glitch; /* the last reading was a glitch: the next delta spans two windows */
    bool power_primed; /* power integration (no energy counter), in monotonic time */
    uint32_t last_power_mw;
    uint64_t last_power_ns;
    uint64_t power_remainder;
    uint64_t power_polled_uj; /* integrated by polls since the window started */
    struct idle_power idle;
    /* pid + 1 -> start_ticks + 1 of the processes in the last two windows: a process that
     * exited since still has samples to account, but no /proc entry to resolve. */
    struct hashmap pids_now, pids_prev;
    /* The last window's consumers and their ledger entries, valid while the ledger frees
     * no process entry (process_gen): the next window with the same pids in the same
     * order, the steady state, books to them without a lookup per process. */
    size_t n_last, last_cap;
    uint32_t *last_pids;
    struct ledger_process **last_procs;
    uint64_t last_process_gen;
    /* The learned split (gpu_learned.c): the driver's sample period, and the intensity
     * model, made at the first window that needs it (NULL after it could not be). */
    struct sample_period period;
    struct intensity_gpu *intensity;
    bool intensity_failed;
    /* The board's typical idle (gpu_idle_prior.h), looked up once from its name. */
    bool typical_idle_checked, typical_idle_known;
    double typical_idle_w;
};

struct gpu_accounting {
    struct gpu_accounting_options opts;
    struct gpu_track tracks[LEDGER_MAX_GPUS];

    /* Scratch reused by every window, so the tick does not allocate once warm. */
    struct hashmap pid_index; /* pid + 1 -> consumer index + 1 */
    size_t cap;
    uint32_t *pids;
    struct split_consumer *consumers;
    struct ledger_process **procs;
    uint64_t *parts;
    uint64_t *weights; /* SM activity, percent-microseconds */
    uint64_t *mem_weights;
    bool *memory_valid;
    uint32_t *gpu_instance; /* MIG GPU instance id, GPU_INSTANCE_NONE */
    size_t *finished_idx;   /* consumer of each of the reading's finished processes */
    size_t finished_cap;
    size_t *unsampled_idx; /* and of each of its unsampled ones */
    size_t unsampled_cap;
    size_t n_running; /* consumers [0, n_running) are in the running-process list */
    uint64_t *last_sample_us;
    uint64_t *early;
    uint64_t *sampled; /* weights as the samples say, before credit_ahead(): what is learned */
    uint64_t *held_us;
    int64_t *carries;
    struct intensity_consumer *intensity_in;
    struct intensity_scratch intensity_scratch; /* every track's solve, one at a time */
    struct intensity_share *intensity_out;
    size_t samples_cap;
    struct util_sample *samples;
    struct split_scratch split;

    /* Pods holding GPUs (policy allocation) and their scratch: one holder per pod. */
    const struct gpu_alloc_table *allocs;
    pod_uid_lookup_fn lookup_uid;
    void *lookup_userdata;
    size_t holders_cap;
    struct split_consumer *holders;
    uint64_t *holder_parts;
    const struct gpu_alloc **holder_first; /* the pod's first entry in the table */
};

/* What the learned split gives a window besides the consumers' weights. */
struct learned_window {
    enum split_method method;
    uint64_t context_uj; /* the context uplift, for the holders (0: not identifiable) */
    bool idle_known;     /* the learned no-context idle power, when identifiable */
    double idle_watts;
};

/*
 * The window's SM activity per consumer (a->weights, a->mem_weights, a->early), each
 * sample weighted by the interval since its own process's previous sample (the state kept
 * in a->procs[i]->last_sample_us). Returns 0 or -EINVAL.
 */
int learned_activity(struct gpu_accounting *a, struct gpu_track *t, size_t n_samples, size_t n,
                     uint64_t t0_us, uint64_t t1_us, struct weights_stats *ret_stats);

/*
 * Windows shorter than the sample period (gpu_learned.c): running processes not sampled in
 * the window are credited their last utilisation ahead of their samples (a->weights); what
 * the samples said stays in a->sampled for the learner. Call after learned_activity(),
 * before finished_activity(); not for MIG (instance activity).
 */
void credit_ahead(struct gpu_accounting *a, struct gpu_track *t, size_t n_samples, size_t n,
                  uint64_t t0_us, uint64_t t1_us);

/* SM share: each consumer's split weight is its SM activity; the carries are loaded. */
void learned_sm_share(struct gpu_accounting *a, size_t n);

/*
 * The consumers' split weights (a->consumers[i].weight) from the learned intensities and
 * the activity, the time each held a context (a->held_us) and their carries (a->carries).
 * The board's typical idle is the idle prior until idle is observed. Falls back to SM
 * activity when the model cannot be made. Never fails. credited: credit_ahead() ran on
 * the activity (the learner then takes a->sampled).
 */
void learned_weights(struct gpu_accounting *a, struct gpu_track *t, size_t n, bool credited,
                     uint64_t t0_us, uint64_t t1_us, uint64_t energy_uj,
                     struct learned_window *ret);

/*
 * MIG (gpu_mig.c): each consumer's activity (a->weights, percent-microseconds of the whole
 * GPU) from its GPU instance's SM activity times the instance's share of the GPU's compute
 * slices, shared within the instance by memory (or evenly). Without GPM every instance's
 * activity counts as full, so the split follows instance size. Returns whether every
 * instance's activity was measured.
 */
bool mig_activity(struct gpu_accounting *a, const struct gpu_device_reading *d, size_t n,
                  uint64_t dt_us);

/* Energy of the window from the counter, or by integrating power (gpu_window_energy.c).
 * Returns false when the window has no usable energy (first reading, glitch). */
bool window_energy(struct gpu_accounting *a, struct gpu_track *t,
                   const struct gpu_device_reading *d, uint64_t now_ns, uint64_t *ret_uj,
                   struct gpu_tick_stats *stats);

/* Index of pid among the window's consumers, adding it if new (gpu_accounting.c). */
int consumer_index(struct gpu_accounting *a, size_t *n, size_t n_sorted, uint32_t pid, size_t *ret);

/* Accounting mode (gpu_finished.c): the processes the driver says finished since the last
 * reading become consumers of the window, and the unsampled ones are found among them;
 * unsampled_activity() credits a running process never sampled its activity so far, ahead
 * of its samples; finished_activity() gives those that never left a utilisation sample
 * their lifetime utilisation times their active time, less what was credited so, and all
 * the start time the driver kept. Call both after credit_ahead() (credited: it ran), in
 * that order. */
int finished_collect(struct gpu_accounting *a, const struct gpu_device_reading *d, size_t *n,
                     size_t n_sorted);
void unsampled_activity(struct gpu_accounting *a, const struct gpu_device_reading *d, bool credited,
                        uint64_t t1_us);
void finished_activity(struct gpu_accounting *a, struct gpu_track *t,
                       const struct gpu_device_reading *d, bool credited, uint64_t t1_us);
/* Whether the process /proc has at pid now (started then) is not the one the reading says
 * finished at that pid: the pid was taken again since, and its identity is another's. */
bool finished_pid_taken_again(const struct gpu_device_reading *d, uint32_t pid,
                              double start_time_seconds);
/* Whether the reading says a process at pid finished. */
bool finished_has_pid(const struct gpu_device_reading *d, uint32_t pid);

/* The process's MIG instance and profile, the first window it is seen on a MIG GPU. */
void mig_label(struct ledger_process *p, const struct gpu_device_reading *d);

/* --gpu-idle-policy=allocation (gpu_holders.c): the pods holding the GPU, one holder per
 * pod weighted by the ids it holds, into a->holders. Returns 0 or -ENOMEM. */
int holders_collect(struct gpu_accounting *a, const struct gpu_device_reading *d, size_t *ret_n);
/* Books the holders' parts; on failure the parts not booked yet become no_data. */
int holders_book(struct gpu_accounting *a, size_t n, struct ledger_gpu *g, unsigned gpu,
                 uint64_t now_ns, struct ledger *ledger);

/* After a restart (gpu_restart.c), at the first reading of a GPU with a saved UUID: what
 * was restored for its index belongs to the GPU of that UUID. Another board there (replaced
 * while joulestat was down) starts afresh, without the other's idle or a downtime delta
 * between two boards' counters. Returns whether it was another board. */
bool gpu_restart_forget_another(struct gpu_accounting *a, struct gpu_track *t, const char *uuid);
/* Another board at the track's index: its counter, idle power, window and learned model
 * start over, none of the other's carried into it. */
void gpu_track_start_over(struct gpu_accounting *a, struct gpu_track *t);
