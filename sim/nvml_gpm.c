/* SPDX-License-Identifier: MIT */
/*
 * NVML GPM (GPU performance monitoring, Hopper and later): sample buffers that hold what the
 * SMs did up to an instant, and the SM activity between two of them, for the whole GPU or
 * one MIG GPU instance. What a sample holds is the model's cumulative busy time of the
 * instance's SMs (model.h, group_busy); the activity is its growth over the time between.
 */
#include <stdlib.h>
#include <string.h>

#include "nvml_exports.h"
#include "sim.h"

#define SAMPLE_MAGIC 0x47504d53u /* "GPMS" */
#define GPU_SLICES 7u            /* compute slices of an A100 or H100 */

struct nvmlGpmSample_st {
    uint32_t magic;
    bool taken;
    unsigned gpu;
    int instance; /* GPU instance id, or -1 for the whole GPU */
    uint64_t t_us;
    uint64_t busy; /* percent * µs */
};

/* The "Ng" of a MIG profile name ("... MIG 3g.40gb", "... MIG 1c.3g.40gb"): the instance's
 * share of the GPU's compute slices; 1 where the name says none. */
static unsigned profile_slices(const char *name) {
    const char *tok = strstr(name, " MIG ");

    if (!tok)
        return 1;
    for (tok += 5; *tok;) {
        size_t len = strcspn(tok, ".");
        unsigned n = 0;
        size_t i = 0;

        while (i < len && tok[i] >= '0' && tok[i] <= '9' && n < 100)
            n = n * 10 + (unsigned)(tok[i++] - '0');
        if (i > 0 && i + 1 == len && tok[i] == 'g' && n > 0)
            return n;
        tok += len;
        if (*tok == '.')
            tok++;
    }
    return 1;
}

/* Cumulative busy of a GPU instance: the mean over its compute instances. false: no such
 * instance. */
static bool instance_busy(const struct sim_gpu_model *g, unsigned gi, uint64_t *ret) {
    uint64_t sum = 0;
    unsigned n = 0;
    for (size_t k = 0; k < g->gpu->n_mig; k++)
        if (g->gpu->mig_instances[k].gpu_instance == gi) {
            sum += g->group_busy[k + 1];
            n++;
        }
    if (n == 0)
        return false;
    *ret = sum / n;
    return true;
}

/* The whole GPU: each GPU instance once (its compute instances' mean), weighted by its
 * slices; or group 0 without MIG. */
static uint64_t gpu_busy(const struct sim_gpu_model *g) {
    unsigned __int128 sum = 0;

    if (!g->gpu->mig)
        return g->group_busy[0];
    for (size_t k = 0; k < g->gpu->n_mig; k++) {
        unsigned gi = g->gpu->mig_instances[k].gpu_instance;
        bool first = true;
        uint64_t busy;

        for (size_t j = 0; j < k && first; j++)
            first = g->gpu->mig_instances[j].gpu_instance != gi;
        if (first && instance_busy(g, gi, &busy))
            sum += (unsigned __int128)busy * profile_slices(g->gpu->mig_instances[k].name);
    }
    return (uint64_t)(sum / GPU_SLICES);
}

static bool valid_sample(const struct nvmlGpmSample_st *s) {
    return s && s->magic == SAMPLE_MAGIC;
}

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport) {
    struct sim_dev d;
    SIM_LOCKED;
    nvmlReturn_t rc = sim_device(st, device, &d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!gpmSupport)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    gpmSupport->isSupportedDevice = d.sg->gpm;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlGpmQueryDeviceSupport);

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample) {
    struct nvmlGpmSample_st *s;
    if (!gpmSample)
        return NVML_ERROR_INVALID_ARGUMENT;
    s = calloc(1, sizeof(*s));
    if (!s)
        return NVML_ERROR_MEMORY;
    s->magic = SAMPLE_MAGIC;
    *gpmSample = s;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlGpmSampleAlloc);

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) {
    if (!valid_sample(gpmSample))
        return NVML_ERROR_INVALID_ARGUMENT;
    gpmSample->magic = 0;
    free(gpmSample);
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlGpmSampleFree);

/* Takes a sample of the whole GPU (gi < 0) or of GPU instance gi of a MIG-enabled parent. */
static nvmlReturn_t take_sample(nvmlDevice_t device, int gi, nvmlGpmSample_t s) {
    struct sim_dev d;
    uint64_t busy = 0;
    SIM_LOCKED;
    nvmlReturn_t rc = sim_device(st, device, &d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!valid_sample(s) || d.mig >= 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!d.sg->gpm)
        return NVML_ERROR_NOT_SUPPORTED;
    if (gi < 0)
        busy = gpu_busy(d.g);
    else if (!d.sg->mig)
        return NVML_ERROR_NOT_SUPPORTED;
    else if (!instance_busy(d.g, (unsigned)gi, &busy))
        return NVML_ERROR_NOT_FOUND;
    *s = (struct nvmlGpmSample_st){.magic = SAMPLE_MAGIC,
                                   .taken = true,
                                   .gpu = d.gpu,
                                   .instance = gi,
                                   .t_us = d.t,
                                   .busy = busy};
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample) {
    return take_sample(device, -1, gpmSample);
}
NVML_CHECK_SIGNATURE(nvmlGpmSampleGet);

nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId,
                                 nvmlGpmSample_t gpmSample) {
    if (gpuInstanceId > (unsigned)INT32_MAX)
        return NVML_ERROR_INVALID_ARGUMENT;
    return take_sample(device, (int)gpuInstanceId, gpmSample);
}
NVML_CHECK_SIGNATURE(nvmlGpmMigSampleGet);

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m) {
    const struct nvmlGpmSample_st *a, *b;
    if (!m)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (m->version != NVML_GPM_METRICS_GET_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    a = m->sample1;
    b = m->sample2;
    if (m->numMetrics > NVML_GPM_METRIC_MAX || !valid_sample(a) || !valid_sample(b) || !a->taken ||
        !b->taken || a->gpu != b->gpu || a->instance != b->instance || b->t_us <= a->t_us ||
        b->busy < a->busy)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < m->numMetrics; i++) {
        nvmlGpmMetric_t *e = &m->metrics[i];
        memset(&e->metricInfo, 0, sizeof(e->metricInfo));
        e->value = 0.0;
        e->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        if (e->metricId == NVML_GPM_METRIC_SM_UTIL) {
            e->value = (double)(b->busy - a->busy) / (double)(b->t_us - a->t_us);
            e->nvmlReturn = NVML_SUCCESS;
        }
    }
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlGpmMetricsGet);
