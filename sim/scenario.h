/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A scenario: the GPUs of a simulated node, the processes that use them and the faults to
 * inject. Plain data produced by the parser (scenario_parse.c) and read by the model; all
 * times are microseconds after scenario start (t = 0), all powers milliwatts.
 * The text format is documented in docs/SCENARIOS.md.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_TIME_NEVER UINT64_MAX
#define SIM_MAX_GPUS 64u
#define SIM_MAX_MIG 7u /* MIG instances per GPU (an A100/H100 has at most 7) */
#define SIM_UUID_MAX 96
#define SIM_NAME_MAX 96
#define SIM_COMM_MAX 16 /* kernel TASK_COMM_LEN: 15 characters and the NUL */
#define SIM_DRIVER_MAX 80
#define SIM_MAX_FAULTS 16u
#define SIM_MAX_COEF_PHASES 16u /* values in one process's coef= list */
#define SIM_PPM 1000000u        /* fractions (duty, overhead, noise) are in parts per million */

enum sim_profile_kind {
    SIM_PROFILE_CONSTANT, /* level */
    SIM_PROFILE_DUTY,     /* level for on_us of every period_us, low otherwise */
    SIM_PROFILE_RAMP,     /* from low to level over ramp_us in 1 ms steps, then level */
};

/* SM demand of a process over its lifetime, in whole percent; time is from process start. */
struct sim_profile {
    enum sim_profile_kind kind;
    uint32_t level;
    uint32_t low;
    uint64_t period_us;
    uint64_t on_us;
    uint64_t phase_us;
    uint64_t ramp_us;
};

enum sim_process_kind {
    SIM_KIND_COMPUTE = 1 << 0,
    SIM_KIND_GRAPHICS = 1 << 1,
    SIM_KIND_MPS = 1 << 2,
};

struct sim_process {
    uint32_t pid;
    uint32_t ppid;
    unsigned gpu;
    char comm[SIM_COMM_MAX];
    uint64_t start_us;
    uint64_t stop_us; /* SIM_TIME_NEVER: runs until the end of time */
    char *cgroup;     /* /proc/<pid>/cgroup content, lines ending in '\n' */
    uint64_t memory_bytes;
    struct sim_profile sm;
    uint32_t mem_ratio; /* memUtil = delivered SM% * mem_ratio / 100 */
    /* Board power above idle at 100 % delivered SM: coef_mw[k] from coef_at_us[k] after the
     * process start (coef_at_us[0] = 0, increasing), n_coef >= 1. */
    size_t n_coef;
    uint32_t coef_mw[SIM_MAX_COEF_PHASES];
    uint64_t coef_at_us[SIM_MAX_COEF_PHASES];
    uint32_t kinds; /* enum sim_process_kind bits */
    uint32_t gpu_instance;
    uint32_t compute_instance; /* both 0xFFFFFFFF when the GPU has no MIG */
    unsigned line;             /* where it was declared, for messages */
};

struct sim_mig {
    uint32_t gpu_instance;
    uint32_t compute_instance;
    char uuid[SIM_UUID_MAX];
    char name[SIM_NAME_MAX];
};

enum sim_fault_kind {
    SIM_FAULT_GPU_LOST,      /* device calls fail with GPU_IS_LOST in [at, until) */
    SIM_FAULT_COUNTER_RESET, /* driver reload at `at`: the energy counter restarts from 0 */
    SIM_FAULT_POWER_ERROR,   /* nvmlDeviceGetPowerUsage fails with UNKNOWN in [at, until) */
};

struct sim_fault {
    enum sim_fault_kind kind;
    uint64_t at_us;
    uint64_t until_us;
};

