/* SPDX-License-Identifier: MIT */
/* NVML: running-process lists and per-process utilisation samples. */
#include <string.h>

#include "nvml_exports.h"
#include "sim.h"

/* What the size query of nvmlDeviceGetProcessUtilization reports at least, whatever runs
 * (real drivers answer a fixed capacity of about 100). */
#define UTIL_QUERY_CAPACITY 100u

/* Drivers 535.43.02, 535.54.03 and 535.86.05 wrote 32-byte entries from the _v3 lists. */
static bool driver_writes_wide_entries(const char *driver) {
    return !strcmp(driver, "535.43.02") || !strcmp(driver, "535.54.03") ||
           !strcmp(driver, "535.86.05");
}

static bool in_list(const struct sim_dev *d, const struct sim_proc_state *ps, uint32_t kind) {
    const struct sim_process *p = ps->proc;
    if (!ps->running || !(p->kinds & kind))
        return false;
    if (d->mig >= 0) {
        const struct sim_mig *m = &d->sg->mig_instances[d->mig];
        return p->gpu_instance == m->gpu_instance && p->compute_instance == m->compute_instance;
    }
    return true;
}

static nvmlReturn_t process_list(nvmlDevice_t device, unsigned int *infoCount, void *infos,
                                 uint32_t kind, bool v3) {
    struct sim_dev d;
    SIM_LOCKED;
    nvmlReturn_t rc = sim_device(st, device, &d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!infoCount)
        return NVML_ERROR_INVALID_ARGUMENT;

    unsigned int n = 0;
    for (size_t i = 0; i < d.g->n_active; i++)
        if (in_list(&d, d.g->active[i], kind))
            n++;
    if (*infoCount == 0) {
        /* the size query */
        *infoCount = n;
        return n == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (!infos)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (d.g->list_grow_pending) {
        /* fault: a process appeared between the size query and this call */
        d.g->list_grow_pending = false;
        *infoCount = n + 1;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (*infoCount < n) {
        *infoCount = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }

    bool wide = v3 && driver_writes_wide_entries(st->sc->driver);
    size_t stride = wide ? sizeof(nvmlProcessDetail_v1_t) : sizeof(nvmlProcessInfo_t);
    unsigned int k = 0;
    for (size_t i = 0; i < d.g->n_active; i++) {
        const struct sim_proc_state *ps = d.g->active[i];
        if (!in_list(&d, ps, kind))
            continue;
        nvmlProcessDetail_v1_t e = {
            .pid = ps->proc->pid,
            .usedGpuMemory = ps->proc->memory_bytes,
            .gpuInstanceId = ps->proc->gpu_instance,
            .computeInstanceId = ps->proc->compute_instance,
            .usedGpuCcProtectedMemory = 0,
        };
        memcpy((char *)infos + (size_t)k * stride, &e, stride);
        k++;
    }
    *infoCount = k;
    return NVML_SUCCESS;
}

#define PROCESS_LIST(sym, kind, v3)                                                                \
    nvmlReturn_t sym(nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos) {     \
        return process_list(device, infoCount, infos, kind, v3);                                   \
    }                                                                                              \
    NVML_CHECK_SIGNATURE(sym)

PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses_v3, SIM_KIND_COMPUTE, true);
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses_v3, SIM_KIND_GRAPHICS, true);
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v3, SIM_KIND_MPS, true);
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses_v2, SIM_KIND_COMPUTE, false);
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses_v2, SIM_KIND_GRAPHICS, false);
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v2, SIM_KIND_MPS, false);

/* lastSeen (µs since the epoch) in the scenario's time. */
static uint64_t scenario_time(const struct sim_state *st, unsigned long long lastSeen) {
    return lastSeen > st->t0_us ? lastSeen - st->t0_us : 0;
}

struct util_out {
    uint64_t t0_us;
    void *array;
};

static void put_sample(void *ctx, size_t k, const struct sim_util_entry *e) {
    const struct util_out *o = ctx;
    ((nvmlProcessUtilizationSample_t *)o->array)[k] = (nvmlProcessUtilizationSample_t){
        .pid = e->pid,
        .timeStamp = o->t0_us + e->t_us,
        .smUtil = e->sm,
        .memUtil = e->mem,
    };
}

static void put_info(void *ctx, size_t k, const struct sim_util_entry *e) {
    const struct util_out *o = ctx;
    ((nvmlProcessUtilizationInfo_v1_t *)o->array)[k] = (nvmlProcessUtilizationInfo_v1_t){
        .timeStamp = o->t0_us + e->t_us,
        .pid = e->pid,
        .smUtil = e->sm,
        .memUtil = e->mem,
    };
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp) {
    struct sim_dev d;
    SIM_LOCKED;
    nvmlReturn_t rc = sim_device(st, device, &d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!processSamplesCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (d.sg->mig)
        return NVML_ERROR_NOT_SUPPORTED;

    uint64_t after = scenario_time(st, lastSeenTimeStamp);
    size_t n = sim_model_util_entries(d.g, after, NULL, NULL);
    if (!utilization) {
        /* the count query: answered with 7 and a capacity, never with SUCCESS */
        *processSamplesCount = (unsigned int)(n > UTIL_QUERY_CAPACITY ? n : UTIL_QUERY_CAPACITY);
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    if (*processSamplesCount < n) {
        *processSamplesCount = (unsigned int)n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    struct util_out o = {.t0_us = st->t0_us, .array = utilization};
    (void)sim_model_util_entries(d.g, after, put_sample, &o);
    *processSamplesCount = (unsigned int)n;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetProcessUtilization);

nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t device,
                                                   nvmlProcessesUtilizationInfo_t *info) {
    struct sim_dev d;
    SIM_LOCKED;
    nvmlReturn_t rc = sim_device(st, device, &d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!info)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (info->version != nvmlProcessesUtilizationInfo_v1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (d.sg->mig)
        return NVML_ERROR_NOT_SUPPORTED;

    uint64_t after = scenario_time(st, info->lastSeenTimeStamp);
    size_t n = sim_model_util_entries(d.g, after, NULL, NULL);
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    if (!info->procUtilArray || info->processSamplesCount < n) {
        info->processSamplesCount = (unsigned int)n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    struct util_out o = {.t0_us = st->t0_us, .array = info->procUtilArray};
    (void)sim_model_util_entries(d.g, after, put_info, &o);
    info->processSamplesCount = (unsigned int)n;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetProcessesUtilizationInfo);
