/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jansson_api; /* jansson_loader.h */

/*
 * Pure parsers for the Kubernetes API's pod JSON: a PodList (GET /api/v1/pods) and one
 * line of a watch stream (?watch=1). Only the fields joulestat uses are kept; everything
 * else is ignored, so newer API servers with more fields parse the same.
 */

struct kube_container {
    char *id;   /* containerID with the "<runtime>://" prefix stripped */
    char *name; /* container name in the pod spec */
};

struct kube_pod {
    char *uid;
    char *name;
    char *namespace_;
    char *config_hash; /* static pods: annotation kubernetes.io/config.mirror; or NULL */
    size_t n_containers;
    struct kube_container *containers;
    uint64_t deleted_ns; /* model state: monotonic time it was deleted; 0 while live */
    bool finished;       /* status.phase Succeeded or Failed: its containers are done */
};

struct kube_pod *kube_pod_free(struct kube_pod *p);
void kube_pod_freep(struct kube_pod **p);

/* Strips "<runtime>://" (containerd, cri-o, docker, ...) from a containerID. Returns the
 * id inside s, or NULL when s has no prefix or an empty id. */
const char *kube_strip_container_id(const char *s);

#define KUBE_RV_MAX 128

struct kube_pod_list {
    struct kube_pod **pods;
    size_t n_pods;
    size_t n_skipped; /* items that were not a usable pod (no uid, name or namespace) */
    char resource_version[KUBE_RV_MAX];
};

void kube_pod_list_done(struct kube_pod_list *l);

/* Parses a PodList with libjansson's table `js`. 0, -EBADMSG (not JSON, not a PodList, no
 * metadata.resourceVersion), or -ENOMEM. ret_list is written only on success. */
int kube_parse_pod_list(const struct jansson_api *js, const char *json, size_t len,
                        struct kube_pod_list *ret_list);

enum kube_event_type {
    KUBE_EVENT_ADDED,
    KUBE_EVENT_MODIFIED,
    KUBE_EVENT_DELETED,
    KUBE_EVENT_BOOKMARK,
    KUBE_EVENT_ERROR,
};

struct kube_event {
    enum kube_event_type type;
    struct kube_pod *pod;               /* ADDED, MODIFIED, DELETED; owned */
    char resource_version[KUBE_RV_MAX]; /* the object's; may be empty for ERROR */
    int error_code;                     /* ERROR: the Status code (410: expired) */
    char error_message[256];            /* ERROR: the Status message */
};

void kube_event_done(struct kube_event *e);

/* Parses one watch event line. 0, -EBADMSG, or -ENOMEM; ret_event only on success. */
int kube_parse_watch_event(const struct jansson_api *js, const char *json, size_t len,
                           struct kube_event *ret_event);
