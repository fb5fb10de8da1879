/* SPDX-License-Identifier: MIT */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth_queue.h"
#include "tls_client.h"
#include "clock.h"
#include "conn_guard.h"
#include "exposition.h"
#include "gzip.h"
#include "listen.h"
#include "log.h"
#include "macro.h"
#include "metrics_cache.h"
#include "promtext.h"
#include "request_check.h"
#include "server_internal.h"
#include "strbuf.h"
#include "tls_init.h"

#define METRICS_PATH_MAX 256

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap) {
    char buf[512];
    size_t n;

    (void)vsnprintf(buf, sizeof(buf), fmt, ap);
    n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    log_debug("http: %s", buf);
}

struct web_config *http_server_config(struct http_server *srv) {
    struct web_config *wc;

    (void)pthread_mutex_lock(&srv->config_lock);
    wc = web_config_ref(srv->web_config);
    (void)pthread_mutex_unlock(&srv->config_lock);
    return wc;
}

void http_server_add_headers(struct http_server *srv, struct MHD_Response *resp) {
    _cleanup_(web_config_freep) struct web_config *wc = http_server_config(srv);

    for (int h = 0; h < WEB_HEADERS; h++)
        if (web_config_header(wc, h))
            (void)MHD_add_response_header(resp, web_header_names[h], web_config_header(wc, h));
}

