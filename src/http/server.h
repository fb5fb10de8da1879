/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"
#include "webconfig.h"

/*
 * The HTTP side of the daemon: libmicrohttpd with a small pool of worker threads, guarded
 * against idle and slow clients by conn_guard.h. A scrape takes a
 * reference to the latest snapshot and serves its rendering (gzip when the client accepts
 * it), rendered by the first scrape of that snapshot and shared by the others
 * (metrics_cache.h); it never samples and holds no lock while formatting.
 *
 * Routes: <metrics_path> (default /metrics), /healthz (200 "ok" when a snapshot exists and
 * is fresh, 503 otherwise), / (a landing page), 404 for anything else; GET and HEAD only
 * (405 otherwise). With basic-auth users in the web config every route but /healthz needs
 * them (401); /healthz reveals nothing and answers without credentials.
 */

#define HTTP_DEFAULT_LISTEN ":19400"
#define HTTP_DEFAULT_METRICS_PATH "/metrics"
/* Serving limits (docs/DEPLOY.md, "Exposing the port"): connections in all and per client
 * address, worker threads, the idle timeout and the absolute deadline for a request's
 * headers (conn_guard.h). */
#define HTTP_DEFAULT_CONNECTION_LIMIT 256
#define HTTP_DEFAULT_PER_CLIENT_LIMIT 32
#define HTTP_DEFAULT_THREADS 4
#define HTTP_DEFAULT_TIMEOUT_S 10
#define HTTP_DEFAULT_HEADER_TIMEOUT_MS 5000
/* From a request to its reply done, absolute: a scrape of the largest node takes well under
 * a second, Prometheus gives up after its scrape_timeout (10 s by default). */
#define HTTP_DEFAULT_REPLY_TIMEOUT_MS 60000
#define HTTP_LISTEN_BACKLOG 128
/* Memory per connection for the request and the reply's headers: a request's headers over
 * about half of it get 431. */
#define HTTP_CONNECTION_MEMORY ((size_t)8192)
/* Password checks waiting for one of the WEB_AUTH_MAX_CHECKS bcrypt threads (503 beyond). */
#define HTTP_AUTH_QUEUE 16
/* Rendered /metrics bodies alive at once, shared by the scrapes of one snapshot
 * (metrics_cache.h); a scrape that would render past it gets 503. */
#define HTTP_RENDER_BUDGET ((size_t)32 << 20)

struct http_server_options {
    const char *listen_address; /* NULL: HTTP_DEFAULT_LISTEN; forms in listen.h */
    const char *metrics_path;   /* NULL: HTTP_DEFAULT_METRICS_PATH */
    const char *metric_prefix;  /* NULL: the snapshot's, then the exposition default */
    /* TLS and basic auth; NULL for neither. The server takes its own reference. */
    struct web_config *web_config;
    unsigned connection_limit;  /* 0: HTTP_DEFAULT_CONNECTION_LIMIT */
    unsigned per_client_limit;  /* 0: HTTP_DEFAULT_PER_CLIENT_LIMIT (at most connection_limit) */
    unsigned threads;           /* worker threads; 0: HTTP_DEFAULT_THREADS */
    unsigned timeout_s;         /* per connection, idle; 0: HTTP_DEFAULT_TIMEOUT_S */
    unsigned header_timeout_ms; /* accept to complete headers, absolute; 0: the default */
    /* Request to reply sent, absolute; 0: the default. With the rendered bodies' budget
     * spent, replies sent for a sixth of it (10 s by default) are cut to make room. */
    unsigned reply_timeout_ms;
    size_t render_budget; /* bytes of rendered bodies alive; 0: HTTP_RENDER_BUDGET */
    /* /healthz: a snapshot older than this (by its timestamp_seconds, against the real-time
     * clock) is stale. 0: any snapshot is fresh. */
    uint64_t max_sample_age_ns;
    /* Optional: decides freshness instead of the age check (called on the HTTP thread). */
    bool (*is_fresh)(const struct snapshot *s, void *userdata);
    void *userdata;
};

struct http_server;

/* Whether path can be --metrics-path: '/' and a name of printable ASCII without quotes,
 * '<', '>', '&', '\\', '?', '#' or '%' (it goes into the landing page and is matched
 * literally), not "/healthz". */
bool http_metrics_path_valid(const char *path);

/*
 * Binds and starts serving. Returns 0, -EINVAL (malformed address, metrics path or
 * metric prefix, TLS half-configured), -EADDRINUSE / -EACCES / -EADDRNOTAVAIL / ... from binding,
 * -EOPNOTSUPP when TLS is asked for and libmicrohttpd lacks it, -ENOMEM. The slot is
 * borrowed and must outlive the server.
 */
int http_server_start(const struct http_server_options *o, struct snapshot_slot *slot,
                      struct http_server **ret);

/* The second half of http_server_start(), on a socket the caller bound and listens on
 * (listen_address_open() with HTTP_LISTEN_BACKLOG), so that the daemon can bind before it
 * starts anything else. Owns listen_fd from the call on, also when it fails. */
int http_server_start_on(const struct http_server_options *o, int listen_fd,
                         struct snapshot_slot *slot, struct http_server **ret);
/*
 * Replaces the web configuration (a reload): requests from now on check their credentials
 * against c (the server takes a reference; NULL: no authentication), those running finish
 * with the old one. TLS material and versions cannot change under libmicrohttpd: they stay
 * those the server started with (http_server_replace() changes them). Returns 0, 1 when
 * c's TLS settings differ from those in use (not applied), -EINVAL when c would switch TLS
 * on or off (nothing done).
 */
int http_server_set_web_config(struct http_server *s, struct web_config *c);
/*
 * A new server with o (for a new certificate, key or TLS versions, which libmicrohttpd
 * takes only at start) on old's listening socket: it accepts new connections at once;
 * old stops accepting, gets up to 2 s to finish the requests it has, and is stopped and
 * freed. Returns 0 and the new server in *ret; on failure (http_server_start_on()'s
 * errors) old serves on unchanged. o's borrowed fields must outlive the new server.
 */
int http_server_replace(struct http_server *old, const struct http_server_options *o,
                        struct http_server **ret);

/* What the server did so far, for tests and self-metrics. */
struct http_server_stats {
    uint64_t renders;          /* /metrics bodies rendered */
    uint64_t metrics_served;   /* /metrics answers, rendered or shared */
    size_t live_body_bytes;    /* rendered bodies alive now */
    uint64_t live_connections; /* connections open now */
    uint64_t cut_deadline;     /* connections closed by the header deadline */
    uint64_t cut_room;         /* connections closed to make room */
    uint64_t cut_slow_reply;   /* replies cut: past their deadline, or shed */
};
void http_server_stats(struct http_server *s, struct http_server_stats *ret);
/* The bound TCP port (the real one when the address asked for port 0). */
int http_server_port(const struct http_server *s);
/* Stops the thread, closes all connections. Accepts NULL; returns NULL. */
struct http_server *http_server_stop(struct http_server *s);
