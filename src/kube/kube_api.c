/* SPDX-License-Identifier: MIT */
#include "kube_api.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "curl_loader.h"
#include "fileio.h"
#include "kube_model.h"
#include "macro.h"
#include "stopper.h"
#include "strbuf.h"

#define TOKEN_MAX (64 * 1024)
#define LIST_BODY_MAX (256u * 1024 * 1024) /* ~100 000 pods: far beyond one node */
#define EVENT_LINE_MAX (16u * 1024 * 1024)
#define ERROR_BODY_MAX (64u * 1024)
#define CONNECT_TIMEOUT_S 10L
#define LIST_TIMEOUT_S 60L

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
    const struct curl_api *cu; /* NULL when libcurl could not be loaded */
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
};

/* One HTTP request and what its body did. */
struct request {
    struct kube_api *api; /* NULL for a probe: no model, no stop flag */
    const struct curl_api *cu;
    CURL *curl;
    bool watch;
    struct strbuf body; /* LIST body, error body, or the unfinished watch line */
    long status;
    int error; /* set by the write callback when it aborts */
    struct kube_report *report;
    size_t events;
    bool changed;
};

static void fail(struct kube_report *rep, enum kube_failure f, long status, const char *detail) {
    *rep = (struct kube_report){.failure = f, .http_status = status};
    (void)snprintf(rep->detail, sizeof(rep->detail), "%s", detail ? detail : "");
}

static int failure_errno(enum kube_failure f) {
    switch (f) {
    case KUBE_FAIL_TOKEN:
        return -ENOKEY;
    case KUBE_FAIL_CONNECT:
        return -ECONNREFUSED;
    case KUBE_FAIL_AUTH:
        return -EACCES;
    case KUBE_FAIL_PARSE:
        return -EBADMSG;
    default:
        return -EPROTO;
    }
}

/* The bearer token, whitespace trimmed. Re-read at every connect: tokens rotate. */
static int read_token(const char *path, char **ret) {
    _cleanup_(freep) char *token = NULL;
    size_t size;
    int r;

    r = read_virtual_file_at(AT_FDCWD, path, TOKEN_MAX, &token, &size);
    if (r < 0)
        return r;
    while (size > 0 && (token[size - 1] == '\n' || token[size - 1] == '\r' ||
                        token[size - 1] == ' ' || token[size - 1] == '\t'))
        token[--size] = '\0';
    if (size == 0 || strpbrk(token, "\r\n"))
        return -ENODATA;
    *ret = TAKE_PTR(token);
    return 0;
}

static bool stopping(const struct request *req) {
    return req->api && stopper_stopping(&req->api->stopper);
}

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

/* One watch event. -ESTALE asks for a re-LIST (410 Gone). */
static int handle_event(struct request *req, const char *line, size_t len) {
    struct kube_api *a = req->api;
    struct kube_event e;
    int r;

    r = kube_parse_watch_event(line, len, &e);
    if (r < 0) {
        fail(req->report, KUBE_FAIL_PARSE, req->status, "a watch event is not a pod event");
        return r;
    }
    req->events++;
    switch (e.type) {
    case KUBE_EVENT_ADDED:
    case KUBE_EVENT_MODIFIED:
        r = kube_model_upsert(&a->model, TAKE_PTR(e.pod));
        req->changed = true;
        break;
    case KUBE_EVENT_DELETED:
        r = kube_model_delete(&a->model, TAKE_PTR(e.pod), clock_monotonic_ns());
        req->changed = true;
        break;
    case KUBE_EVENT_BOOKMARK:
        break;
    case KUBE_EVENT_ERROR:
        if (e.error_code == 410) {
            a->rv[0] = '\0';
            return -ESTALE;
        }
        fail(req->report, KUBE_FAIL_HTTP, e.error_code, e.error_message);
        return -EPROTO;
    }
    kube_event_done(&e);
    if (r < 0)
        return r;
    memcpy(a->rv, e.resource_version, sizeof(a->rv));
    return 0;
}

