/* SPDX-License-Identifier: MIT */
/* The Kubernetes API watcher (kube_api.h): its thread LISTs and WATCHes (kube_request.c)
 * with backoff, applies each event to the pod model and publishes the tables. */
#include "kube_api.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "curl_loader.h"
#include "jansson_loader.h"
#include "kube_model.h"
#include "kube_request.h"
#include "macro.h"
#include "stopper.h"

static const char *const failure_names[_KUBE_FAIL_MAX] = {
    [KUBE_FAIL_TOKEN] = "token", [KUBE_FAIL_CONNECT] = "connect", [KUBE_FAIL_AUTH] = "auth",
    [KUBE_FAIL_HTTP] = "http",   [KUBE_FAIL_PARSE] = "parse",     [KUBE_FAIL_LIBRARY] = "library",
};

const char *kube_failure_to_string(enum kube_failure f) {
    return f < _KUBE_FAIL_MAX ? failure_names[f] : "unknown";
}

struct kube_api {
    char *url, *token_file, *ca_file, *node_name;
    struct kube_api_options o;
    const struct curl_api *cu; /* NULL when libcurl or libjansson could not be loaded */
    const struct jansson_api *js;
    int load_error;
    const char *load_reason;

    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    struct kube_table *table; /* under lock */
    struct stopper stopper;

    /* Watcher thread only. */
    struct kube_model model;
    uint64_t generation;
    char rv[KUBE_RV_MAX];
    uint64_t rng;
    bool failing;             /* the last report was a failure */
    bool listed;              /* a LIST has succeeded: later ones read every pod anew */
    unsigned watches_refused; /* watches in a row the server answered with an error */
};

/* A server that refuses a watch from our version this many times in a row (500, 504 "too
 * large resource version" after an etcd restore, an ERROR event other than 410) is asked
 * for the whole list again, as client-go's reflector does, rather than for ever. */
#define KUBE_WATCH_REFUSALS_RELIST 3

/* A watch resumed after a failure that the server has held open this long, answered 200
 * and no error event: the API is back. On a quiet node no event or bookmark (about one a
 * minute) may come to say so; an error event comes as soon as the watch starts. */
#define KUBE_WATCH_SETTLED_NS (3 * NSEC_PER_SEC)

static void publish(struct kube_api *a) {
    struct kube_table *t = NULL, *old;

    if (kube_model_build(&a->model, ++a->generation, &t) < 0)
        return; /* out of memory: readers keep the previous table */
    (void)pthread_mutex_lock(&a->lock);
    old = a->table;
    a->table = t;
    (void)pthread_mutex_unlock(&a->lock);
    (void)kube_table_unref(old);
}

/* The watcher's side of one request (its userdata): the API, and what a watch's events did. */
struct watch {
    struct kube_api *api;
    size_t events;
    bool changed;
    uint64_t started_ns; /* a watch's: when its request was sent */
};

/* A watch that delivered an event after a failure (or that the server ended cleanly): the
 * API is back. A LIST says so itself; a watch resumed from the version kept through the
 * outage has no LIST before it, and without this the source stayed down (and its
 * complaints unreleased) for good. Not at its 200 alone: most watch errors come as an
 * ERROR event inside a 200 stream, and the source would flap with each. */
static void watch_answered(struct kube_api *a) {
    if (!a->failing)
        return;
    a->failing = false;
    if (a->o.report)
        a->o.report(
            &(struct kube_report){.ok = true, .http_status = 200, .n_pods = a->model.n_pods},
            a->o.userdata);
}

