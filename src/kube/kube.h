/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * src/kube: what Kubernetes says about the pods of this node.
 *
 *   kube_labels.h            pod, namespace and container names from the API server
 *                            (a watcher thread, kube_api.h), attached to the ledger's
 *                            label sets once;
 *   kube_table.h             the immutable table of pods the watcher publishes;
 *   pod_resources_client.h   the kubelet's pod-resources socket (gRPC over HTTP/2, a
 *                            polling thread): which pods hold which GPUs;
 *   pod_resources_gpu.h      that answer, decoded by protobuf-c, as a table of GPU holds.
 *
 * Contract: every Kubernetes call happens on the folder's own threads, bounded by a
 * timeout; the sampler only takes the latest immutable result, so a slow API server or
 * kubelet never delays a tick. Energy never depends on Kubernetes being reachable: only
 * names and the `allocation` idle policy do. Other folders include this header's headers
 * only.
 */
#include "kube_labels.h"          /* IWYU pragma: export */
#include "kube_table.h"           /* IWYU pragma: export */
#include "pod_resources_client.h" /* IWYU pragma: export */
#include "pod_resources_gpu.h"    /* IWYU pragma: export */
