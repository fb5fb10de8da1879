/* SPDX-License-Identifier: MIT */
#include "pod_resources_decode.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum wire_type {
    WT_VARINT = 0,
    WT_FIXED64 = 1,
    WT_LEN = 2,
    WT_START_GROUP = 3,
    WT_END_GROUP = 4,
    WT_FIXED32 = 5,
};

/* The unread part of one message. */
struct pb {
    const uint8_t *p, *end;
};

struct decoder {
    size_t items; /* elements allocated so far, against PODRES_MAX_ITEMS */
};

static int pb_varint(struct pb *b, uint64_t *ret) {
    uint64_t v = 0;

    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t byte;

        if (b->p >= b->end)
            return -EBADMSG;
        byte = *b->p++;
        /* The tenth byte may only carry the top bit of a 64-bit value. */
        if (shift == 63 && byte > 1)
            return -EBADMSG;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *ret = v;
            return 0;
        }
    }
    return -EBADMSG;
}

static int pb_tag(struct pb *b, uint32_t *ret_field, unsigned *ret_wt) {
    uint64_t tag;
    int r = pb_varint(b, &tag);

    if (r < 0)
        return r;
    /* Field numbers are 1 .. 2^29 - 1. */
    if (tag >> 3 == 0 || tag >> 3 > 0x1fffffffU || (tag & 7) > WT_FIXED32)
        return -EBADMSG;
    *ret_field = (uint32_t)(tag >> 3);
    *ret_wt = (unsigned)(tag & 7);
    return 0;
}

/* A length-delimited payload as a sub-reader. */
static int pb_len(struct pb *b, struct pb *ret) {
    uint64_t n;
    int r = pb_varint(b, &n);

    if (r < 0)
        return r;
    if (n > (uint64_t)(b->end - b->p))
        return -EBADMSG;
    ret->p = b->p;
    ret->end = b->p + n;
    b->p += n;
    return 0;
}

static int pb_skip_bytes(struct pb *b, size_t n) {
    if (n > (size_t)(b->end - b->p))
        return -EBADMSG;
    b->p += n;
    return 0;
}

/* Skips the value of a field we do not know. A group runs to its matching end tag. */
static int pb_skip(struct pb *b, uint32_t field, unsigned wt, unsigned depth) {
    struct pb sub;
    uint64_t v;

    switch (wt) {
    case WT_VARINT:
        return pb_varint(b, &v);
    case WT_FIXED64:
        return pb_skip_bytes(b, 8);
    case WT_FIXED32:
        return pb_skip_bytes(b, 4);
    case WT_LEN:
        return pb_len(b, &sub);
    case WT_START_GROUP:
        if (depth >= PODRES_MAX_GROUP_DEPTH)
            return -EBADMSG;
        for (;;) {
            uint32_t f;
            unsigned w;
            int r = pb_tag(b, &f, &w);

            if (r < 0)
                return r;
            if (w == WT_END_GROUP)
                return f == field ? 0 : -EBADMSG;
            r = pb_skip(b, f, w, depth + 1);
            if (r < 0)
                return r;
        }
    default: /* an end-group tag without its start */
        return -EBADMSG;
    }
}

static int expect(unsigned wt, unsigned want) {
    return wt == want ? 0 : -EBADMSG;
}

/* A string field: replaces an earlier value (last one wins, as in protobuf). */
static int pb_string(struct pb *b, unsigned wt, char **s) {
    struct pb sub;
    size_t n;
    char *copy;
    int r = expect(wt, WT_LEN);

    if (r >= 0)
        r = pb_len(b, &sub);
    if (r < 0)
        return r;
    n = (size_t)(sub.end - sub.p);
    if (memchr(sub.p, '\0', n))
        return -EBADMSG;
    copy = malloc(n + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, sub.p, n);
    copy[n] = '\0';
    free(*s);
    *s = copy;
    return 0;
}

/*
 * Appends one zeroed element. Capacity is implicit: the array is reallocated to double
 * its size whenever the count reaches a power of two.
 */