/* One watch event. -ESTALE asks for a re-LIST (410 Gone). */
static int handle_event(struct kube_request *req, const char *line, size_t len) {
    struct watch *w = req->userdata;
    struct kube_api *a = w->api;
    struct kube_event e;
    int r;

    r = kube_parse_watch_event(req->js, line, len, &e);
    if (r < 0) {
        kube_fail(req->report, KUBE_FAIL_PARSE, req->status, "a watch event is not a pod event");
        /* Watched again from the same version, the same event would come back for ever: a
         * new LIST instead, which skips a pod it cannot read. */
        a->rv[0] = '\0';
        return r;
    }
    /* An ERROR event is no progress: a server that answers each watch with one at once
     * (410 after every LIST) is waited for like one that ends each watch at once. */
    if (e.type != KUBE_EVENT_ERROR)
        w->events++;
    switch (e.type) {
    case KUBE_EVENT_ADDED:
    case KUBE_EVENT_MODIFIED:
        r = kube_model_upsert(&a->model, TAKE_PTR(e.pod));
        w->changed = true;
        break;
    case KUBE_EVENT_DELETED:
        r = kube_model_delete(&a->model, TAKE_PTR(e.pod), clock_monotonic_ns());
        w->changed = true;
        break;
    case KUBE_EVENT_BOOKMARK:
        break;
    case KUBE_EVENT_ERROR:
        if (e.error_code == 410) {
            a->rv[0] = '\0';
            return -ESTALE;
        }
        kube_fail(req->report, KUBE_FAIL_HTTP, e.error_code, e.error_message);
        return -EPROTO;
    }
    kube_event_done(&e);
    if (r < 0)
        return r;
    memcpy(a->rv, e.resource_version, sizeof(a->rv));
    watch_answered(a);
    return 0;
}

/* The events of one piece of the stream are in: one table for all of them. */
static void events_done(struct kube_request *req) {
    struct watch *w = req->userdata;

    if (w->changed) {
        publish(w->api);
        w->changed = false;
    }
}

/* Whether a watch has been held open, answered 200, for KUBE_WATCH_SETTLED_NS. */
static bool watch_settled(struct kube_request *req, const struct watch *w) {
    long status = req->status;

    if (!req->watch || clock_monotonic_ns() - w->started_ns < KUBE_WATCH_SETTLED_NS)
        return false;
    if (status == 0) /* no body yet; the status line came with the headers */
        (void)req->cu->easy_getinfo(req->curl, CURLINFO_RESPONSE_CODE, &status);
    return status == 200;
}

/* Stops the request when the thread is told to; meanwhile, an idle watch still ages deleted
 * pods out, and one resumed after a failure says the API is back once it has settled. */
static bool on_progress(struct kube_request *req) {
    struct watch *w = req->userdata;
    struct kube_api *a = w->api;

    if (stopper_stopping(&a->stopper))
        return true;
    if (a->failing && watch_settled(req, w))
        watch_answered(a);
    if (clock_monotonic_ns() >= kube_model_next_expiry(&a->model) &&
        kube_model_expire(&a->model, clock_monotonic_ns()) > 0)
        publish(a);
    return false;
}

/* LIST: the whole body, then the pods. On success the list is in ret. */
static int list_pods(struct kube_request *req, struct kube_pod_list *ret) {
    int r;

    strbuf_init(&req->body);
    r = kube_request_perform(req);
    if (r >= 0) {
        r = kube_parse_pod_list(req->js, req->body.buf ? req->body.buf : "", req->body.len, ret);
        if (r == -EBADMSG)
            kube_fail(req->report, KUBE_FAIL_PARSE, req->status, "the pod list is not a PodList");
    }
    strbuf_done(&req->body);
    return r;
}

static void fail_library(struct kube_report *rep, int error, const char *reason) {
    kube_fail(rep, KUBE_FAIL_LIBRARY, 0, reason);
    rep->err = error;
}

/* The API client's two libraries, loaded on first use; both written only on success. */
static int load_libraries(const struct curl_api **ret_cu, const struct jansson_api **ret_js,
                          const char **ret_reason) {
    const struct curl_api *cu = NULL;
    const struct jansson_api *js = NULL;
    int r;

    r = curl_api_get(&cu, ret_reason);
    if (r >= 0)
        r = jansson_api_get(&js, ret_reason);
    if (r < 0)
        return r;
    *ret_cu = cu;
    *ret_js = js;
    return 0;
}

int kube_api_probe(const struct kube_api_options *o, struct kube_report *ret) {
    const struct curl_api *cu = NULL;
    const struct jansson_api *js = NULL;
    const char *reason = NULL;
    struct kube_pod_list list;
    struct kube_report rep = {0};
    int r;

    r = load_libraries(&cu, &js, &reason);
    if (r < 0) {
        fail_library(ret, r, reason);
        return r;
    }
    (void)cu->global_init(CURL_GLOBAL_DEFAULT);
    r = list_pods(
        &(struct kube_request){.cu = cu, .js = js, .o = o, .resource_version = "0", .report = &rep},
        &list);
    cu->global_cleanup();
    if (r >= 0) {
        rep = (struct kube_report){.ok = true, .http_status = 200, .n_pods = list.n_pods};
        kube_pod_list_done(&list);
    }
    *ret = rep;
    return r;
}

