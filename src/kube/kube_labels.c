/* SPDX-License-Identifier: MIT */
#include "kube_labels.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "clock.h"
#include "kube_api.h"
#include "log.h"
#include "macro.h"

struct kube_labels {
    struct kube_api *api;
    struct kube_table *table; /* sampler thread: the table of the last apply */
    bool refill;              /* the last fill ran out of memory: fill again at the next */
    char url[512];
    char node[256];
    /* Watcher thread only (report callback). */
    struct complaint complaints[_KUBE_FAIL_MAX];
    bool connected_once;
    /* Written by the watcher thread, read by the sampler for joulestat_source_up. */
    atomic_bool up;
    atomic_uint_fast64_t errors;
};

/* Where the API server is and who we are; -ENOENT with *ret_why when not configured. */
static int resolve(const struct kube_labels_options *opts, struct kube_api_options *o, char *url,
                   size_t url_size, char *node, size_t node_size, const char **ret_why) {
    const char *token = opts->token_file;
    const char *env_node = getenv("NODE_NAME");
    bool in_cluster = false;

    *o = (struct kube_api_options){.retention_ns = opts->retention_ns};
    if (opts->api_url && opts->api_url[0]) {
        if (strlen(opts->api_url) >= url_size)
            return *ret_why = "--kubernetes-api-url is too long", -ENAMETOOLONG;
        memcpy(url, opts->api_url, strlen(opts->api_url) + 1);
    } else if (kube_api_in_cluster_url(url, url_size) >= 0)
        in_cluster = true;
    else
        return *ret_why = "no --kubernetes-api-url and KUBERNETES_SERVICE_HOST/PORT unset", -ENOENT;
    /* Trailing slashes would double up with the path. */
    for (size_t n = strlen(url); n > 0 && url[n - 1] == '/'; n--)
        url[n - 1] = '\0';

    if (token && !token[0])
        token = NULL; /* --kubernetes-token-file= : no token (kubectl proxy) */
    /* The service env is in every pod; without a token we are not meant to talk to it. */
    if (in_cluster && token && access(token, F_OK) < 0)
        return *ret_why = "no service-account token mounted", -ENOENT;
    o->token_file = token;
    if (opts->ca_file && opts->ca_file[0] && access(opts->ca_file, R_OK) == 0)
        o->ca_file = opts->ca_file;

    if (opts->node_name && opts->node_name[0])
        (void)snprintf(node, node_size, "%s", opts->node_name);
    else if (env_node && env_node[0])
        (void)snprintf(node, node_size, "%s", env_node);
    else if (gethostname(node, node_size) < 0 || !node[0])
        return *ret_why = "no --node-name, $NODE_NAME or hostname", -ENOENT;
    node[node_size - 1] = '\0';
    o->url = url;
    o->node_name = node;
    return 0;
}

/* A CA file pins the server to it: unreadable, the system's CAs in its place would let any
 * server with a public certificate answer. Only the default one may be absent (outside a
 * pod); present but unreadable (a pod's runAsUser), it is an error too. -errno then. */
static int pinned_ca_unreadable(const struct kube_labels_options *opts,
                                const struct kube_api_options *o) {
    int r;

    if (!opts->ca_file || !opts->ca_file[0] || o->ca_file)
        return 0;
    r = access(opts->ca_file, R_OK) < 0 ? -errno : -EACCES;
    if (r == -ENOENT && strcmp(opts->ca_file, KUBE_DEFAULT_CA_FILE) == 0)
        return 0;
    return r;
}

static void log_failure(struct kube_labels *k, const struct kube_report *rep) {
    switch (rep->failure) {
    case KUBE_FAIL_TOKEN:
        log_warning_errno(rep->err,
                          "kubernetes: cannot read the token file %s: %m; pod names stay empty, "
                          "retrying",
                          rep->detail);
        break;
    case KUBE_FAIL_CONNECT:
        log_warning("kubernetes: cannot reach the API server %s: %s; pod names stay as they "
                    "are, energy is unaffected, retrying with backoff",
                    k->url, rep->detail);
        break;
    case KUBE_FAIL_AUTH:
        log_warning("kubernetes: the API server %s refused our token (HTTP %ld: %s); check the "
                    "token and RBAC (get, list, watch on pods); pod names stay empty",
                    k->url, rep->http_status, rep->detail);
        break;
    case KUBE_FAIL_HTTP:
        log_warning("kubernetes: HTTP %ld from the API server %s: %s; retrying", rep->http_status,
                    k->url, rep->detail);
        break;
    case KUBE_FAIL_LIBRARY:
        log_warning("kubernetes: %s; pod names stay empty, energy is unaffected", rep->detail);
        break;
    default:
        log_warning("kubernetes: unexpected answer from the API server %s: %s; retrying", k->url,
                    rep->detail);
        break;
    }
}

