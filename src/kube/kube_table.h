/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube_pod.h"

/*
 * The pods of this node as the Kubernetes API server last described them: an immutable,
 * reference-counted table. The API watcher thread builds a new table after each change and
 * publishes it; readers (the sampler, the pod-resources client) take a reference, do hash
 * lookups without any lock, and drop it. Nothing in a table changes after it is built.
 *
 * Pods deleted from the API stay in the table, flagged `deleted`, for the metric retention
 * time: their series still need names while the ledger keeps them.
 */

struct kube_pod_info {
    const char *uid;        /* metadata.uid */
    const char *name;       /* metadata.name */
    const char *namespace_; /* metadata.namespace */
    bool deleted;           /* DELETED event seen, or missing from the last LIST */
    bool finished;          /* status.phase Succeeded or Failed */
};

struct kube_table;

/* Builds a table from pods (not consumed). deleted_ns != 0 marks a deleted pod. Returns
 * 0 or -ENOMEM. */
int kube_table_build(const struct kube_pod *const *pods, size_t n_pods, uint64_t generation,
                     struct kube_table **ret_table);

struct kube_table *kube_table_ref(struct kube_table *t);
/* Drops a reference; frees on the last. Accepts NULL; returns NULL. */
struct kube_table *kube_table_unref(struct kube_table *t);

/* Counts the number of builds of the publisher; a reader can skip work when unchanged. */
uint64_t kube_table_generation(const struct kube_table *t);
/* Pods in the table, live ones only or all of them (deleted ones within retention). */
size_t kube_table_n_pods(const struct kube_table *t, bool include_deleted);

/* Pod by UID as the cgroup path gives it: metadata.uid, or for a static pod the kubelet's
 * config hash (annotation kubernetes.io/config.mirror of its mirror pod). 0 or -ENOENT. */
int kube_table_pod_by_uid(const struct kube_table *t, const char *uid,
                          const struct kube_pod_info **ret_pod);

/* Container name and pod by container id (runtime prefix already stripped, as the cgroup
 * path gives it). Previous instances of a restarted container are kept. 0 or -ENOENT. */
int kube_table_container_by_id(const struct kube_table *t, const char *container_id,
                               const char **ret_name, const struct kube_pod_info **ret_pod);

/* UID of the pod (namespace, name), for sources that know pods only by name (kubelet
 * pod-resources): as its cgroups carry it, so a static pod's config hash. A live pod wins
 * over deleted pods of the same name; among deleted ones, the most recently deleted. 0, -ENOENT, or
 * -ESRCH for a pod whose phase is Succeeded or Failed (kubelets have listed the devices of such
 * pods). The string lives as long as the table. */
int kube_table_uid_by_name(const struct kube_table *t, const char *namespace_, const char *name,
                           const char **ret_uid);
