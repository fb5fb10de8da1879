/* SPDX-License-Identifier: MIT */
#include "snapshot.h"

#include <pthread.h>
#include <stdlib.h>

#include "rapl_units.h"

static const char *const reason_names[_UNATTR_MAX] = {
    [UNATTR_IDLE] = "idle",
    [UNATTR_NO_CONSUMER] = "no_consumer",
    [UNATTR_NO_DATA] = "no_data",
    [UNATTR_SYSTEM] = "system",
};

const char *unattributed_reason_to_string(enum unattributed_reason r) {
    return (unsigned)r < _UNATTR_MAX ? reason_names[r] : NULL;
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

struct snapshot *snapshot_unref(struct snapshot *s) {
    if (!s)
        return NULL;
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return NULL;
    free(s->gpu_processes);
    free(s->gpus);
    free(s->rapl);
    free(s->workloads);
    free(s->cpu_processes);
    free(s->sources);
    free(s->gpu_allocations);
    free(s);
    return NULL;
}

struct snapshot_slot {
    pthread_mutex_t lock;
    struct snapshot *current;
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
    (void)snapshot_unref(old);
}

struct snapshot *snapshot_slot_get(struct snapshot_slot *slot) {
    struct snapshot *s;

    (void)pthread_mutex_lock(&slot->lock);
    s = snapshot_ref(slot->current);
    (void)pthread_mutex_unlock(&slot->lock);
    return s;
}
