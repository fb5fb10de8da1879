/* SPDX-License-Identifier: MIT */
/*
 * A MIG-enabled GPU's instances and what each did. Per-process utilisation does not exist
 * under MIG and power only for the whole board, so the split needs each GPU instance's
 * size (its profile, "3g.20gb": 3 of the GPU's 7 compute slices) and the share of its SMs
 * that were busy between two readings: from GPM where the device has it (Hopper and later),
 * else from DCGM's nv-hostengine when the node runs one (nvml_dcgm.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "nvml_internal.h"

#define NVML_MIG_RELIST_US (UINT64_C(10) * 1000000)

/* The profile after " MIG " in a MIG device's name, and the "Ng" slice count in it
 * ("1c.3g.20gb" is a compute instance of a 3-slice GPU instance). */
static void parse_profile(const char *name, struct gpu_mig_instance *v) {
    const char *p = strstr(name, " MIG ");

    v->profile[0] = '\0';
    v->slices = 0;
    if (!p)
        return;
    p += strlen(" MIG ");
    (void)snprintf(v->profile, sizeof(v->profile), "%s", p);
    for (const char *c = p; *c; c++) {
        unsigned n = 0;
        const char *d = c;

        if (c != p && c[-1] != '.')
            continue;
        while (*d >= '0' && *d <= '9' && n < 100)
            n = n * 10 + (unsigned)(*d++ - '0');
        if (d != c && *d == 'g' && n > 0) {
            v->slices = n;
            return;
        }
    }
}

static void free_samples(struct nvml_state *s, struct nvml_mig_slot *m) {
    for (size_t k = 0; k < ARRAY_SIZE(m->samples); k++)
        if (m->samples[k]) {
            (void)s->api->gpm_sample_free(m->samples[k]);
            m->samples[k] = NULL;
        }
    m->have_previous = false;
}

void nvml_mig_forget(struct nvml_state *s, struct nvml_device *d) {
    for (size_t i = 0; i < d->n_mig; i++)
        free_samples(s, &d->mig[i]);
    d->n_mig = 0;
    d->mig_listed_at_us = 0;
}

static struct nvml_mig_slot *find_slot(struct nvml_mig_slot *slots, size_t n, uint32_t gi) {
    for (size_t i = 0; i < n; i++)
        if (slots[i].view.gpu_instance == gi)
            return &slots[i];
    return NULL;
}

/* One MIG device handle's GPU instance, added to `next` unless one of its compute
 * instances was there first. Returns 0 or the errno of a lost GPU. */
static int list_one(struct nvml_state *s, struct nvml_device *d, unsigned index,
                    struct nvml_mig_slot *next, size_t *n_next) {
    nvmlDevice_t mig = NULL;
    unsigned gi = 0;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
    nvmlReturn_t code = s->api->device_get_mig_handle(d->handle, index, &mig);

    if (code == NVML_ERROR_GPU_IS_LOST)
        return -ENODEV;
    if (code != NVML_SUCCESS || !mig) /* an empty slot answers NOT_FOUND */
        return 0;
    code = s->api->device_get_gpu_instance_id(mig, &gi);
    if (code != NVML_SUCCESS)
        return code == NVML_ERROR_GPU_IS_LOST ? -ENODEV : 0;
    if (find_slot(next, *n_next, gi) || *n_next == NVML_MIG_MAX)
        return 0;

    struct nvml_mig_slot *old = find_slot(d->mig, d->n_mig, gi);
    struct nvml_mig_slot *m = &next[(*n_next)++];

    if (old) { /* keep its GPM samples: the window continues */
        *m = *old;
        *old = (struct nvml_mig_slot){0};
    } else
        *m = (struct nvml_mig_slot){.view.gpu_instance = gi};
    if (s->api->device_get_name && s->api->device_get_name(mig, name, sizeof(name)) == 0)
        parse_profile(name, &m->view);
    /* what the kubelet's pod-resources names the instance by */
    if (s->api->device_get_uuid &&
        s->api->device_get_uuid(mig, m->view.uuid, sizeof(m->view.uuid)) != NVML_SUCCESS)
        m->view.uuid[0] = '\0';
    return 0;
}

/* Lists the GPU instances again: they change only when an administrator makes new ones. */
static int list_instances(struct nvml_state *s, struct nvml_device *d, uint64_t now_us) {
    struct nvml_mig_slot next[NVML_MIG_MAX];
    size_t n_next = 0;
    unsigned max = 0;
    int r;

    r = nvml_feature_record(d, GPU_FEATURE_MIG_INSTANCES,
                            s->api->device_get_max_mig_count(d->handle, &max));
    if (r < 0)
        return r == -ENODEV ? r : 0;
    for (unsigned i = 0; i < max; i++) {
        r = list_one(s, d, i, next, &n_next);
        if (r < 0) {
            /* The slots moved here from d->mig hold their GPM samples now. */
            for (size_t k = 0; k < n_next; k++)
                free_samples(s, &next[k]);
            return r;
        }
    }
    for (size_t i = 0; i < d->n_mig; i++) /* instances that are gone */
        free_samples(s, &d->mig[i]);
    memcpy(d->mig, next, n_next * sizeof(*next));
    d->n_mig = n_next;
    d->mig_listed_at_us = MAX(now_us, UINT64_C(1));
    return 0;
}

