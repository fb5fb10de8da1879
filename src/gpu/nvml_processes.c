/* SPDX-License-Identifier: MIT */
/* Running-process lists and per-process utilisation samples of one NVML device. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "nvml_internal.h"
#include "small_sort.h"

/* Samples stamped later than the window end by more than this are garbage (seen in the wild:
 * timestamps unrelated to now); accepting one would hide every later real sample. */
#define NVML_FUTURE_SLACK_US (UINT64_C(10) * 1000000)

static const enum gpu_feature list_feature[_NVML_LIST_MAX] = {
    [NVML_LIST_COMPUTE] = GPU_FEATURE_COMPUTE_PROCESSES,
    [NVML_LIST_GRAPHICS] = GPU_FEATURE_GRAPHICS_PROCESSES,
    [NVML_LIST_MPS] = GPU_FEATURE_MPS_PROCESSES,
};

static const uint32_t list_kind[_NVML_LIST_MAX] = {
    [NVML_LIST_COMPUTE] = GPU_PROCESS_COMPUTE,
    [NVML_LIST_GRAPHICS] = GPU_PROCESS_GRAPHICS,
    [NVML_LIST_MPS] = GPU_PROCESS_MPS,
};

static unsigned capacity_arg(size_t cap) {
    return (unsigned)MIN(cap, (size_t)UINT_MAX);
}

/* Room for what NVML asked for plus some slack, since lists change between calls. */
static size_t with_slack(unsigned needed) {
    return (size_t)needed + needed / 4 + 4;
}

/*
 * One list query with the two-call protocol: call with the capacity we have; on
 * INSUFFICIENT_SIZE grow to the count NVML asked for and retry, a bounded number of times.
 * Returns 0 with *ret_code and *ret_n (entries written), or -ENOMEM.
 */
static int query_list(struct nvml_state *s, nvml_process_list_fn *fn, nvmlDevice_t handle,
                      nvmlReturn_t *ret_code, size_t *ret_n) {
    nvmlReturn_t code = NVML_SUCCESS;
    unsigned count = 0;

    for (unsigned attempt = 0;; attempt++) {
        count = capacity_arg(s->raw_processes_cap);
        code = fn(handle, &count, s->raw_processes_cap ? (void *)s->raw_processes : NULL);
        if (code != NVML_ERROR_INSUFFICIENT_SIZE || attempt == NVML_SIZE_RETRIES)
            break;
        if (grow_array(&s->raw_processes, &s->raw_processes_cap, with_slack(count),
                       sizeof(nvmlProcessDetail_v1_t)) < 0)
            return -ENOMEM;
    }
    *ret_code = code;
    *ret_n = code == NVML_SUCCESS ? MIN((size_t)count, s->raw_processes_cap) : 0;
    return 0;
}

static inline bool pid_before(const struct gpu_process *a, const struct gpu_process *b) {
    return a->pid < b->pid;
}

static int compare_pid(const void *a, const void *b) {
    return pid_before(a, b) ? -1 : pid_before(b, a) ? 1 : 0;
}

/* Sorts by pid and folds duplicates: kinds are or-ed, memory is the largest known value (each
 * list reports all of the process's memory, so adding would count it twice). */
static size_t merge_by_pid(struct gpu_process *p, size_t n) {
    size_t out = 0;

    if (n == 0)
        return 0;
    if (n <= SMALL_SORT_MAX)
        SMALL_SORT(p, n, pid_before); /* linear when already in pid order */
    else
        qsort(p, n, sizeof(*p), compare_pid);
    for (size_t i = 1; i < n; i++) {
        struct gpu_process *last = &p[out];
        if (p[i].pid != last->pid) {
            p[++out] = p[i];
            continue;
        }
        last->kinds |= p[i].kinds;
        if (p[i].memory_valid &&
            (!last->memory_valid || p[i].used_memory_bytes > last->used_memory_bytes)) {
            last->memory_valid = true;
            last->used_memory_bytes = p[i].used_memory_bytes;
        }
    }
    return out + 1;
}

/* Appends n raw entries of `stride` bytes (pid at 0, used memory at 8, the MIG instance ids at
 * 16 and 20 in every layout the lists use). */
static int append_entries(struct nvml_device *d, size_t *n_out, const unsigned char *raw, size_t n,
                          size_t stride, uint32_t kind) {
    if (grow_array(&d->processes, &d->processes_cap, *n_out + n, sizeof(*d->processes)) < 0)
        return -ENOMEM;

    for (size_t k = 0; k < n; k++) {
        const unsigned char *e = raw + k * stride;
        unsigned pid = 0, gi = GPU_INSTANCE_NONE, ci = GPU_INSTANCE_NONE;
        unsigned long long mem = 0;

        memcpy(&pid, e + offsetof(nvmlProcessInfo_t, pid), sizeof(pid));
        memcpy(&mem, e + offsetof(nvmlProcessInfo_t, usedGpuMemory), sizeof(mem));
        memcpy(&gi, e + offsetof(nvmlProcessInfo_t, gpuInstanceId), sizeof(gi));
        memcpy(&ci, e + offsetof(nvmlProcessInfo_t, computeInstanceId), sizeof(ci));
        d->processes[(*n_out)++] = (struct gpu_process){
            .pid = pid,
            .kinds = kind,
            .memory_valid = mem != NVML_VALUE_NOT_AVAILABLE_ULL,
            .used_memory_bytes = mem != NVML_VALUE_NOT_AVAILABLE_ULL ? mem : 0,
            .gpu_instance = gi,
            .compute_instance = ci,
        };
    }
    return 0;
}

