/* SPDX-License-Identifier: MIT */
/* A fake NVML driven by the test through fake_nvml_state(); see fake_nvml.h. */
#include "fake_nvml.h"

#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static struct fake_nvml_state state;

EXPORT struct fake_nvml_state *fake_nvml_state(void);
struct fake_nvml_state *fake_nvml_state(void) {
    return &state;
}

/* Handles are pointers into the state, so a handle is valid exactly when it points there. */
static struct fake_device *device_of(nvmlDevice_t handle, nvmlReturn_t *ret, unsigned *ret_idx) {
    if (state.init_refs <= 0) {
        *ret = NVML_ERROR_UNINITIALIZED;
        return NULL;
    }
    for (unsigned i = 0; i < state.n_devices && i < FAKE_MAX_DEVICES; i++)
        if ((void *)handle == (void *)&state.dev[i]) {
            if (state.dev[i].lost) {
                *ret = NVML_ERROR_GPU_IS_LOST;
                return NULL;
            }
            *ret_idx = i;
            return &state.dev[i];
        }
    *ret = NVML_ERROR_INVALID_ARGUMENT;
    return NULL;
}

#define DEVICE_OR_RETURN(handle, var, idx)                                                         \
    nvmlReturn_t _ret = NVML_SUCCESS;                                                              \
    unsigned idx = 0;                                                                              \
    struct fake_device *var = device_of(handle, &_ret, &idx);                                      \
    if (!var)                                                                                      \
    return _ret

static nvmlReturn_t copy_string(const char *src, char *dst, unsigned length) {
    if (!dst)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(src) + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, strlen(src) + 1);
    return NVML_SUCCESS;
}

static const char *driver_version(void) {
    return state.driver_version[0] ? state.driver_version : "550.54.14";
}

/* ---- init / system ---- */

EXPORT nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit_v2(void) {
    if (state.init_ret != NVML_SUCCESS)
        return state.init_ret;
    state.init_refs++;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlInit_v2);

EXPORT nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlShutdown(void) {
    if (state.init_refs <= 0)
        return NVML_ERROR_UNINITIALIZED;
    state.init_refs--;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlShutdown);

EXPORT const char *nvmlErrorString(nvmlReturn_t r);
const char *nvmlErrorString(nvmlReturn_t r) {
    if (state.error_string_null)
        return NULL;
    switch (r) {
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    default:
        return "fake NVML error";
    }
}
NVML_CHECK_SIGNATURE(nvmlErrorString);

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (state.init_refs <= 0)
        return NVML_ERROR_UNINITIALIZED;
    return copy_string(driver_version(), version, length);
}
NVML_CHECK_SIGNATURE(nvmlSystemGetDriverVersion);

#ifndef FAKE_NVML_NO_COUNT
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount) {
    if (state.init_refs <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (state.count_ret != NVML_SUCCESS)
        return state.count_ret;
    *deviceCount = state.n_devices;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetCount_v2);
#endif

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (state.init_refs <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (index >= state.n_devices || index >= FAKE_MAX_DEVICES || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    state.calls[index].handle++;
    if (state.dev[index].lost)
        return NVML_ERROR_GPU_IS_LOST;
    if (state.dev[index].handle_ret != NVML_SUCCESS)
        return state.dev[index].handle_ret;
    *device = (nvmlDevice_t)(void *)&state.dev[index];
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetHandleByIndex_v2);

/* ---- identity, energy, power, modes ---- */

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    DEVICE_OR_RETURN(device, d, i);
    state.calls[i].uuid++;
    if (d->uuid_ret != NVML_SUCCESS)
        return d->uuid_ret;
    return copy_string(d->uuid, uuid, length);
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetUUID);

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    DEVICE_OR_RETURN(device, d, i);
    (void)i;
    return copy_string(d->name, name, length);
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetName);

#ifndef FAKE_NVML_MINIMAL
EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                        unsigned long long *energy);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy) {
    DEVICE_OR_RETURN(device, d, i);
    state.calls[i].energy++;
    if (d->energy_ret != NVML_SUCCESS)
        return d->energy_ret;
    *energy = d->energy_mj;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetTotalEnergyConsumption);
