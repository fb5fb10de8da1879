/* SPDX-License-Identifier: MIT */
/* NVML: init, shutdown, error strings, versions, device enumeration. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "nvml_exports.h"
#include "sim.h"

static nvmlReturn_t do_init(struct sim_state *st) {
    int r = sim_load_from_env(st);
    if (r < 0 && !st->sc) {
        /* nothing to simulate: say why once per attempt, like a missing driver would */
        log_error("joulestat-sim: %s", st->error);
        return r == -ENOENT ? NVML_ERROR_DRIVER_NOT_LOADED : NVML_ERROR_UNKNOWN;
    }
    if (r < 0)
        log_warning("joulestat-sim: fake procfs: %s", strerror(-r));
    st->init_count++;
    st->ever_initialized = true;
    r = sim_start_clock(st);
    if (r < 0)
        log_warning("joulestat-sim: fake procfs: %s", strerror(-r));
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) {
    SIM_LOCKED;
    return do_init(st);
}
NVML_CHECK_SIGNATURE(nvmlInit_v2);

nvmlReturn_t nvmlInit(void) {
    SIM_LOCKED;
    return do_init(st);
}
NVML_CHECK_SIGNATURE(nvmlInit);

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
    SIM_LOCKED;
    if (flags & ~(NVML_INIT_FLAG_NO_GPUS | NVML_INIT_FLAG_NO_ATTACH))
        return NVML_ERROR_INVALID_ARGUMENT;
    return do_init(st);
}
NVML_CHECK_SIGNATURE(nvmlInitWithFlags);

nvmlReturn_t nvmlShutdown(void) {
    SIM_LOCKED;
    /* "No error is reported if nvmlShutdown() is called more times than nvmlInit()"
     * (NVML reference); never initialised is the one error. */
    if (st->init_count == 0)
        return st->ever_initialized ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
    st->init_count--;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlShutdown);

const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
        return "Argument version mismatch";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
        return "Function Not Found";
    case NVML_ERROR_NO_DATA:
        return "No data";
    default:
        return "Unknown Error";
    }
}
NVML_CHECK_SIGNATURE(nvmlErrorString);

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    SIM_LOCKED;
    if (st->init_count == 0)
        return NVML_ERROR_UNINITIALIZED;
    return sim_copy_out(version, length, st->sc->driver);
}
NVML_CHECK_SIGNATURE(nvmlSystemGetDriverVersion);

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length) {
    char buf[SIM_DRIVER_MAX + 8];
    SIM_LOCKED;
    if (st->init_count == 0)
        return NVML_ERROR_UNINITIALIZED;
    /* "<CUDA major>.<driver version>" as observed on real systems */
    (void)snprintf(buf, sizeof buf, "12.%s", st->sc->driver);
    return sim_copy_out(version, length, buf);
}
NVML_CHECK_SIGNATURE(nvmlSystemGetNVMLVersion);

static nvmlReturn_t get_count(unsigned int *count) {
    SIM_LOCKED;
    if (st->init_count == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = (unsigned int)st->sc->n_gpus;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount) {
    return get_count(deviceCount);
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetCount_v2);

static nvmlReturn_t handle_by_index(unsigned int index, nvmlDevice_t *device) {
    struct sim_dev d;
    SIM_LOCKED;
    if (st->init_count == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!device || index >= st->sc->n_gpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (st->sc->gpus[index].no_permission)
        return NVML_ERROR_NO_PERMISSION;
    nvmlReturn_t rc = sim_device(st, sim_gpu_handle(index), &d);
    if (rc != NVML_SUCCESS)
        return rc;
    *device = sim_gpu_handle(index);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    return handle_by_index(index, device);
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetHandleByIndex_v2);

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device) {
    SIM_LOCKED;
    if (st->init_count == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!uuid || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < st->sc->n_gpus; i++) {
        const struct sim_gpu *g = &st->sc->gpus[i];
        if (!strcmp(g->uuid, uuid)) {
            *device = sim_gpu_handle(i);
            return NVML_SUCCESS;
        }
        for (unsigned k = 0; k < g->n_mig; k++)
            if (!strcmp(g->mig_instances[k].uuid, uuid)) {
                *device = sim_mig_handle(i, k);
                return NVML_SUCCESS;
            }
    }
    return NVML_ERROR_NOT_FOUND;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetHandleByUUID);
