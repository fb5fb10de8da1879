/* SPDX-License-Identifier: MIT */
#pragma once

/* The web configuration's fields, shared by the loader (webconfig.c) and the password
 * checks (web_auth.c). Nothing outside src/http includes this. */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "crypt_loader.h"
#include "macro.h"
#include "tls_check.h"
#include "webconfig.h"
#include "yaml_loader.h"

/* Wrong "user:password" pairs remembered per configuration (least recently used out). */
#define WEB_AUTH_FAILURES 64

/* Longer user names are refused at load, and never looked up. */
#define WEB_USER_NAME_MAX 256
/* bcrypt reads this much of a password; the rest changes nothing, in Go as in libxcrypt
 * (which refuses a passphrase of 512 bytes or more outright). */
#define BCRYPT_PASSWORD_MAX 72

struct web_user {
    char *name;
    char *hash;
    /* Token (below) of the last accepted password, or "". */
    char token[CRYPT_OUTPUT_SIZE];
};

struct web_failure {
    char token[CRYPT_OUTPUT_SIZE]; /* "" when unused */
    uint64_t used;                 /* web_config.clock when last matched */
};

struct web_config {
    atomic_uint refs;
    char *cert_pem;
    char *key_pem;
    enum web_client_auth client_auth;
    char *client_ca_pem; /* client_ca_file or client_ca; NULL when not given */
    char *trust_pem;     /* the authorities given to GnuTLS when client_auth asks for a cert */
    bool no_authorities; /* a verifying type with no client CA and no system bundle */
    char **allowed_sans; /* client_allowed_sans; NULL when not given */
    size_t n_sans;
    uint32_t ciphers;           /* cipher_suites, bits of enum tls_cipher */
    bool http2;                 /* http_server_config.http2 (default true) */
    bool tls13_only;            /* min_version TLS13: cipher_suites do not apply */
    uint64_t rate_interval_ns;  /* rate_limit.interval; 0: no limit */
    unsigned rate_burst;        /* rate_limit.burst */
    char *priorities;           /* GnuTLS priority string for the TLS versions asked for */
    char *headers[WEB_HEADERS]; /* http_server_config.headers, NULL when unset */
    struct web_user *users;
    size_t n_users;
    size_t slowest_user;           /* the user whose hash has the highest cost */
    const struct crypt_api *crypt; /* loaded when there are users */
    size_t cap_users;
    /* Tokens are SHA-256-crypt of "user:password" with this salt, made at load: one
     * configuration's tokens mean nothing to another (a reloaded file starts afresh). */
    char token_salt[CRYPT_GENSALT_OUTPUT_SIZE];
    pthread_mutex_t lock; /* the tokens, failures, clock and checks below */
    struct web_failure failures[WEB_AUTH_FAILURES];
    uint64_t clock;
    unsigned checks;       /* bcrypt checks running now */
    double rate_tokens;    /* the rate limit's bucket, under lock */
    uint64_t rate_last_ns; /* when it was last filled; 0: never (full) */
};

/* Parsing state, shared by the parts of the loader: the document, the file's directory
 * (NULL: file keys refused) and where to put the message. */
struct loader {
    const char *path;
    char *dir;
    const struct yaml_api *yaml;
    yaml_document_t *doc;
    struct web_config *c;
    /* Where tls_server_config's client keys and cipher_suites were given (NULL: not). */
    const yaml_node_t *client_auth_at, *client_ca_at, *sans_at, *ciphers_at, *http2_at;
    char *err;
    size_t err_size;
};

/* Writes "FILE:LINE: message" (the line of `at`, if any) into the loader's message;
 * returns -EINVAL. */
_printf_(3, 4) int web_config_fail(struct loader *l, const yaml_node_t *at, const char *fmt, ...);

/* The document's node number i (yaml_document_get_node()), or NULL. */
static inline const yaml_node_t *doc_node(const struct loader *l, int i) {
    return l->yaml->document_get_node(l->doc, i);
}

static inline const char *scalar(const yaml_node_t *n) {
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* An empty value ("key:") reads as an empty plain scalar; treat it as absent, as YAML's
 * null in go-yaml's spellings. */
static inline bool is_null(const yaml_node_t *n) {
    const char *s = scalar(n);

    return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (!*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
            strcmp(s, "NULL") == 0);
}

/* A boolean as exporter-toolkit's YAML decoder (go-yaml v2, YAML 1.1) reads one: a plain
 * y, yes, true or on in go-yaml's spellings (Y, Yes, YES, True, TRUE, On, ON), or their
 * false counterparts n, no, false, off. 1 true, 0 false, -1 not a boolean (a quoted one
 * too: Go refuses a string there). */
int web_config_bool(const yaml_node_t *n);

/* tls_server_config (webconfig_tls.c): the certificate and key (read and checked to pair),
 * the versions, curves and preference as a GnuTLS priority string. */
int web_config_parse_tls(struct loader *l, const yaml_node_t *map);

/* The client-certificate keys of tls_server_config (webconfig_client.c): client_auth_type,
 * client_ca_file, client_ca and client_allowed_sans. 1 when key is one of them (parsed),
 * 0 when not, <0 on error. */
int web_config_parse_client(struct loader *l, const char *key, const yaml_node_t *k,
                            const yaml_node_t *v);
/* After tls_server_config: the rules between them (a CA needs a client_auth_type that asks
 * for a certificate, SANs one that requires it), and the authorities GnuTLS gets. */
int web_config_check_client(struct loader *l, const yaml_node_t *map);
/* rate_limit (web_rate.c): interval and burst. */
int web_config_parse_rate(struct loader *l, const yaml_node_t *map);
/* Reads a file named by a key (relative to the configuration's directory) into *ret. */
int web_config_read_file(struct loader *l, const yaml_node_t *value, const char *key, char **ret);
