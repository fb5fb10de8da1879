/* SPDX-License-Identifier: MIT */
#include "snapshot.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "labels.h"
#include "rapl_domain.h"

static const char *const reason_names[_UNATTR_MAX] = {
    [UNATTR_IDLE] = "idle",     [UNATTR_NO_CONSUMER] = "no_consumer", [UNATTR_NO_DATA] = "no_data",
    [UNATTR_SYSTEM] = "system", [UNATTR_DOWNTIME] = "downtime",
};

const char *unattributed_reason_to_string(enum unattributed_reason r) {
    return (unsigned)r < _UNATTR_MAX ? reason_names[r] : NULL;
}

static const char *const split_method_names[_SPLIT_METHOD_MAX] = {
    [SPLIT_LEARNED] = "learned",
    [SPLIT_NO_ACTIVITY] = "no_activity",
    [SPLIT_SINGLE_CLASS] = "single_class",
    [SPLIT_TOO_FEW_ROWS] = "too_few_rows",
    [SPLIT_NOT_IDENTIFIABLE] = "not_identifiable",
};

const char *split_method_to_string(enum split_method m) {
    return (unsigned)m < _SPLIT_METHOD_MAX ? split_method_names[m] : NULL;
}

unsigned snapshot_rapl_domains(const struct snapshot *s) {
    unsigned mask = 0;

    for (size_t i = 0; i < s->n_rapl; i++) {
        int d = rapl_domain_from_string(s->rapl[i].domain);

        if (d >= 0 && d < SNAP_CPU_DOMAINS)
            mask |= 1U << d;
    }
    return mask;
}

struct snapshot *snapshot_new(void) {
    struct snapshot *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    atomic_init(&s->refs, 1);
    return s;
}

struct snapshot *snapshot_ref(struct snapshot *s) {
    if (s)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

/* Drops the label references of every entry. */
static void release_labels(struct snapshot *s) {
    for (size_t i = 0; i < s->n_gpu_processes; i++)
        labels_unref(s->gpu_processes[i].id);
    for (size_t i = 0; i < s->n_workloads; i++)
        labels_unref(s->workloads[i].id);
    for (size_t i = 0; i < s->n_cpu_processes; i++)
        labels_unref(s->cpu_processes[i].id);
}

static void snapshot_free(struct snapshot *s) {
    release_labels(s);
    free(s->gpu_processes);
    free(s->gpus);
    free(s->rapl);
    free(s->workloads);
    free(s->cpu_processes);
    free(s->sources);
    free(s->gpu_allocations);
    free(s);
}

/* Drops a reference; true when it was the last. */
static bool release(struct snapshot *s) {
    return atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1;
}

struct snapshot *snapshot_unref(struct snapshot *s) {
    if (s && release(s))
        snapshot_free(s);
    return NULL;
}

void snapshot_recycle(struct snapshot *s) {
    struct snapshot kept;

    release_labels(s);
    kept = *s;

    *s = (struct snapshot){
        .gpu_processes = kept.gpu_processes,
        .gpus = kept.gpus,
        .rapl = kept.rapl,
        .workloads = kept.workloads,
        .cpu_processes = kept.cpu_processes,
        .sources = kept.sources,
        .gpu_allocations = kept.gpu_allocations,
        .cap_gpu_processes = kept.cap_gpu_processes,
        .cap_rapl = kept.cap_rapl,
        .cap_workloads = kept.cap_workloads,
        .cap_cpu_processes = kept.cap_cpu_processes,
        .cap_sources = kept.cap_sources,
        .cap_gpu_allocations = kept.cap_gpu_allocations,
    };
    atomic_init(&s->refs, 1);
}

struct snapshot_slot {
    pthread_mutex_t lock;
    struct snapshot *current;
    struct snapshot *spare; /* only the publishing thread touches it */
};

struct snapshot_slot *snapshot_slot_new(void) {
    struct snapshot_slot *slot = calloc(1, sizeof(*slot));

    if (!slot)
        return NULL;
    (void)pthread_mutex_init(&slot->lock, NULL);
    return slot;
}

struct snapshot_slot *snapshot_slot_free(struct snapshot_slot *slot) {
    if (!slot)
        return NULL;
    (void)snapshot_unref(slot->current);
    (void)snapshot_unref(slot->spare);
    (void)pthread_mutex_destroy(&slot->lock);
    free(slot);
    return NULL;
}

void snapshot_slot_publish(struct snapshot_slot *slot, struct snapshot *s) {
    struct snapshot *old;

    /* The lock only guards the pointer swap and the reference taken by readers. */
    (void)pthread_mutex_lock(&slot->lock);
    old = slot->current;
    slot->current = s;
    (void)pthread_mutex_unlock(&slot->lock);
    if (!old || !release(old))
        return; /* a reader still holds it and frees it when done */
    if (slot->spare)
        snapshot_free(old);
    else {
        atomic_init(&old->refs, 1);
        slot->spare = old;
    }
}

struct snapshot *snapshot_slot_take_spare(struct snapshot_slot *slot) {
    struct snapshot *s = slot->spare;

    slot->spare = NULL;
    if (s)
        snapshot_recycle(s);
    return s;
}

struct snapshot *snapshot_slot_get(struct snapshot_slot *slot) {
    struct snapshot *s;

    (void)pthread_mutex_lock(&slot->lock);
    s = snapshot_ref(slot->current);
    (void)pthread_mutex_unlock(&slot->lock);
    return s;
}

const char *mig_activity_to_string(enum mig_activity m) {
    static const char *const names[_MIG_ACTIVITY_MAX] = {
        [MIG_ACTIVITY_SIZE] = "size",
        [MIG_ACTIVITY_GPM] = "gpm",
        [MIG_ACTIVITY_DCGM] = "dcgm",
    };
    return (unsigned)m < _MIG_ACTIVITY_MAX ? names[m] : NULL;
}

const char *gpu_sharing_to_string(enum gpu_sharing m) {
    static const char *const names[_SHARING_MAX] = {
        [SHARING_NONE] = "none",
        [SHARING_EXCLUSIVE] = "exclusive",
        [SHARING_TIME_SLICING] = "time-slicing",
        [SHARING_MPS] = "mps",
        [SHARING_MIG] = "mig",
    };
    return (unsigned)m < _SHARING_MAX ? names[m] : NULL;
}