static int append(struct decoder *d, void *array, size_t *n, size_t size, void **ret_slot) {
    void **a = array;
    char *slot;

    if (d->items >= PODRES_MAX_ITEMS)
        return -E2BIG;
    if (*n == 0 || (*n & (*n - 1)) == 0) {
        size_t cap = *n == 0 ? 1 : *n * 2;
        void *p = reallocarray(*a, cap, size);

        if (!p)
            return -ENOMEM;
        *a = p;
    }
    slot = (char *)*a + *n * size;
    memset(slot, 0, size);
    (*n)++;
    d->items++;
    *ret_slot = slot;
    return 0;
}

/* A repeated string field: one more element. */
static int append_string(struct decoder *d, struct pb *b, unsigned wt, char ***array, size_t *n) {
    char **slot;
    int r = expect(wt, WT_LEN);

    if (r >= 0)
        r = append(d, array, n, sizeof(**array), (void **)&slot);
    if (r < 0)
        return r;
    return pb_string(b, wt, slot);
}

/* A repeated int64 field, packed (one length-delimited run) or not (one varint). */
static int append_int64(struct decoder *d, struct pb *b, unsigned wt, int64_t **array, size_t *n) {
    struct pb run;
    uint64_t v;
    int64_t *slot;
    int r;

    if (wt == WT_VARINT) {
        r = pb_varint(b, &v);
        if (r >= 0)
            r = append(d, array, n, sizeof(**array), (void **)&slot);
        if (r >= 0)
            *slot = (int64_t)v; /* two's complement, as int64 is encoded */
        return r;
    }
    r = expect(wt, WT_LEN);
    if (r >= 0)
        r = pb_len(b, &run);
    while (r >= 0 && run.p < run.end) {
        r = pb_varint(&run, &v);
        if (r >= 0)
            r = append(d, array, n, sizeof(**array), (void **)&slot);
        if (r >= 0)
            *slot = (int64_t)v;
    }
    return r;
}

/* Reads the tag of each field of a message into (field, wt); r < 0 ends the loop. */
#define FOR_EACH_FIELD(b, field, wt, r)                                                            \
    while ((b)->p < (b)->end && ((r) = pb_tag((b), &(field), &(wt))) >= 0)

static int decode_submessage(struct pb *b, unsigned wt, struct pb *ret) {
    int r = expect(wt, WT_LEN);

    return r < 0 ? r : pb_len(b, ret);
}

static int decode_topology(struct decoder *d, struct pb *b, unsigned wt,
                           struct podres_topology *t) {
    struct pb m, node;
    uint32_t f, nf;
    unsigned w, nw;
    int r = decode_submessage(b, wt, &m);

    if (r < 0)
        return r;
    FOR_EACH_FIELD(&m, f, w, r) {
        if (f != 1) {
            r = pb_skip(&m, f, w, 0);
        } else {
            int64_t *id;

            /* A NUMANode: one optional ID; absent means 0. */
            r = decode_submessage(&m, w, &node);
            if (r >= 0)
                r = append(d, &t->numa_nodes, &t->n_numa_nodes, sizeof(*t->numa_nodes),
                           (void **)&id);
            if (r < 0)
                return r;
            FOR_EACH_FIELD(&node, nf, nw, r) {
                uint64_t v;

                if (nf == 1) {
                    r = expect(nw, WT_VARINT);
                    if (r >= 0)
                        r = pb_varint(&node, &v);
                    if (r >= 0)
                        *id = (int64_t)v;
                } else
                    r = pb_skip(&node, nf, nw, 0);
                if (r < 0)
                    break;
            }
        }
        if (r < 0)
            return r;
    }
    return r;
}

static int decode_devices(struct decoder *d, struct pb *m, struct podres_devices *dev) {
    uint32_t f;
    unsigned w;
    int r = 0;

    FOR_EACH_FIELD(m, f, w, r) {
        switch (f) {
        case 1:
            r = pb_string(m, w, &dev->resource_name);
            break;
        case 2:
            r = append_string(d, m, w, &dev->ids, &dev->n_ids);
            break;
        case 3:
            r = decode_topology(d, m, w, &dev->topology);
            break;
        default:
            r = pb_skip(m, f, w, 0);
        }
        if (r < 0)
            return r;
    }
    return r;
}

