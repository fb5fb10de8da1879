/* SPDX-License-Identifier: MIT */
#pragma once

/* The web configuration's fields, shared by the loader (webconfig.c) and the password
 * checks (web_auth.c). Nothing outside src/http includes this. */

#include <crypt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "webconfig.h"

/* Wrong "user:password" pairs remembered per configuration (least recently used out). */
#define WEB_AUTH_FAILURES 64

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
    char *priorities;           /* GnuTLS priority string for the TLS versions asked for */
    char *headers[WEB_HEADERS]; /* http_server_config.headers, NULL when unset */
    struct web_user *users;
    size_t n_users;
    size_t cap_users;
    /* Tokens are SHA-256-crypt of "user:password" with this salt, made at load: one
     * configuration's tokens mean nothing to another (a reloaded file starts afresh). */
    char token_salt[CRYPT_GENSALT_OUTPUT_SIZE];
    pthread_mutex_t lock; /* the tokens, failures, clock and checks below */
    struct web_failure failures[WEB_AUTH_FAILURES];
    uint64_t clock;
    unsigned checks; /* bcrypt checks running now */
};