/* Called from the watcher thread after each LIST and each failure. */
static void on_report(const struct kube_report *rep, void *userdata) {
    struct kube_labels *k = userdata;
    uint64_t now = clock_monotonic_ns();

    atomic_store(&k->up, rep->ok);
    if (rep->ok) {
        bool recovered = false;

        for (unsigned i = 0; i < _KUBE_FAIL_MAX; i++)
            recovered |= complain_release(&k->complaints[i]);
        if (!k->connected_once || recovered)
            log_info("kubernetes: %s API server %s: %zu pods on node %s",
                     k->connected_once ? "reconnected to" : "connected to", k->url, rep->n_pods,
                     k->node);
        k->connected_once = true;
        return;
    }
    atomic_fetch_add(&k->errors, 1);
    if (rep->failure < _KUBE_FAIL_MAX && complain_should_log(&k->complaints[rep->failure], now))
        log_failure(k, rep);
}
/* A token sent over plain http can be read by anyone on the path: kubectl proxy on
 * loopback needs none (--kubernetes-token-file=), an API server is reached over https. */
static bool token_in_clear(const struct kube_api_options *o) {
    return o->token_file && strncasecmp(o->url, "http://", 7) == 0;
}

int kube_labels_new(const struct kube_labels_options *opts, struct kube_labels **ret) {
    struct kube_api_options o;
    struct kube_labels *k;
    const char *why = NULL;
    int r;

    *ret = NULL;
    if (!opts->enabled)
        return 0;
    k = calloc(1, sizeof(*k));
    if (!k)
        return -ENOMEM;
    r = resolve(opts, &o, k->url, sizeof(k->url), k->node, sizeof(k->node), &why);
    if (r < 0) {
        log_info("Kubernetes API not configured (%s); pod names stay empty", why);
        free(k);
        return 0;
    }
    r = pinned_ca_unreadable(opts, &o);
    if (r < 0) {
        log_warning_errno(r,
                          "kubernetes: cannot read --kubernetes-ca-file %s: %m; the API server "
                          "is not asked without it, pod names stay empty",
                          opts->ca_file);
        free(k);
        return 0;
    }
    if (token_in_clear(&o))
        log_warning("kubernetes: %s is plain http, and the token %s is sent with every request "
                    "unencrypted; use https, or --kubernetes-token-file= for a local kubectl "
                    "proxy",
                    o.url, o.token_file);
    o.report = on_report;
    o.userdata = k;
    r = kube_api_start(&o, &k->api);
    if (r < 0) {
        free(k);
        if (r == -ENOMEM)
            return r;
        log_warning_errno(r, "kubernetes: cannot start the API watcher: %m; pod names stay empty");
        return 0;
    }
    log_debug("kubernetes: watching pods of node %s at %s", k->node, k->url);
    *ret = k;
    return 0;
}

struct kube_labels *kube_labels_free(struct kube_labels *k) {
    if (!k)
        return NULL;
    k->api = kube_api_free(k->api);
    k->table = kube_table_unref(k->table);
    free(k);
    return NULL;
}

/* Returns whether a name was filled in. */
static bool fill(const struct kube_table *t, struct snap_identity *id) {
    const struct kube_pod_info *pod, *own = NULL;
    const char *name;
    bool filled = false;

    if (id->pod_uid[0] && !id->pod[0] && kube_table_pod_by_uid(t, id->pod_uid, &pod) >= 0) {
        copy_cut(id->pod, sizeof(id->pod), pod->name);
        copy_cut(id->namespace_, sizeof(id->namespace_), pod->namespace_);
        filled = true;
    }
    /* Only a container of the process's own pod (found by its UID, or by a static pod's
     * config hash): an id alone is one anybody can name a cgroup after (below a user's own
     * manager), and would take another pod's names. */
    if (id->container_id[0] && !id->container[0] && id->pod_uid[0] &&
        kube_table_pod_by_uid(t, id->pod_uid, &own) >= 0 &&
        kube_table_container_by_id(t, id->container_id, &name, &pod) >= 0 && pod == own) {
        copy_cut(id->container, sizeof(id->container), name);
        filled = true;
    }
    return filled;
}

