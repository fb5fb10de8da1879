/* SPDX-License-Identifier: MIT */
#include "kube_pod.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jansson_loader.h"
#include "macro.h"

/* Longest string joulestat keeps from the API: names are DNS subdomains (253), ids 64. */
#define KUBE_FIELD_MAX 256
/* A pod with more container instances than this is not one we need names for. */
#define KUBE_CONTAINERS_MAX 1024

struct kube_pod *kube_pod_free(struct kube_pod *p) {
    if (!p)
        return NULL;
    for (size_t i = 0; i < p->n_containers; i++) {
        free(p->containers[i].id);
        free(p->containers[i].name);
    }
    free(p->containers);
    free(p->uid);
    free(p->name);
    free(p->namespace_);
    free(p->config_hash);
    free(p);
    return NULL;
}

void kube_pod_freep(struct kube_pod **p) {
    *p = kube_pod_free(*p);
}

const char *kube_strip_container_id(const char *s) {
    const char *sep = s ? strstr(s, "://") : NULL;

    if (!sep || sep == s || sep[3] == '\0')
        return NULL;
    for (const char *c = s; c < sep; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
            return NULL;
    return sep + 3;
}

/* A non-empty string member of at most KUBE_FIELD_MAX bytes, or NULL. */
static const char *get_string(const struct jansson_api *js, const json_t *obj, const char *key) {
    const json_t *v = js->object_get(obj, key);
    size_t len;

    if (!json_is_string(v))
        return NULL;
    len = js->string_length(v);
    if (len == 0 || len > KUBE_FIELD_MAX || memchr(js->string_value(v), '\0', len))
        return NULL;
    return js->string_value(v);
}

static int add_container(struct kube_pod *p, size_t *cap, const char *raw_id, const char *name) {
    const char *id = kube_strip_container_id(raw_id);
    char *id_copy, *name_copy;
    int r;

    if (!id || !name)
        return 0; /* waiting containers have no id yet */
    for (size_t i = 0; i < p->n_containers; i++)
        if (strcmp(p->containers[i].id, id) == 0)
            return 0;
    if (p->n_containers >= KUBE_CONTAINERS_MAX)
        return 0;
    r = grow_array(&p->containers, cap, p->n_containers + 1, sizeof(*p->containers));
    if (r < 0)
        return r;
    id_copy = strdup(id);
    name_copy = strdup(name);
    if (!id_copy || !name_copy) {
        free(id_copy);
        free(name_copy);
        return -ENOMEM;
    }
    p->containers[p->n_containers++] = (struct kube_container){.id = id_copy, .name = name_copy};
    return 0;
}

/* containerStatuses[] and friends: the current instance, then the previous one (a
 * restarted container's processes may still be in the ledger). */
static int add_statuses(const struct jansson_api *js, struct kube_pod *p, size_t *cap,
                        const json_t *statuses) {
    if (!json_is_array(statuses))
        return 0;
    for (size_t i = 0, n = js->array_size(statuses); i < n; i++) {
        const json_t *s = js->array_get(statuses, i);
        const char *name = get_string(js, s, "name");
        const json_t *last = js->object_get(js->object_get(s, "lastState"), "terminated");
        int r;

        r = add_container(p, cap, get_string(js, s, "containerID"), name);
        if (r >= 0)
            r = add_container(p, cap, get_string(js, last, "containerID"), name);
        if (r < 0)
            return r;
    }
    return 0;
}

static int dup_field(const char *s, char **ret) {
    if (!s) {
        *ret = NULL;
        return 0;
    }
    *ret = strdup(s);
    return *ret ? 0 : -ENOMEM;
}

/* Parses a v1.Pod object. -EBADMSG when uid, name or namespace is missing. */
static int pod_from_json(const struct jansson_api *js, const json_t *obj, struct kube_pod **ret) {
    _cleanup_(kube_pod_freep) struct kube_pod *p = NULL;
    const json_t *meta = js->object_get(obj, "metadata");
    const json_t *status = js->object_get(obj, "status");
    const char *uid = get_string(js, meta, "uid"), *name = get_string(js, meta, "name");
    const char *ns = get_string(js, meta, "namespace");
    size_t cap = 0;
    int r;

    if (!uid || !name || !ns)
        return -EBADMSG;
    p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    r = dup_field(uid, &p->uid);
    if (r >= 0)
        r = dup_field(name, &p->name);
    if (r >= 0)
        r = dup_field(ns, &p->namespace_);
    if (r >= 0)
        r = dup_field(
            get_string(js, js->object_get(meta, "annotations"), "kubernetes.io/config.mirror"),
            &p->config_hash);
    {
        const char *phase = get_string(js, status, "phase");

        p->finished = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
    }
    if (r >= 0)
        r = add_statuses(js, p, &cap, js->object_get(status, "containerStatuses"));
    if (r >= 0)
        r = add_statuses(js, p, &cap, js->object_get(status, "initContainerStatuses"));
    if (r >= 0)
        r = add_statuses(js, p, &cap, js->object_get(status, "ephemeralContainerStatuses"));
    if (r < 0)
        return r;
    *ret = TAKE_PTR(p);
    return 0;
}

/* metadata.resourceVersion into buf; -EBADMSG when absent or too long. */
static int get_resource_version(const struct jansson_api *js, const json_t *obj,
                                char buf[static KUBE_RV_MAX]) {
    const char *rv = get_string(js, js->object_get(obj, "metadata"), "resourceVersion");

    if (!rv || strlen(rv) >= KUBE_RV_MAX)
        return -EBADMSG;
    memcpy(buf, rv, strlen(rv) + 1);
    return 0;
}

/* Strict RFC 8259 parse of one document; a parse failure is -EBADMSG. jansson reports an
 * allocation failure as an error too, with its own code. A "\u0000" in a string is valid
 * JSON, and any pod may carry one in a free-text field (an annotation, an argument, a
 * termination message): refused, it failed the whole list, and pods went unnamed until
 * that pod was deleted. get_string() keeps such a string out of what is read. */
static int load(const struct jansson_api *js, const char *buf, size_t len, json_t **ret) {
    json_error_t err;
    json_t *j = js->loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);

    if (!j)
        return json_error_code(&err) == json_error_out_of_memory ? -ENOMEM : -EBADMSG;
    *ret = j;
    return 0;
}

