/* SPDX-License-Identifier: MIT */
#include "pod_allocations.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "escape.h"
#include "kube_table.h"
#include "log.h"
#include "macro.h"
#include "pod_resources_client.h"
#include "snapshot.h"

struct pod_allocations {
    const struct config *cfg;
    struct podres_source *source;
    struct podres_state *state; /* the one the accounting uses now */
    const struct kube_table *kube_table;
    struct complaint complaint;
    uint64_t last_errors;
    bool said_tables;
    bool said_fallback;
};

int pod_allocations_new(const struct config *cfg, struct pod_allocations **ret) {
    /* At the scan's pace, but not faster than a second: a 1 ms scan would be a thousand
     * gRPC calls a second to the kubelet, which limits them. */
    struct podres_source_options o = {
        .socket_path = cfg->pod_resources_socket,
        .interval_ns = MAX(cfg->process_scan_interval_ns, (uint64_t)NSEC_PER_SEC),
    };
    struct pod_allocations *p;
    int r;

    *ret = NULL;
    if (!cfg->gpu_enabled)
        return 0; /* GPU allocations are for splitting GPUs: nothing to ask the kubelet */
    if (!cfg->kubernetes_enabled) {
        if (cfg->gpu_idle_policy == IDLE_POLICY_ALLOCATION)
            log_info("gpu: --gpu-idle-policy=allocation needs the kubelet pod-resources socket "
                     "(--kubernetes-enabled); idle energy is split evenly instead");
        return 0;
    }
    /* Not a Kubernetes node: the default socket is absent and nobody asked for one. */
    if (!cfg->pod_resources_socket_given && access(cfg->pod_resources_socket, F_OK) < 0 &&
        errno == ENOENT) {
        log_info("pod-resources: no kubelet socket at %s; GPU allocations are not used "
                 "(--pod-resources-socket makes joulestat wait for one)%s",
                 cfg->pod_resources_socket,
                 cfg->gpu_idle_policy == IDLE_POLICY_ALLOCATION
                     ? "; --gpu-idle-policy=allocation splits idle energy evenly instead"
                     : "");
        return 0;
    }
    p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->cfg = cfg;
    r = podres_source_new(&o, &p->source);
    /* serve and top poll in a thread; a one-shot command (ps) asks once, now */
    if (r >= 0 && (cfg->command == COMMAND_SERVE || cfg->command == COMMAND_TOP))
        r = podres_source_start(p->source);
    else if (r >= 0)
        r = podres_source_poll(p->source) == -ENOMEM ? -ENOMEM : 0;
    if (r < 0) {
        pod_allocations_free(p);
        if (r == -ENOMEM)
            return r;
        /* (a thread that cannot start: EAGAIN) the rest goes on without allocations */
        (void)log_warning_errno(r,
                                "pod-resources: cannot start: %m; GPU allocations are not "
                                "used%s",
                                cfg->gpu_idle_policy == IDLE_POLICY_ALLOCATION
                                    ? "; --gpu-idle-policy=allocation splits idle energy "
                                      "evenly instead"
                                    : "");
        return 0;
    }
    *ret = p;
    return 0;
}

struct pod_allocations *pod_allocations_free(struct pod_allocations *p) {
    if (!p)
        return NULL;
    p->source = podres_source_free(p->source);
    p->state = podres_state_unref(p->state);
    free(p);
    return NULL;
}

static int lookup_uid(void *userdata, const char *namespace_, const char *pod,
                      const char **ret_uid) {
    struct pod_allocations *p = userdata;

    if (!p->kube_table)
        return -ENOENT;
    return kube_table_uid_by_name(p->kube_table, namespace_, pod, ret_uid);
}

/* One line when the source fails (with the fix), again at growing intervals, and one
 * when it works again. */
static void report(struct pod_allocations *p, const struct podres_state *st, uint64_t now_ns) {
    if (!st->up) {
        if (st->errors != p->last_errors && complain_should_log(&p->complaint, now_ns))
            log_warning("pod-resources: %s; fix: %s%s", st->message, podres_error_hint(st->error),
                        st->table ? " (keeping the last known allocations)" : "");
        p->last_errors = st->errors;
        return;
    }
    if (complain_release(&p->complaint))
        log_info("pod-resources: %s answers again", p->cfg->pod_resources_socket);
    if (!p->said_tables) {
        p->said_tables = true;
        log_info("pod-resources: %zu GPU allocation(s) from %s%s", st->table ? st->table->n : 0,
                 p->cfg->pod_resources_socket,
                 st->table && st->table->n_unplaced_mig
                     ? "; MIG devices named by their own UUID are charged to the GPU that "
                       "lists that instance"
                     : "");
    }
}