int nvml_read_processes(void *state, size_t index, struct gpu_device_reading *rd) {
    struct nvml_state *s = state;
    struct nvml_device *d = &s->devices[index];
    size_t n = 0;

    for (size_t l = 0; l < _NVML_LIST_MAX; l++) {
        enum gpu_feature f = list_feature[l];
        nvmlReturn_t code = NVML_SUCCESS;
        size_t got = 0;
        int r;

        if (!nvml_feature_usable(d, f))
            continue;
        r = query_list(s, s->lists[l], d->handle, &code, &got);
        if (r < 0)
            return r;
        r = nvml_feature_record(d, f, code);
        if (r < 0) {
            if (nvml_feature_usable(d, f))
                return r; /* lost, or a transient failure: this tick's list is unknown */
            continue;
        }
        r = append_entries(d, &n, s->raw_processes, got, s->list_stride[l], list_kind[l]);
        if (r < 0)
            return r;
    }
    rd->n_processes = merge_by_pid(d->processes, n);
    rd->processes = d->processes;
    return nvml_read_finished(s, d, rd);
}

static bool accept_sample(const struct gpu_util_sample *u, uint64_t last_seen, uint64_t now_us) {
    return u->pid != 0 && u->timestamp_us > last_seen &&
           u->timestamp_us <= now_us + NVML_FUTURE_SLACK_US && u->sm_util <= 100 &&
           u->mem_util <= 100 && u->enc_util <= 100 && u->dec_util <= 100;
}

/* Filters a raw sample into the reading's array; advances nothing yet. */
static void keep_sample(struct nvml_device *d, size_t *n, const struct gpu_util_sample *u,
                        uint64_t now_us, uint64_t *newest) {
    if (!accept_sample(u, d->last_seen_us, now_us))
        return;
    d->utils[(*n)++] = *u;
    *newest = MAX(*newest, u->timestamp_us);
}

/* nvmlDeviceGetProcessesUtilizationInfo. Returns 0 with *ret_code, or -ENOMEM. */
static int utilization_info(struct nvml_state *s, struct nvml_device *d, uint64_t now_us, size_t *n,
                            uint64_t *newest, nvmlReturn_t *ret_code) {
    nvmlProcessesUtilizationInfo_t info = {0};
    nvmlReturn_t code = NVML_SUCCESS;

    for (unsigned attempt = 0;; attempt++) {
        info = (nvmlProcessesUtilizationInfo_t){
            .version = nvmlProcessesUtilizationInfo_v1,
            .processSamplesCount = capacity_arg(s->raw_info_cap),
            .lastSeenTimeStamp = d->last_seen_us,
            .procUtilArray = s->raw_info,
        };
        code = s->api->processes_utilization_info(d->handle, &info);
        if (code != NVML_ERROR_INSUFFICIENT_SIZE || attempt == NVML_SIZE_RETRIES)
            break;
        if (grow_array(&s->raw_info, &s->raw_info_cap, with_slack(info.processSamplesCount),
                       sizeof(*s->raw_info)) < 0)
            return -ENOMEM;
    }
    *ret_code = code;
    if (code != NVML_SUCCESS)
        return 0;

    size_t got = MIN((size_t)info.processSamplesCount, s->raw_info_cap);
    if (grow_array(&d->utils, &d->utils_cap, *n + got, sizeof(*d->utils)) < 0)
        return -ENOMEM;
    for (size_t k = 0; k < got; k++) {
        const nvmlProcessUtilizationInfo_v1_t *e = &s->raw_info[k];
        struct gpu_util_sample u = {e->pid,     e->smUtil,  e->memUtil,
                                    e->encUtil, e->decUtil, e->timeStamp};
        keep_sample(d, n, &u, now_us, newest);
    }
    return 0;
}

/*
 * nvmlDeviceGetProcessUtilization. Its size query (NULL buffer) answers INSUFFICIENT_SIZE
 * with a fixed capacity (typically 100) rather than the number of samples, and some slots of
 * a fill can be garbage; keep_sample() filters those. Returns 0 with *ret_code, or -ENOMEM.
 */
