/* SPDX-License-Identifier: MIT */
#include "kube_table.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "macro.h"

struct pod_entry {
    struct kube_pod_info info;
    const char *config_hash; /* or NULL */
    uint64_t deleted_ns;
};

struct container_entry {
    const char *id;
    const char *name;
    const struct pod_entry *pod;
};

struct kube_table {
    atomic_uint refs;
    uint64_t generation;
    size_t n_pods, n_live;
    struct pod_entry *pods;
    size_t n_containers;
    struct container_entry *containers;
    /* String keys are hashed to 64 bits; on a collision the next key up is probed, so a
     * lookup walks keys until it finds its string or an empty slot. */
    struct hashmap by_uid, by_hash, by_container, by_name;
    char *strings; /* every string of the table, in one block */
};

enum { SEED_UID = 1, SEED_HASH, SEED_CONTAINER, SEED_NAME };

static uint64_t str_key(const char *s, uint64_t seed) {
    return hash_bytes(s, strlen(s), seed);
}

static uint64_t name_key(const char *ns, const char *name) {
    return hash_bytes(name, strlen(name), str_key(ns, SEED_NAME));
}

static bool match_uid(const void *v, const char *a, const char *b) {
    return strcmp(((const struct pod_entry *)v)->info.uid, a) == 0;
}

static bool match_hash(const void *v, const char *a, const char *b) {
    return strcmp(((const struct pod_entry *)v)->config_hash, a) == 0;
}

static bool match_container(const void *v, const char *a, const char *b) {
    return strcmp(((const struct container_entry *)v)->id, a) == 0;
}

static bool match_name(const void *v, const char *a, const char *b) {
    const struct pod_entry *p = v;

    return strcmp(p->info.namespace_, a) == 0 && strcmp(p->info.name, b) == 0;
}

typedef bool (*match_fn)(const void *value, const char *a, const char *b);

/* The value whose strings match, or NULL; *ret_key is its key or the first free one. */
static void *probe(const struct hashmap *m, uint64_t key, match_fn match, const char *a,
                   const char *b, uint64_t *ret_key) {
    for (;; key++) {
        void *v = hashmap_get(m, key);

        if (!v || match(v, a, b)) {
            if (ret_key)
                *ret_key = key;
            return v;
        }
    }
}

/* Which of two entries with the same name a lookup should find: live, else latest deleted. */
static bool pod_preferred(const struct pod_entry *candidate, const struct pod_entry *current) {
    if (current->deleted_ns == 0)
        return false;
    return candidate->deleted_ns == 0 || candidate->deleted_ns > current->deleted_ns;
}

/* Inserts value under (a, b); on a duplicate keeps the preferred pod. */
static int index_put(struct hashmap *m, uint64_t key, match_fn match, const char *a, const char *b,
                     void *value, const struct pod_entry *pod) {
    void *old = probe(m, key, match, a, b, &key);

    if (old) {
        const struct pod_entry *old_pod =
            match == match_container ? ((const struct container_entry *)old)->pod : old;

        if (!pod_preferred(pod, old_pod))
            return 0;
    }
    return hashmap_put(m, key, value);
}

static size_t strings_size(const struct kube_pod *const *pods, size_t n) {
    size_t size = 0;

    for (size_t i = 0; i < n; i++) {
        const struct kube_pod *p = pods[i];

        size += strlen(p->uid) + strlen(p->name) + strlen(p->namespace_) + 3;
        if (p->config_hash)
            size += strlen(p->config_hash) + 1;
        for (size_t c = 0; c < p->n_containers; c++)
            size += strlen(p->containers[c].id) + strlen(p->containers[c].name) + 2;
    }
    return size;
}

static const char *copy_string(char **cursor, const char *s) {
    size_t len = strlen(s) + 1;
    char *dst = *cursor;

    memcpy(dst, s, len);
    *cursor += len;
    return dst;
}

static int index_all(struct kube_table *t) {
    int r = 0;

    for (size_t i = 0; i < t->n_pods && r >= 0; i++) {
        struct pod_entry *p = &t->pods[i];

        r = index_put(&t->by_uid, str_key(p->info.uid, SEED_UID), match_uid, p->info.uid, NULL, p,
                      p);
        if (r >= 0 && p->config_hash)
            r = index_put(&t->by_hash, str_key(p->config_hash, SEED_HASH), match_hash,
                          p->config_hash, NULL, p, p);
        if (r >= 0)
            r = index_put(&t->by_name, name_key(p->info.namespace_, p->info.name), match_name,
                          p->info.namespace_, p->info.name, p, p);
    }
    for (size_t i = 0; i < t->n_containers && r >= 0; i++) {
        struct container_entry *c = &t->containers[i];

        r = index_put(&t->by_container, str_key(c->id, SEED_CONTAINER), match_container, c->id,
                      NULL, c, c->pod);
    }
    return r;
}

