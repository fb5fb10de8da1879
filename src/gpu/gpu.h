/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * src/gpu, the GPU source: what the sampler gets from the GPUs each tick, whatever the
 * vendor library behind it (gpu_backend.h: NVML today, nvml.c). Plain data; the arrays
 * are owned by the source and stay valid until the next gpu_source_sample() or close.
 * The accounting (src/accounting/gpu_accounting.h) reads struct gpu_device_reading and
 * nothing else.
 *
 * Contract: the vendor library is loaded with dlopen() (dl_symbols.h), so joulestat runs
 * without it; a lost GPU is reported down and retried with backoff, never an error of the
 * whole source; a feature a device lacks is a validity bit, never a zero; the source
 * never logs above debug. Other folders include this header only (the simulated node
 * also nvml_abi.h, the ABI it implements).
 *
 * Time: per-process utilisation samples are stamped by the driver in host real-time
 * microseconds. The sampler passes the window end in the same clock (CLOCK_REALTIME, or
 * the simulator's virtual clock during replay) so the two can be compared.
 */

#define GPU_UUID_MAX 96
#define GPU_NAME_MAX 96

enum gpu_process_kind {
    GPU_PROCESS_COMPUTE = 1 << 0,
    GPU_PROCESS_GRAPHICS = 1 << 1,
    GPU_PROCESS_MPS = 1 << 2,
};

#define GPU_INSTANCE_NONE UINT32_MAX

struct gpu_process {
    uint32_t pid;
    uint32_t kinds; /* enum gpu_process_kind bits: lists it appeared in */
    bool memory_valid;
    uint64_t used_memory_bytes;
    uint32_t gpu_instance; /* MIG GPU instance id, GPU_INSTANCE_NONE without MIG */
    uint32_t compute_instance;
};

/* A process the driver's accounting buffer says finished since the last reading
 * (accounting mode, nvidia-smi -am 1): its lifetime as the driver kept it. */
struct gpu_finished_process {
    uint32_t pid;
    uint64_t start_us;  /* CPU real-time µs, the sample clock */
    uint64_t active_us; /* how long its context was active */
    uint32_t gpu_util;  /* percent of its lifetime with a kernel running */
    uint64_t max_memory_bytes;
};

/* A process running at the reading, new since the last one and not sampled yet, as
 * accounting mode reports it so far: its activity is in this window, its first
 * utilisation sample still to come. */
struct gpu_unsampled_process {
    uint32_t pid;
    uint64_t start_us; /* CPU real-time µs, the sample clock */
    uint32_t gpu_util; /* percent of its life so far with a kernel running */
};

#define GPU_MIG_PROFILE_MAX 32

/* Who measured the MIG instances' activity of a reading (any of them): nobody, NVML's GPM,
 * or DCGM. */
enum gpu_activity_source {
    GPU_ACTIVITY_NONE,
    GPU_ACTIVITY_GPM,
    GPU_ACTIVITY_DCGM,
};

/* One MIG GPU instance of a MIG-enabled device: its size and what it did in the window. */
struct gpu_mig_instance {
    uint32_t gpu_instance;
    char uuid[GPU_UUID_MAX]; /* "MIG-<uuid>" of its (first) compute instance, "" unknown */
    unsigned slices;         /* compute slices of the GPU's 7 (the profile's "3g"); 0 unknown */
    char profile[GPU_MIG_PROFILE_MAX]; /* "3g.20gb", "" unknown */
    bool activity_valid;               /* GPM or DCGM measured the window */
    double sm_activity;                /* share of the instance's SMs busy over the window, 0..1 */
};

struct gpu_util_sample {
    uint32_t pid;
    uint32_t sm_util;  /* percent */
    uint32_t mem_util; /* percent */
    uint32_t enc_util;
    uint32_t dec_util;
    uint64_t timestamp_us;
};

struct gpu_device_reading {
    unsigned index;
    char uuid[GPU_UUID_MAX];
    char name[GPU_NAME_MAX];

    bool up;   /* false: lost or failing this tick; the fields below are not valid */
    int error; /* -errno when !up; -EACCES/-EPERM: its handle refused (not ours to read) */

    bool energy_valid;  /* total-energy counter supported */
    uint64_t energy_mj; /* cumulative since driver load */
    bool power_valid;
    uint32_t power_mw;

    bool mig_enabled;
    int compute_mode; /* NVML compute mode value, -1 unknown */
    /* MIG-enabled: its GPU instances, and where their activity came from (GPM where the
     * device has it, else DCGM where the node runs its engine). */
    size_t n_mig;
    const struct gpu_mig_instance *mig;
    enum gpu_activity_source mig_activity_source;

    size_t n_processes;
    const struct gpu_process *processes;

    bool accounting; /* accounting mode is on: finished and unsampled are read */
    size_t n_finished;
    const struct gpu_finished_process *finished;
    size_t n_unsampled;
    const struct gpu_unsampled_process *unsampled;

    bool utils_supported; /* per-process utilisation works on this device */
    size_t n_utils;
    const struct gpu_util_sample *utils; /* samples newer than the last call's */
};

struct gpu_source_options {
    /* NVML's library (--nvml-library); NULL: libnvidia-ml.so.1, then libnvidia-ml.so */
    const char *library_path;
    /* DCGM for MIG instance activity without GPM (dcgm.h): --dcgm-library (NULL: libdcgm's
     * sonames) and --dcgm (NULL: 127.0.0.1; "off": never asked) */
    const char *dcgm_library;
    const char *dcgm_address;
};

struct gpu_source;

/*
 * Opens the first backend whose library loads and finds devices, and lists them. Returns 0,
 * or -errno with *ret_reason (static string or NULL) saying why the GPU source is absent
 * (-ENOENT: no library, -ELIBBAD: a library that cannot be used, -ENODEV: no devices,
 * -ENXIO: init failed). ret_source is written only on success.
 */
int gpu_source_open(const struct gpu_source_options *opts, struct gpu_source **ret_source,
                    const char **ret_reason);

/* Reads every device once. now_us is the window end in the sample clock (see above).
 * A lost GPU is reported with up = false and retried with backoff; never fails as a whole
 * except -ENOMEM. */
int gpu_source_sample(struct gpu_source *s, uint64_t now_us,
                      const struct gpu_device_reading **ret_devices, size_t *ret_n);

/* What a poll between two readings gives the accounting: the power of a device without an
 * energy counter, integrated at the poll rate instead of once a window. */
struct gpu_poll_reading {
    unsigned index;
    bool power_valid;
    uint32_t power_mw;
};

/* Between two gpu_source_sample() calls: keeps every device's new utilisation samples
 * for the next one, and reads the power of devices without an energy counter. Cheap (one
 * or two driver calls per device); errors wait for the next sample. *ret_polls (one per
 * device polled) is valid until the next call. */
void gpu_source_poll(struct gpu_source *s, uint64_t now_us,
                     const struct gpu_poll_reading **ret_polls, size_t *ret_n);

struct gpu_source *gpu_source_close(struct gpu_source *s);

/* One line per feature that works or not, for `joulestat check` (appends to a strbuf). */
struct strbuf;
void gpu_source_describe(const struct gpu_source *s, struct strbuf *out);
