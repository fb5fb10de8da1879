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

bool ledger_past_kind(enum workload_kind kind) {
    return kind == WORKLOAD_SYSTEMD_SERVICE;
}

/* Full: the one dropped first goes (the key breaks a tie, so the choice is stable). */
static void drop_oldest(struct ledger *l) {
    uint64_t key, oldest_key = 0, oldest_ns = UINT64_MAX;
    void *v;

    for (size_t i = 0; hashmap_next(&l->past_workloads, &i, &key, &v);) {
        const struct past_workload *p = v;

        if (p->dropped_ns < oldest_ns || (p->dropped_ns == oldest_ns && key < oldest_key)) {
            oldest_ns = p->dropped_ns;
            oldest_key = key;
        }
    }
    if (oldest_ns != UINT64_MAX)
        free_past(hashmap_remove(&l->past_workloads, oldest_key));
}

static int keep(struct ledger *l, const struct ledger_workload *w, uint64_t dropped_ns) {
    struct past_workload *p, *had;
    int r;

    had = hashmap_remove(&l->past_workloads, w->key); /* a key twice: the later one counts */
    if (had)
        free_past(had);
    if (l->past_workloads.size >= LEDGER_PAST_MAX)
        drop_oldest(l);
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
    p->dropped_ns = dropped_ns;
    r = hashmap_put(&l->past_workloads, w->key, p);
    if (r < 0)
        free_past(p);
    return r;
}

void ledger_past_keep(struct ledger *l, const struct ledger_workload *w, uint64_t now_ns) {
    if (ledger_past_kind(w->kind))
        (void)keep(l, w, now_ns); /* out of memory: it starts over if it comes back, as before */
}

void ledger_past_resume(struct ledger *l, struct ledger_workload *w, uint64_t now_ns) {
    struct past_workload *p;

    if (l->past_workloads.size == 0)
        return;
    p = hashmap_remove(&l->past_workloads, w->key);
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
                        uint64_t age_us, uint64_t now_ns) {
    struct ledger_workload w = {.kind = kind, .gpu_uj = gpu_uj, .cpu_uj = cpu_uj};
    uint64_t age_ns = age_us > LEDGER_PAST_KEEP_NS / 1000 ? UINT64_MAX : age_us * 1000;
    struct snap_identity labels;
    int r;

    if (!workload_id(kind, id)[0])
        return -EINVAL;
    if (!ledger_past_kind(kind) || age_ns > LEDGER_PAST_KEEP_NS)
        return 0;
    w.key = workload_key(kind, id);
    w.cpu_unseen_valid = cpu_unseen_uj != NULL;
    if (cpu_unseen_uj)
        memcpy(w.cpu_unseen_uj, cpu_unseen_uj, sizeof(w.cpu_unseen_uj));
    workload_labels_copy(kind, id, &labels);
    w.id = ledger_labels_new(l, &labels);
    if (!w.id)
        return -ENOMEM;
    /* Before this run's clock began (a reboot since): as dropped at its start. */
    r = keep(l, &w, now_ns > age_ns ? now_ns - age_ns : 0);
    labels_unref(w.id);
    return r;
}

bool ledger_past_next(const struct ledger *l, size_t *iter, uint64_t now_ns,
                      struct ledger_workload *ret, uint64_t *ret_age_us) {
    void *v;

    while (hashmap_next(&l->past_workloads, iter, NULL, &v)) {
        const struct past_workload *p = v;

        if (now_ns - p->dropped_ns > LEDGER_PAST_KEEP_NS)
            continue; /* expired: not resumed, not saved, gone when the set is full */
        *ret = p->counters;
        *ret_age_us = now_ns > p->dropped_ns ? (now_ns - p->dropped_ns) / 1000 : 0;
        return true;
    }
    return false;
}

void ledger_past_done(struct ledger *l) {
    void *v;

    for (size_t i = 0; hashmap_next(&l->past_workloads, &i, NULL, &v);)
        free_past(v);
    hashmap_done(&l->past_workloads);
}