static int decode_memory(struct decoder *d, struct pb *m, struct podres_memory *mem) {
    uint32_t f;
    unsigned w;
    int r = 0;

    FOR_EACH_FIELD(m, f, w, r) {
        switch (f) {
        case 1:
            r = pb_string(m, w, &mem->memory_type);
            break;
        case 2:
            r = expect(w, WT_VARINT);
            if (r >= 0)
                r = pb_varint(m, &mem->size);
            break;
        case 3:
            r = decode_topology(d, m, w, &mem->topology);
            break;
        default:
            r = pb_skip(m, f, w, 0);
        }
        if (r < 0)
            return r;
    }
    return r;
}

static int decode_claim_resource(struct decoder *d, struct pb *m, struct podres_claim_resource *c) {
    struct pb cdi;
    uint32_t f, cf;
    unsigned w, cw;
    int r = 0;

    FOR_EACH_FIELD(m, f, w, r) {
        switch (f) {
        case 1: { /* CDIDevice { 1 name } */
            char **name;

            r = decode_submessage(m, w, &cdi);
            if (r >= 0)
                r = append(d, &c->cdi_devices, &c->n_cdi_devices, sizeof(*c->cdi_devices),
                           (void **)&name);
            if (r < 0)
                return r;
            FOR_EACH_FIELD(&cdi, cf, cw, r) {
                r = cf == 1 ? pb_string(&cdi, cw, name) : pb_skip(&cdi, cf, cw, 0);
                if (r < 0)
                    break;
            }
            break;
        }
        case 2:
            r = pb_string(m, w, &c->driver_name);
            break;
        case 3:
            r = pb_string(m, w, &c->pool_name);
            break;
        case 4:
            r = pb_string(m, w, &c->device_name);
            break;
        default:
            r = pb_skip(m, f, w, 0);
        }
        if (r < 0)
            return r;
    }
    return r;
}

static int decode_dynamic(struct decoder *d, struct pb *m, struct podres_dynamic_resource *dr) {
    struct podres_claim_resource *c;
    struct pb sub;
    uint32_t f;
    unsigned w;
    int r = 0;

    FOR_EACH_FIELD(m, f, w, r) {
        switch (f) {
        case 2:
            r = pb_string(m, w, &dr->claim_name);
            break;
        case 3:
            r = pb_string(m, w, &dr->claim_namespace);
            break;
        case 4:
            r = decode_submessage(m, w, &sub);
            if (r >= 0)
                r = append(d, &dr->claim_resources, &dr->n_claim_resources,
                           sizeof(*dr->claim_resources), (void **)&c);
            if (r >= 0)
                r = decode_claim_resource(d, &sub, c);
            break;
        default: /* 1 (class_name) was removed upstream; skipped like any unknown field */
            r = pb_skip(m, f, w, 0);
        }
        if (r < 0)
            return r;
    }
    return r;
}

static int decode_container(struct decoder *d, struct pb *m, struct podres_container *c) {
    struct pb sub;
    uint32_t f;
    unsigned w;
    void *slot;
    int r = 0;

    FOR_EACH_FIELD(m, f, w, r) {
        switch (f) {
        case 1:
            r = pb_string(m, w, &c->name);
            break;
        case 2:
            r = decode_submessage(m, w, &sub);
            if (r >= 0)
                r = append(d, &c->devices, &c->n_devices, sizeof(*c->devices), &slot);
            if (r >= 0)
                r = decode_devices(d, &sub, slot);
            break;
        case 3:
            r = append_int64(d, m, w, &c->cpu_ids, &c->n_cpu_ids);
            break;
        case 4:
            r = decode_submessage(m, w, &sub);
            if (r >= 0)
                r = append(d, &c->memory, &c->n_memory, sizeof(*c->memory), &slot);
            if (r >= 0)
                r = decode_memory(d, &sub, slot);
            break;
        case 5:
            r = decode_submessage(m, w, &sub);
            if (r >= 0)
                r = append(d, &c->dynamic, &c->n_dynamic, sizeof(*c->dynamic), &slot);
            if (r >= 0)
                r = decode_dynamic(d, &sub, slot);
            break;
        default:
            r = pb_skip(m, f, w, 0);
        }
        if (r < 0)
            return r;
    }
    return r;
}

