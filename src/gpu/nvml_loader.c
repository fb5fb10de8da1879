/* SPDX-License-Identifier: MIT */
#include "nvml_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "dl_symbols.h"
#include "macro.h"

/*
 * The symbol name as a string if the slot's pointer type is the symbol's function type,
 * otherwise a void expression that cannot initialise a name, so a mismatch does not compile.
 */
#define SYMBOL_NAME(field, sym)                                                                    \
    __builtin_choose_expr(                                                                         \
        __builtin_types_compatible_p(__typeof__(((struct nvml_api *)NULL)->field), sym##_fn *),    \
        #sym, (void)0)

#define REQUIRED(field, sym, ...)                                                                  \
    {                                                                                              \
        offsetof(struct nvml_api, field), true, {                                                  \
            SYMBOL_NAME(field, sym), __VA_ARGS__                                                   \
        }                                                                                          \
    }
#define OPTIONAL(field, sym)                                                                       \
    {                                                                                              \
        offsetof(struct nvml_api, field), false, {                                                 \
            SYMBOL_NAME(field, sym), NULL                                                          \
        }                                                                                          \
    }

_Static_assert(sizeof(void *) == sizeof(nvmlShutdown_fn *), "dlsym results fit a function pointer");

static const struct dl_symbol nvml_symbols[] = {
    REQUIRED(init, nvmlInit_v2, SYMBOL_NAME(init, nvmlInit)),
    REQUIRED(shutdown, nvmlShutdown, NULL),
    REQUIRED(device_get_count, nvmlDeviceGetCount_v2,
             SYMBOL_NAME(device_get_count, nvmlDeviceGetCount)),
    REQUIRED(device_get_handle_by_index, nvmlDeviceGetHandleByIndex_v2,
             SYMBOL_NAME(device_get_handle_by_index, nvmlDeviceGetHandleByIndex)),
    OPTIONAL(error_string, nvmlErrorString),
    OPTIONAL(system_get_driver_version, nvmlSystemGetDriverVersion),
    OPTIONAL(device_get_uuid, nvmlDeviceGetUUID),
    OPTIONAL(device_get_name, nvmlDeviceGetName),
    OPTIONAL(device_get_total_energy, nvmlDeviceGetTotalEnergyConsumption),
    OPTIONAL(device_get_power_usage, nvmlDeviceGetPowerUsage),
    OPTIONAL(device_get_compute_mode, nvmlDeviceGetComputeMode),
    OPTIONAL(device_get_mig_mode, nvmlDeviceGetMigMode),
    OPTIONAL(compute_processes_v3, nvmlDeviceGetComputeRunningProcesses_v3),
    OPTIONAL(compute_processes_v2, nvmlDeviceGetComputeRunningProcesses_v2),
    OPTIONAL(graphics_processes_v3, nvmlDeviceGetGraphicsRunningProcesses_v3),
    OPTIONAL(graphics_processes_v2, nvmlDeviceGetGraphicsRunningProcesses_v2),
    OPTIONAL(mps_processes_v3, nvmlDeviceGetMPSComputeRunningProcesses_v3),
    OPTIONAL(mps_processes_v2, nvmlDeviceGetMPSComputeRunningProcesses_v2),
    OPTIONAL(process_utilization, nvmlDeviceGetProcessUtilization),
    OPTIONAL(processes_utilization_info, nvmlDeviceGetProcessesUtilizationInfo),
    OPTIONAL(device_get_max_mig_count, nvmlDeviceGetMaxMigDeviceCount),
    OPTIONAL(device_get_mig_handle, nvmlDeviceGetMigDeviceHandleByIndex),
    OPTIONAL(device_get_gpu_instance_id, nvmlDeviceGetGpuInstanceId),
    OPTIONAL(gpm_query_support, nvmlGpmQueryDeviceSupport),
    OPTIONAL(gpm_sample_alloc, nvmlGpmSampleAlloc),
    OPTIONAL(gpm_sample_free, nvmlGpmSampleFree),
    OPTIONAL(gpm_mig_sample_get, nvmlGpmMigSampleGet),
    OPTIONAL(gpm_metrics_get, nvmlGpmMetricsGet),
    OPTIONAL(accounting_mode, nvmlDeviceGetAccountingMode),
    OPTIONAL(accounting_pids, nvmlDeviceGetAccountingPids),
    OPTIONAL(accounting_stats, nvmlDeviceGetAccountingStats),
};

/* The versioned soname first: the unversioned symlink ships only with development packages. */
static const char *const nvml_default_paths[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};

static int resolve_symbols(struct nvml_api *api, const char **ret_reason) {
    int r = dl_resolve(api->dl, "NVML", nvml_symbols, ARRAY_SIZE(nvml_symbols), api);

    if (r < 0)
        *ret_reason = "the NVML library lacks a required function (driver too old?)";
    return r;
}

int nvml_api_open(const char *path, struct nvml_api **ret_api, const char **ret_reason) {
    _cleanup_(freep) struct nvml_api *api = NULL;
    const char *reason = NULL;
    int r = 0;

    api = calloc(1, sizeof(*api));
    if (!api) {
        *ret_reason = "out of memory";
        return -ENOMEM;
    }

    api->dl = dl_open("NVML", path, nvml_default_paths, ARRAY_SIZE(nvml_default_paths), &r);
    if (!api->dl) {
        if (!path)
            *ret_reason = "libnvidia-ml.so.1 not found (no NVIDIA driver installed)";
        else if (r == -ELIBBAD)
            *ret_reason = "the configured NVML library exists but cannot be loaded";
        else
            *ret_reason = "the configured NVML library does not exist";
        return r;
    }

    r = resolve_symbols(api, &reason);
    if (r < 0) {
        dlclose(api->dl);
        *ret_reason = reason;
        return r;
    }

    *ret_api = TAKE_PTR(api);
    return 0;
}

struct nvml_api *nvml_api_free(struct nvml_api *api) {
    if (!api)
        return NULL;
    if (api->dl)
        dlclose(api->dl);
    free(api);
    return NULL;
}

int nvml_errno(nvmlReturn_t r) {
    switch (r) {
    case NVML_SUCCESS:
        return 0;
    case NVML_ERROR_UNINITIALIZED:
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return -ENXIO;
    case NVML_ERROR_INVALID_ARGUMENT:
        return -EINVAL;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
    case NVML_ERROR_FREQ_NOT_SUPPORTED:
    case NVML_ERROR_DEPRECATED:
    case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED:
        return -EOPNOTSUPP;
    case NVML_ERROR_NO_PERMISSION:
        return -EACCES;
    case NVML_ERROR_OPERATING_SYSTEM:
        return -EPERM;
    case NVML_ERROR_ALREADY_INITIALIZED:
        return -EALREADY;
    case NVML_ERROR_NOT_FOUND:
        return -ENOENT;
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return -ENOBUFS;
    case NVML_ERROR_TIMEOUT:
        return -ETIMEDOUT;
    case NVML_ERROR_LIBRARY_NOT_FOUND:
        return -ELIBACC;
    case NVML_ERROR_FUNCTION_NOT_FOUND:
        return -ENOSYS;
    case NVML_ERROR_GPU_IS_LOST:
    case NVML_ERROR_GPU_NOT_FOUND:
    case NVML_ERROR_RESET_REQUIRED:
        return -ENODEV;
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        return -ELIBBAD;
    case NVML_ERROR_IN_USE:
        return -EBUSY;
    case NVML_ERROR_MEMORY:
        return -ENOMEM;
    case NVML_ERROR_NO_DATA:
        return -ENODATA;
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
        return -ENOSPC;
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
        return -EPROTO;
    case NVML_ERROR_NOT_READY:
        return -EAGAIN;
    case NVML_ERROR_INVALID_STATE:
        return -EBADFD;
    case NVML_ERROR_INSUFFICIENT_POWER:
    case NVML_ERROR_IRQ_ISSUE:
    case NVML_ERROR_CORRUPTED_INFOROM:
    case NVML_ERROR_UNKNOWN:
    default:
        return -EIO;
    }
}

const char *nvml_error_text(const struct nvml_api *api, nvmlReturn_t r) {
    const char *text = api && api->error_string ? api->error_string(r) : NULL;
    return text ? text : "unknown NVML error";
}
