/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A fake libnvidia-ml for the NVML source tests. The test dlopen()s the same library file the
 * source loads, resolves fake_nvml_state() and edits the state between samples: every answer
 * comes from here, every call is counted. A zeroed state means "everything succeeds, no GPUs".
 *
 * Built in variants (tests/nvml.cmake) that leave symbols out, to test the loader's fallbacks:
 *   FAKE_NVML_MINIMAL  no _v3 lists, no MPS list, no ProcessesUtilizationInfo, no energy.
 *   FAKE_NVML_NO_COUNT no nvmlDeviceGetCount_v2 / nvmlDeviceGetCount (a required symbol).
 *   FAKE_NVML_V3_ONLY  process lists only as _v3 (no _v2), for the driver-535 32-byte stride.
 *
 * The _v3 lists write 32-byte entries when driver_version is 535.43 - 535.86, like those
 * drivers did.
 */

#include <stdbool.h>

#include "nvml_abi.h"

#define FAKE_MAX_DEVICES 4
#define FAKE_MAX_PROCS 256
#define FAKE_MAX_SAMPLES 64

enum fake_list { FAKE_COMPUTE, FAKE_GRAPHICS, FAKE_MPS, FAKE_N_LISTS };

struct fake_proc {
    unsigned int pid;
    unsigned long long used_memory; /* NVML_VALUE_NOT_AVAILABLE_ULL for "unknown" */
};

struct fake_sample {
    unsigned int pid;
    unsigned long long timestamp_us;
    unsigned int sm, mem, enc, dec;
};

struct fake_calls {
    unsigned handle, uuid, energy, power, mig, compute_mode;
    unsigned lists[FAKE_N_LISTS];
    unsigned util_legacy, util_info;
};

struct fake_device {
    char uuid[96];
    char name[96];
    bool lost; /* every call on this device (and its handle lookup) says GPU_IS_LOST */
    nvmlReturn_t handle_ret;
    nvmlReturn_t uuid_ret;

    nvmlReturn_t energy_ret;
    unsigned long long energy_mj;
    nvmlReturn_t power_ret;
    unsigned int power_mw;
    nvmlReturn_t mig_ret;
    unsigned int mig_mode;
    nvmlReturn_t compute_mode_ret;
    unsigned int compute_mode;

    nvmlReturn_t list_ret[FAKE_N_LISTS];
    unsigned int n_procs[FAKE_N_LISTS];
    struct fake_proc procs[FAKE_N_LISTS][FAKE_MAX_PROCS];
    /* For this many calls of a list, FAKE_GROWTH more processes start just before it answers
     * (a list that grows between the size query and the fill). */
    unsigned int grow_calls[FAKE_N_LISTS];
    /* Every call answers INSUFFICIENT_SIZE asking for more than it was given. */
    bool always_insufficient[FAKE_N_LISTS];

    nvmlReturn_t util_ret;      /* legacy nvmlDeviceGetProcessUtilization */
    nvmlReturn_t util_info_ret; /* nvmlDeviceGetProcessesUtilizationInfo */
    unsigned int n_samples;
    struct fake_sample samples[FAKE_MAX_SAMPLES];
    /* Legacy quirk: the size query answers this fixed capacity (0 means 100) and the fill
     * appends garbage slots (pid 0, smUtil 37100, far-future timestamp) after real samples. */
    unsigned int legacy_capacity;
    bool legacy_garbage;
    unsigned long long last_seen_arg; /* lastSeenTimeStamp of the latest utilisation call */
};

#define FAKE_GROWTH 40u
#define FAKE_GROWN_PID_BASE 90000u

struct fake_nvml_state {
    nvmlReturn_t init_ret;
    int init_refs;
    nvmlReturn_t count_ret;
    unsigned int n_devices;
    char driver_version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE]; /* "" means "550.54.14" */
    bool error_string_null;                                      /* nvmlErrorString returns NULL */
    struct fake_device dev[FAKE_MAX_DEVICES];
    struct fake_calls calls[FAKE_MAX_DEVICES];
};

typedef struct fake_nvml_state *fake_nvml_state_fn(void);
