/* SPDX-License-Identifier: MIT */
/*
 * Accounting mode (nvidia-smi -am 1, what my-gpu-exporter requires): the driver keeps a
 * circular buffer of the processes that ran on the GPU, finished ones included, with each
 * one's start time, active time and lifetime utilisation. A process that started and
 * exited between two polls is then known even when it left no utilisation sample. Only
 * the processes that finished since the last reading are asked for their statistics: the
 * pids already reported are remembered, as often as the buffer lists each (as long as it
 * does), so that a pid listed once more is a process that reused it, and is asked for: the
 * driver then answers with the most recently finished process of that pid.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>

#include "macro.h"
#include "small_sort.h"
#include "nvml_internal.h"

/* How many times pid is in the sorted v[0..n). */
static size_t count_of(const uint32_t *v, size_t n, uint32_t pid) {
    size_t lo = 0, hi = n, first;

    while (lo < hi) { /* the first >= pid */
        size_t mid = lo + (hi - lo) / 2;

        if (v[mid] < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    first = lo;
    while (lo < n && v[lo] == pid)
        lo++;
    return lo - first;
}

static bool is_running(const struct gpu_device_reading *rd, uint32_t pid) {
    for (size_t lo = 0, hi = rd->n_processes; lo < hi;) { /* sorted by pid */
        size_t mid = lo + (hi - lo) / 2;
        if (rd->processes[mid].pid == pid)
            return true;
        if (rd->processes[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* The buffer's pids into s->raw_pids. Returns 0 with *ret_n, or the errno of the call. */
static int read_pids(struct nvml_state *s, struct nvml_device *d, size_t *ret_n) {
    nvmlReturn_t code = NVML_SUCCESS;
    unsigned count = 0;

    for (unsigned attempt = 0;; attempt++) {
        count = (unsigned)MIN(s->raw_pids_cap, (size_t)UINT32_MAX);
        code = s->api->accounting_pids(d->handle, &count, s->raw_pids_cap ? s->raw_pids : NULL);
        if (code != NVML_ERROR_INSUFFICIENT_SIZE || attempt == NVML_SIZE_RETRIES)
            break;
        if (grow_array(&s->raw_pids, &s->raw_pids_cap, (size_t)count + 64, sizeof(*s->raw_pids)) <
            0)
            return -ENOMEM;
    }
    if (nvml_mode_changed(d, GPU_FEATURE_ACCOUNTING, code)) {
        d->accounting_enabled = false; /* turned off, or MIG on: read again next tick */
        return -EAGAIN;
    }
    int r = nvml_feature_record(d, GPU_FEATURE_ACCOUNTING, code);
    if (r < 0)
        return r;
    *ret_n = MIN((size_t)count, s->raw_pids_cap);
    return 0;
}

/* One pid not running and not reported yet: its statistics, reported once it finished.
 * Returns 1 when it is to be remembered as reported, 0 when not, or -ENODEV / -ENOMEM. */
static int read_one(struct nvml_state *s, struct nvml_device *d, uint32_t pid, bool report,
                    size_t *n_finished) {
    nvmlAccountingStats_t st = {0};
    nvmlReturn_t code = s->api->accounting_stats(d->handle, pid, &st);

    if (code == NVML_ERROR_GPU_IS_LOST)
        return -ENODEV;
    if (code != NVML_SUCCESS || st.isRunning)
        return 0; /* gone from the buffer meanwhile, or not finished yet */
    if (report) {
        if (grow_array(&d->finished, &d->finished_cap, *n_finished + 1, sizeof(*d->finished)) < 0)
            return -ENOMEM;
        d->finished[(*n_finished)++] = (struct gpu_finished_process){
            .pid = pid,
            .start_us = st.startTime,
            .active_us = st.time * 1000,
            .gpu_util = st.gpuUtilization <= 100 ? st.gpuUtilization : 0,
            .max_memory_bytes =
                st.maxMemoryUsage != NVML_VALUE_NOT_AVAILABLE_ULL ? st.maxMemoryUsage : 0,
        };
    }
    return 1;
}

/* The pids just made (next) become the current ones, and the old array the next one's
 * room: the two trade places, so nothing is allocated once warm. */
static void swap_pids(uint32_t **cur, size_t *cur_cap, uint32_t **next, size_t *next_cap) {
    uint32_t *old = *cur;
    size_t old_cap = *cur_cap;

    *cur = *next;
    *cur_cap = *next_cap;
    *next = old;
    *next_cap = old_cap;
}

int nvml_read_finished(struct nvml_state *s, struct nvml_device *d, struct gpu_device_reading *rd) {
    /* The first reading only learns what had finished before joulestat looked. */
    bool report = d->accounting_primed;
    size_t n = 0, n_kept = 0, n_finished = 0;
    uint32_t *kept;
    int r;

    rd->n_finished = 0;
    if (!d->accounting_enabled || !nvml_feature_usable(d, GPU_FEATURE_ACCOUNTING))
        return 0;
    r = read_pids(s, d, &n);
    if (r < 0)
        return r == -ENODEV ? r : 0;
    if (grow_array(&d->accounted_next, &d->accounted_next_cap, MAX(n, (size_t)1),
                   sizeof(*d->accounted_next)) < 0)
        return -ENOMEM;
    kept = d->accounted_next;
    if (n > 1)
        qsort(s->raw_pids, n, sizeof(*s->raw_pids), compare_u32);
    for (size_t i = 0, group; i < n; i += group) {
        uint32_t pid = s->raw_pids[i];
        size_t known, keep;

        for (group = 1; i + group < n && s->raw_pids[i + group] == pid; group++)
            ;
        if (is_running(rd, pid))
            continue; /* asked again once it has finished */
        known = count_of(d->accounted, d->n_accounted, pid);
        keep = group;
        if (group > known) { /* finished since: a new pid, or one reused */
            r = read_one(s, d, pid, report, &n_finished);
            if (r < 0)
                return r;
            if (r == 0)
                keep = known; /* not finished yet: asked again at the next reading */
        }
        for (size_t k = 0; k < keep; k++)
            kept[n_kept++] = pid; /* sorted, as the buffer's pids now are */
    }
    swap_pids(&d->accounted, &d->accounted_cap, &d->accounted_next, &d->accounted_next_cap);
    d->n_accounted = n_kept;
    d->accounting_primed = true;
    rd->accounting = true;
    rd->n_finished = n_finished;
    rd->finished = d->finished;
    return 0;
}

#define UNSAMPLED_SAMPLED UINT32_MAX /* gpu_util of a new process sampled in the reading */

/* Index of pid in the reading's unsampled processes (sorted by pid), or n. */
static size_t find_unsampled(const struct gpu_unsampled_process *u, size_t n, uint32_t pid) {
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (u[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && u[lo].pid == pid ? lo : n;
}

/* The running processes new since the last reading, into d->unsampled (pids only), and
 * the reading's running pids into d->running_next. Returns how many, or -ENOMEM. */
static ssize_t new_running(struct nvml_device *d, const struct gpu_device_reading *rd) {
    size_t n_new = 0, j = 0;

    if (grow_array(&d->running_next, &d->running_next_cap, MAX(rd->n_processes, (size_t)1),
                   sizeof(*d->running_next)) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < rd->n_processes; i++) { /* both sorted by pid: one merge */
        uint32_t pid = rd->processes[i].pid;

        d->running_next[i] = pid;
        while (j < d->n_running && d->running[j] < pid)
            j++;
        if (!d->running_primed || (j < d->n_running && d->running[j] == pid))
            continue;
        if (grow_array(&d->unsampled, &d->unsampled_cap, n_new + 1, sizeof(*d->unsampled)) < 0)
            return -ENOMEM;
        d->unsampled[n_new++] = (struct gpu_unsampled_process){.pid = pid};
    }
    return (ssize_t)n_new;
}

/*
 * A job that started shortly before the reading has left no utilisation sample yet (the
 * driver samples each process once a period), though its energy is in this window. The
 * driver knows it already: accounting statistics "can be queried during life time of the
 * process and after its termination" (NVML reference, nvmlDeviceGetAccountingStats), with
 * isRunning set, gpuUtilization over its lifetime so far and time 0 until it terminates
 * (nvmlAccountingStats_t). Only processes new to the running list and not sampled in this
 * reading are asked, once each: the calls grow with new processes, not running ones.
 */
int nvml_read_unsampled(struct nvml_state *s, struct nvml_device *d,
                        struct gpu_device_reading *rd) {
    size_t n_out = 0, n_new;
    ssize_t got;

    rd->n_unsampled = 0;
    if (!rd->accounting) {
        d->running_primed = false; /* mode turned off: what started meanwhile is unknown */
        return 0;
    }
    got = new_running(d, rd);
    if (got < 0)
        return (int)got;
    n_new = (size_t)got;
    for (size_t k = 0; n_new > 0 && k < rd->n_utils; k++) {
        size_t i = find_unsampled(d->unsampled, n_new, rd->utils[k].pid);

        if (i < n_new)
            d->unsampled[i].gpu_util = UNSAMPLED_SAMPLED; /* its samples say more */
    }
    for (size_t i = 0; i < n_new; i++) {
        nvmlAccountingStats_t st = {0};
        uint32_t pid = d->unsampled[i].pid;
        nvmlReturn_t code;

        if (d->unsampled[i].gpu_util == UNSAMPLED_SAMPLED)
            continue;
        code = s->api->accounting_stats(d->handle, pid, &st);
        if (code == NVML_ERROR_GPU_IS_LOST)
            return -ENODEV;
        if (code != NVML_SUCCESS || !st.isRunning || st.gpuUtilization > 100 || st.startTime == 0)
            continue; /* not in the buffer, finished meanwhile, or no utilisation */
        d->unsampled[n_out++] = (struct gpu_unsampled_process){
            .pid = pid, .start_us = st.startTime, .gpu_util = st.gpuUtilization};
    }
    swap_pids(&d->running, &d->running_cap, &d->running_next, &d->running_next_cap);
    d->n_running = rd->n_processes;
    d->running_primed = true;
    rd->n_unsampled = n_out;
    rd->unsampled = d->unsampled;
    return 0;
}

void nvml_accounting_forget(struct nvml_device *d) {
    d->n_accounted = 0;
    d->accounting_primed = false;
    d->n_running = 0;
    d->running_primed = false;
}

void nvml_accounting_free(struct nvml_device *d) {
    free(d->accounted);
    free(d->accounted_next);
    free(d->finished);
    free(d->running);
    free(d->running_next);
    free(d->unsampled);
}