/* Handles every complete line of the watch stream, keeps the unfinished rest. */
static int drain_lines(struct request *req) {
    size_t start = 0;
    int r = 0;

    for (;;) {
        char *nl = memchr(req->body.buf + start, '\n', req->body.len - start);
        size_t len;

        if (!nl)
            break;
        len = (size_t)(nl - (req->body.buf + start));
        if (len > 0)
            r = handle_event(req, req->body.buf + start, len);
        start += len + 1;
        if (r < 0)
            break;
    }
    memmove(req->body.buf, req->body.buf + start, req->body.len - start);
    req->body.len -= start;
    req->body.buf[req->body.len] = '\0';
    if (req->changed) {
        publish(req->api);
        req->changed = false;
    }
    return r;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *userdata) {
    struct request *req = userdata;
    size_t n = size * nmemb;
    size_t limit;

    if (req->status == 0)
        (void)req->cu->easy_getinfo(req->curl, CURLINFO_RESPONSE_CODE, &req->status);
    limit = req->status != 200 ? ERROR_BODY_MAX : req->watch ? EVENT_LINE_MAX : LIST_BODY_MAX;
    if (req->status != 200 && req->body.len + n > limit)
        return n; /* enough of an error body for its message */
    if (req->body.len + n > limit) {
        req->error = -EFBIG;
        fail(req->report, KUBE_FAIL_PARSE, req->status, "response larger than the limit");
        return 0;
    }
    strbuf_append(&req->body, data, n);
    if (strbuf_error(&req->body) < 0) {
        req->error = -ENOMEM;
        return 0;
    }
    if (req->watch && req->status == 200) {
        int r = drain_lines(req);

        if (r < 0) {
            req->error = r;
            return 0;
        }
    }
    return n;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
    struct request *req = userdata;
    struct kube_api *a = req->api;

    if (!a)
        return 0;
    if (stopper_stopping(&a->stopper))
        return 1;
    /* An idle watch still ages deleted pods out (called about once a second). */
    if (clock_monotonic_ns() >= kube_model_next_expiry(&a->model) &&
        kube_model_expire(&a->model, clock_monotonic_ns()) > 0)
        publish(a);
    return 0;
}

/* The Status message of an error body, or a short excerpt of it. */
static void error_detail(const struct strbuf *body, char *buf, size_t size) {
    json_auto_t *j = body->len ? json_loadb(body->buf, body->len, 0, NULL) : NULL;
    const char *msg = json_string_value(json_object_get(j, "message"));

    (void)snprintf(buf, size, "%.200s", msg ? msg : body->len ? body->buf : "empty body");
}

static int append_query(const struct curl_api *cu, CURL *curl, struct strbuf *url, const char *key,
                        const char *value) {
    char *escaped = cu->easy_escape(curl, value, 0);

    if (!escaped)
        return -ENOMEM;
    strbuf_printf(url, "&%s=%s", key, escaped);
    cu->free_mem(escaped);
    return strbuf_error(url);
}

/* Runs one LIST or WATCH. 0 when it completed with 200 (a watch that the server ended),
 * -ESTALE for 410 Gone, else a negative errno with req->report filled. */
