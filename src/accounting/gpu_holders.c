/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "gpu_accounting_internal.h"
#include "hashmap.h"
#include "macro.h"
#include "pod_resources_gpu.h"

/* Whether an entry that does not name its parent GPU is one of this GPU's MIG instances. */
static bool on_instance_of(const struct gpu_alloc *e, const struct gpu_device_reading *d) {
    for (size_t k = 0; k < d->n_mig; k++)
        if (d->mig[k].uuid[0] && strcmp(d->mig[k].uuid, e->device) == 0)
            return true;
    return false;
}

/* A pod the Kubernetes API says has finished (Succeeded, Failed): kubelets have listed the
 * devices of such pods, which would go on being charged for the GPU (and share it with
 * the pod given it next). */
static bool pod_finished(const struct gpu_accounting *a, const struct gpu_alloc *e) {
    const char *uid;

    return a->lookup_uid &&
           a->lookup_uid(a->lookup_userdata, e->namespace_, e->pod, &uid) == -ESRCH;
}

/* The pods holding this GPU, one holder per pod weighted by the ids it holds (the table is
 * sorted by GPU, namespace, pod, so a pod's entries are adjacent): the entries naming the
 * GPU, then those naming one of its MIG instances by the instance's own UUID. */
int holders_collect(struct gpu_accounting *a, const struct gpu_device_reading *d, size_t *ret_n) {
    const struct gpu_alloc *first = NULL, *unplaced = NULL;
    size_t n_entries, n_unplaced = 0, n = 0;
    int r;

    *ret_n = 0;
    if (a->opts.idle_policy != IDLE_POLICY_ALLOCATION)
        return 0;
    n_entries = gpu_alloc_table_find(a->allocs, d->uuid, &first);
    if (d->n_mig > 0)
        n_unplaced = gpu_alloc_table_unplaced(a->allocs, &unplaced);
    for (size_t i = 0; i < n_entries + n_unplaced; i++) {
        const struct gpu_alloc *e = i < n_entries ? &first[i] : &unplaced[i - n_entries];

        if (i >= n_entries && !on_instance_of(e, d))
            continue;
        if (pod_finished(a, e))
            continue;
        if (n > 0 && strcmp(a->holder_first[n - 1]->namespace_, e->namespace_) == 0 &&
            strcmp(a->holder_first[n - 1]->pod, e->pod) == 0) {
            a->holders[n - 1].weight += e->replicas;
            continue;
        }
        if (n + 1 > a->holders_cap) {
            size_t c1 = a->holders_cap, c2 = a->holders_cap, c3 = a->holders_cap;

            r = grow_array(&a->holders, &c1, n + 1, sizeof(*a->holders));
            if (r >= 0)
                r = grow_array(&a->holder_parts, &c2, n + 1, sizeof(*a->holder_parts));
            if (r >= 0)
                r = grow_array(&a->holder_first, &c3, n + 1, sizeof(*a->holder_first));
            if (r < 0)
                return r;
            a->holders_cap = MIN(c1, MIN(c2, c3));
        }
        a->holder_first[n] = e;
        a->holders[n] = (struct split_consumer){
            .key = hash_bytes(e->pod, strlen(e->pod),
                              hash_bytes(e->namespace_, strlen(e->namespace_), 1)),
            .weight = e->replicas,
        };
        n++;
    }
    r = split_scratch_reserve(&a->split, n);
    if (r < 0)
        return r;
    *ret_n = n;
    return 0;
}

/* Books the holders' parts; on failure the parts not booked yet become no_data. */
int holders_book(struct gpu_accounting *a, size_t n, struct ledger_gpu *g, unsigned gpu,
                 uint64_t now_ns, struct ledger *ledger) {
    for (size_t i = 0; i < n; i++) {
        const struct gpu_alloc *e = a->holder_first[i];
        const char *uid = "";
        int r;

        if (!a->lookup_uid || a->lookup_uid(a->lookup_userdata, e->namespace_, e->pod, &uid) < 0)
            uid = "";
        r = ledger_add_allocation_energy(ledger, gpu, e->namespace_, e->pod, uid,
                                         (unsigned)a->holders[i].weight, a->holder_parts[i],
                                         now_ns);
        if (r < 0) {
            for (size_t j = i; j < n; j++)
                g->unattributed_uj[UNATTR_NO_DATA] += a->holder_parts[j];
            return r;
        }
        g->allocated_uj += a->holder_parts[i];
    }
    return 0;
}
