/* SPDX-License-Identifier: MIT */
/*
 * NVML accounting mode (nvidia-smi -am 1): the driver keeps, per GPU, a circular buffer of
 * the processes that ran on it, running or finished, newest last, and each one's lifetime
 * statistics. The simulator's buffer is the latest accounting-buffer processes started on
 * the GPU; a pid that occurs twice answers for its latest process, as the driver does.
 */
#include <string.h>

#include "nvml_exports.h"
#include "sim.h"

static nvmlReturn_t accounting_device(struct sim_state *st, nvmlDevice_t device,
                                      struct sim_dev *d) {
    nvmlReturn_t rc = sim_device(st, device, d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (d->mig >= 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* MIG forces accounting off; so does an administrator who never turned it on */
    if (!d->sg->accounting || d->sg->mig)
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

/* The buffer: procs[first, g->next_start) of the GPU's processes, by start. */
static size_t buffer_first(const struct sim_dev *d) {
    size_t cap = d->sg->accounting_buffer;
    return d->g->next_start > cap ? d->g->next_start - cap : 0;
}

nvmlReturn_t nvmlDeviceGetAccountingMode(nvmlDevice_t device, nvmlEnableState_t *mode) {
    struct sim_dev d;
    SIM_LOCKED;
    nvmlReturn_t rc = sim_device(st, device, &d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!mode)
        return NVML_ERROR_INVALID_ARGUMENT;
    *mode = d.sg->accounting && !d.sg->mig ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetAccountingMode);

nvmlReturn_t nvmlDeviceGetAccountingBufferSize(nvmlDevice_t device, unsigned int *bufferSize) {
    struct sim_dev d;
    SIM_LOCKED;
    nvmlReturn_t rc = accounting_device(st, device, &d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!bufferSize)
        return NVML_ERROR_INVALID_ARGUMENT;
    *bufferSize = d.sg->accounting_buffer;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetAccountingBufferSize);

nvmlReturn_t nvmlDeviceGetAccountingPids(nvmlDevice_t device, unsigned int *count,
                                         unsigned int *pids) {
    struct sim_dev d;
    SIM_LOCKED;
    nvmlReturn_t rc = accounting_device(st, device, &d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;

    size_t first = buffer_first(&d);
    unsigned n = (unsigned)(d.g->next_start - first);
    if (*count < n || !pids) {
        bool size_query = *count == 0;
        *count = n;
        return size_query && n == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (size_t i = first; i < d.g->next_start; i++)
        pids[i - first] = d.g->procs[i]->proc->pid;
    *count = n;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetAccountingPids);

nvmlReturn_t nvmlDeviceGetAccountingStats(nvmlDevice_t device, unsigned int pid,
                                          nvmlAccountingStats_t *stats) {
    struct sim_dev d;
    SIM_LOCKED;
    nvmlReturn_t rc = accounting_device(st, device, &d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!stats)
        return NVML_ERROR_INVALID_ARGUMENT;

    for (size_t i = d.g->next_start; i-- > buffer_first(&d);) {
        const struct sim_proc_state *ps = d.g->procs[i];
        const struct sim_process *p = ps->proc;
        if (p->pid != pid)
            continue;
        bool running = d.t < p->stop_us;
        uint64_t end = running ? d.t : p->stop_us;
        uint64_t life = end > p->start_us ? end - p->start_us : 0;
        uint64_t util = life ? (ps->life_util + life / 2) / life : 0;

        memset(stats, 0, sizeof(*stats));
        stats->gpuUtilization = (unsigned)util;
        stats->memoryUtilization = (unsigned)(util * p->mem_ratio / 100);
        stats->maxMemoryUsage = p->memory_bytes;
        stats->time = running ? 0 : life / 1000; /* set at termination */
        stats->startTime = st->t0_us + p->start_us;
        stats->isRunning = running;
        return NVML_SUCCESS;
    }
    return NVML_ERROR_NOT_FOUND;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetAccountingStats);