static int gpm_supported(struct nvml_state *s, struct nvml_device *d) {
    nvmlGpmSupport_t support = {.version = NVML_GPM_SUPPORT_VERSION};
    nvmlReturn_t code;

    if (d->features[GPU_FEATURE_MIG_ACTIVITY].state != GPU_FEATURE_UNTRIED)
        return nvml_feature_usable(d, GPU_FEATURE_MIG_ACTIVITY);
    code = s->api->gpm_query_support(d->handle, &support);
    if (code == NVML_SUCCESS && !support.isSupportedDevice)
        code = NVML_ERROR_NOT_SUPPORTED;
    return nvml_feature_record(d, GPU_FEATURE_MIG_ACTIVITY, code) == 0;
}

/* The instance's SM activity since its previous sample. Returns 0, -ENODEV or -ENOMEM. */
static int read_activity(struct nvml_state *s, struct nvml_device *d, struct nvml_mig_slot *m) {
    nvmlGpmMetricsGet_t *req = s->gpm_request;
    nvmlReturn_t code;
    int r;

    m->view.activity_valid = false;
    for (size_t k = 0; k < ARRAY_SIZE(m->samples); k++)
        if (!m->samples[k]) {
            code = s->api->gpm_sample_alloc(&m->samples[k]);
            if (code != NVML_SUCCESS) { /* the library's failure: no activity this window */
                m->samples[k] = NULL;
                r = nvml_feature_record(d, GPU_FEATURE_MIG_ACTIVITY, code);
                return r == -ENODEV ? r : 0;
            }
        }
    code = s->api->gpm_mig_sample_get(d->handle, m->view.gpu_instance, m->samples[m->next]);
    r = nvml_feature_record(d, GPU_FEATURE_MIG_ACTIVITY, code);
    if (r < 0) {
        m->have_previous = false;
        return r == -ENODEV ? r : 0;
    }
    if (m->have_previous) {
        memset(req, 0, offsetof(nvmlGpmMetricsGet_t, metrics) + sizeof(req->metrics[0]));
        req->version = NVML_GPM_METRICS_GET_VERSION;
        req->numMetrics = 1;
        req->sample1 = m->samples[m->next ^ 1];
        req->sample2 = m->samples[m->next];
        req->metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
        code = s->api->gpm_metrics_get(req);
        if (code == NVML_SUCCESS && req->metrics[0].nvmlReturn == NVML_SUCCESS &&
            req->metrics[0].value >= 0.0) {
            m->view.activity_valid = true;
            m->view.sm_activity = MIN(req->metrics[0].value / 100.0, 1.0);
        }
    }
    m->next ^= 1;
    m->have_previous = true;
    return 0;
}

int nvml_read_mig(struct nvml_state *s, struct nvml_device *d, uint64_t now_us,
                  struct gpu_device_reading *rd) {
    enum gpu_activity_source asked = GPU_ACTIVITY_NONE;
    int r;

    rd->n_mig = 0;
    rd->mig_activity_source = GPU_ACTIVITY_NONE;
    if (!nvml_feature_usable(d, GPU_FEATURE_MIG_INSTANCES))
        return 0;
    if (d->mig_listed_at_us == 0 || now_us - d->mig_listed_at_us >= NVML_MIG_RELIST_US) {
        r = list_instances(s, d, now_us);
        if (r < 0)
            return r;
    }
    if (d->n_mig > 0 && !gpm_supported(s, d)) {
        for (size_t i = 0; i < d->n_mig; i++)
            d->mig[i].view.activity_valid = false;
        nvml_dcgm_read(s, d, rd->uuid, now_us);
        asked = GPU_ACTIVITY_DCGM;
    } else if (d->n_mig > 0) {
        asked = GPU_ACTIVITY_GPM;
        if (!s->gpm_request) {
            s->gpm_request = calloc(1, sizeof(*s->gpm_request));
            if (!s->gpm_request)
                return -ENOMEM;
        }
        for (size_t i = 0; i < d->n_mig; i++) {
            r = read_activity(s, d, &d->mig[i]);
            if (r < 0)
                return r;
        }
    }
    for (size_t i = 0; i < d->n_mig; i++) {
        d->mig_views[i] = d->mig[i].view;
        if (d->mig[i].view.activity_valid) /* whoever was asked measured something */
            rd->mig_activity_source = asked;
    }
    rd->n_mig = d->n_mig;
    rd->mig = d->mig_views;
    return 0;
}
