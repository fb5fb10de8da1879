/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "config.h"
#include "gpu_accounting.h"
#include "kube_labels.h"

/*
 * The daemon side of the kubelet pod-resources source: starts the polling thread (serve)
 * or polls once (ps), hands the latest GPU allocation table to the GPU accounting before
 * each tick, with pod UIDs from the Kubernetes API table when that is running, and logs
 * what goes wrong once (with the fix), then at growing intervals, and the recovery.
 */
struct pod_allocations;

/* *ret is NULL when --kubernetes-enabled=false. 0 or -ENOMEM. */
int pod_allocations_new(const struct config *cfg, struct pod_allocations **ret);
struct pod_allocations *pod_allocations_free(struct pod_allocations *p);

/* Before gpu_accounting_tick(): the latest table (kept referenced until the next call).
 * Accepts p == NULL (then no table). kube may be NULL. */
void pod_allocations_apply(struct pod_allocations *p, struct gpu_accounting *acc,
                           struct kube_labels *kube, uint64_t now_ns);
/* After the tick: says once that `allocation` fell back to even for lack of data. */
void pod_allocations_after_tick(struct pod_allocations *p, const struct gpu_tick_stats *st);

/* For joulestat_source_up{source="pod_resources"}: whether the last poll of the kubelet
 * worked, with the failed polls so far in *ret_errors. False for NULL or before a poll. */
bool pod_allocations_health(const struct pod_allocations *p, uint64_t *ret_errors);

/* `joulestat check`: one List call, printed as the "podres" line. */
void pod_allocations_check(const struct config *cfg);

/* `joulestat ps`: the pods holding GPUs (from a snapshot of --gpu-idle-policy=allocation),
 * marking those with no process on the GPU as allocated-but-idle. */
struct snapshot;
void pod_allocations_print(const struct snapshot *snap);
