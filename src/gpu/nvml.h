/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "gpu.h"

/*
 * What the NVML implementation of gpu.h knows about each device's features, for
 * gpu_source_describe() and tests. A feature that answered "not supported", "no permission"
 * or that the library lacks is never called again on that device.
 */
enum gpu_feature {
    GPU_FEATURE_ENERGY,
    GPU_FEATURE_POWER,
    GPU_FEATURE_COMPUTE_PROCESSES,
    GPU_FEATURE_GRAPHICS_PROCESSES,
    GPU_FEATURE_MPS_PROCESSES,
    GPU_FEATURE_UTILIZATION_INFO,   /* nvmlDeviceGetProcessesUtilizationInfo (driver 550+) */
    GPU_FEATURE_UTILIZATION_LEGACY, /* nvmlDeviceGetProcessUtilization */
    GPU_FEATURE_MIG_MODE,
    GPU_FEATURE_COMPUTE_MODE,
    GPU_FEATURE_MIG_INSTANCES, /* MIG device handles and their GPU instance ids */
    GPU_FEATURE_MIG_ACTIVITY,  /* GPM: SM activity per GPU instance (Hopper and later) */
    GPU_FEATURE_ACCOUNTING,    /* accounting mode: finished processes' lifetimes */
    _GPU_FEATURE_MAX,
};

enum gpu_feature_state {
    GPU_FEATURE_UNTRIED,       /* not called yet */
    GPU_FEATURE_WORKS,         /* last call succeeded */
    GPU_FEATURE_FAILING,       /* last call failed with a transient error; still called */
    GPU_FEATURE_ABSENT,        /* the NVML library lacks the function */
    GPU_FEATURE_UNSUPPORTED,   /* the device or driver does not support it */
    GPU_FEATURE_NO_PERMISSION, /* NVML refused it to this user */
};

/* State of one feature of device `index` (as in gpu_source_sample()'s array). */
enum gpu_feature_state gpu_source_feature_state(const struct gpu_source *s, size_t index,
                                                enum gpu_feature f);

/* The driver version string NVML reported at open, "" if unknown. */
const char *gpu_source_driver_version(const struct gpu_source *s);

const char *gpu_feature_name(enum gpu_feature f);
const char *gpu_feature_state_name(enum gpu_feature_state st);