static int do_list(struct kube_api *a, struct kube_report *rep) {
    struct watch w = {.api = a};
    /* The first from the API server's cache, as client-go's reflector does (a DaemonSet
     * rollout lists from every node at once); a LIST again after a 410 or a refused watch
     * reads every pod anew, so as not to go back before what was seen. */
    struct kube_request req = {.cu = a->cu,
                               .js = a->js,
                               .o = &a->o,
                               .resource_version = a->listed ? NULL : "0",
                               .report = rep,
                               .on_progress = on_progress,
                               .userdata = &w};
    struct kube_pod_list list;
    int r;

    r = list_pods(&req, &list);
    if (r < 0)
        return r;
    a->listed = true;
    memcpy(a->rv, list.resource_version, sizeof(a->rv));
    *rep = (struct kube_report){.ok = true, .http_status = 200, .n_pods = list.n_pods};
    r = kube_model_replace(&a->model, &list, clock_monotonic_ns());
    kube_pod_list_done(&list);
    (void)kube_model_expire(&a->model, clock_monotonic_ns());
    publish(a);
    return r;
}

static int do_watch(struct kube_api *a, struct kube_report *rep, size_t *ret_events) {
    struct watch w = {.api = a, .started_ns = clock_monotonic_ns()};
    struct kube_request req = {.cu = a->cu,
                               .js = a->js,
                               .o = &a->o,
                               .watch = true,
                               .resource_version = a->rv,
                               .report = rep,
                               .on_line = handle_event,
                               .on_lines_done = events_done,
                               .on_progress = on_progress,
                               .userdata = &w};
    int r;

    strbuf_init(&req.body);
    r = kube_request_perform(&req);
    strbuf_done(&req.body);
    /* 410 Gone, or an event too large to take (the same watch would stop at it again):
     * LIST again. */
    if (r == -ESTALE || r == -EFBIG)
        a->rv[0] = '\0';
    else if (r >= 0)
        watch_answered(a); /* the server ended it cleanly */
    *ret_events = w.events;
    return r;
}

/* Sleeps up to ns, or until kube_api_free() wakes the thread. */
static void sleep_ns(struct kube_api *a, uint64_t ns) {
    (void)stopper_sleep_until(&a->stopper, clock_monotonic_ns() + ns);
}

/* Backoff with jitter: a random time in [b/2, b), so a fleet of nodes does not reconnect in
 * lockstep after an API server restart. */
static uint64_t jittered(struct kube_api *a, uint64_t b) {
    uint64_t x = (a->rng += UINT64_C(0x9e3779b97f4a7c15));

    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return b / 2 + (b / 2 > 0 ? x % (b / 2) : 0);
}

static void *watcher(void *userdata) {
    struct kube_api *a = userdata;
    uint64_t backoff = 0;

    if (!a->cu) {
        /* Nothing to retry until the package is installed and the daemon restarted. */
        struct kube_report rep;

        fail_library(&rep, a->load_error, a->load_reason);
        if (a->o.report)
            a->o.report(&rep, a->o.userdata);
        while (!stopper_stopping(&a->stopper))
            sleep_ns(a, 3600 * NSEC_PER_SEC);
        return NULL;
    }

    while (!stopper_stopping(&a->stopper)) {
        struct kube_report rep = {0};
        uint64_t started = clock_monotonic_ns();
        size_t events = 0;
        bool listing = a->rv[0] == '\0';
        int r;

        r = listing ? do_list(a, &rep) : do_watch(a, &rep, &events);
        if (stopper_stopping(&a->stopper) || r == -ECANCELED)
            break;
        if (r >= 0 && listing) {
            a->failing = false;
            if (a->o.report)
                a->o.report(&rep, a->o.userdata);
        }
        if (r >= 0 || r == -ESTALE) {
            a->watches_refused = 0;
            backoff = 0;
            /* A server that ends every watch at once, or answers every one 410, must not
             * make us spin. */
            if (!listing && (r >= 0 || r == -ESTALE) && events == 0 &&
                clock_monotonic_ns() - started < NSEC_PER_SEC)
                sleep_ns(a, a->o.backoff_min_ns);
            continue;
        }
        if (r == -ENOMEM)
            kube_fail(&rep, KUBE_FAIL_PARSE, 0, "out of memory");
        a->failing = true;
        if (!listing && rep.failure == KUBE_FAIL_HTTP &&
            ++a->watches_refused >= KUBE_WATCH_REFUSALS_RELIST) {
            a->rv[0] = '\0';
            a->watches_refused = 0;
        }
        if (a->o.report)
            a->o.report(&rep, a->o.userdata);
        backoff = backoff ? MIN(backoff * 2, a->o.backoff_max_ns) : a->o.backoff_min_ns;
        sleep_ns(a, jittered(a, backoff));
    }
    return NULL;
}