/* One response with a body that outlives it (static text, or the landing page). */
static enum MHD_Result reply(struct http_server *srv, struct MHD_Connection *conn, unsigned status,
                             const char *type, const char *body, size_t len) {
    struct MHD_Response *resp;
    enum MHD_Result ret;

    resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    http_server_add_headers(srv, resp);
    ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result reply_text(struct http_server *srv, struct MHD_Connection *conn,
                                  unsigned status, const char *text) {
    return reply(srv, conn, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* An error answer that closes the connection (static text). */
static enum MHD_Result reply_refusal(struct http_server *srv, struct MHD_Connection *conn,
                                     unsigned status, const char *text) {
    struct MHD_Response *resp;
    enum MHD_Result ret;

    resp = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
                                           MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    http_server_add_headers(srv, resp);
    ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static bool snapshot_fresh(const struct http_server *srv, const struct snapshot *s) {
    double now, age_s;

    if (srv->is_fresh)
        return srv->is_fresh(s, srv->userdata);
    if (srv->max_sample_age_ns == 0)
        return true;
    now = (double)clock_realtime_ns() / 1e9;
    age_s = now - s->timestamp_seconds;
    return age_s <= (double)srv->max_sample_age_ns / 1e9;
}

static enum MHD_Result serve_health(struct http_server *srv, struct MHD_Connection *conn) {
    struct snapshot *s = snapshot_slot_get(srv->slot);
    bool fresh;

    if (!s)
        return reply_text(srv, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n");
    fresh = snapshot_fresh(srv, s);
    snapshot_unref(s);
    return fresh ? reply_text(srv, conn, MHD_HTTP_OK, "ok\n")
                 : reply_text(srv, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "sampler stale\n");
}

static void http_counters(struct http_server *srv, struct exposition_http *ret) {
    struct conn_guard_stats g;

    conn_guard_stats(srv->guard, &g);
    *ret = (struct exposition_http){
        .connections_open = g.live,
        .closed_header_deadline = g.cut_deadline + atomic_load(&srv->carried_deadline),
        .closed_idle = g.cut_idle + atomic_load(&srv->carried_idle),
        .closed_make_room = g.cut_room + atomic_load(&srv->carried_room),
        .closed_slow_reply = g.cut_slow_reply + atomic_load(&srv->carried_slow),
        .auth_busy = atomic_load(&srv->auth_busy),
    };
}

static void *guard_handle(struct MHD_Connection *conn) {
    struct conn_ctx *ctx = http_conn_ctx(conn);

    return ctx ? ctx->guard : NULL;
}

static enum MHD_Result serve_metrics(struct http_server *srv, struct MHD_Connection *conn) {
    const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding");
    _cleanup_(web_config_freep) struct web_config *wc = NULL;
    struct exposition_http http;
    enum MHD_Result result;
    struct snapshot *s;
    int r;

    s = snapshot_slot_get(srv->slot);
    if (!s)
        return reply_text(srv, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n");
    wc = http_server_config(srv);
    http_counters(srv, &http);
    r = metrics_cache_queue(srv->cache, conn, s, gzip_accepted(ae), &http, wc, &result);
    snapshot_unref(s);
    if (r == -EBUSY) {
        /* The bodies' memory is spent: the replies that have been sent for long, slow
         * readers holding old bodies, make room for the next scrape. */
        (void)conn_guard_shed_slow(srv->guard, guard_handle(conn), srv->shed_after_ns);
        return reply_text(srv, conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                          "too many scrapes in flight, retry\n");
    }
    if (r < 0) {
        log_debug("http: rendering the exposition failed: %s", strerror(-r));
        return reply_text(srv, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot render metrics\n");
    }
    return result;
}

/* The request's headers are in: the header deadline no longer applies. */
static void mark_busy(struct http_server *srv, struct MHD_Connection *conn) {
    conn_guard_busy(srv->guard, guard_handle(conn));
}

/* The reply is done; on keep-alive the next request's headers are awaited from now. */
static void request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                              enum MHD_RequestTerminationCode toe) {
    struct http_server *srv = cls;

    (void)toe;
    free(*con_cls);
    *con_cls = NULL;
    conn_guard_waiting(srv->guard, guard_handle(conn));
}

static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
    struct http_server *srv = cls;
    const union MHD_ConnectionInfo *fd, *addr;
    struct conn_ctx *ctx = *socket_context;

    if (code != MHD_CONNECTION_NOTIFY_STARTED) {
        /* libmicrohttpd closes the socket after this returns. */
        if (ctx)
            conn_guard_closed(srv->guard, ctx->guard);
        free(ctx);
        *socket_context = NULL;
        return;
    }
    fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    addr = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        /* No slot to guard it with: cut at once, as the guard does when its table is full. */
        if (fd)
            (void)shutdown(fd->connect_fd, SHUT_RDWR);
        return;
    }
    ctx->srv = srv;
    ctx->guard =
        conn_guard_opened(srv->guard, fd ? fd->connect_fd : -1, addr ? addr->client_addr : NULL);
    *socket_context = ctx;
    if (srv->tls)
        http_hook_handshake(srv, conn);
}

/* What exporter-toolkit checks before the credentials: the client certificate (checked in
 * the handshake already; again here, 403, for a connection opened before a reload made
 * the rules stricter) and rate_limit (429; /healthz is not counted, as it needs no
 * credentials either). 0, or the status to refuse with. */
static unsigned check_client(struct http_server *srv, struct MHD_Connection *conn, const char *url,
                             const char **ret_why) {
    _cleanup_(web_config_freep) struct web_config *wc = http_server_config(srv);
    const union MHD_ConnectionInfo *tls;
    int r;

    if (!wc)
        return 0;
    if (web_config_client_auth(wc) != WEB_CLIENT_AUTH_NONE) {
        tls = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        r = tls_client_check(tls ? tls->tls_session : NULL, wc, ret_why);
        if (r < 0) {
            *ret_why = "out of memory\n";
            return MHD_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (r == 0)
            return MHD_HTTP_FORBIDDEN;
    }
    if (strcmp(url, "/healthz") != 0 && !web_config_rate_take(wc, clock_monotonic_ns())) {
        *ret_why = "Too Many Requests\n";
        return MHD_HTTP_TOO_MANY_REQUESTS;
    }
    return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls) {
    struct http_server *srv = cls;
    struct request *req = *con_cls;
    int r;

    /* Answer on the second call: a reply queued while MHD still expects the request body
     * makes it close the connection, and scrapers reuse theirs (keep-alive). */
    if (!req) {
        const char *why;
        unsigned status;

        req = calloc(1, sizeof(*req));
        if (!req)
            return MHD_NO;
        req->auth = AUTH_UNCHECKED;
        *con_cls = req; /* freed by request_completed() */
        mark_busy(srv, conn);
        /* A request refused here is answered at once, before any body it announced, and
         * the connection closed after the answer: its framing is not to be trusted. */
        status = request_check(conn, method, version, &why);
        if (status)
            return reply_refusal(srv, conn, status, why);
        status = check_client(srv, conn, url, &why);
        if (status)
            return reply_refusal(srv, conn, status, why);
        return MHD_YES;
    }
    /* Health says only "ok" or not, so it needs no credentials: liveness probes have none. */
    if (strcmp(url, "/healthz") == 0)
        return serve_health(srv, conn);
    r = http_auth_check(srv, conn, req);
    if (r == AUTH_PENDING)
        return MHD_YES; /* suspended; called again once the check is done */
    if (r == -EBUSY) {
        atomic_fetch_add(&srv->auth_busy, 1);
        return reply_text(srv, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "password checks busy, retry\n");
    }
    if (r < 0)
        return reply_text(srv, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    if (r == 0)
        return http_auth_refuse(srv, conn);
    if (strcmp(url, srv->metrics_path) == 0)
        return serve_metrics(srv, conn);
    if (strcmp(url, "/") == 0)
        return reply(srv, conn, MHD_HTTP_OK, "text/html; charset=utf-8", srv->landing,
                     srv->landing_len);
    return reply_text(srv, conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* The path goes into HTML and is matched literally: plain printable ASCII only. */
bool http_metrics_path_valid(const char *p) {
    size_t n = strlen(p);

    if (n < 2 || n >= METRICS_PATH_MAX || p[0] != '/' || strcmp(p, "/healthz") == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] <= ' ' || p[i] > '~' || strchr("\"'<>&\\?#%", p[i]))
            return false;
    return true;
}

static int build_landing(struct http_server *srv) {
    struct strbuf sb;

    strbuf_init(&sb);
    strbuf_printf(&sb,
                  "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>joulestat</title>"
                  "</head>\n<body><h1>joulestat</h1>\n<p>GPU and CPU energy per process, "
                  "container, pod and SLURM job.</p>\n<ul><li><a href=\"%s\">Metrics</a></li>"
                  "<li><a href=\"/healthz\">Health</a></li></ul>\n<p>Version %s</p>\n"
                  "</body></html>\n",
                  srv->metrics_path, JOULESTAT_VERSION);
    srv->landing = strbuf_steal(&sb, &srv->landing_len);
    return srv->landing ? 0 : -ENOMEM;
}

struct http_server *http_server_stop(struct http_server *srv) {
    if (!srv)
        return NULL;
    /* Joins the polling thread and closes the listening socket and all connections. */
    /* No connection may stay suspended for a check when libmicrohttpd stops. */
    auth_queue_stop(srv->auth);
    if (srv->daemon)
        MHD_stop_daemon(srv->daemon);
    srv->auth = auth_queue_free(srv->auth);
    srv->guard = conn_guard_free(srv->guard);
    srv->web_config = web_config_free(srv->web_config);
    srv->tls_config = web_config_free(srv->tls_config);
    (void)pthread_mutex_destroy(&srv->config_lock);
    free(srv->metrics_path);
    srv->cache = metrics_cache_free(srv->cache);
    free(srv->landing);
    free(srv);
    return NULL;
}

static unsigned or_default(unsigned v, unsigned def) {
    return v ? v : def;
}

static int start_guard(struct http_server *srv, const struct http_server_options *o,
                       unsigned capacity, unsigned per_client) {
    struct conn_guard_limits l = {
        .capacity = capacity,
        .per_client = per_client,
        /* An eighth of the slots stays free of waiting connections: the headroom for cut
         * connections still closing, so that a new one is never refused. */
        .reserve = MAX(capacity / 8, 1u),
        .header_timeout_ns =
            or_default(o->header_timeout_ms, HTTP_DEFAULT_HEADER_TIMEOUT_MS) * NSEC_PER_MSEC,
        .reply_timeout_ns =
            or_default(o->reply_timeout_ms, HTTP_DEFAULT_REPLY_TIMEOUT_MS) * NSEC_PER_MSEC,
    };

    srv->shed_after_ns = l.reply_timeout_ns / 6;

    return conn_guard_new(&l, &srv->guard);
}

static int start_daemon(struct http_server *srv, const struct http_server_options *o, int fd) {
    const char *cert = web_config_tls_cert(o->web_config), *key = web_config_tls_key(o->web_config);
    const char *prio = web_config_tls_priorities(o->web_config);
    const char *trust = web_config_client_trust(o->web_config);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG |
                     MHD_ALLOW_SUSPEND_RESUME;
    unsigned capacity = or_default(o->connection_limit, HTTP_DEFAULT_CONNECTION_LIMIT);
    unsigned per_client =
        MIN(or_default(o->per_client_limit, HTTP_DEFAULT_PER_CLIENT_LIMIT), capacity);
    unsigned threads = MIN(or_default(o->threads, HTTP_DEFAULT_THREADS), capacity);
    struct MHD_OptionItem opts[13];
    size_t n = 0;
    int r;

    if (!!cert != !!key || capacity < 2 || per_client < 2)
        return -EINVAL;
    if (cert) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
            return -EOPNOTSUPP;
        r = tls_init();
        if (r < 0)
            return r;
        flags |= MHD_USE_TLS;
        srv->tls = true;
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(uintptr_t)cert};
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)key};
        /* Client certificates: the authorities named in the certificate request and
         * verified against (client_auth_type other than NoClientCert); hook_handshake()
         * asks for one and checks it in the handshake. */
        if (trust)
            opts[n++] =
                (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, (void *)(uintptr_t)trust};
        /* TLS versions (web config min_version/max_version, at least TLS 1.2 by default). */
        if (prio)
            opts[n++] =
                (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)(uintptr_t)prio};
    }
    r = start_guard(srv, o, capacity, per_client);
    if (r < 0)
        return r;
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, fd, NULL};
    /* The hard limits; conn_guard keeps the waiting connections below them. */
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, capacity, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client, NULL};
    /* Connections are spread over the workers; one busy with a slow render or a bcrypt
     * check does not hold up the others, nor new connections (a busy worker does not
     * accept). */
    if (threads > 1)
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, threads, NULL};
    /* Per connection: the request's headers and the reply's headers must fit (431 beyond). */
    opts[n++] =
        (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, HTTP_CONNECTION_MEMORY, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT,
                                        or_default(o->timeout_s, HTTP_DEFAULT_TIMEOUT_S), NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};

    srv->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, srv, MHD_OPTION_EXTERNAL_LOGGER,
                                   mhd_log, srv, MHD_OPTION_NOTIFY_CONNECTION, notify_connection,
                                   srv, MHD_OPTION_NOTIFY_COMPLETED, request_completed, srv,
                                   MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    /* MHD refuses mostly for TLS material it cannot load. */
    return srv->daemon ? 0 : -EINVAL;
}

