/* SPDX-License-Identifier: MIT */
#include "ledger_past.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"

struct past_workload {
    struct ledger_workload counters; /* key, kind, labels and counters; the rest unused */
    uint64_t dropped_ns;
};

static void free_past(struct past_workload *p) {
    labels_unref(p->counters.id);
    free(p);
}

/* Full: the older half goes (those dropped before the mean time), so that a burst of new
 * workloads costs one pass per LEDGER_PAST_MAX / 2 of them. */
static void drop_older_half(struct ledger *l) {
    uint64_t *keys = malloc(l->past_workloads.size * sizeof(*keys));
    unsigned __int128 sum = 0;
    size_t n = 0;
    uint64_t key, mean;
    void *v;

    if (!keys)
        return; /* one more kept than the bound */
    for (size_t i = 0; hashmap_next(&l->past_workloads, &i, NULL, &v);)
        sum += ((struct past_workload *)v)->dropped_ns;
    mean = (uint64_t)(sum / l->past_workloads.size);
    for (size_t i = 0; hashmap_next(&l->past_workloads, &i, &key, &v);)
        if (((struct past_workload *)v)->dropped_ns <= mean)
            keys[n++] = key;
    for (size_t i = 0; i < n; i++)
        free_past(hashmap_remove(&l->past_workloads, keys[i]));
    free(keys);
}

static int keep(struct ledger *l, const struct ledger_workload *w, uint64_t now_ns) {
    struct past_workload *p;
    int r;

    if (l->past_workloads.size >= LEDGER_PAST_MAX)
        drop_older_half(l);
    p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->counters = (struct ledger_workload){.key = w->key,
                                           .kind = w->kind,
                                           .id = labels_ref(w->id),
                                           .gpu_uj = w->gpu_uj,
                                           .cpu_uj = w->cpu_uj,
                                           .cpu_unseen_valid = w->cpu_unseen_valid};
    memcpy(p->counters.cpu_unseen_uj, w->cpu_unseen_uj, sizeof(w->cpu_unseen_uj));
    p->dropped_ns = now_ns;
    r = hashmap_put(&l->past_workloads, w->key, p);
    if (r < 0)
        free_past(p);
    return r;
}

void ledger_past_keep(struct ledger *l, const struct ledger_workload *w, uint64_t now_ns) {
    (void)keep(l, w, now_ns); /* out of memory: it starts over if it comes back, as before */
}

void ledger_past_resume(struct ledger *l, struct ledger_workload *w, uint64_t now_ns) {
    struct past_workload *p = hashmap_remove(&l->past_workloads, w->key);

    if (!p)
        return;
    if (p->counters.kind == w->kind && now_ns - p->dropped_ns <= LEDGER_PAST_KEEP_NS) {
        w->gpu_uj = p->counters.gpu_uj;
        w->cpu_uj = p->counters.cpu_uj;
        w->cpu_unseen_valid = p->counters.cpu_unseen_valid;
        memcpy(w->cpu_unseen_uj, p->counters.cpu_unseen_uj, sizeof(w->cpu_unseen_uj));
    }
    free_past(p);
}

int ledger_past_restore(struct ledger *l, enum workload_kind kind, const struct snap_identity *id,
                        uint64_t gpu_uj, uint64_t cpu_uj, const uint64_t *cpu_unseen_uj,
                        uint64_t now_ns) {
    struct ledger_workload w = {.kind = kind, .gpu_uj = gpu_uj, .cpu_uj = cpu_uj};
    struct snap_identity labels;
    int r;

    if (!workload_id(kind, id)[0])
        return -EINVAL;
    w.key = workload_key(kind, id);
    w.cpu_unseen_valid = cpu_unseen_uj != NULL;
    if (cpu_unseen_uj)
        memcpy(w.cpu_unseen_uj, cpu_unseen_uj, sizeof(w.cpu_unseen_uj));
    workload_labels_copy(kind, id, &labels);
    w.id = ledger_labels_new(l, &labels);
    if (!w.id)
        return -ENOMEM;
    r = keep(l, &w, now_ns);
    labels_unref(w.id);
    return r;
}

bool ledger_past_next(const struct ledger *l, size_t *iter, struct ledger_workload *ret) {
    void *v;

    if (!hashmap_next(&l->past_workloads, iter, NULL, &v))
        return false;
    *ret = ((const struct past_workload *)v)->counters;
    return true;
}

void ledger_past_done(struct ledger *l) {
    void *v;

    for (size_t i = 0; hashmap_next(&l->past_workloads, &i, NULL, &v);)
        free_past(v);
    hashmap_done(&l->past_workloads);
}