#endif

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power) {
    DEVICE_OR_RETURN(device, d, i);
    state.calls[i].power++;
    if (d->power_ret != NVML_SUCCESS)
        return d->power_ret;
    *power = d->power_mw;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetPowerUsage);

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                         unsigned int *pendingMode);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode) {
    DEVICE_OR_RETURN(device, d, i);
    state.calls[i].mig++;
    if (d->mig_ret != NVML_SUCCESS)
        return d->mig_ret;
    *currentMode = d->mig_mode;
    *pendingMode = d->mig_mode;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetMigMode);

EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode);
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode) {
    DEVICE_OR_RETURN(device, d, i);
    state.calls[i].compute_mode++;
    if (d->compute_mode_ret != NVML_SUCCESS)
        return d->compute_mode_ret;
    *mode = d->compute_mode;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetComputeMode);

/* ---- running processes ---- */

/* Drivers 535.43.02 - 535.86.05 wrote 32-byte entries from the _v3 symbols. */
static bool driver_writes_wide_entries(void) {
    unsigned major = 0, minor = 0;
    if (sscanf(driver_version(), "%u.%u", &major, &minor) != 2)
        return false;
    return major == 535 && minor >= 43 && minor <= 86;
}

static nvmlReturn_t list_processes(nvmlDevice_t device, enum fake_list list, bool v3,
                                   unsigned int *count, void *infos) {
    DEVICE_OR_RETURN(device, d, i);
    state.calls[i].lists[list]++;
    if (d->list_ret[list] != NVML_SUCCESS)
        return d->list_ret[list];
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;

    if (d->grow_calls[list] > 0) {
        d->grow_calls[list]--;
        for (unsigned k = 0; k < FAKE_GROWTH && d->n_procs[list] < FAKE_MAX_PROCS; k++) {
            unsigned n = d->n_procs[list]++;
            d->procs[list][n] = (struct fake_proc){FAKE_GROWN_PID_BASE + n, 1u << 20};
        }
    }

    if (d->always_insufficient[list]) {
        *count = *count * 2 + 1;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned n = d->n_procs[list];
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    bool wide = v3 && driver_writes_wide_entries();
    for (unsigned k = 0; k < n; k++) {
        const struct fake_proc *p = &d->procs[list][k];
        if (wide) {
            nvmlProcessDetail_v1_t *e = (nvmlProcessDetail_v1_t *)infos + k;
            *e = (nvmlProcessDetail_v1_t){p->pid, p->used_memory, 0xFFFFFFFFu, 0xFFFFFFFFu, 0};
        } else {
            nvmlProcessInfo_t *e = (nvmlProcessInfo_t *)infos + k;
            *e = (nvmlProcessInfo_t){p->pid, p->used_memory, 0xFFFFFFFFu, 0xFFFFFFFFu};
        }
    }
    *count = n;
    return NVML_SUCCESS;
}

#define LIST_SYMBOL(sym, list, v3)                                                                 \
    EXPORT nvmlReturn_t sym(nvmlDevice_t device, unsigned int *infoCount,                          \
                            nvmlProcessInfo_t *infos);                                             \
    nvmlReturn_t sym(nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos) {     \
        return list_processes(device, list, v3, infoCount, infos);                                 \
    }                                                                                              \
    NVML_CHECK_SIGNATURE(sym)

#ifndef FAKE_NVML_V3_ONLY
LIST_SYMBOL(nvmlDeviceGetComputeRunningProcesses_v2, FAKE_COMPUTE, false);
LIST_SYMBOL(nvmlDeviceGetGraphicsRunningProcesses_v2, FAKE_GRAPHICS, false);
#ifndef FAKE_NVML_MINIMAL
LIST_SYMBOL(nvmlDeviceGetMPSComputeRunningProcesses_v2, FAKE_MPS, false);
#endif
#endif
#ifndef FAKE_NVML_MINIMAL
LIST_SYMBOL(nvmlDeviceGetComputeRunningProcesses_v3, FAKE_COMPUTE, true);
LIST_SYMBOL(nvmlDeviceGetGraphicsRunningProcesses_v3, FAKE_GRAPHICS, true);
LIST_SYMBOL(nvmlDeviceGetMPSComputeRunningProcesses_v3, FAKE_MPS, true);
#endif

/* ---- per-process utilisation ---- */

static unsigned count_newer(const struct fake_device *d, unsigned long long last_seen) {
    unsigned n = 0;
    for (unsigned k = 0; k < d->n_samples; k++)
        n += d->samples[k].timestamp_us > last_seen;
    return n;
}

#define GARBAGE_SLOTS 3u

EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                    nvmlProcessUtilizationSample_t *utilization,
                                                    unsigned int *processSamplesCount,
                                                    unsigned long long lastSeenTimeStamp);
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp) {
    DEVICE_OR_RETURN(device, d, i);
    state.calls[i].util_legacy++;
    d->last_seen_arg = lastSeenTimeStamp;
    if (d->util_ret != NVML_SUCCESS)
        return d->util_ret;
    if (d->mig_mode == NVML_DEVICE_MIG_ENABLE)
        return NVML_ERROR_NOT_SUPPORTED;
    if (!processSamplesCount)
        return NVML_ERROR_INVALID_ARGUMENT;

    /* Like the real driver: a size query answers a fixed capacity, not the number of samples. */
    unsigned capacity = d->legacy_capacity ? d->legacy_capacity : 100;
    if (!utilization) {
        *processSamplesCount = capacity;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned newer = count_newer(d, lastSeenTimeStamp);
    if (newer == 0)
        return NVML_ERROR_NOT_FOUND;
    unsigned need = newer + (d->legacy_garbage ? GARBAGE_SLOTS : 0);
    if (*processSamplesCount < need) {
        *processSamplesCount = capacity > need ? capacity : need;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }

    unsigned n = 0;
    for (unsigned k = 0; k < d->n_samples; k++) {
        const struct fake_sample *s = &d->samples[k];
        if (s->timestamp_us > lastSeenTimeStamp)
            utilization[n++] = (nvmlProcessUtilizationSample_t){s->pid, s->timestamp_us, s->sm,
                                                                s->mem, s->enc,          s->dec};
    }
    if (d->legacy_garbage) {
        utilization[n++] = (nvmlProcessUtilizationSample_t){0, 0, 0, 0, 0, 0};
        utilization[n++] =
            (nvmlProcessUtilizationSample_t){4242, lastSeenTimeStamp + 1, 37100, 0, 0, 0};
        utilization[n++] =
            (nvmlProcessUtilizationSample_t){4243, 0xFFFFFFFFFFFFull << 8, 5, 0, 0, 0};
    }
    *processSamplesCount = n;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetProcessUtilization);

#ifndef FAKE_NVML_MINIMAL
EXPORT nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t device,
                                                          nvmlProcessesUtilizationInfo_t *info);
nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t device,
                                                   nvmlProcessesUtilizationInfo_t *info) {
    DEVICE_OR_RETURN(device, d, i);
    state.calls[i].util_info++;
    if (!info)
        return NVML_ERROR_INVALID_ARGUMENT;
    d->last_seen_arg = info->lastSeenTimeStamp;
    if (d->util_info_ret != NVML_SUCCESS)
        return d->util_info_ret;
    if (d->mig_mode == NVML_DEVICE_MIG_ENABLE)
        return NVML_ERROR_NOT_SUPPORTED;
    if (info->version != nvmlProcessesUtilizationInfo_v1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;

    unsigned newer = count_newer(d, info->lastSeenTimeStamp);
    if (newer == 0)
        return NVML_ERROR_NOT_FOUND;
    if (!info->procUtilArray || info->processSamplesCount < newer) {
        info->processSamplesCount = newer;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned n = 0;
    for (unsigned k = 0; k < d->n_samples; k++) {
        const struct fake_sample *s = &d->samples[k];
        if (s->timestamp_us > info->lastSeenTimeStamp)
            info->procUtilArray[n++] = (nvmlProcessUtilizationInfo_v1_t){
                s->timestamp_us, s->pid, s->sm, s->mem, s->enc, s->dec, 0, 0};
    }
    info->processSamplesCount = n;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetProcessesUtilizationInfo);
#endif
