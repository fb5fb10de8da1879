/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "kube_table.h"
#include "ledger.h"

/*
 * Pod, namespace and container names for the ledger, from the Kubernetes API watcher
 * (kube_api.h), by pod UID and container id. Names are attached once: to a new entry's
 * labels when the ledger makes them (kube_labels_labeler(), the ledger's labeler), and to
 * the entries that still lack them when the watcher publishes a new table (checked by
 * kube_labels_apply() before each snapshot; nothing is walked while the table stays the
 * same). Names already set are kept. Logging of API failures (one line per kind,
 * rate-limited) happens here.
 */
struct kube_labels;

/* The service account's CA, mounted in every pod: where it is missing (joulestat outside a
 * pod, --kubernetes-api-url given) the system's CAs verify the server. */
#define KUBE_DEFAULT_CA_FILE "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

/* Where the API server is and who we are (the --kubernetes-* flags; NULL or "": the
 * in-cluster defaults, $NODE_NAME, the hostname). */
struct kube_labels_options {
    bool enabled;
    const char *api_url;
    const char *token_file; /* "": no token (kubectl proxy) */
    const char *ca_file;
    const char *node_name;
    uint64_t retention_ns; /* how long deleted pods stay known */
};

/* Starts the watcher when enabled and an API server is configured. *ret is NULL (and one
 * info line says why) when it is off or not configured. 0 or -ENOMEM. */
int kube_labels_new(const struct kube_labels_options *o, struct kube_labels **ret);
struct kube_labels *kube_labels_free(struct kube_labels *k);

/* Takes the watcher's latest table; when it is new, fills the empty names of the ledger's
 * entries from it. Accepts NULL (no-op). */
void kube_labels_apply(struct kube_labels *k, struct ledger *l);

/* A ledger_labeler_fn (userdata: struct kube_labels): empty names of id from the table of
 * the last apply. */
void kube_labels_labeler(void *userdata, struct snap_identity *id);

/* The fill of one table: GPU processes, CPU processes and workloads with empty names get
 * them from t, each as a new label set. Returns 0, or -ENOMEM when some entry could not
 * get its names (it keeps its old labels). */
int kube_labels_fill_ledger(const struct kube_table *t, struct ledger *l);

/* For joulestat_source_up{source="kubernetes_api"}: whether the last LIST/WATCH attempt
 * worked, and the failed attempts so far in *ret_errors. False for NULL (off). */
bool kube_labels_health(const struct kube_labels *k, uint64_t *ret_errors);

/* The table the last apply used (borrowed: valid until the next apply), or NULL. For the
 * kubelet pod-resources join (kube_table_uid_by_name). */
const struct kube_table *kube_labels_table(const struct kube_labels *k);

/* `joulestat check`: one synchronous LIST, printed as the "kubeapi" line. */
void kube_labels_check(const struct kube_labels_options *o);
