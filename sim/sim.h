/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The simulator's one global state, behind one mutex: NVML calls and control calls may come
 * from several threads (the sampler and `joulestat check`). Every entry point takes the lock
 * with SIM_LOCKED, which releases it on return.
 *
 * Clock: scenario t = 0 is t0_us (µs since the epoch). On the real clock t0 is the first
 * nvmlInit after a scenario is loaded and "now" is CLOCK_REALTIME; on the virtual clock t0 is
 * JOULESTAT_SIM_EPOCH_US and now moves only when the control API says so.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "macro.h"
#include "model.h"
#include "nvml_abi.h"
#include "sim_procfs.h"
#include "scenario.h"

#define SIM_ENV_SCENARIO "JOULESTAT_SIM_SCENARIO"
/* Unix seconds of the scenario's t = 0 on the real clock (default: the first nvmlInit). */
#define SIM_ENV_START_TIME "JOULESTAT_SIM_START_TIME"
#define SIM_ENV_PROCFS "JOULESTAT_SIM_PROCFS"
/* A file that gets the thread CPU time spent inside the library's calls (decimal ns,
 * cumulative, rewritten in place at most every 100 ms), so a benchmark can tell the
 * simulated driver's cost from the exporter's. Unset: nothing is measured. */
#define SIM_ENV_CPU_FILE "JOULESTAT_SIM_CPU_FILE"
#define SIM_ERROR_MAX 512

struct sim_state {
    pthread_mutex_t lock;
    struct sim_scenario *sc;
    struct sim_model *model;
    struct sim_procfs *procfs;
    bool virtual_clock;
    bool started; /* t0_us is known */
    uint64_t t0_us;
    uint64_t virtual_now_us;
    uint64_t last_t; /* latest scenario time seen: the real clock may step back, we do not */
    unsigned init_count;
    bool ever_initialized; /* nvmlShutdown() past the count is no error then */
    char error[SIM_ERROR_MAX];

    /* $JOULESTAT_SIM_CPU_FILE: checked once (cpu_meter_checked); -1 when unset. */
    bool cpu_meter_checked;
    int cpu_fd;
    uint64_t cpu_enter_ns;      /* thread CPU clock when the current call took the lock */
    uint64_t cpu_total_ns;      /* inside the library, all calls so far */
    uint64_t cpu_read_cost_ns;  /* one reading of the thread CPU clock (cpu_meter_leave) */
    uint64_t cpu_written_at_ns; /* monotonic time of the last write to cpu_fd */
};

struct sim_state *sim_lock(void);
void sim_unlockp(struct sim_state **st);
#define SIM_LOCKED _cleanup_(sim_unlockp) struct sim_state *st = sim_lock()

/* Replaces the scenario (takes ownership; frees it on failure) and restarts the model. */
int sim_install(struct sim_state *st, struct sim_scenario *sc);
/* Loads the scenario named by $JOULESTAT_SIM_SCENARIO (and $JOULESTAT_SIM_PROCFS) when none is
 * loaded. -ENOENT when the variable is unset; parse errors as sim_scenario_load(). */
int sim_load_from_env(struct sim_state *st);
/* Starts the real clock at the current time if it has not started. */
int sim_start_clock(struct sim_state *st);
/* Switches to the virtual clock and restarts the scenario at t = 0. */
int sim_use_virtual_clock(struct sim_state *st);
/* Maintains a fake procfs in dir (NULL: stop). */
int sim_set_procfs(struct sim_state *st, const char *dir);

/* Current scenario time (µs since t0), never going back. Requires started. */
uint64_t sim_now(struct sim_state *st);
/* Brings one GPU (or all) and the procfs tree up to the current time. */
void sim_sync_gpu(struct sim_state *st, unsigned gpu);
void sim_sync_all(struct sim_state *st);

/* The device behind an NVML handle, checked and brought up to now. */
struct sim_dev {
    unsigned gpu;
    int mig; /* index into the GPU's MIG instances, or -1 for the whole GPU */
    const struct sim_gpu *sg;
    struct sim_gpu_model *g;
    uint64_t t; /* scenario time of this call */
};

/* NVML_SUCCESS, UNINITIALIZED, INVALID_ARGUMENT (bad handle) or GPU_IS_LOST. */
nvmlReturn_t sim_device(struct sim_state *st, nvmlDevice_t device, struct sim_dev *ret);
/* Like sim_device without the lost check (for calls that work on a lost GPU). */
nvmlReturn_t sim_device_any(struct sim_state *st, nvmlDevice_t device, struct sim_dev *ret);

nvmlDevice_t sim_gpu_handle(unsigned gpu);
nvmlDevice_t sim_mig_handle(unsigned gpu, unsigned slot);

/* Copies a string into an NVML caller buffer: INSUFFICIENT_SIZE when it does not fit. */
nvmlReturn_t sim_copy_out(char *buf, unsigned int length, const char *s);
