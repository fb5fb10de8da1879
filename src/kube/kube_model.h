/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kube_pod.h"
#include "kube_table.h"

/*
 * The watcher's mutable view of the node's pods, fed by LIST results and watch events, from
 * which immutable tables are built. Pure: the caller passes the time. Deleted pods are kept
 * for `retention_ns`, and a pod keeps the ids of its earlier container instances (restarts),
 * because processes of those may still have series.
 */
struct kube_model {
    struct kube_pod **pods;
    size_t n_pods;
    size_t cap;
    uint64_t retention_ns;
};

void kube_model_init(struct kube_model *m, uint64_t retention_ns);
void kube_model_done(struct kube_model *m);

/* A LIST result: these pods are live (the model takes them, list->pods is emptied); pods
 * the model had that the list lacks were deleted while we were not watching: deleted now. */
int kube_model_replace(struct kube_model *m, struct kube_pod_list *list, uint64_t now_ns);

/* ADDED or MODIFIED (pod taken; consumed even on error). 0 or -ENOMEM. */
int kube_model_upsert(struct kube_model *m, struct kube_pod *pod);

/* DELETED with the pod's final state (taken; consumed even on error). */
int kube_model_delete(struct kube_model *m, struct kube_pod *pod, uint64_t now_ns);

/* Drops pods deleted more than retention_ns ago. Returns how many were dropped. */
size_t kube_model_expire(struct kube_model *m, uint64_t now_ns);

/* Monotonic time at which the next deleted pod expires; UINT64_MAX when none is deleted. */
uint64_t kube_model_next_expiry(const struct kube_model *m);

int kube_model_build(const struct kube_model *m, uint64_t generation, struct kube_table **ret);
