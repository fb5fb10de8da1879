/* SPDX-License-Identifier: MIT */
#include "labels.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "workload_kind.h"

struct labels {
    atomic_uint refs;
    struct snap_identity id;
};

static struct labels *labels_of(const struct snap_identity *id) {
    /* The set is only read through id; the count beside it is what changes. */
    return (struct labels *)((char *)(uintptr_t)id - offsetof(struct labels, id));
}

const struct snap_identity *labels_new(const struct snap_identity *id) {
    struct labels *l = malloc(sizeof(*l));

    if (!l)
        return NULL;
    atomic_init(&l->refs, 1);
    l->id = *id;
    labels_make_valid(&l->id); /* names the labeler filled in too */
    return &l->id;
}

const struct snap_identity *labels_ref(const struct snap_identity *id) {
    if (id)
        atomic_fetch_add_explicit(&labels_of(id)->refs, 1, memory_order_relaxed);
    return id;
}

const struct snap_identity *labels_unref(const struct snap_identity *id) {
    struct labels *l;

    if (!id)
        return NULL;
    l = labels_of(id);
    if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 1)
        free(l);
    return NULL;
}