/* A new label set for *slot when t names more of it. Returns 1 when replaced, 0 when
 * nothing new, -ENOMEM. */
static int fill_slot(const struct kube_table *t, const struct snap_identity **slot) {
    struct snap_identity named = **slot;
    int r;

    if (!fill(t, &named))
        return 0;
    r = ledger_labels_replace(slot, &named);
    return r < 0 ? r : 1;
}

int kube_labels_fill_ledger(const struct kube_table *t, struct ledger *l) {
    void *value;
    int r, ret = 0;

    for (size_t i = 0; hashmap_next(&l->processes, &i, NULL, &value);) {
        struct ledger_process *p = value;

        r = fill_slot(t, &p->id);
        if (r > 0)
            p->wl_fresh = false; /* its workloads take the names at the next booking */
        ret = MIN(ret, r);
    }
    for (size_t i = 0; hashmap_next(&l->workloads, &i, NULL, &value);)
        ret = MIN(ret, fill_slot(t, &((struct ledger_workload *)value)->id));
    for (size_t i = 0; hashmap_next(&l->cpu_processes, &i, NULL, &value);)
        ret = MIN(ret, fill_slot(t, &((struct ledger_cpu_process *)value)->id));
    return ret;
}

void kube_labels_labeler(void *userdata, struct snap_identity *id) {
    const struct kube_labels *k = userdata;

    if (k && k->table)
        (void)fill(k->table, id);
}

void kube_labels_apply(struct kube_labels *k, struct ledger *l) {
    struct kube_table *t;
    bool changed;

    if (!k)
        return;
    t = kube_api_get_table(k->api);
    if (!t)
        return;
    changed = !k->table || kube_table_generation(t) != kube_table_generation(k->table);
    (void)kube_table_unref(k->table);
    k->table = t;
    if (changed || k->refill)
        k->refill = kube_labels_fill_ledger(k->table, l) < 0;
}

bool kube_labels_health(const struct kube_labels *k, uint64_t *ret_errors) {
    if (!k)
        return false;
    *ret_errors = atomic_load(&k->errors);
    return atomic_load(&k->up);
}

const struct kube_table *kube_labels_table(const struct kube_labels *k) {
    return k ? k->table : NULL;
}

void kube_labels_check(const struct kube_labels_options *opts) {
    struct kube_api_options o;
    struct kube_report rep;
    char url[512], node[256];
    const char *why = NULL;
    int r;

    if (!opts->enabled) {
        printf("kubeapi off       --kubernetes-enabled=false\n");
        return;
    }
    if (resolve(opts, &o, url, sizeof(url), node, sizeof(node), &why) < 0) {
        printf("kubeapi absent    %s; pod names stay empty\n"
               "        fix: in a pod, mount the service-account token; elsewhere set "
               "--kubernetes-api-url and --kubernetes-token-file\n",
               why);
        return;
    }
    r = pinned_ca_unreadable(opts, &o);
    if (r < 0) {
        printf("kubeapi down      cannot read --kubernetes-ca-file %s: %s\n", opts->ca_file,
               strerror(-r));
        return;
    }
    if (token_in_clear(&o))
        printf("kubeapi warning   %s is plain http: the token %s is sent unencrypted\n"
               "        fix: an https URL, or --kubernetes-token-file= for a local kubectl "
               "proxy\n",
               url, o.token_file);
    r = kube_api_probe(&o, &rep);
    if (r >= 0) {
        printf("kubeapi ok        %s: reachable, auth OK, %zu pods on node %s\n", url, rep.n_pods,
               node);
        return;
    }
    switch (rep.failure) {
    case KUBE_FAIL_TOKEN:
        printf("kubeapi down      cannot read the token %s: %s\n", rep.detail, strerror(-rep.err));
        break;
    case KUBE_FAIL_CONNECT:
        printf("kubeapi down      %s unreachable: %s\n", url, rep.detail);
        break;
    case KUBE_FAIL_LIBRARY:
        printf("kubeapi down      %s\n", rep.detail);
        break;
    case KUBE_FAIL_AUTH:
        printf("kubeapi down      %s reachable, auth failed (HTTP %ld: %s)\n"
               "        fix: a valid token, and RBAC get/list/watch on pods (docs/KUBERNETES.md)\n",
               url, rep.http_status, rep.detail);
        break;
    default:
        printf("kubeapi down      %s reachable, %s (HTTP %ld: %s)\n", url,
               r == -ENOMEM ? "out of memory" : "unexpected answer", rep.http_status, rep.detail);
        break;
    }
}
