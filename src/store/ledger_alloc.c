/* SPDX-License-Identifier: MIT */
/* GPU allocation energy in the ledger: pods charged for holding a GPU (policy allocation). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "macro.h"

/* One series per (GPU, pod name, pod UID): a pod recreated under the same name, or one
 * whose UID becomes known, is a new series, so labels never change on a live one. Keyed by
 * the strings as kept (cut to their fields), so that an entry restored from the state file
 * has the key of the live one, and two names that differ only past the cut, which would
 * export the same labels, are one series. */
static uint64_t allocation_key(unsigned gpu, const char *namespace_, const char *pod,
                               const char *pod_uid) {
    uint64_t h = hash_u64((uint64_t)gpu + 1);

    h = hash_bytes(namespace_, strnlen(namespace_, SNAP_LABEL_MAX - 1), h);
    h = hash_bytes("/", 1, h);
    h = hash_bytes(pod, strnlen(pod, SNAP_LABEL_MAX - 1), h);
    h = hash_bytes("/", 1, h);
    return hash_bytes(pod_uid, strnlen(pod_uid, SNAP_ID_MAX - 1), h);
}

/* The entry of (gpu, namespace_, pod, pod_uid), made when new. */
static int allocation_get(struct ledger *l, unsigned gpu, const char *namespace_, const char *pod,
                          const char *pod_uid, struct ledger_allocation **ret) {
    uint64_t key = allocation_key(gpu, namespace_, pod, pod_uid);
    struct ledger_allocation *a = hashmap_get(&l->allocations, key);
    int r;

    if (!a) {
        a = calloc(1, sizeof(*a));
        if (!a)
            return -ENOMEM;
        *a = (struct ledger_allocation){.key = key, .gpu = gpu};
        (void)snprintf(a->namespace_, sizeof(a->namespace_), "%s", namespace_);
        (void)snprintf(a->pod, sizeof(a->pod), "%s", pod);
        (void)snprintf(a->pod_uid, sizeof(a->pod_uid), "%s", pod_uid);
        r = hashmap_put(&l->allocations, key, a);
        if (r < 0) {
            free(a);
            return r;
        }
    }
    *ret = a;
    return 0;
}

int ledger_add_allocation_energy(struct ledger *l, unsigned gpu, const char *namespace_,
                                 const char *pod, const char *pod_uid, unsigned replicas,
                                 uint64_t uj, uint64_t now_ns) {
    struct ledger_allocation *a;
    int r;

    namespace_ = namespace_ ? namespace_ : "";
    pod = pod ? pod : "";
    pod_uid = pod_uid ? pod_uid : "";
    r = allocation_get(l, gpu, namespace_, pod, pod_uid, &a);
    if (r < 0)
        return r;
    /* The pod's workload first: should it fail, nothing is charged, and the caller books
     * the energy as no_data once. */
    if (a->pod_uid[0] != '\0') {
        struct snap_identity id = {0};

        copy_cut(id.pod, sizeof(id.pod), a->pod);
        copy_cut(id.namespace_, sizeof(id.namespace_), a->namespace_);
        copy_cut(id.pod_uid, sizeof(id.pod_uid), a->pod_uid);
        r = ledger_add_workload_gpu_energy(l, &id, uj, now_ns);
        if (r < 0)
            return r;
    }
    a->energy_uj += uj;
    a->replicas = replicas;
    a->active = true;
    a->last_seen_ns = now_ns;
    return 0;
}

int ledger_allocation_restore(struct ledger *l, unsigned gpu, const char *namespace_,
                              const char *pod, const char *pod_uid, unsigned replicas, uint64_t uj,
                              uint64_t now_ns) {
    struct ledger_allocation *a;
    int r = allocation_get(l, gpu, namespace_, pod, pod_uid, &a);

    if (r < 0)
        return r;
    a->energy_uj = uj;
    a->replicas = replicas;
    a->active = false;
    a->last_seen_ns = now_ns;
    return 0;
}

void ledger_sweep_allocations(struct ledger *l, uint64_t tick_start_ns, uint64_t now_ns,
                              uint64_t retention_ns) {
    size_t n = 0;
    uint64_t key;
    void *value;

    if (grow_array(&l->sweep_keys, &l->sweep_cap, l->allocations.size, sizeof(*l->sweep_keys)) < 0)
        return; /* next tick; sweeping late loses nothing */
    for (size_t i = 0; hashmap_next(&l->allocations, &i, &key, &value);) {
        struct ledger_allocation *a = value;

        a->active = a->last_seen_ns >= tick_start_ns;
        if (!a->active && now_ns - a->last_seen_ns > retention_ns)
            l->sweep_keys[n++] = key;
    }
    for (size_t i = 0; i < n; i++)
        free(hashmap_remove(&l->allocations, l->sweep_keys[i]));
}

static int compare_allocation(const void *x, const void *y) {
    const struct snap_gpu_allocation *a = x, *b = y;
    int c;

    if (a->gpu != b->gpu)
        return a->gpu < b->gpu ? -1 : 1;
    if ((c = strcmp(a->namespace_, b->namespace_)) != 0)
        return c;
    if ((c = strcmp(a->pod, b->pod)) != 0)
        return c;
    return strcmp(a->pod_uid, b->pod_uid);
}

int ledger_snapshot_allocations(const struct ledger *l, struct snapshot *s) {
    void *value;

    s->n_gpu_allocations = 0;
    if (l->allocations.size == 0)
        return 0;
    if (grow_array(&s->gpu_allocations, &s->cap_gpu_allocations, l->allocations.size,
                   sizeof(*s->gpu_allocations)) < 0)
        return -ENOMEM;
    for (size_t i = 0; hashmap_next(&l->allocations, &i, NULL, &value);) {
        const struct ledger_allocation *a = value;
        struct snap_gpu_allocation *d = &s->gpu_allocations[s->n_gpu_allocations++];

        *d = (struct snap_gpu_allocation){
            .gpu = a->gpu,
            .replicas = a->replicas,
            .energy_uj = a->energy_uj,
            .active = a->active,
        };
        memcpy(d->namespace_, a->namespace_, sizeof(d->namespace_));
        memcpy(d->pod, a->pod, sizeof(d->pod));
        memcpy(d->pod_uid, a->pod_uid, sizeof(d->pod_uid));
    }
    qsort(s->gpu_allocations, s->n_gpu_allocations, sizeof(*s->gpu_allocations),
          compare_allocation);
    return 0;
}
