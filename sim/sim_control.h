/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Control API of the simulated GPU node (libnvidia-ml.so.1 built from sim/). joulestat's
 * `replay` resolves these with dlsym() from the library it loaded as NVML; tests do the same.
 * All functions are thread-safe, return 0 or -errno, and write ret_* only on success.
 *
 * Clocks: times are µs since the Unix epoch, in the simulator's clock. By default that is
 * CLOCK_REALTIME and scenario t = 0 is the first nvmlInit after the scenario was loaded.
 * After joulestat_sim_use_virtual_clock() it is a virtual clock that stands still until
 * set or advanced, and scenario t = 0 is JOULESTAT_SIM_EPOCH_US. Utilisation sample
 * timestamps returned by NVML calls are in the same clock.
 */

#include <stddef.h>
#include <stdint.h>

/* Scenario t = 0 on the virtual clock: 2023-11-14T22:13:20Z. */
#define JOULESTAT_SIM_EPOCH_US UINT64_C(1700000000000000)
/* Under the fake procfs (joulestat_sim_set_procfs()): each program's /proc files as at its
 * start, kept after it exits, for a reader playing the exec watcher (sim_procfs.h). */
#define JOULESTAT_SIM_EXEC_RECORDS ".exec"

struct joulestat_sim_gpu_truth {
    uint64_t time_us;    /* the simulator time these values are for */
    uint64_t idle_uj;    /* idle power (drift included) integrated since t = 0: nobody's */
    uint64_t active_uj;  /* sum of every process's truth since t = 0 */
    uint64_t total_uj;   /* everything the GPU drew since t = 0 (counter resets do not matter) */
    uint64_t context_uj; /* of active_uj: context-idle, given to the processes holding it */
    uint64_t drift_uj;   /* of idle_uj: the idle drift */
    /* The same in nanojoules, the model's unit: idle_nj + active_nj == total_nj exactly, and
     * active_nj is the sum of the processes' active_nj. */
    uint64_t idle_nj, active_nj, total_nj;
};

struct joulestat_sim_process_info {
    uint32_t pid;
    uint32_t gpu;
    uint64_t start_us;    /* simulator clock */
    uint64_t stop_us;     /* simulator clock; UINT64_MAX when it never stops */
    uint64_t start_ticks; /* field 22 of /proc/<pid>/stat in the fake procfs */
    uint64_t active_uj;   /* ground truth: coef * delivered SM plus its context-idle share */
    char comm[16];
    uint64_t context_uj; /* of active_uj: its share of context-idle */
    uint64_t active_nj;  /* active_uj in nanojoules */
    uint64_t sm_us;      /* SM time delivered to it (µs at 100 %), before the slice overhead */
};

/* Loads a scenario file (or text) and starts it over; the previous one keeps running if
 * this fails. -EINVAL with a message ("file:line: ...") from joulestat_sim_last_error(). */
int joulestat_sim_load(const char *path);
int joulestat_sim_load_string(const char *text, const char *origin);
/* Copies the last load error message (empty if none). */
int joulestat_sim_last_error(char *buf, size_t size);

/* Switches to the virtual clock (now = JOULESTAT_SIM_EPOCH_US) and restarts the scenario. */
int joulestat_sim_use_virtual_clock(void);
/* Virtual clock only (-EPERM otherwise); time never goes back (-EINVAL). */
int joulestat_sim_set_time(uint64_t now_us);
int joulestat_sim_advance(uint64_t delta_us);
/* Current simulator time. -ENODATA on the real clock before the first nvmlInit. */
int joulestat_sim_get_time(uint64_t *ret_now_us);
/* Scenario t = 0 and its declared duration. -ENODATA as above, -ENOENT without scenario. */
int joulestat_sim_get_span(uint64_t *ret_start_us, uint64_t *ret_duration_us);

/* Keeps a fake procfs in dir (created if missing) in step with the scenario; NULL stops. */
int joulestat_sim_set_procfs(const char *dir);

/* Ground truth up to the current time. -ENOENT for an unknown gpu or process. */
int joulestat_sim_gpu_truth(unsigned gpu, struct joulestat_sim_gpu_truth *ret);
/* The process with this pid on this gpu whose start is within one clock tick (10 ms) of
 * start_us, so a start time computed from /proc/<pid>/stat and btime finds it. */
int joulestat_sim_process_truth(unsigned gpu, uint32_t pid, uint64_t start_us,
                                uint64_t *ret_active_uj);
/* Every (process, gpu) pair of the scenario, by start time. */
int joulestat_sim_process_count(size_t *ret_n);
int joulestat_sim_process_info(size_t index, struct joulestat_sim_process_info *ret);

/* Function types, for dlsym() users. */
typedef int joulestat_sim_load_fn(const char *path);
typedef int joulestat_sim_load_string_fn(const char *text, const char *origin);
typedef int joulestat_sim_last_error_fn(char *buf, size_t size);
typedef int joulestat_sim_use_virtual_clock_fn(void);
typedef int joulestat_sim_set_time_fn(uint64_t now_us);
typedef int joulestat_sim_advance_fn(uint64_t delta_us);
typedef int joulestat_sim_get_time_fn(uint64_t *ret_now_us);
typedef int joulestat_sim_get_span_fn(uint64_t *ret_start_us, uint64_t *ret_duration_us);
typedef int joulestat_sim_set_procfs_fn(const char *dir);
typedef int joulestat_sim_gpu_truth_fn(unsigned gpu, struct joulestat_sim_gpu_truth *ret);
typedef int joulestat_sim_process_truth_fn(unsigned gpu, uint32_t pid, uint64_t start_us,
                                           uint64_t *ret_active_uj);
typedef int joulestat_sim_process_count_fn(size_t *ret_n);
typedef int joulestat_sim_process_info_fn(size_t index, struct joulestat_sim_process_info *ret);
