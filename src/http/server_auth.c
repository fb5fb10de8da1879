/* SPDX-License-Identifier: MIT */
/* Who may ask: basic auth (remembered answers at once, bcrypt on the auth queue with the
 * connection suspended meanwhile) and client certificates checked in the TLS handshake. */
#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth_queue.h"
#include "conn_guard.h"
#include "log.h"
#include "macro.h"
#include "server_internal.h"
#include "tls_client.h"
#include "webconfig.h"

#define REALM "joulestat"

/* Queues the bcrypt check of user:password and suspends the connection until it is done.
 * Returns 0, or -ENOMEM (nothing queued, not suspended). */
static int check_later(struct http_server *srv, struct MHD_Connection *conn, struct request *req,
                       struct web_config *wc, const char *user, const char *password) {
    const union MHD_ConnectionInfo *addr =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    struct auth_job job = {
        .conn = conn,
        .user = strdup(user),
        .password = strdup(password),
        .ret_result = &req->auth,
    };

    conn_guard_client_key(addr ? addr->client_addr : NULL, job.client);
    if (!job.user || !job.password) {
        free(job.user);
        if (job.password)
            explicit_bzero(job.password, strlen(job.password));
        free(job.password);
        return -ENOMEM;
    }
    job.config = web_config_ref(wc);
    req->auth = AUTH_PENDING;
    /* Suspended first: the queue's thread may resume it as soon as it is queued. */
    MHD_suspend_connection(conn);
    if (auth_queue_submit(srv->auth, &job) < 0) {
        explicit_bzero(job.password, strlen(job.password));
        free(job.password);
        free(job.user);
        web_config_free(job.config);
        req->auth = -EBUSY;
        MHD_resume_connection(conn);
    }
    return 0;
}

int http_auth_check(struct http_server *srv, struct MHD_Connection *conn, struct request *req) {
    _cleanup_(web_config_freep) struct web_config *wc = NULL;
    char *user, *pass = NULL;
    int r = 0;

    if (req->auth != AUTH_UNCHECKED)
        return req->auth;
    wc = http_server_config(srv);
    if (web_config_n_users(wc) == 0)
        return 1;
    user = MHD_basic_auth_get_username_password(conn, &pass);
    if (user && pass)
        r = web_config_check_remembered(wc, user, pass);
    if (r == -ENOENT) {
        r = check_later(srv, conn, req, wc, user, pass);
        if (r >= 0)
            r = AUTH_PENDING;
    }
    if (pass) {
        explicit_bzero(pass, strlen(pass));
        MHD_free(pass);
    }
    if (user)
        MHD_free(user);
    return r;
}

enum MHD_Result http_auth_refuse(struct http_server *srv, struct MHD_Connection *conn) {
    static const char body[] = "Unauthorized\n";
    struct MHD_Response *resp;
    enum MHD_Result ret;

    resp = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)(uintptr_t)body,
                                           MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    http_server_add_headers(srv, resp);
    ret = MHD_queue_basic_auth_fail_response(conn, REALM, resp);
    MHD_destroy_response(resp);
    return ret;
}

struct conn_ctx *http_conn_ctx(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return i ? i->socket_context : NULL;
}

/* The client certificate, checked in the handshake (a GnuTLS verify function): refused,
 * the handshake fails with the alert Go sends, and no request is read. */
static int verify_client(gnutls_session_t session) {
    /* libmicrohttpd makes the connection the session's pointer (checked when hooked). */
    struct MHD_Connection *conn = gnutls_session_get_ptr(session);
    struct conn_ctx *ctx = conn ? http_conn_ctx(conn) : NULL;
    _cleanup_(web_config_freep) struct web_config *wc = ctx ? http_server_config(ctx->srv) : NULL;
    const char *why = "";
    int r;

    if (!ctx)
        return -1;
    r = tls_client_handshake(session, wc, &why);
    if (r < 0)
        log_debug("http: TLS handshake refused: %.*s", (int)strcspn(why, "\n"), why);
    return r;
}

/* Before the handshake runs: ask for a client certificate when the configuration wants
 * one, and check it in the handshake. */
void http_hook_handshake(struct http_server *srv, struct MHD_Connection *conn) {
    _cleanup_(web_config_freep) struct web_config *wc = http_server_config(srv);
    const union MHD_ConnectionInfo *tls;

    if (web_config_client_auth(wc) == WEB_CLIENT_AUTH_NONE)
        return;
    tls = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    /* Without the connection as its pointer the hook could not find the configuration;
     * the check on each request (403) still applies then. */
    if (!tls || !tls->tls_session || gnutls_session_get_ptr(tls->tls_session) != conn)
        return;
    tls_client_ask(tls->tls_session, web_config_client_ca_given(wc));
    gnutls_session_set_verify_function(tls->tls_session, verify_client);
}
