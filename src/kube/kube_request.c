/* SPDX-License-Identifier: MIT */
/* One LIST or WATCH of this node's pods with libcurl (kube_request.h): the request made, the
 * body collected within its limits or a watch's lines handed on, the outcome reported. */
#include "kube_request.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "fileio.h"
#include "macro.h"

#define TOKEN_MAX (64 * 1024)
#define LIST_BODY_MAX (256u * 1024 * 1024) /* ~100 000 pods: far beyond one node */
#define EVENT_LINE_MAX (16u * 1024 * 1024)
#define ERROR_BODY_MAX (64u * 1024)
#define CONNECT_TIMEOUT_S 10L
#define LIST_TIMEOUT_S 60L

void kube_fail(struct kube_report *rep, enum kube_failure f, long status, const char *detail) {
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

/* Handles every complete line of the watch stream, keeps the unfinished rest. */
static int drain_lines(struct kube_request *req) {
    size_t start = 0;
    int r = 0;

    for (;;) {
        char *nl = memchr(req->body.buf + start, '\n', req->body.len - start);
        size_t len;

        if (!nl)
            break;
        len = (size_t)(nl - (req->body.buf + start));
        if (len > 0)
            r = req->on_line(req, req->body.buf + start, len);
        start += len + 1;
        if (r < 0)
            break;
    }
    memmove(req->body.buf, req->body.buf + start, req->body.len - start);
    req->body.len -= start;
    req->body.buf[req->body.len] = '\0';
    if (req->on_lines_done)
        req->on_lines_done(req);
    return r;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *userdata) {
    struct kube_request *req = userdata;
    size_t n = size * nmemb;
    size_t limit;

    if (req->status == 0)
        (void)req->cu->easy_getinfo(req->curl, CURLINFO_RESPONSE_CODE, &req->status);
    limit = req->status != 200 ? ERROR_BODY_MAX : req->watch ? EVENT_LINE_MAX : LIST_BODY_MAX;
    if (req->status != 200 && req->body.len + n > limit)
        return n; /* enough of an error body for its message */
    if (req->body.len + n > limit) {
        req->error = -EFBIG;
        kube_fail(req->report, KUBE_FAIL_PARSE, req->status, "response larger than the limit");
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
    struct kube_request *req = userdata;

    if (req->on_progress && req->on_progress(req)) {
        req->cancelled = true;
        return 1;
    }
    return 0;
}

/* The Status message of an error body, or a short excerpt of it, escaped: it goes to the
 * log, and from there to a terminal (joulestat top prints its log at exit). */
static void error_detail(const struct jansson_api *js, const struct strbuf *body, char *buf,
                         size_t size) {
    json_t *j = body->len ? js->loadb(body->buf, body->len, JSON_ALLOW_NUL, NULL) : NULL;
    const char *msg = js->string_value(js->object_get(j, "message"));
    char excerpt[201];

    (void)snprintf(excerpt, sizeof(excerpt), "%s",
                   msg         ? msg
                   : body->len ? body->buf
                               : "empty body");
    (void)escape_terminal(excerpt, buf, size);
    jansson_decref(js, j);
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

int kube_request_perform(struct kube_request *req) {
    const struct kube_api_options *o = req->o;
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
            kube_fail(req->report, KUBE_FAIL_TOKEN, 0, o->token_file);
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
        r = append_query(cu, req->curl, &url, "resourceVersion", req->resource_version);
    } else if (r >= 0 && req->resource_version && req->resource_version[0])
        r = append_query(cu, req->curl, &url, "resourceVersion", req->resource_version);
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
    if (cc == CURLE_ABORTED_BY_CALLBACK && req->cancelled) {
        r = -ECANCELED;
        goto finish;
    }
    if (cc != CURLE_OK) {
        kube_fail(req->report, KUBE_FAIL_CONNECT, req->status,
                  errbuf[0] ? errbuf : cu->easy_strerror(cc));
        r = -ECONNREFUSED;
        goto finish;
    }
    if (req->status != 200) {
        char detail[256];

        error_detail(req->js, &req->body, detail, sizeof(detail));
        if (req->status == 410 && req->watch) {
            r = -ESTALE;
            goto finish;
        }
        kube_fail(req->report,
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
