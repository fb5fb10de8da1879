/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

#include "nvml_abi.h"

/*
 * NVML loaded with dlopen(): the library handle and one pointer per entry point we call.
 * Optional entry points the library lacks are NULL. Every pointer has the function type of
 * its symbol in nvml_abi.h, checked at compile time when the symbol table is built.
 */
struct nvml_api {
    void *dl;

    /* required */
    nvmlInit_v2_fn *init; /* nvmlInit_v2, else legacy nvmlInit */
    nvmlShutdown_fn *shutdown;
    nvmlDeviceGetCount_v2_fn *device_get_count;
    nvmlDeviceGetHandleByIndex_v2_fn *device_get_handle_by_index;

    /* optional */
    nvmlErrorString_fn *error_string;
    nvmlSystemGetDriverVersion_fn *system_get_driver_version;
    nvmlDeviceGetUUID_fn *device_get_uuid;
    nvmlDeviceGetName_fn *device_get_name;
    nvmlDeviceGetTotalEnergyConsumption_fn *device_get_total_energy;
    nvmlDeviceGetPowerUsage_fn *device_get_power_usage;
    nvmlDeviceGetComputeMode_fn *device_get_compute_mode;
    nvmlDeviceGetMigMode_fn *device_get_mig_mode;
    /* Both versions of each list are kept: the 535.43-535.86 drivers need _v2 (see nvml.c). */
    nvmlDeviceGetComputeRunningProcesses_v3_fn *compute_processes_v3;
    nvmlDeviceGetComputeRunningProcesses_v2_fn *compute_processes_v2;
    nvmlDeviceGetGraphicsRunningProcesses_v3_fn *graphics_processes_v3;
    nvmlDeviceGetGraphicsRunningProcesses_v2_fn *graphics_processes_v2;
    nvmlDeviceGetMPSComputeRunningProcesses_v3_fn *mps_processes_v3;
    nvmlDeviceGetMPSComputeRunningProcesses_v2_fn *mps_processes_v2;
    nvmlDeviceGetProcessUtilization_fn *process_utilization;
    nvmlDeviceGetProcessesUtilizationInfo_fn *processes_utilization_info;
    /* MIG instances and their SM activity (GPM, Hopper and later) */
    nvmlDeviceGetMaxMigDeviceCount_fn *device_get_max_mig_count;
    nvmlDeviceGetMigDeviceHandleByIndex_fn *device_get_mig_handle;
    nvmlDeviceGetGpuInstanceId_fn *device_get_gpu_instance_id;
    nvmlGpmQueryDeviceSupport_fn *gpm_query_support;
    nvmlGpmSampleAlloc_fn *gpm_sample_alloc;
    nvmlGpmSampleFree_fn *gpm_sample_free;
    nvmlGpmMigSampleGet_fn *gpm_mig_sample_get;
    nvmlGpmMetricsGet_fn *gpm_metrics_get;
    /* accounting mode */
    nvmlDeviceGetAccountingMode_fn *accounting_mode;
    nvmlDeviceGetAccountingPids_fn *accounting_pids;
    nvmlDeviceGetAccountingStats_fn *accounting_stats;
};

/*
 * Opens `path`, or when NULL libnvidia-ml.so.1 then libnvidia-ml.so, and resolves the symbol
 * table. Returns 0, -ENOENT (no library), -ELIBBAD (not loadable, or a required symbol is
 * missing) or -ENOMEM, with *ret_reason (static text) saying why. ret_api is written only on
 * success. Does not call nvmlInit.
 */
int nvml_api_open(const char *path, struct nvml_api **ret_api, const char **ret_reason);

/* dlclose()s and frees; accepts NULL, returns NULL. Does not call nvmlShutdown. */
struct nvml_api *nvml_api_free(struct nvml_api *api);

/*
 * The one place an nvmlReturn_t becomes an errno: NOT_SUPPORTED -> -EOPNOTSUPP,
 * NO_PERMISSION -> -EACCES, GPU_IS_LOST -> -ENODEV, UNINITIALIZED -> -ENXIO, ... SUCCESS -> 0.
 */
int nvml_errno(nvmlReturn_t r);

/* nvmlErrorString() when the library has it and it answers, else a fixed text. Never NULL. */
const char *nvml_error_text(const struct nvml_api *api, nvmlReturn_t r);