static int decode_pod(struct decoder *d, struct pb *m, struct podres_pod *pod) {
    struct pb sub;
    uint32_t f;
    unsigned w;
    void *slot;
    int r = 0;

    FOR_EACH_FIELD(m, f, w, r) {
        switch (f) {
        case 1:
            r = pb_string(m, w, &pod->name);
            break;
        case 2:
            r = pb_string(m, w, &pod->namespace_);
            break;
        case 3:
            r = decode_submessage(m, w, &sub);
            if (r >= 0)
                r = append(d, &pod->containers, &pod->n_containers, sizeof(*pod->containers),
                           &slot);
            if (r >= 0)
                r = decode_container(d, &sub, slot);
            break;
        default:
            r = pb_skip(m, f, w, 0);
        }
        if (r < 0)
            return r;
    }
    return r;
}

int podres_list_decode(const uint8_t *buf, size_t len, struct podres_list **ret_list) {
    struct decoder d = {0};
    struct pb m = {NULL, NULL}, sub;
    struct podres_list *l;
    uint32_t f;
    unsigned w;
    void *slot;
    int r = 0;

    if (!buf && len > 0)
        return -EINVAL;
    if (buf)
        m = (struct pb){buf, buf + len};
    l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    FOR_EACH_FIELD(&m, f, w, r) {
        if (f == 1) {
            r = decode_submessage(&m, w, &sub);
            if (r >= 0)
                r = append(&d, &l->pods, &l->n_pods, sizeof(*l->pods), &slot);
            if (r >= 0)
                r = decode_pod(&d, &sub, slot);
        } else
            r = pb_skip(&m, f, w, 0);
        if (r < 0)
            break;
    }
    if (r < 0) {
        podres_list_free(l);
        return r;
    }
    *ret_list = l;
    return 0;
}

static void free_strings(char **s, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(s[i]);
    free(s);
}

static void free_container(struct podres_container *c) {
    free(c->name);
    for (size_t i = 0; i < c->n_devices; i++) {
        free(c->devices[i].resource_name);
        free_strings(c->devices[i].ids, c->devices[i].n_ids);
        free(c->devices[i].topology.numa_nodes);
    }
    free(c->devices);
    free(c->cpu_ids);
    for (size_t i = 0; i < c->n_memory; i++) {
        free(c->memory[i].memory_type);
        free(c->memory[i].topology.numa_nodes);
    }
    free(c->memory);
    for (size_t i = 0; i < c->n_dynamic; i++) {
        struct podres_dynamic_resource *dr = &c->dynamic[i];

        free(dr->claim_name);
        free(dr->claim_namespace);
        for (size_t j = 0; j < dr->n_claim_resources; j++) {
            struct podres_claim_resource *cr = &dr->claim_resources[j];

            free_strings(cr->cdi_devices, cr->n_cdi_devices);
            free(cr->driver_name);
            free(cr->pool_name);
            free(cr->device_name);
        }
        free(dr->claim_resources);
    }
    free(c->dynamic);
}

struct podres_list *podres_list_free(struct podres_list *l) {
    if (!l)
        return NULL;
    for (size_t i = 0; i < l->n_pods; i++) {
        struct podres_pod *p = &l->pods[i];

        free(p->name);
        free(p->namespace_);
        for (size_t j = 0; j < p->n_containers; j++)
            free_container(&p->containers[j]);
        free(p->containers);
    }
    free(l->pods);
    free(l);
    return NULL;
}