int http_server_start(const struct http_server_options *o, struct snapshot_slot *slot,
                      struct http_server **ret) {
    struct listen_address addr;
    int fd, r;

    if (!o || !slot || !ret)
        return -EINVAL;
    r = listen_address_parse(o->listen_address ? o->listen_address : HTTP_DEFAULT_LISTEN, &addr);
    if (r < 0)
        return r;
    fd = listen_address_open(&addr, HTTP_LISTEN_BACKLOG);
    if (fd < 0)
        return fd;
    return http_server_start_on(o, fd, slot, ret);
}

/* http_server_start_on(), its counters going on from carried (NULL: from 0). */
static int start_on(const struct http_server_options *o, int listen_fd, struct snapshot_slot *slot,
                    const struct exposition_http *carried, struct http_server **ret) {
    const struct exposition_http none = {0}, *c = carried ? carried : &none;
    _cleanup_(closep) int fd = listen_fd;
    struct http_server *srv;
    const char *path;
    int r;

    if (!o || !slot || !ret || fd < 0)
        return -EINVAL;
    path = o->metrics_path ? o->metrics_path : HTTP_DEFAULT_METRICS_PATH;
    if (!http_metrics_path_valid(path))
        return -EINVAL;
    /* Refused here, once, rather than by every scrape's render with a 500. */
    if (o->metric_prefix && !promtext_name_valid(o->metric_prefix))
        return -EINVAL;

    srv = calloc(1, sizeof(*srv));
    if (!srv)
        return -ENOMEM;
    srv->slot = slot;
    atomic_init(&srv->auth_busy, c->auth_busy);
    atomic_init(&srv->carried_deadline, c->closed_header_deadline);
    atomic_init(&srv->carried_idle, c->closed_idle);
    atomic_init(&srv->carried_room, c->closed_make_room);
    atomic_init(&srv->carried_slow, c->closed_slow_reply);
    (void)pthread_mutex_init(&srv->config_lock, NULL);
    srv->web_config = web_config_ref(o->web_config);
    srv->tls_config = web_config_ref(o->web_config);
    srv->max_sample_age_ns = o->max_sample_age_ns;
    srv->is_fresh = o->is_fresh;
    srv->userdata = o->userdata;
    srv->metrics_path = strdup(path);
    if (!srv->metrics_path) {
        r = -ENOMEM;
        goto fail;
    }
    r = auth_queue_new(WEB_AUTH_MAX_CHECKS, HTTP_AUTH_QUEUE, &srv->auth);
    if (r < 0)
        goto fail;
    r = metrics_cache_new(o->metric_prefix,
                          o->render_budget ? o->render_budget : HTTP_RENDER_BUDGET, &srv->cache);
    if (r < 0)
        goto fail;
    r = build_landing(srv);
    if (r < 0)
        goto fail;

    r = listen_socket_port(fd);
    if (r < 0)
        goto fail;
    srv->port = r;
    r = start_daemon(srv, o, fd);
    if (r < 0)
        goto fail;
    fd = -1; /* MHD closes it in MHD_stop_daemon() */
    *ret = srv;
    return 0;
fail:
    http_server_stop(srv);
    return r;
}

