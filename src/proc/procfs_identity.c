/* SPDX-License-Identifier: MIT */
#include "procfs_identity.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

struct pooled_identity {
    struct workload_identity id; /* first: the pointer handed out is this one's */
    uint64_t hash;
    unsigned refs;
    struct pooled_identity *next; /* another identity with the same hash */
};

/* Field by field: the parsers fill these structs by assignment, so padding and the bytes
 * after a string's NUL are not comparable. */
static uint64_t identity_hash(const struct workload_identity *w) {
    const struct slurm_identity *j = &w->slurm;
    uint64_t h = hash_u64(((uint64_t)w->kind << 48) ^ ((uint64_t)w->runtime << 40) ^
                          ((uint64_t)w->qos << 32) ^ ((uint64_t)j->role << 24) ^
                          ((uint64_t)j->job_id_valid << 3) ^ ((uint64_t)j->uid_valid << 2) ^
                          ((uint64_t)j->needs_environ << 1) ^ (uint64_t)j->from_environ);

    h = hash_u64(h ^ ((uint64_t)j->job_id << 32 | j->uid));
    h = hash_u64(h ^ ((uint64_t)j->array_valid << 63) ^
                 ((uint64_t)j->array_job_id << 32 | j->array_task_id));
    h = hash_bytes(w->container_id, strlen(w->container_id), h);
    h = hash_bytes(w->pod_uid, strlen(w->pod_uid), h);
    h = hash_bytes(j->sluid, strlen(j->sluid), h);
    h = hash_bytes(j->step, strlen(j->step), h);
    h = hash_bytes(j->task, strlen(j->task), h);
    return hash_bytes(w->systemd_unit, strlen(w->systemd_unit), h);
}

static bool identity_equal(const struct workload_identity *a, const struct workload_identity *b) {
    const struct slurm_identity *x = &a->slurm, *y = &b->slurm;

    return a->kind == b->kind && a->runtime == b->runtime && a->qos == b->qos &&
           x->role == y->role && x->job_id_valid == y->job_id_valid && x->job_id == y->job_id &&
           x->uid_valid == y->uid_valid && x->uid == y->uid &&
           x->needs_environ == y->needs_environ && x->from_environ == y->from_environ &&
           x->array_valid == y->array_valid && x->array_job_id == y->array_job_id &&
           x->array_task_id == y->array_task_id && strcmp(a->container_id, b->container_id) == 0 &&
           strcmp(a->pod_uid, b->pod_uid) == 0 && strcmp(x->sluid, y->sluid) == 0 &&
           strcmp(x->step, y->step) == 0 && strcmp(x->task, y->task) == 0 &&
           strcmp(a->systemd_unit, b->systemd_unit) == 0;
}

void identity_pool_init(struct identity_pool *p) {
    hashmap_init(&p->by_hash);
}

void identity_pool_done(struct identity_pool *p) {
    void *value;

    /* Only reached with references outstanding on a caller's bug; do not leak then. */
    for (size_t i = 0; hashmap_next(&p->by_hash, &i, NULL, &value);)
        for (struct pooled_identity *e = value, *next; e; e = next) {
            next = e->next;
            free(e);
        }
    hashmap_done(&p->by_hash);
}

int identity_pool_get(struct identity_pool *p, const struct workload_identity *id,
                      const struct workload_identity **ret) {
    uint64_t hash = identity_hash(id);
    struct pooled_identity *head = hashmap_get(&p->by_hash, hash), *e;
    int r;

    for (e = head; e; e = e->next)
        if (identity_equal(&e->id, id)) {
            e->refs++;
            *ret = &e->id;
            return 0;
        }
    e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    e->id = *id;
    e->hash = hash;
    e->refs = 1;
    e->next = head;
    r = hashmap_put(&p->by_hash, hash, e);
    if (r < 0) {
        free(e);
        return r;
    }
    *ret = &e->id;
    return 0;
}

void identity_pool_put(struct identity_pool *p, const struct workload_identity *id) {
    struct pooled_identity *e, *head, **link;

    if (!id)
        return;
    e = (struct pooled_identity *)((uintptr_t)id - offsetof(struct pooled_identity, id));
    if (--e->refs > 0)
        return;
    head = hashmap_get(&p->by_hash, e->hash);
    if (head == e) {
        (void)hashmap_remove(&p->by_hash, e->hash);
        /* One entry fewer than before: this put cannot need to grow the map, nor fail. */
        if (e->next)
            (void)hashmap_put(&p->by_hash, e->hash, e->next);
    } else {
        for (link = &head->next; *link != e; link = &(*link)->next)
            ;
        *link = e->next;
    }
    free(e);
}