static int dup_opt(const char *s, char **ret) {
    *ret = NULL;
    if (!s)
        return 0;
    *ret = strdup(s);
    return *ret ? 0 : -ENOMEM;
}

int kube_api_start(const struct kube_api_options *o, struct kube_api **ret_api) {
    struct kube_api *a;
    int r;

    if (!o->url)
        return -EINVAL;
    a = calloc(1, sizeof(*a));
    if (!a)
        return -ENOMEM;
    /* Loaded here, not at program start: only nodes that use the API map libcurl and
     * libjansson. */
    a->load_error = load_libraries(&a->cu, &a->js, &a->load_reason);
    if (a->cu)
        (void)a->cu->global_init(CURL_GLOBAL_DEFAULT);
    kube_model_init(&a->model, o->retention_ns);
    (void)pthread_mutex_init(&a->lock, NULL);
    stopper_init(&a->stopper);

    a->o = *o;
    r = dup_opt(o->url, &a->url);
    if (r >= 0)
        r = dup_opt(o->token_file, &a->token_file);
    if (r >= 0)
        r = dup_opt(o->ca_file, &a->ca_file);
    if (r >= 0)
        r = dup_opt(o->node_name ? o->node_name : "", &a->node_name);
    if (r < 0) {
        (void)kube_api_free(a);
        return r;
    }
    a->o.url = a->url;
    a->o.token_file = a->token_file;
    a->o.ca_file = a->ca_file;
    a->o.node_name = a->node_name;
    if (a->o.backoff_min_ns == 0)
        a->o.backoff_min_ns = NSEC_PER_SEC;
    if (a->o.backoff_max_ns < a->o.backoff_min_ns)
        a->o.backoff_max_ns = MAX(60 * NSEC_PER_SEC, a->o.backoff_min_ns);
    a->rng = clock_monotonic_ns() ^ ((uint64_t)getpid() << 32);
    r = -pthread_create(&a->thread, NULL, watcher, a);
    if (r < 0) {
        (void)kube_api_free(a);
        return r;
    }
    a->started = true;
    *ret_api = a;
    return 0;
}

struct kube_api *kube_api_free(struct kube_api *a) {
    if (!a)
        return NULL;
    if (a->started) {
        stopper_stop(&a->stopper);
        (void)pthread_join(a->thread, NULL);
    }
    kube_model_done(&a->model);
    (void)kube_table_unref(a->table);
    stopper_done(&a->stopper);
    (void)pthread_mutex_destroy(&a->lock);
    free(a->url);
    free(a->token_file);
    free(a->ca_file);
    free(a->node_name);
    if (a->cu)
        a->cu->global_cleanup();
    free(a);
    return NULL;
}

struct kube_table *kube_api_get_table(struct kube_api *a) {
    struct kube_table *t;

    (void)pthread_mutex_lock(&a->lock);
    t = kube_table_ref(a->table);
    (void)pthread_mutex_unlock(&a->lock);
    return t;
}

int kube_api_in_cluster_url(char *buf, size_t size) {
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    int n;

    if (!host || !*host || !port || !*port)
        return -ENOENT;
    n = snprintf(buf, size, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
    if (n < 0 || (size_t)n >= size)
        return -ENAMETOOLONG;
    return 0;
}