int http_server_start_on(const struct http_server_options *o, int listen_fd,
                         struct snapshot_slot *slot, struct http_server **ret) {
    return start_on(o, listen_fd, slot, NULL, ret);
}

/* How long a replaced server may go on answering the requests it has. */
#define REPLACE_GRACE_NS (2 * NSEC_PER_SEC)

int http_server_replace(struct http_server *old, const struct http_server_options *o,
                        struct http_server **ret) {
    const union MHD_DaemonInfo *info;
    struct http_server *fresh = NULL;
    struct exposition_http before, after;
    struct conn_guard_stats g;
    uint64_t deadline;
    int fd, r;

    if (!old || !old->daemon || !o || !ret)
        return -EINVAL;
    info = MHD_get_daemon_info(old->daemon, MHD_DAEMON_INFO_LISTEN_FD);
    if (!info)
        return -EINVAL;
    /* Both servers accept on the socket for a moment; the new one owns this descriptor. */
    fd = fcntl(info->listen_fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        return -errno;
    http_counters(old, &before);
    r = start_on(o, fd, old->slot, &before, &fresh);
    if (r < 0)
        return r; /* the old one serves on */
    fd = MHD_quiesce_daemon(old->daemon);
    /* Its requests being answered get a moment to finish; waiting connections are cut by
     * the stop, and their clients come back to the new server. */
    deadline = clock_monotonic_ns() + REPLACE_GRACE_NS;
    do {
        conn_guard_stats(old->guard, &g);
        if (g.live == 0)
            break;
        (void)usleep(20000);
    } while (clock_monotonic_ns() < deadline);
    /* What the old one counted while both served. */
    http_counters(old, &after);
    atomic_fetch_add(&fresh->carried_deadline,
                     after.closed_header_deadline - before.closed_header_deadline);
    atomic_fetch_add(&fresh->carried_idle, after.closed_idle - before.closed_idle);
    atomic_fetch_add(&fresh->carried_room, after.closed_make_room - before.closed_make_room);
    atomic_fetch_add(&fresh->carried_slow, after.closed_slow_reply - before.closed_slow_reply);
    atomic_fetch_add(&fresh->auth_busy, after.auth_busy - before.auth_busy);
    http_server_stop(old);
    /* Quiesced, the old daemon left its listening descriptor open for us to close. */
    if (fd >= 0)
        (void)close(fd);
    *ret = fresh;
    return 0;
}

int http_server_set_web_config(struct http_server *srv, struct web_config *c) {
    struct web_config *old;

    if (!srv)
        return -EINVAL;
    if (!!web_config_tls_cert(c) != !!web_config_tls_cert(srv->tls_config))
        return -EINVAL;
    (void)pthread_mutex_lock(&srv->config_lock);
    old = srv->web_config;
    srv->web_config = web_config_ref(c);
    (void)pthread_mutex_unlock(&srv->config_lock);
    web_config_free(old);
    return !web_config_same_tls(c, srv->tls_config);
}

void http_server_stats(struct http_server *srv, struct http_server_stats *ret) {
    struct metrics_cache_stats m;
    struct conn_guard_stats g;

    metrics_cache_stats(srv->cache, &m);
    conn_guard_stats(srv->guard, &g);
    *ret = (struct http_server_stats){
        .renders = m.renders,
        .metrics_served = m.served,
        .live_body_bytes = m.live_bytes,
        .live_connections = g.live,
        .cut_deadline = g.cut_deadline,
        .cut_room = g.cut_room,
        .cut_slow_reply = g.cut_slow_reply,
    };
}

int http_server_port(const struct http_server *srv) {
    return srv ? srv->port : -EINVAL;
}