struct sim_gpu {
    char uuid[SIM_UUID_MAX];
    char name[SIM_NAME_MAX];
    uint32_t idle_mw;
    uint32_t max_mw;
    /* Physics (docs/SCENARIOS.md, "The model"); all 0 unless a key sets them. */
    uint32_t context_idle_mw;    /* while any process holds a context; its holders' energy */
    uint32_t idle_drift_mw;      /* idle rises by up to this while anything computes */
    uint64_t idle_drift_tau_us;  /* ... with this time constant, and falls back with it */
    uint32_t slice_overhead_ppm; /* SM time lost to context switches when 2+ have work */
    uint64_t time_slice_us;      /* time-slicing hands out SM time in slices this long */
    /* What NVML reports of the physics; defaults from the GPU's name (scenario_gpu.c). */
    uint64_t power_average_us; /* nvmlDeviceGetPowerUsage window; 0 = instant */
    uint32_t sensor_duty_ppm;  /* part of each update period the power sensor sees */
    uint64_t energy_step_us;   /* the energy counter moves in steps of this; 0 = smooth */
    uint32_t power_noise_ppm;  /* standard deviation of the noise on each power reading */
    uint64_t driver_phase_us;  /* the update and step grids' offset from t = 0 */
    bool energy_supported;
    bool mig;
    bool gpm;                   /* GPM (nvmlGpm*): Hopper and later by default, key gpm= */
    bool accounting;            /* accounting mode (nvidia-smi -am 1); forced off by MIG */
    uint32_t accounting_buffer; /* processes the accounting buffer keeps, newest last */
    uint32_t compute_mode;
    uint64_t energy_start_mj; /* counter value at t = 0 (energy since the driver loaded) */
    uint64_t memory_total;
    uint32_t pci_bus;
    uint32_t minor;
    bool list_grows_once; /* fault: first process-list fill call says INSUFFICIENT_SIZE */
    bool no_permission;   /* fault: its handle refused (a device cgroup: NO_PERMISSION) */
    size_t n_mig;
    struct sim_mig mig_instances[SIM_MAX_MIG];
    size_t n_faults;
    struct sim_fault faults[SIM_MAX_FAULTS]; /* sorted by at_us */
};

enum sim_sample_phase {
    SIM_SAMPLE_PHASE_ALIGNED, /* every process sampled at k * sample-period */
    SIM_SAMPLE_PHASE_SPREAD,  /* each process its own phase in the period, from pid and seed */
};

/* What one utilisation call returns of the samples newer than lastSeenTimeStamp. */
enum sim_util_entries {
    SIM_UTIL_EVERY_SAMPLE, /* each of them */
    SIM_UTIL_PER_PROCESS,  /* one entry per process: their average, stamped with the newest */
};

struct sim_scenario {
    char name[SIM_NAME_MAX];
    char driver[SIM_DRIVER_MAX];
    uint64_t duration_us;
    uint64_t sample_period_us;
    enum sim_sample_phase sample_phase;
    enum sim_util_entries util_entries;
    uint64_t seed;      /* power noise and sample phases; the same seed replays the same run */
    uint64_t uptime_us; /* node uptime at t = 0 (for /proc/stat btime and starttime) */
    bool dcgm;          /* the node runs DCGM's nv-hostengine (sim/dcgm_engine.c), key dcgm= */
    size_t n_gpus;
    struct sim_gpu *gpus;
    size_t n_procs;
    struct sim_process *procs; /* sorted by start_us */
};

/*
 * Parses scenario text. `origin` names the text in messages (a file name). On a syntax or
 * consistency error returns -EINVAL and writes "origin:LINE: what is wrong" into err (if
 * err_size > 0); -ENOMEM on allocation failure. ret_scenario is written only on success.
 */
int sim_scenario_parse(const char *text, const char *origin, struct sim_scenario **ret_scenario,
                       char *err, size_t err_size);

/* Reads and parses a file (at most 16 MiB). -errno from reading, or as above. */
int sim_scenario_load(const char *path, struct sim_scenario **ret_scenario, char *err,
                      size_t err_size);

struct sim_scenario *sim_scenario_free(struct sim_scenario *s);

/* True when the GPU is lost at time t (scenario µs). */
bool sim_gpu_lost_at(const struct sim_gpu *g, uint64_t t);
/* Whether a power-error fault holds at scenario time t. */
bool sim_gpu_power_error_at(const struct sim_gpu *g, uint64_t t);
