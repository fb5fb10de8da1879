/* SPDX-License-Identifier: MIT */
#include "pod_resources_decode.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/* protobuf-c's allocator for one decode: malloc() within a budget. */
struct budget {
    size_t used;
    bool over; /* a request went past PODRES_MAX_DECODED */
    bool oom;  /* malloc() failed */
};

static void *budget_alloc(void *data, size_t size) {
    struct budget *b = data;
    void *p;

    if (size > PODRES_MAX_DECODED - b->used) {
        b->over = true;
        return NULL;
    }
    p = malloc(size);
    if (!p) {
        b->oom = true;
        return NULL;
    }
    b->used += size;
    return p;
}

static void budget_free(void *data, void *p) {
    free(p);
}

int podres_list_decode(const uint8_t *buf, size_t len, struct podres_list **ret_list) {
    static const uint8_t empty[1];
    struct budget b = {0};
    ProtobufCAllocator allocator = {
        .alloc = budget_alloc,
        .free = budget_free,
        .allocator_data = &b,
    };
    V1__ListPodResourcesResponse *response;
    struct podres_list *l;

    if (!buf && len > 0)
        return -EINVAL;
    response = v1__list_pod_resources_response__unpack(&allocator, len, buf ? buf : empty);
    if (!response)
        return b.oom ? -ENOMEM : b.over ? -E2BIG : -EBADMSG;
    l = malloc(sizeof(*l));
    if (!l) {
        v1__list_pod_resources_response__free_unpacked(response, &allocator);
        return -ENOMEM;
    }
    l->response = response;
    *ret_list = l;
    return 0;
}

struct podres_list *podres_list_free(struct podres_list *l) {
    if (!l)
        return NULL;
    /* What the budget allocator took, malloc() took: the default allocator frees it. */
    v1__list_pod_resources_response__free_unpacked(l->response, NULL);
    free(l);
    return NULL;
}
