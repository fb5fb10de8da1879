/* SPDX-License-Identifier: MIT */
#pragma once

/* The server's state, shared by server.c (routes, start, stop, reload) and server_auth.c
 * (basic auth). Nothing outside src/http includes this. */

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"
#include "webconfig.h"

struct http_server {
    struct MHD_Daemon *daemon;
    struct conn_guard *guard;
    uint64_t shed_after_ns; /* replies busy this long are cut when the bodies' budget is spent */
    struct snapshot_slot *slot;
    /* The configuration in use (a reference; replaced by http_server_set_web_config()), and
     * the one the server started with, whose TLS material libmicrohttpd was given. */
    pthread_mutex_t config_lock;
    struct web_config *web_config;
    struct web_config *tls_config;
    char *metrics_path;
    char *landing; /* the HTML of "/", built once */
    size_t landing_len;
    uint64_t max_sample_age_ns;
    bool (*is_fresh)(const struct snapshot *s, void *userdata);
    void *userdata;
    int port;
    bool tls;                    /* serves TLS (libmicrohttpd was given a certificate) */
    struct metrics_cache *cache; /* the rendered responses, shared */
    struct auth_queue *auth;     /* bcrypt checks, off the workers */
    _Atomic uint64_t auth_busy;  /* requests refused: every check thread busy */
    /* The connection counters of the servers this one replaced (http_server_replace()):
     * its own go on from theirs, as counters of one process. */
    _Atomic uint64_t carried_deadline, carried_idle, carried_room, carried_slow;
};

/* What a request knows of its credentials: unchecked, being checked by the auth queue (the
 * connection suspended), or the answer (1 accepted, 0 refused, -errno). */
#define AUTH_UNCHECKED 2
#define AUTH_PENDING 3

struct request {
    int auth;
};

/* A connection's socket context: its server (the TLS handshake check needs the
 * configuration) and its conn_guard handle. */
struct conn_ctx {
    struct http_server *srv;
    void *guard;
};
/* The connection's context (NULL before it was set up, or when it could not be). */
struct conn_ctx *http_conn_ctx(struct MHD_Connection *conn);
/* For a new TLS connection, before its handshake: when the configuration asks for client
 * certificates, asks for one and checks it in the handshake (tls_client_handshake()). */
void http_hook_handshake(struct http_server *srv, struct MHD_Connection *conn);

/* The web configuration in use, a reference (NULL without one); free with
 * web_config_free(). */
struct web_config *http_server_config(struct http_server *srv);
/* The response headers of its http_server_config, added to resp. */
void http_server_add_headers(struct http_server *srv, struct MHD_Response *resp);

/*
 * The request's credentials: 1 authorised (or no users configured), 0 not (answer with
 * http_auth_refuse()), AUTH_PENDING (the connection is suspended until a check is done;
 * the handler is called again then), <0 error (-EBUSY: every check thread busy). Only
 * remembered answers are given at once; bcrypt runs on the auth queue (auth_queue.h).
 */
int http_auth_check(struct http_server *srv, struct MHD_Connection *conn, struct request *req);
/* Queues the 401 with the WWW-Authenticate challenge. */
enum MHD_Result http_auth_refuse(struct http_server *srv, struct MHD_Connection *conn);
