/* SPDX-License-Identifier: MIT */
#include "pod_resources_gpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse_num.h"

static bool starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool podres_is_gpu_resource(const char *name) {
    if (!name)
        return false;
    return strcmp(name, "nvidia.com/gpu") == 0 || strcmp(name, "nvidia.com/gpu.shared") == 0 ||
           (starts_with(name, "nvidia.com/mig-") && name[strlen("nvidia.com/mig-")] != '\0');
}

/* A UUID body: hex digits and dashes, at least one hex digit. */
static bool uuid_body(const char *s, size_t n) {
    bool hex = false;

    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '-')
            continue;
        if (!strchr("0123456789abcdefABCDEF", s[i]) || s[i] == '\0')
            return false;
        hex = true;
    }
    return hex;
}

int podres_gpu_id_parse(const char *id, struct podres_gpu_id *ret) {
    struct podres_gpu_id g = {0};
    const char *sep;
    size_t n;

    if (!id)
        return -EINVAL;
    sep = strstr(id, "::");
    n = sep ? (size_t)(sep - id) : strlen(id);
    if (sep) {
        if (!all_digits_n(sep + 2, strlen(sep + 2)))
            return -EINVAL;
        g.replica = true;
    }
    if (n >= sizeof(g.device))
        return -EINVAL;
    memcpy(g.device, id, n);

    if (starts_with(g.device, "GPU-")) {
        if (!uuid_body(g.device + 4, n - 4))
            return -EINVAL;
        memcpy(g.gpu_uuid, g.device, n);
    } else if (starts_with(g.device, "MIG-GPU-")) {
        /* MIG-GPU-<uuid>/<gi>/<ci>: the parent is GPU-<uuid>. */
        const char *body = g.device + 8, *slash = strchr(body, '/'), *slash2;

        g.mig = true;
        if (!slash || !uuid_body(body, (size_t)(slash - body)))
            return -EINVAL;
        slash2 = strchr(slash + 1, '/');
        if (!slash2 || !all_digits_n(slash + 1, (size_t)(slash2 - slash - 1)) ||
            !all_digits_n(slash2 + 1, strlen(slash2 + 1)))
            return -EINVAL;
        memcpy(g.gpu_uuid, g.device + 4, (size_t)(slash - g.device) - 4);
    } else if (starts_with(g.device, "MIG-")) {
        g.mig = true;
        if (!uuid_body(g.device + 4, n - 4))
            return -EINVAL;
    } else
        return -EINVAL;
    *ret = g;
    return 0;
}

static bool copy_name(char *dst, size_t size, const char *src) {
    size_t n = src ? strlen(src) : 0;

    if (n >= size)
        return false;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
    return true;
}

static int compare_alloc(const void *a, const void *b) {
    const struct gpu_alloc *x = a, *y = b;
    int c;

    if ((c = strcmp(x->gpu_uuid, y->gpu_uuid)) != 0)
        return c;
    if ((c = strcmp(x->namespace_, y->namespace_)) != 0)
        return c;
    if ((c = strcmp(x->pod, y->pod)) != 0)
        return c;
    if ((c = strcmp(x->container, y->container)) != 0)
        return c;
    return strcmp(x->device, y->device);
}

