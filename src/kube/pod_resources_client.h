/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pod_resources_decode.h"
#include "pod_resources_gpu.h"

/*
 * The kubelet pod-resources source: gRPC v1.PodResourcesLister/List over the kubelet's
 * unix socket (HTTP/2 with prior knowledge through libnghttp2, 5-byte gRPC message
 * framing), turned into a table of which pods hold which GPUs.
 *
 * A small thread of its own polls the socket, so a slow or hung kubelet never delays the
 * GPU tick: each poll is bounded by a timeout, and the sampler only picks up the latest
 * immutable result.
 */

#define PODRES_DEFAULT_SOCKET "/var/lib/kubelet/pod-resources/kubelet.sock"
#define PODRES_DEFAULT_TIMEOUT_NS (2ULL * 1000000000ULL)
#define PODRES_MAX_RESPONSE (16U * 1024U * 1024U)

/*
 * One List call. Returns 0 with the protobuf bytes of the ListPodResourcesResponse in
 * *ret_msg (free()) and *ret_len, or:
 *   -ENOENT / -EACCES / -ECONNREFUSED / -ENOTSOCK  connecting to the socket failed
 *   -ETIMEDOUT     no complete answer within timeout_ns
 *   -ECONNRESET    the peer closed the connection before the answer was complete
 *   -EPROTO        not a gRPC answer (HTTP/2 error, HTTP status, content-type, framing)
 *   -EMSGSIZE      the answer is larger than max_response
 *   -EREMOTEIO     grpc-status was not 0 (errbuf gets "grpc-status N: message")
 *   -ENOMEM
 * errbuf (may be NULL) receives a one-line description of any failure.
 */
int podres_call_list(const char *socket_path, uint64_t timeout_ns, size_t max_response,
                     uint8_t **ret_msg, size_t *ret_len, char *errbuf, size_t errlen);

/* What to tell an operator for an error of podres_call_list (static string). */
const char *podres_error_hint(int err);

/* The latest poll result: immutable once published, reference counted. */
struct podres_state {
    atomic_uint refs;
    bool up;   /* the last poll succeeded */
    int error; /* -errno of the last poll when !up */
    char message[256];
    uint64_t polls;      /* polls so far */
    uint64_t errors;     /* failed polls so far */
    uint64_t generation; /* grows with each successful poll */
    /* The GPU allocations of the last successful poll, kept while the kubelet is away
     * (allocations do not change because the kubelet restarts); NULL before the first
     * success. */
    struct gpu_alloc_table *table;
};

struct podres_state *podres_state_ref(struct podres_state *s);
/* Accepts NULL; returns NULL. */
struct podres_state *podres_state_unref(struct podres_state *s);

struct podres_source_options {
    const char *socket_path;
    uint64_t interval_ns; /* between polls in the thread */
    uint64_t timeout_ns;  /* per call; 0: PODRES_DEFAULT_TIMEOUT_NS */
};

struct podres_source;

int podres_source_new(const struct podres_source_options *o, struct podres_source **ret);
/* Stops the thread if running. Accepts NULL; returns NULL. */
struct podres_source *podres_source_free(struct podres_source *s);

/* Polls once in the caller's thread and publishes the result. Returns the poll's result
 * (0 or -errno as podres_call_list, or -EBADMSG / -E2BIG from decoding). */
int podres_source_poll(struct podres_source *s);

/* Background polling: one poll now, then every interval. */
int podres_source_start(struct podres_source *s);
void podres_source_stop(struct podres_source *s);

/* A new reference to the latest state; NULL before the first poll. Thread-safe. */
struct podres_state *podres_source_get(struct podres_source *s);
