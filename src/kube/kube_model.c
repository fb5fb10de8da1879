/* SPDX-License-Identifier: MIT */
#include "kube_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

/* Earlier container instances kept per pod: bounds a crash-looping pod's history. */
#define KUBE_OLD_CONTAINERS_MAX 32

void kube_model_init(struct kube_model *m, uint64_t retention_ns) {
    *m = (struct kube_model){.retention_ns = retention_ns};
}

void kube_model_done(struct kube_model *m) {
    for (size_t i = 0; i < m->n_pods; i++)
        kube_pod_free(m->pods[i]);
    free(m->pods);
    *m = (struct kube_model){0};
}

static struct kube_pod **find(struct kube_model *m, const char *uid) {
    for (size_t i = 0; i < m->n_pods; i++)
        if (strcmp(m->pods[i]->uid, uid) == 0)
            return &m->pods[i];
    return NULL;
}

static bool has_container(const struct kube_pod *p, const char *id) {
    for (size_t i = 0; i < p->n_containers; i++)
        if (strcmp(p->containers[i].id, id) == 0)
            return true;
    return false;
}

/* Moves the container ids `old` knew and `pod` does not into `pod` (at most
 * KUBE_OLD_CONTAINERS_MAX of them, newest first as `old` lists them). */
static int carry_containers(struct kube_pod *pod, struct kube_pod *old) {
    size_t cap = pod->n_containers, carried = 0;

    for (size_t i = 0; i < old->n_containers && carried < KUBE_OLD_CONTAINERS_MAX; i++) {
        struct kube_container *c = &old->containers[i];
        int r;

        if (has_container(pod, c->id))
            continue;
        r = grow_array(&pod->containers, &cap, pod->n_containers + 1, sizeof(*pod->containers));
        if (r < 0)
            return r;
        pod->containers[pod->n_containers++] = *c;
        *c = (struct kube_container){0};
        carried++;
    }
    return 0;
}

/* Puts pod in the model, replacing the entry with its UID (keeping its old containers). */
static int put(struct kube_model *m, struct kube_pod *pod) {
    struct kube_pod **slot = find(m, pod->uid);
    int r;

    if (slot) {
        r = carry_containers(pod, *slot);
        if (r < 0) {
            kube_pod_free(pod);
            return r;
        }
        kube_pod_free(*slot);
        *slot = pod;
        return 0;
    }
    r = grow_array(&m->pods, &m->cap, m->n_pods + 1, sizeof(*m->pods));
    if (r < 0) {
        kube_pod_free(pod);
        return r;
    }
    m->pods[m->n_pods++] = pod;
    return 0;
}

int kube_model_upsert(struct kube_model *m, struct kube_pod *pod) {
    pod->deleted_ns = 0;
    return put(m, pod);
}

int kube_model_delete(struct kube_model *m, struct kube_pod *pod, uint64_t now_ns) {
    struct kube_pod **slot = find(m, pod->uid);

    /* A pod deleted twice keeps its first deletion time (retention counts from there). */
    pod->deleted_ns = slot && (*slot)->deleted_ns ? (*slot)->deleted_ns : MAX(now_ns, 1);
    return put(m, pod);
}

static bool in_list(const struct kube_pod_list *list, const char *uid) {
    for (size_t i = 0; i < list->n_pods; i++)
        if (list->pods[i] && strcmp(list->pods[i]->uid, uid) == 0)
            return true;
    return false;
}

int kube_model_replace(struct kube_model *m, struct kube_pod_list *list, uint64_t now_ns) {
    int r = 0;

    for (size_t i = 0; i < m->n_pods; i++)
        if (m->pods[i]->deleted_ns == 0 && !in_list(list, m->pods[i]->uid))
            m->pods[i]->deleted_ns = MAX(now_ns, 1);
    for (size_t i = 0; i < list->n_pods; i++) {
        struct kube_pod *p = TAKE_PTR(list->pods[i]);

        if (r >= 0)
            r = kube_model_upsert(m, p);
        else
            kube_pod_free(p);
    }
    list->n_pods = 0;
    return r;
}

size_t kube_model_expire(struct kube_model *m, uint64_t now_ns) {
    size_t kept = 0, dropped;

    for (size_t i = 0; i < m->n_pods; i++) {
        struct kube_pod *p = m->pods[i];

        if (p->deleted_ns != 0 && now_ns >= p->deleted_ns &&
            now_ns - p->deleted_ns >= m->retention_ns)
            kube_pod_free(p);
        else
            m->pods[kept++] = p;
    }
    dropped = m->n_pods - kept;
    m->n_pods = kept;
    return dropped;
}

uint64_t kube_model_next_expiry(const struct kube_model *m) {
    uint64_t next = UINT64_MAX;

    for (size_t i = 0; i < m->n_pods; i++) {
        uint64_t d = m->pods[i]->deleted_ns;

        if (d != 0)
            next = MIN(next, d > UINT64_MAX - m->retention_ns ? UINT64_MAX : d + m->retention_ns);
    }
    return next;
}

int kube_model_build(const struct kube_model *m, uint64_t generation, struct kube_table **ret) {
    return kube_table_build((const struct kube_pod *const *)m->pods, m->n_pods, generation, ret);
}