static int utilization_legacy(struct nvml_state *s, struct nvml_device *d, uint64_t now_us,
                              size_t *n, uint64_t *newest, nvmlReturn_t *ret_code) {
    nvmlReturn_t code = NVML_SUCCESS;
    unsigned count = 0;

    for (unsigned attempt = 0;; attempt++) {
        count = capacity_arg(s->raw_legacy_cap);
        code = s->api->process_utilization(d->handle, s->raw_legacy_cap ? s->raw_legacy : NULL,
                                           &count, d->last_seen_us);
        if (code != NVML_ERROR_INSUFFICIENT_SIZE || attempt == NVML_SIZE_RETRIES)
            break;
        if (grow_array(&s->raw_legacy, &s->raw_legacy_cap, with_slack(count),
                       sizeof(*s->raw_legacy)) < 0)
            return -ENOMEM;
    }
    *ret_code = code;
    if (code != NVML_SUCCESS)
        return 0;

    size_t got = MIN((size_t)count, s->raw_legacy_cap);
    if (grow_array(&d->utils, &d->utils_cap, *n + got, sizeof(*d->utils)) < 0)
        return -ENOMEM;
    for (size_t k = 0; k < got; k++) {
        const nvmlProcessUtilizationSample_t *e = &s->raw_legacy[k];
        struct gpu_util_sample u = {e->pid,     e->smUtil,  e->memUtil,
                                    e->encUtil, e->decUtil, e->timeStamp};
        keep_sample(d, n, &u, now_us, newest);
    }
    return 0;
}

typedef int utilization_fn(struct nvml_state *s, struct nvml_device *d, uint64_t now_us, size_t *n,
                           uint64_t *newest, nvmlReturn_t *ret_code);

/*
 * Reads the samples newer than the last accepted one into the device's array, after the
 * d->n_pending that earlier polls kept there. *ret_supported: an API answered (or failed
 * only for now). Returns 0, -ENODEV or -ENOMEM.
 */
static int fetch_samples(struct nvml_state *s, struct nvml_device *d, uint64_t now_us,
                         bool *ret_supported) {
    /* Newest API first; one that turns out unsupported hands over to the next at once. */
    static const struct {
        enum gpu_feature feature;
        utilization_fn *fn;
    } apis[] = {
        {GPU_FEATURE_UTILIZATION_INFO, utilization_info},
        {GPU_FEATURE_UTILIZATION_LEGACY, utilization_legacy},
    };
    uint64_t newest;
    size_t n = d->n_pending;

    /* The wall clock went back (NTP, a resumed VM): the samples from now on are stamped
     * by it, all older than the last one seen, which would hide them until it caught up. */
    if (d->last_seen_us > now_us + NVML_FUTURE_SLACK_US)
        d->last_seen_us = 0;
    newest = d->last_seen_us;
    *ret_supported = false;
    for (size_t a = 0; a < ARRAY_SIZE(apis); a++) {
        nvmlReturn_t code = NVML_SUCCESS;
        int r;

        if (!nvml_feature_usable(d, apis[a].feature))
            continue;
        r = apis[a].fn(s, d, now_us, &n, &newest, &code);
        if (r < 0)
            return r;
        if (code == NVML_ERROR_NOT_FOUND)
            code = NVML_SUCCESS; /* no sample newer than the last one: an idle GPU */
        if (nvml_mode_changed(d, apis[a].feature, code))
            break; /* no samples until the modes are read again; the other API not tried */
        r = nvml_feature_record(d, apis[a].feature, code);
        if (r == -ENODEV)
            return r;
        if (r < 0 && !nvml_feature_usable(d, apis[a].feature))
            continue;
        /* Works, or failed for now (no samples this tick; tried again next tick). */
        *ret_supported = true;
        break;
    }
    d->last_seen_us = newest;
    d->n_pending = n;
    return 0;
}

int nvml_poll(void *state, size_t index, uint64_t now_us, struct gpu_poll_reading *ret) {
    struct nvml_state *s = state;
    struct nvml_device *d = &s->devices[index];
    bool supported;
    int r = 0;

    if (!d->handle)
        return -ENODEV;
    if (!d->mig_enabled)
        r = fetch_samples(s, d, now_us, &supported);
    if (r < 0)
        return r;
    /* Without an energy counter the energy is integrated from power: at the poll rate. */
    if (!nvml_feature_usable(d, GPU_FEATURE_ENERGY) && nvml_feature_usable(d, GPU_FEATURE_POWER)) {
        unsigned mw = 0;

        if (s->api->device_get_power_usage(d->handle, &mw) == NVML_SUCCESS) {
            ret->power_valid = true;
            ret->power_mw = mw;
        }
    }
    return 0;
}

int nvml_read_utilization(void *state, size_t index, uint64_t now_us,
                          struct gpu_device_reading *rd) {
    struct nvml_state *s = state;
    struct nvml_device *d = &s->devices[index];
    int r = 0;

    rd->n_utils = 0;
    rd->utils_supported = false;
    /* Per-process utilisation does not exist in MIG mode (documented); do not ask. */
    if (!rd->mig_enabled)
        r = fetch_samples(s, d, now_us, &rd->utils_supported);
    if (r < 0)
        return r;
    rd->n_utils = rd->mig_enabled ? 0 : d->n_pending;
    rd->utils = d->utils;
    d->n_pending = 0;
    r = nvml_read_unsampled(s, d, rd); /* off in MIG mode, which has no accounting */
    if (r < 0)
        return r;
    if (rd->mig_enabled)
        return nvml_read_mig(s, d, now_us, rd);
    if (d->n_mig > 0) /* MIG was turned off */
        nvml_mig_forget(s, d);
    return 0;
}