static int perform(const struct kube_api_options *o, struct request *req) {
    const struct curl_api *cu = req->cu;
    _cleanup_(freep) char *token = NULL, *auth = NULL;
    struct curl_slist *headers = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    struct strbuf url;
    CURLcode cc;
    int r = 0;

    strbuf_init(&url);
    if (o->token_file) {
        r = read_token(o->token_file, &token);
        if (r < 0) {
            fail(req->report, KUBE_FAIL_TOKEN, 0, o->token_file);
            req->report->err = r;
            strbuf_done(&url);
            return r;
        }
        if (asprintf(&auth, "Authorization: Bearer %s", token) < 0) {
            auth = NULL;
            strbuf_done(&url);
            return -ENOMEM;
        }
    }
    req->curl = cu->easy_init();
    if (!req->curl) {
        strbuf_done(&url);
        return -ENOMEM;
    }
    strbuf_printf(&url, "%s/api/v1/pods?fieldSelector=spec.nodeName%%3D", o->url);
    {
        char *node = cu->easy_escape(req->curl, o->node_name, 0);

        if (!node)
            r = -ENOMEM;
        else {
            strbuf_puts(&url, node);
            cu->free_mem(node);
        }
    }
    if (r >= 0 && req->watch) {
        strbuf_printf(&url, "&watch=1&allowWatchBookmarks=true&timeoutSeconds=%u",
                      o->watch_timeout_s ? o->watch_timeout_s : 300);
        r = append_query(cu, req->curl, &url, "resourceVersion", req->api->rv);
    }
    headers = cu->slist_append(headers, "Accept: application/json");
    if (auth && headers)
        headers = cu->slist_append(headers, auth);
    if (r < 0 || strbuf_error(&url) < 0 || !headers) {
        r = -ENOMEM;
        goto finish;
    }

    (void)cu->easy_setopt(req->curl, CURLOPT_URL, url.buf);
    (void)cu->easy_setopt(req->curl, CURLOPT_HTTPHEADER, headers);
    (void)cu->easy_setopt(req->curl, CURLOPT_NOSIGNAL, 1L);
    (void)cu->easy_setopt(req->curl, CURLOPT_ERRORBUFFER, errbuf);
    (void)cu->easy_setopt(req->curl, CURLOPT_USERAGENT, "joulestat/" JOULESTAT_VERSION);
    (void)cu->easy_setopt(req->curl, CURLOPT_PROTOCOLS_STR, "https,http");
    (void)cu->easy_setopt(req->curl, CURLOPT_ACCEPT_ENCODING, "");
    (void)cu->easy_setopt(req->curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
    (void)cu->easy_setopt(req->curl, CURLOPT_TCP_KEEPALIVE, 1L);
    (void)cu->easy_setopt(req->curl, CURLOPT_TCP_KEEPIDLE, 30L);
    (void)cu->easy_setopt(req->curl, CURLOPT_TCP_KEEPINTVL, 15L);
    if (o->ca_file)
        (void)cu->easy_setopt(req->curl, CURLOPT_CAINFO, o->ca_file);
    if (req->watch) {
        /* A watch that says nothing for longer than its own timeout is dead. */
        (void)cu->easy_setopt(req->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        (void)cu->easy_setopt(req->curl, CURLOPT_LOW_SPEED_TIME,
                              (long)(o->watch_timeout_s ? o->watch_timeout_s : 300) + 30L);
    } else
        (void)cu->easy_setopt(req->curl, CURLOPT_TIMEOUT, LIST_TIMEOUT_S);
    (void)cu->easy_setopt(req->curl, CURLOPT_WRITEFUNCTION, on_data);
    (void)cu->easy_setopt(req->curl, CURLOPT_WRITEDATA, req);
    (void)cu->easy_setopt(req->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    (void)cu->easy_setopt(req->curl, CURLOPT_XFERINFODATA, req);
    (void)cu->easy_setopt(req->curl, CURLOPT_NOPROGRESS, 0L);

    cc = cu->easy_perform(req->curl);
    if (req->status == 0)
        (void)req->cu->easy_getinfo(req->curl, CURLINFO_RESPONSE_CODE, &req->status);
    if (req->error != 0) {
        r = req->error; /* the report is filled where it was set (or ENOMEM) */
        goto finish;
    }
    if (cc == CURLE_ABORTED_BY_CALLBACK && stopping(req)) {
        r = -ECANCELED;
        goto finish;
    }
    if (cc != CURLE_OK) {
        fail(req->report, KUBE_FAIL_CONNECT, req->status,
             errbuf[0] ? errbuf : cu->easy_strerror(cc));
        r = -ECONNREFUSED;
        goto finish;
    }
    if (req->status != 200) {
        char detail[256];

        error_detail(&req->body, detail, sizeof(detail));
        if (req->status == 410 && req->watch) {
            req->api->rv[0] = '\0';
            r = -ESTALE;
            goto finish;
        }
        fail(req->report,
             req->status == 401 || req->status == 403 ? KUBE_FAIL_AUTH : KUBE_FAIL_HTTP,
             req->status, detail);
        r = failure_errno(req->report->failure);
        goto finish;
    }
    r = 0;
finish:
    cu->slist_free_all(headers);
    cu->easy_cleanup(TAKE_PTR(req->curl));
    strbuf_done(&url);
    return r;
}

/* LIST: the whole body, then the pods. On success the list is in ret. */
static int list_pods(const struct curl_api *cu, const struct kube_api_options *o,
                     struct kube_api *a, struct kube_report *rep, struct kube_pod_list *ret) {
    struct request req = {.api = a, .cu = cu, .report = rep};
    int r;

    strbuf_init(&req.body);
    r = perform(o, &req);
    if (r >= 0) {
        r = kube_parse_pod_list(req.body.buf ? req.body.buf : "", req.body.len, ret);
        if (r == -EBADMSG)
            fail(rep, KUBE_FAIL_PARSE, req.status, "the pod list is not a PodList");
    }
    strbuf_done(&req.body);
    return r;
}

static void fail_library(struct kube_report *rep, int error, const char *reason) {
    fail(rep, KUBE_FAIL_LIBRARY, 0, reason);
    rep->err = error;
}

int kube_api_probe(const struct kube_api_options *o, struct kube_report *ret) {
    const struct curl_api *cu = NULL;
    const char *reason = NULL;
    struct kube_pod_list list;
    struct kube_report rep = {0};
    int r;

    r = curl_api_get(&cu, &reason);
    if (r < 0) {
        fail_library(ret, r, reason);
        return r;
    }
    (void)cu->global_init(CURL_GLOBAL_DEFAULT);
    r = list_pods(cu, o, NULL, &rep, &list);
    cu->global_cleanup();
    if (r >= 0) {
        rep = (struct kube_report){.ok = true, .http_status = 200, .n_pods = list.n_pods};
        kube_pod_list_done(&list);
    }
    *ret = rep;
    return r;
}

static int do_list(struct kube_api *a, struct kube_report *rep) {
    struct kube_pod_list list;
    int r;

    r = list_pods(a->cu, &a->o, a, rep, &list);
    if (r < 0)
        return r;
    memcpy(a->rv, list.resource_version, sizeof(a->rv));
    *rep = (struct kube_report){.ok = true, .http_status = 200, .n_pods = list.n_pods};
    r = kube_model_replace(&a->model, &list, clock_monotonic_ns());
    kube_pod_list_done(&list);
    (void)kube_model_expire(&a->model, clock_monotonic_ns());
    publish(a);
    return r;
}

static int do_watch(struct kube_api *a, struct kube_report *rep, size_t *ret_events) {
    struct request req = {.api = a, .cu = a->cu, .watch = true, .report = rep};
    int r;

    strbuf_init(&req.body);
    r = perform(&a->o, &req);
    strbuf_done(&req.body);
    *ret_events = req.events;
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
        if (r >= 0 && listing && a->o.report)
            a->o.report(&rep, a->o.userdata);
        if (r >= 0 || r == -ESTALE) {
            backoff = 0;
            /* A server that ends every watch at once must not make us spin. */
            if (!listing && r >= 0 && events == 0 && clock_monotonic_ns() - started < NSEC_PER_SEC)
                sleep_ns(a, a->o.backoff_min_ns);
            continue;
        }
        if (r == -ENOMEM)
            fail(&rep, KUBE_FAIL_PARSE, 0, "out of memory");
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
    /* Loaded here, not at program start: only nodes that use the API map libcurl. */
    a->load_error = curl_api_get(&a->cu, &a->load_reason);
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