void kube_pod_list_done(struct kube_pod_list *l) {
    for (size_t i = 0; i < l->n_pods; i++)
        kube_pod_free(l->pods[i]);
    free(l->pods);
    *l = (struct kube_pod_list){0};
}

static int pod_list_from_json(const struct jansson_api *js, const json_t *root,
                              struct kube_pod_list *ret_list) {
    const char *kind = get_string(js, root, "kind");
    const json_t *items = js->object_get(root, "items");
    struct kube_pod_list l = {0};
    size_t cap = 0;
    int r;

    /* "items": null is how an empty list looks from some servers. */
    if (!json_is_object(root) || (kind && strcmp(kind, "PodList") != 0) ||
        !(json_is_array(items) || json_is_null(items) || !items))
        return -EBADMSG;
    r = get_resource_version(js, root, l.resource_version);
    if (r < 0)
        return r;
    for (size_t i = 0, n = js->array_size(items); i < n; i++) {
        struct kube_pod *p;

        r = pod_from_json(js, js->array_get(items, i), &p);
        if (r == -EBADMSG) {
            l.n_skipped++;
            continue;
        }
        if (r >= 0) {
            r = grow_array(&l.pods, &cap, l.n_pods + 1, sizeof(*l.pods));
            if (r < 0)
                kube_pod_free(p);
        }
        if (r < 0) {
            kube_pod_list_done(&l);
            return r;
        }
        l.pods[l.n_pods++] = p;
    }
    *ret_list = l;
    return 0;
}

int kube_parse_pod_list(const struct jansson_api *js, const char *json, size_t len,
                        struct kube_pod_list *ret_list) {
    json_t *root = NULL;
    int r;

    r = load(js, json, len, &root);
    if (r < 0)
        return r;
    r = pod_list_from_json(js, root, ret_list);
    jansson_decref(js, root);
    return r;
}

void kube_event_done(struct kube_event *e) {
    e->pod = kube_pod_free(e->pod);
}

static const char *const event_types[] = {
    [KUBE_EVENT_ADDED] = "ADDED",     [KUBE_EVENT_MODIFIED] = "MODIFIED",
    [KUBE_EVENT_DELETED] = "DELETED", [KUBE_EVENT_BOOKMARK] = "BOOKMARK",
    [KUBE_EVENT_ERROR] = "ERROR",
};

static int event_from_json(const struct jansson_api *js, const json_t *root,
                           struct kube_event *ret_event) {
    const char *type = get_string(js, root, "type");
    const json_t *obj = js->object_get(root, "object");
    struct kube_event e = {0};
    size_t t;
    int r;

    if (!type || !json_is_object(obj))
        return -EBADMSG;
    for (t = 0; t < ARRAY_SIZE(event_types); t++)
        if (strcmp(type, event_types[t]) == 0)
            break;
    if (t == ARRAY_SIZE(event_types))
        return -EBADMSG;
    e.type = (enum kube_event_type)t;

    if (e.type == KUBE_EVENT_ERROR) {
        const json_t *code = js->object_get(obj, "code");
        const char *msg = get_string(js, obj, "message");

        if (!json_is_integer(code) || js->integer_value(code) < 100 ||
            js->integer_value(code) > 599)
            return -EBADMSG;
        e.error_code = (int)js->integer_value(code);
        if (msg) {
            size_t n = MIN(strlen(msg), sizeof(e.error_message) - 1);

            memcpy(e.error_message, msg, n);
        }
        *ret_event = e;
        return 0;
    }
    r = get_resource_version(js, obj, e.resource_version);
    if (r < 0)
        return r;
    if (e.type != KUBE_EVENT_BOOKMARK) {
        r = pod_from_json(js, obj, &e.pod);
        if (r < 0)
            return r;
    }
    *ret_event = e;
    return 0;
}

int kube_parse_watch_event(const struct jansson_api *js, const char *json, size_t len,
                           struct kube_event *ret_event) {
    json_t *root = NULL;
    int r;

    r = load(js, json, len, &root);
    if (r < 0)
        return r;
    r = event_from_json(js, root, ret_event);
    jansson_decref(js, root);
    return r;
}