void pod_allocations_apply(struct pod_allocations *p, struct gpu_accounting *acc,
                           struct kube_labels *kube, uint64_t now_ns) {
    struct podres_state *st;

    if (!p) {
        gpu_accounting_set_allocations(acc, NULL, NULL, NULL);
        return;
    }
    st = podres_source_get(p->source);
    if (st) {
        report(p, st, now_ns);
        podres_state_unref(p->state);
        p->state = st;
    }
    p->kube_table = kube_labels_table(kube);
    gpu_accounting_set_allocations(acc, p->state ? p->state->table : NULL, lookup_uid, p);
}

bool pod_allocations_health(const struct pod_allocations *p, uint64_t *ret_errors) {
    if (!p || !p->state)
        return false;
    *ret_errors = p->state->errors;
    return p->state->up;
}

void pod_allocations_after_tick(struct pod_allocations *p, const struct gpu_tick_stats *st) {
    if (!p || !st || st->allocation_fallbacks == 0 || p->said_fallback)
        return;
    p->said_fallback = true;
    log_info("gpu: --gpu-idle-policy=allocation: no pod holds a GPU per the kubelet (or no "
             "allocation data yet); idle energy is split evenly among its processes there");
}

void pod_allocations_check(const struct config *cfg) {
    _cleanup_(freep) uint8_t *msg = NULL;
    struct podres_list *list = NULL;
    struct gpu_alloc_table *t = NULL;
    char err[256];
    size_t len = 0;
    int r;

    if (!cfg->kubernetes_enabled) {
        printf("podres  off       --kubernetes-enabled=false\n");
        return;
    }
    r = podres_call_list(cfg->pod_resources_socket, PODRES_DEFAULT_TIMEOUT_NS, PODRES_MAX_RESPONSE,
                         &msg, &len, err, sizeof(err));
    if (r >= 0)
        r = podres_list_decode(msg, len, &list);
    if (r >= 0)
        r = gpu_alloc_table_build(list, &t);
    if (r == -ENOENT) {
        printf("podres  absent    no GPU allocations without the socket (see the kubelet line)\n");
    } else if (r < 0) {
        printf("podres  down      %s\n        fix: %s\n", err[0] ? err : strerror(-r),
               podres_error_hint(r));
    } else {
        printf("podres  ok        List on %s: %zu pod(s), %zu GPU allocation(s)",
               cfg->pod_resources_socket, list->response->n_pod_resources, t->n);
        if (t->n_unplaced_mig)
            printf(", %zu MIG allocation(s) named by the instance's own UUID", t->n_unplaced_mig);
        printf("\n");
    }
    gpu_alloc_table_free(t);
    podres_list_free(list);
}

/* A process and an allocation can be compared when both carry the pod UID, or both the
 * pod's name (the API server fills names; pod-resources knows names only). */
static bool same_pod(const struct snap_gpu_process *p, const struct snap_gpu_allocation *a,
                     bool *ret_comparable) {
    if (p->id->pod_uid[0] && a->pod_uid[0]) {
        *ret_comparable = true;
        return strcmp(p->id->pod_uid, a->pod_uid) == 0;
    }
    if (p->id->pod[0] && a->pod[0]) {
        *ret_comparable = true;
        return strcmp(p->id->pod, a->pod) == 0 && strcmp(p->id->namespace_, a->namespace_) == 0;
    }
    *ret_comparable = false;
    return false;
}

void pod_allocations_print(const struct snapshot *snap) {
    bool header = false;

    for (size_t i = 0; i < snap->n_gpu_allocations; i++) {
        const struct snap_gpu_allocation *a = &snap->gpu_allocations[i];
        char ns[ESCAPED_SIZE(sizeof(a->namespace_))], pod[ESCAPED_SIZE(sizeof(a->pod))];
        char uid[ESCAPED_SIZE(sizeof(a->pod_uid))];
        unsigned running = 0, unknown = 0;
        const char *state;

        if (!a->active)
            continue;
        for (size_t j = 0; j < snap->n_gpu_processes; j++) {
            const struct snap_gpu_process *p = &snap->gpu_processes[j];
            bool comparable;

            if (p->gpu != a->gpu || !p->active)
                continue;
            if (same_pod(p, a, &comparable))
                running++;
            else if (!comparable)
                unknown++;
        }
        state = running ? "running" : unknown ? "unknown" : "allocated-idle";
        if (!header) {
            printf("\n%-4s %-20s %-28s %-36s %8s %14s %s\n", "GPU", "NAMESPACE", "POD", "POD_UID",
                   "REPLICAS", "ALLOCATION_J", "STATE");
            header = true;
        }
        /* Names from the kubelet, escaped for the terminal (escape.h). */
        (void)escape_terminal(a->namespace_, ns, sizeof(ns));
        (void)escape_terminal(a->pod, pod, sizeof(pod));
        (void)escape_terminal(a->pod_uid, uid, sizeof(uid));
        printf("%-4u %-20.20s %-28.28s %-36s %8u %14.6f %s\n", a->gpu, ns, pod, uid[0] ? uid : "-",
               a->replicas, (double)a->energy_uj / 1e6, state);
    }
}