/* Adds one id to the table, merging replicas of a device the container already holds. */
static int add_id(struct gpu_alloc_table *t, size_t *cap, const V1__PodResources *pod,
                  const V1__ContainerResources *c, const char *id) {
    struct podres_gpu_id g;
    struct gpu_alloc a = {.replicas = 1};
    int r;

    if (podres_gpu_id_parse(id, &g) < 0 ||
        !copy_name(a.namespace_, sizeof(a.namespace_), pod->namespace_) ||
        !copy_name(a.pod, sizeof(a.pod), pod->name) ||
        !copy_name(a.container, sizeof(a.container), c->name)) {
        t->n_skipped++;
        return 0;
    }
    memcpy(a.device, g.device, sizeof(a.device));
    memcpy(a.gpu_uuid, g.gpu_uuid, sizeof(a.gpu_uuid));
    a.mig = g.mig;
    /* Replica ids of one device come together in practice; a linear look back over this
     * container's entries keeps the merge simple. */
    for (size_t i = t->n; i > 0; i--) {
        struct gpu_alloc *e = &t->allocs[i - 1];

        if (strcmp(e->pod, a.pod) != 0 || strcmp(e->namespace_, a.namespace_) != 0 ||
            strcmp(e->container, a.container) != 0)
            break;
        if (strcmp(e->device, a.device) == 0) {
            e->replicas++;
            return 0;
        }
    }
    if (t->n >= PODRES_MAX_ITEMS)
        return -E2BIG;
    r = grow_array(&t->allocs, cap, t->n + 1, sizeof(*t->allocs));
    if (r < 0)
        return r;
    if (a.mig && a.gpu_uuid[0] == '\0')
        t->n_unplaced_mig++;
    t->allocs[t->n++] = a;
    return 0;
}

int gpu_alloc_table_build(const struct podres_list *l, struct gpu_alloc_table **ret) {
    struct gpu_alloc_table *t = calloc(1, sizeof(*t));
    size_t cap = 0;
    int r = 0;

    if (!t)
        return -ENOMEM;
    for (size_t i = 0; l && i < l->response->n_pod_resources && r >= 0; i++) {
        const V1__PodResources *pod = l->response->pod_resources[i];

        for (size_t j = 0; j < pod->n_containers && r >= 0; j++) {
            const V1__ContainerResources *c = pod->containers[j];

            for (size_t k = 0; k < c->n_devices && r >= 0; k++) {
                const V1__ContainerDevices *d = c->devices[k];

                if (!podres_is_gpu_resource(d->resource_name))
                    continue;
                for (size_t m = 0; m < d->n_device_ids && r >= 0; m++)
                    r = add_id(t, &cap, pod, c, d->device_ids[m]);
            }
        }
    }
    if (r < 0) {
        gpu_alloc_table_free(t);
        return r;
    }
    if (t->n > 1)
        qsort(t->allocs, t->n, sizeof(*t->allocs), compare_alloc);
    *ret = t;
    return 0;
}

struct gpu_alloc_table *gpu_alloc_table_free(struct gpu_alloc_table *t) {
    if (!t)
        return NULL;
    free(t->allocs);
    free(t);
    return NULL;
}

int gpu_alloc_table_copy(const struct gpu_alloc_table *t, struct gpu_alloc_table **ret) {
    struct gpu_alloc_table *c = calloc(1, sizeof(*c));

    if (!c)
        return -ENOMEM;
    *c = *t;
    c->allocs = NULL;
    if (t->n > 0) {
        c->allocs = reallocarray(NULL, t->n, sizeof(*c->allocs));
        if (!c->allocs) {
            free(c);
            return -ENOMEM;
        }
        memcpy(c->allocs, t->allocs, t->n * sizeof(*c->allocs));
    }
    *ret = c;
    return 0;
}

size_t gpu_alloc_table_find(const struct gpu_alloc_table *t, const char *gpu_uuid,
                            const struct gpu_alloc **ret_first) {
    size_t lo = 0, hi, end;

    if (!t || !gpu_uuid || gpu_uuid[0] == '\0')
        return 0;
    hi = t->n;
    /* First entry with gpu_uuid >= the one asked for. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (strcmp(t->allocs[mid].gpu_uuid, gpu_uuid) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (end = lo; end < t->n && strcmp(t->allocs[end].gpu_uuid, gpu_uuid) == 0;)
        end++;
    if (end > lo)
        *ret_first = &t->allocs[lo];
    return end - lo;
}

size_t gpu_alloc_table_unplaced(const struct gpu_alloc_table *t,
                                const struct gpu_alloc **ret_first) {
    size_t n = 0;

    /* sorted by gpu_uuid: the empty ones come first */
    while (t && n < t->n && t->allocs[n].gpu_uuid[0] == '\0')
        n++;
    if (n > 0)
        *ret_first = t->allocs;
    return n;
}
