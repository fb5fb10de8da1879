/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "pod_resources_decode.h"

/*
 * Which pods hold which GPUs, from a decoded pod-resources List. Pure.
 *
 * Device ids as the NVIDIA device plugin advertises them (workload-facts.md 3.4):
 *   GPU-<uuid>                    a whole GPU
 *   GPU-<uuid>::<n>               time-slicing / MPS replica n of that GPU
 *   MIG-<uuid>[::<n>]             a MIG device; its parent GPU is not in the id
 *   MIG-GPU-<uuid>/<gi>/<ci>      the pre-R470 MIG form, which names its parent GPU
 * Resources counted as GPUs: nvidia.com/gpu, nvidia.com/gpu.shared (renameByDefault) and
 * nvidia.com/mig-<profile>.
 */

/* Upper bound on table entries. */
#define PODRES_MAX_ITEMS (1U << 18)

#define PODRES_NAMESPACE_MAX 64 /* DNS label: 63 + NUL */
#define PODRES_POD_MAX 254      /* DNS subdomain: 253 + NUL */
#define PODRES_CONTAINER_MAX 64
#define PODRES_DEVICE_MAX 96

/* True for the resource names above. */
bool podres_is_gpu_resource(const char *resource_name);

struct podres_gpu_id {
    char device[PODRES_DEVICE_MAX];   /* the id without its replica suffix */
    char gpu_uuid[PODRES_DEVICE_MAX]; /* parent GPU-<uuid>; "" when the id does not say */
    bool mig;
    bool replica; /* had a ::<n> suffix */
};

/* Parses one device id. Returns 0, or -EINVAL for an id that is none of the forms above
 * (e.g. GKE's nvidia0) or does not fit. ret is written only on success. */
int podres_gpu_id_parse(const char *id, struct podres_gpu_id *ret);

/* One container's hold on one GPU or MIG device. */
struct gpu_alloc {
    char namespace_[PODRES_NAMESPACE_MAX];
    char pod[PODRES_POD_MAX];
    char container[PODRES_CONTAINER_MAX];
    char device[PODRES_DEVICE_MAX];   /* GPU-<uuid> or MIG-..., replica suffix stripped */
    char gpu_uuid[PODRES_DEVICE_MAX]; /* parent GPU; "" for a MIG device we cannot place */
    unsigned replicas;                /* ids of this device the container holds, >= 1 */
    bool mig;
};

struct gpu_alloc_table {
    size_t n;
    struct gpu_alloc *allocs; /* sorted by gpu_uuid, namespace, pod, container, device */
    size_t n_unplaced_mig;    /* allocations whose MIG id does not name its GPU */
    size_t n_skipped;         /* ids that are not NVIDIA ids, or names too long */
};

/*
 * Builds the table. Allocations of the same container and device (several replica ids)
 * are merged into one entry with a replica count. Returns 0, -ENOMEM, or -E2BIG (more
 * than PODRES_MAX_ITEMS entries). ret is written only on success.
 */
int gpu_alloc_table_build(const struct podres_list *l, struct gpu_alloc_table **ret);
struct gpu_alloc_table *gpu_alloc_table_free(struct gpu_alloc_table *t);
/* A deep copy. 0 or -ENOMEM; ret is written only on success. */
int gpu_alloc_table_copy(const struct gpu_alloc_table *t, struct gpu_alloc_table **ret);

/* The entries of one GPU: [*ret_first, *ret_first + return value). 0 when none. */
/* The entries whose id does not name the parent GPU (a MIG-<uuid> device): the first of
 * them in *ret_first, and their number. */
size_t gpu_alloc_table_unplaced(const struct gpu_alloc_table *t,
                                const struct gpu_alloc **ret_first);

size_t gpu_alloc_table_find(const struct gpu_alloc_table *t, const char *gpu_uuid,
                            const struct gpu_alloc **ret_first);