int kube_table_build(const struct kube_pod *const *pods, size_t n_pods, uint64_t generation,
                     struct kube_table **ret_table) {
    struct kube_table *t = calloc(1, sizeof(*t));
    size_t n_containers = 0;
    char *cursor;

    if (!t)
        return -ENOMEM;
    atomic_init(&t->refs, 1);
    t->generation = generation;
    hashmap_init(&t->by_uid);
    hashmap_init(&t->by_hash);
    hashmap_init(&t->by_container);
    hashmap_init(&t->by_name);
    for (size_t i = 0; i < n_pods; i++)
        n_containers += pods[i]->n_containers;
    t->pods = calloc(MAX(n_pods, 1), sizeof(*t->pods));
    t->containers = calloc(MAX(n_containers, 1), sizeof(*t->containers));
    t->strings = malloc(MAX(strings_size(pods, n_pods), 1));
    if (!t->pods || !t->containers || !t->strings) {
        (void)kube_table_unref(t);
        return -ENOMEM;
    }

    cursor = t->strings;
    for (size_t i = 0; i < n_pods; i++) {
        const struct kube_pod *src = pods[i];
        struct pod_entry *p = &t->pods[t->n_pods++];

        p->info.uid = copy_string(&cursor, src->uid);
        p->info.name = copy_string(&cursor, src->name);
        p->info.namespace_ = copy_string(&cursor, src->namespace_);
        p->info.deleted = src->deleted_ns != 0;
        p->info.finished = src->finished;
        p->config_hash = src->config_hash ? copy_string(&cursor, src->config_hash) : NULL;
        p->deleted_ns = src->deleted_ns;
        if (!p->info.deleted)
            t->n_live++;
        for (size_t c = 0; c < src->n_containers; c++)
            t->containers[t->n_containers++] = (struct container_entry){
                .id = copy_string(&cursor, src->containers[c].id),
                .name = copy_string(&cursor, src->containers[c].name),
                .pod = p,
            };
    }
    if (index_all(t) < 0) {
        (void)kube_table_unref(t);
        return -ENOMEM;
    }
    *ret_table = t;
    return 0;
}

struct kube_table *kube_table_ref(struct kube_table *t) {
    if (t)
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    return t;
}

struct kube_table *kube_table_unref(struct kube_table *t) {
    if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return NULL;
    hashmap_done(&t->by_uid);
    hashmap_done(&t->by_hash);
    hashmap_done(&t->by_container);
    hashmap_done(&t->by_name);
    free(t->pods);
    free(t->containers);
    free(t->strings);
    free(t);
    return NULL;
}

uint64_t kube_table_generation(const struct kube_table *t) {
    return t->generation;
}

size_t kube_table_n_pods(const struct kube_table *t, bool include_deleted) {
    return include_deleted ? t->n_pods : t->n_live;
}

int kube_table_pod_by_uid(const struct kube_table *t, const char *uid,
                          const struct kube_pod_info **ret_pod) {
    const struct pod_entry *p =
        probe(&t->by_uid, str_key(uid, SEED_UID), match_uid, uid, NULL, NULL);

    if (!p)
        p = probe(&t->by_hash, str_key(uid, SEED_HASH), match_hash, uid, NULL, NULL);
    if (!p)
        return -ENOENT;
    *ret_pod = &p->info;
    return 0;
}

int kube_table_container_by_id(const struct kube_table *t, const char *container_id,
                               const char **ret_name, const struct kube_pod_info **ret_pod) {
    const struct container_entry *c = probe(&t->by_container, str_key(container_id, SEED_CONTAINER),
                                            match_container, container_id, NULL, NULL);

    if (!c)
        return -ENOENT;
    if (ret_name)
        *ret_name = c->name;
    if (ret_pod)
        *ret_pod = &c->pod->info;
    return 0;
}

int kube_table_uid_by_name(const struct kube_table *t, const char *namespace_, const char *name,
                           const char **ret_uid) {
    const struct pod_entry *p =
        probe(&t->by_name, name_key(namespace_, name), match_name, namespace_, name, NULL);

    if (!p)
        return -ENOENT;
    if (p->info.finished)
        return -ESRCH;
    /* A static pod's cgroups carry the kubelet's config hash, not the mirror pod's UID: its
     * processes are booked under the hash, and so must its allocations be. */
    *ret_uid = p->config_hash ? p->config_hash : p->info.uid;
    return 0;
}
