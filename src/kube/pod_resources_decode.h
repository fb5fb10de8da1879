/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Decoder for the kubelet pod-resources v1 ListPodResourcesResponse (protobuf wire format,
 * field numbers from k8s.io/kubelet/pkg/apis/podresources/v1/api.proto; the copy the tests
 * encode with is tests/kube/podresources/api.proto).
 *
 * Pure: no I/O. Unknown fields of every wire type are skipped (older and newer kubelets
 * carry different field sets); repeated scalars are accepted packed and unpacked. Strings
 * are copied NUL-terminated; a string field that is absent is NULL. Nothing is read beyond
 * buf + len.
 */

/* Upper bound on decoded elements (pods, containers, devices, ids, cpu ids, ...) so a
 * small hostile message cannot make us allocate without limit. */
#define PODRES_MAX_ITEMS (1U << 18)
/* Nesting bound for skipping unknown groups. */
#define PODRES_MAX_GROUP_DEPTH 16U

struct podres_topology {
    size_t n_numa_nodes;
    int64_t *numa_nodes; /* NUMANode.ID */
};

struct podres_devices { /* ContainerDevices */
    char *resource_name;
    size_t n_ids;
    char **ids; /* device_ids, as the device plugin advertised them */
    struct podres_topology topology;
};

struct podres_memory { /* ContainerMemory */
    char *memory_type;
    uint64_t size;
    struct podres_topology topology;
};

struct podres_claim_resource { /* ClaimResource */
    size_t n_cdi_devices;
    char **cdi_devices; /* CDIDevice.name */
    char *driver_name;
    char *pool_name;
    char *device_name;
};

struct podres_dynamic_resource { /* DynamicResource */
    char *claim_name;
    char *claim_namespace;
    size_t n_claim_resources;
    struct podres_claim_resource *claim_resources;
};

struct podres_container { /* ContainerResources */
    char *name;
    size_t n_devices;
    struct podres_devices *devices;
    size_t n_cpu_ids;
    int64_t *cpu_ids;
    size_t n_memory;
    struct podres_memory *memory;
    size_t n_dynamic;
    struct podres_dynamic_resource *dynamic;
};

struct podres_pod { /* PodResources */
    char *name;
    char *namespace_;
    size_t n_containers;
    struct podres_container *containers;
};

struct podres_list { /* ListPodResourcesResponse */
    size_t n_pods;
    struct podres_pod *pods;
};

/*
 * Decodes buf[0..len). Returns 0 and *ret_list (free with podres_list_free), -EBADMSG for
 * malformed input (truncated varint or length, wire type 6/7, field 0, a known field with
 * the wrong wire type, unbalanced groups, a string with a NUL byte), -E2BIG when more than
 * PODRES_MAX_ITEMS elements, or -ENOMEM. ret_list is written only on success.
 */
int podres_list_decode(const uint8_t *buf, size_t len, struct podres_list **ret_list);

/* Accepts NULL; returns NULL. */
struct podres_list *podres_list_free(struct podres_list *l);
