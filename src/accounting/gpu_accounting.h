/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "attribution.h"
#include "gpu.h"
#include "identity.h"
#include "intensity.h"
#include "ledger.h"
#include "ledger_state.h"

/*
 * GPU accounting: turns each tick's NVML readings into exact per-process energy in the
 * ledger, following the attribution rule of docs/ATTRIBUTION.md. One window per device
 * and tick: (previous tick, this tick].
 */

/* One GPU window as the split saw it, for `joulestat replay --trace` (the baselines of
 * scripts/accuracy-score are computed from it). Arrays of n, valid during the call. */
struct gpu_window_trace {
    unsigned gpu;
    uint64_t t0_us, t1_us;
    uint64_t energy_uj, idle_uj;
    size_t n;
    const struct ledger_process *const *procs;
    const uint64_t *activity; /* SM activity, percent-microseconds */
};
typedef void (*gpu_window_observer_fn)(void *userdata, const struct gpu_window_trace *w);

struct gpu_accounting_options {
    enum idle_policy idle_policy;
    double idle_power_watts;            /* < 0: learn it from idle windows */
    double max_power_watts;             /* plausibility bound for counter deltas */
    bool sm_share_only;                 /* --gpu-split=sm-share: no learned intensity */
    struct intensity_options intensity; /* zero: the defaults */
    gpu_window_observer_fn observer;    /* optional: called after each split window */
    void *observer_userdata;
};

struct gpu_accounting;

int gpu_accounting_new(const struct gpu_accounting_options *o, struct gpu_accounting **ret);
struct gpu_accounting *gpu_accounting_free(struct gpu_accounting *a);

/*
 * Pods holding GPUs (kubelet pod-resources) for --gpu-idle-policy=allocation. The table is
 * borrowed until the next call (NULL: none known, the policy then works as even).
 * lookup_uid, when set, gives a pod's UID from its namespace and name (Kubernetes API);
 * it returns 0 and a string valid until the next call, -ENOENT, or -ESRCH for a pod that
 * has finished (Succeeded or Failed): it holds no GPU, whatever the kubelet still lists.
 */
struct gpu_alloc_table;
typedef int (*pod_uid_lookup_fn)(void *userdata, const char *namespace_, const char *pod,
                                 const char **ret_uid);
void gpu_accounting_set_allocations(struct gpu_accounting *a, const struct gpu_alloc_table *t,
                                    pod_uid_lookup_fn lookup_uid, void *userdata);

void gpu_accounting_set_observer(struct gpu_accounting *a, gpu_window_observer_fn fn,
                                 void *userdata);

/* Between two ticks: integrates the power polled from GPUs without an energy counter
 * (gpu_source_poll()), so their energy is not the trapezoid of one reading a window. now_ns
 * is monotonic time. */
void gpu_accounting_poll(struct gpu_accounting *a, const struct gpu_poll_reading *polls, size_t n,
                         uint64_t now_ns);

/* Each GPU's raw energy counter as last read and its idle observations (ret:
 * LEDGER_MAX_GPUS entries), for the saved state (ledger_state.h). */
void gpu_accounting_baselines(const struct gpu_accounting *a, struct gpu_baseline *ret);
/* After a restart, before the first tick: each GPU with a saved baseline measures its first
 * window from it, and that window's energy, drawn while joulestat was not running, is
 * booked as unattributed downtime; its idle power is known from the saved observations.
 * Both only if the GPU at that index has the saved UUID (gpu_tick_stats.replaced_gpus). */
void gpu_accounting_restore_baselines(struct gpu_accounting *a, const struct gpu_baseline *b);

struct gpu_tick_stats {
    unsigned devices_down;
    unsigned counter_resets;
    unsigned counter_glitches;
    unsigned allocation_fallbacks; /* windows under `allocation` with no holder known */
    unsigned replaced_gpus;        /* another GPU than the state saved: its state not used */
    unsigned swapped_gpus;         /* another GPU at an index while running: counted anew */
    unsigned clock_steps;          /* windows over which the wall clock stepped: no_data */
};

/*
 * Accounts one tick. now_us is the window end in the sample clock (the wall clock, as NVML
 * stamps its samples), now_ns the same instant in monotonic time: windows are as long as
 * it says, and one over which the two disagree (the wall clock stepped) is booked as
 * no_data. Returns 0 or -ENOMEM / -EINVAL (an internal inconsistency; the
 * window's energy is then kept as unattributed no_data, never lost).
 */
int gpu_accounting_tick(struct gpu_accounting *a, const struct gpu_device_reading *devices,
                        size_t n_devices, uint64_t now_us, uint64_t now_ns,
                        process_resolve_fn resolve, void *userdata, struct ledger *ledger,
                        struct gpu_tick_stats *ret_stats);
