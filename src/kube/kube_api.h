/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube_table.h"

/*
 * Pod metadata of this node from the Kubernetes API server: a background thread LISTs
 * GET /api/v1/pods?fieldSelector=spec.nodeName=<node>, then WATCHes from the list's
 * resourceVersion (bookmarks on), re-LISTs on 410 Gone, and reconnects with jittered
 * exponential backoff. The bearer token is re-read from its file at every (re)connect,
 * because projected service-account tokens rotate. After every change it publishes a new
 * immutable kube_table; while the server is unreachable the last good table stays.
 *
 * Sources do not log: failures and recoveries go to the report callback (called from the
 * watcher thread), and the daemon decides what to log.
 */

enum kube_failure {
    KUBE_FAIL_TOKEN,   /* token file unreadable or empty */
    KUBE_FAIL_CONNECT, /* DNS, TCP, TLS (bad CA), timeouts, connection lost */
    KUBE_FAIL_AUTH,    /* 401 or 403: wrong or expired token, or missing RBAC */
    KUBE_FAIL_HTTP,    /* any other HTTP status, or an ERROR watch event */
    KUBE_FAIL_PARSE,   /* a body that is not the JSON we expect */
    KUBE_FAIL_LIBRARY, /* libcurl or libjansson cannot be loaded (err, detail say why); once */
    _KUBE_FAIL_MAX,
};

const char *kube_failure_to_string(enum kube_failure f);

struct kube_report {
    bool ok; /* a LIST succeeded: connected, n_pods live pods */
    enum kube_failure failure;
    int err;          /* -errno for TOKEN; 0 otherwise */
    long http_status; /* AUTH, HTTP: the status; 0 when none */
    size_t n_pods;
    char detail[256]; /* libcurl's message, the Status message, ... */
};

typedef void (*kube_report_fn)(const struct kube_report *report, void *userdata);

struct kube_api_options {
    const char *url;        /* https://host:port, no trailing path */
    const char *token_file; /* NULL: no Authorization header */
    const char *ca_file;    /* NULL: the system CA store */
    const char *node_name;
    uint64_t retention_ns;                   /* how long deleted pods keep their names */
    uint64_t backoff_min_ns, backoff_max_ns; /* 0: 1 s and 60 s */
    unsigned watch_timeout_s;                /* server-side timeoutSeconds of a watch; 0: 300 */
    kube_report_fn report;
    void *userdata;
};

struct kube_api;

/* Starts the watcher thread. 0, -ENOMEM, or -errno from pthread_create. */
int kube_api_start(const struct kube_api_options *o, struct kube_api **ret_api);
/* Stops the thread (promptly, also mid-transfer) and frees. Accepts NULL; returns NULL. */
struct kube_api *kube_api_free(struct kube_api *a);

/* A new reference to the latest table (kube_table_unref it), or NULL before the first
 * successful LIST. Holds a lock only to take the reference. */
struct kube_table *kube_api_get_table(struct kube_api *a);

/* One synchronous LIST (for `joulestat check`): fills ret with what happened. Returns 0
 * when the list worked, -ENOMEM, or a negative errno matching the failure. */
int kube_api_probe(const struct kube_api_options *o, struct kube_report *ret);

/* The in-cluster API URL from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT (IPv6
 * hosts bracketed) into buf. -ENOENT when they are not set, -ENAMETOOLONG. */
int kube_api_in_cluster_url(char *buf, size_t size);
