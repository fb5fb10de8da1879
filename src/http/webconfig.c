/* SPDX-License-Identifier: MIT */
#include "webconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "fileio.h"
#include "macro.h"
#include "tls_check.h"
#include "webconfig_internal.h"

#define CONFIG_MAX_SIZE (1u << 20)
#define TOKEN_ROUNDS 1000

int web_config_fail(struct loader *l, const yaml_node_t *at, const char *fmt, ...) {
    va_list ap;
    int n = 0;

    if (!l->err || l->err_size == 0)
        return -EINVAL;
    if (at)
        n = snprintf(l->err, l->err_size, "%s:%zu: ", l->path, at->start_mark.line + 1);
    else
        n = snprintf(l->err, l->err_size, "%s: ", l->path);
    if (n < 0 || (size_t)n >= l->err_size)
        return -EINVAL;
    va_start(ap, fmt);
    (void)vsnprintf(l->err + n, l->err_size - (size_t)n, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* bcrypt's base64 alphabet, in its order. */
static const char bcrypt_alphabet[] =
    "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* bcrypt: "$2a$", "$2b$" or "$2y$", a cost of two digits, '$', 22 characters of salt and 31
 * of hash in bcrypt's base64 alphabet. Only the shape is checked at load: computing a hash
 * at its cost to see that it works would take 12 s at cost 18 and days at cost 31. */
static const char *bcrypt_problem(const char *h) {
    int cost;

    if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
        h[6] != '$' || h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9')
        return "not a bcrypt hash ($2y$...)";
    cost = (h[4] - '0') * 10 + (h[5] - '0');
    if (cost < 4 || cost > 31)
        return "bcrypt cost outside 04..31";
    if (strspn(h + 7, bcrypt_alphabet) != 53)
        return "bcrypt hash with characters outside its alphabet";
    return NULL;
}

/* The salt's last character (the 22nd, at 28) holds 4 bits of salt and 2 of padding;
 * libxcrypt writes the padding as 0 in what it returns, and Go's bcrypt ignores it. A hash
 * written with other padding bits (some older libraries) is the same hash: made canonical,
 * so that the right password matches it. */
static void canonical_salt(char *h) {
    size_t v = (size_t)(strchr(bcrypt_alphabet, h[28]) - bcrypt_alphabet);

    h[28] = bcrypt_alphabet[v & 0x30];
}

static int add_user(struct loader *l, const yaml_node_t *k, const yaml_node_t *v) {
    struct web_config *c = l->c;
    const char *name = scalar(k), *hash = scalar(v), *problem;
    struct web_user *u;

    if (!name || !*name)
        return web_config_fail(l, k, "basic_auth_users: user names must be non-empty strings");
    if (strchr(name, ':'))
        return web_config_fail(l, k, "basic_auth_users: user name '%s' contains ':'", name);
    if (strlen(name) > WEB_USER_NAME_MAX)
        return web_config_fail(l, k, "basic_auth_users: a user name longer than %d bytes",
                               WEB_USER_NAME_MAX);
    for (size_t i = 0; i < c->n_users; i++)
        if (strcmp(c->users[i].name, name) == 0)
            return web_config_fail(l, k, "basic_auth_users: user '%s' given twice", name);
    problem = hash ? bcrypt_problem(hash) : "not a bcrypt hash ($2y$...)";
    if (problem)
        return web_config_fail(l, v, "basic_auth_users.%s: %s", name, problem);
    if (grow_array(&c->users, &c->cap_users, c->n_users + 1, sizeof(*c->users)) < 0)
        return -ENOMEM;
    u = &c->users[c->n_users];
    *u = (struct web_user){.name = strdup(name), .hash = strdup(hash)};
    if (!u->name || !u->hash) {
        free(u->name);
        free(u->hash);
        return -ENOMEM;
    }
    canonical_salt(u->hash);
    c->n_users++;
    return 0;
}

static int parse_users(struct loader *l, const yaml_node_t *map) {
    int r;

    if (is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return web_config_fail(l, map, "basic_auth_users must be a mapping of user: bcrypt-hash");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        r = add_user(l, doc_node(l, p->key), doc_node(l, p->value));
        if (r < 0)
            return r;
    }
    return 0;
}

/* http_server_config.headers: the security headers exporter-toolkit allows, with its
 * checks, which compare names and values exactly (a blank value leaves a free-form header
 * unset; the two with a list of values refuse it, as exporter-toolkit does). */
static int parse_headers(struct loader *l, const yaml_node_t *map) {
    if (is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return web_config_fail(l, map,
                               "http_server_config.headers must be a mapping of header: value");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = doc_node(l, p->key);
        const yaml_node_t *v = doc_node(l, p->value);
        const char *name = scalar(k), *value = scalar(v);
        size_t i;

        for (i = 0; i < WEB_HEADERS; i++)
            if (name && strcmp(name, web_header_names[i]) == 0)
                break;
        if (i == WEB_HEADERS)
            return web_config_fail(
                l, k,
                "http_server_config.headers: '%s' is not one of Content-Security-Policy, "
                "X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, "
                "Strict-Transport-Security",
                name ? name : "");
        if (!value)
            return web_config_fail(l, v, "http_server_config.headers.%s must be a string", name);
        if (l->c->headers[i])
            return web_config_fail(l, k, "http_server_config.headers.%s given twice", name);
        if (!*value && i != WEB_HEADER_X_FRAME_OPTIONS && i != WEB_HEADER_X_CONTENT_TYPE_OPTIONS)
            continue;
        if (strchr(value, '\r') || strchr(value, '\n'))
            return web_config_fail(l, v, "http_server_config.headers.%s: a line break in the value",
                                   name);
        if (i == WEB_HEADER_X_FRAME_OPTIONS && strcmp(value, "deny") != 0 &&
            strcmp(value, "sameorigin") != 0)
            return web_config_fail(
                l, v,
                "http_server_config.headers.X-Frame-Options: '%s' is not deny or "
                "sameorigin",
                value);
        if (i == WEB_HEADER_X_CONTENT_TYPE_OPTIONS && strcmp(value, "nosniff") != 0)
            return web_config_fail(l, v,
                                   "http_server_config.headers.X-Content-Type-Options: '%s' is not "
                                   "nosniff",
                                   value);
        l->c->headers[i] = strdup(value);
        if (!l->c->headers[i])
            return -ENOMEM;
    }
    return 0;
}

int web_config_bool(const yaml_node_t *n) {
    static const char *const words[2][12] = {
        {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", NULL},
        {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL},
    };
    const char *s = scalar(n);

    if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return -1;
    for (int b = 0; b < 2; b++)
        for (const char *const *w = words[b]; *w; w++)
            if (strcmp(s, *w) == 0)
                return b;
    return -1;
}

/* http_server_config: headers, and http2 (accepted, true or false: joulestat speaks
 * HTTP/1.1 only, which clients offered HTTP/2 fall back to). */
static int parse_http(struct loader *l, const yaml_node_t *map) {
    bool seen_headers = false, seen_http2 = false;
    int r;

    if (is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return web_config_fail(l, map, "http_server_config must be a mapping");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = doc_node(l, p->key);
        const yaml_node_t *v = doc_node(l, p->value);
        const char *key = scalar(k);

        if (key && strcmp(key, "headers") == 0) {
            if (seen_headers)
                return web_config_fail(l, k, "http_server_config.headers given twice");
            seen_headers = true;
            r = parse_headers(l, v);
            if (r < 0)
                return r;
        } else if (key && strcmp(key, "http2") == 0) {
            if (seen_http2)
                return web_config_fail(l, k, "http_server_config.http2 given twice");
            seen_http2 = true;
            r = web_config_bool(v);
            if (r < 0)
                return web_config_fail(l, v, "http_server_config.http2 must be true or false");
            l->c->http2 = r;
            l->http2_at = k;
        } else {
            return web_config_fail(l, k, "unknown key '%s' in http_server_config", key ? key : "");
        }
    }
    return 0;
}

static int parse_root(struct loader *l, const yaml_node_t *root) {
    bool seen_tls = false, seen_users = false, seen_http = false, seen_rate = false;
    int r;

    /* An empty file is a valid configuration: no TLS, no authentication. */
    if (!root || is_null(root))
        return 0;
    if (root->type != YAML_MAPPING_NODE)
        return web_config_fail(l, root, "the top level must be a mapping");
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = doc_node(l, p->key);
        const yaml_node_t *v = doc_node(l, p->value);
        const char *key = scalar(k);

        if (!key)
            return web_config_fail(l, k, "keys must be plain names");
        if (strcmp(key, "tls_server_config") == 0) {
            if (seen_tls)
                return web_config_fail(l, k, "tls_server_config given twice");
            seen_tls = true;
            r = web_config_parse_tls(l, v);
        } else if (strcmp(key, "basic_auth_users") == 0) {
            if (seen_users)
                return web_config_fail(l, k, "basic_auth_users given twice");
            seen_users = true;
            r = parse_users(l, v);
        } else if (strcmp(key, "http_server_config") == 0) {
            if (seen_http)
                return web_config_fail(l, k, "http_server_config given twice");
            seen_http = true;
            r = parse_http(l, v);
        } else if (strcmp(key, "rate_limit") == 0) {
            if (seen_rate)
                return web_config_fail(l, k, "rate_limit given twice");
            seen_rate = true;
            r = web_config_parse_rate(l, v);
        } else
            return web_config_fail(l, k, "unknown key '%s'", key);
        if (r < 0)
            return r;
    }
    /* Go's HTTP/2 server refuses to start with a cipher list that lacks the suite HTTP/2
     * requires where TLS 1.2 may be spoken (TLS 1.3's suites are not configured), and
     * exporter-toolkit serves HTTP/2 unless told not to. */
    if (l->c->cert_pem && l->c->ciphers && l->c->http2 && !l->c->tls13_only &&
        !tls_ciphers_allow_http2(l->c->ciphers))
        return web_config_fail(l, l->ciphers_at,
                               "tls_server_config.cipher_suites lacks the suite HTTP/2 requires "
                               "(TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or "
                               "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256); add one, or set "
                               "http_server_config.http2: false%s",
                               l->http2_at ? "" : " (true by default)");
    return 0;
}

/* A YAML syntax error: "FILE:LINE:COLUMN: invalid YAML: ...", as the other messages name
 * their line. Returns -EINVAL. */
static int yaml_fail(struct loader *l, const yaml_parser_t *p) {
    const char *problem = p->problem ? p->problem : "parse error";

    if (!l->err || l->err_size == 0)
        return -EINVAL;
    if (p->context)
        (void)snprintf(l->err, l->err_size, "%s:%zu:%zu: invalid YAML: %s (%s at line %zu)",
                       l->path, p->problem_mark.line + 1, p->problem_mark.column + 1, problem,
                       p->context, p->context_mark.line + 1);
    else
        (void)snprintf(l->err, l->err_size, "%s:%zu:%zu: invalid YAML: %s", l->path,
                       p->problem_mark.line + 1, p->problem_mark.column + 1, problem);
    return -EINVAL;
}

static int parse_text(struct loader *l, const char *text, size_t size) {
    const struct yaml_api *y = l->yaml;
    yaml_parser_t parser;
    yaml_document_t doc;
    int r;

    if (!y->parser_initialize(&parser))
        return -ENOMEM;
    y->parser_set_input_string(&parser, (const unsigned char *)text, size);
    if (!y->parser_load(&parser, &doc)) {
        if (parser.error == YAML_MEMORY_ERROR)
            r = -ENOMEM;
        else
            r = yaml_fail(l, &parser);
        y->parser_delete(&parser);
        return r;
    }
    l->doc = &doc;
    r = parse_root(l, y->document_get_root_node(&doc));
    l->doc = NULL;
    y->document_delete(&doc);
    y->parser_delete(&parser);
    return r;
}

/* "FILE: REASON" for a library that did not load; returns error. */
static int library_fail(struct loader *l, int error, const char *reason) {
    if (l->err && l->err_size)
        (void)snprintf(l->err, l->err_size, "%s: %s", l->path, reason);
    return error;
}

int web_config_parse(const char *path, const char *text, size_t size, bool read_files,
                     struct web_config **ret, char *err, size_t err_size) {
    _cleanup_(freep) char *dir_copy = NULL;
    struct loader l = {.path = path, .err = err, .err_size = err_size};
    const char *reason = NULL;
    struct web_config *c;
    int r;

    if (err && err_size)
        err[0] = '\0';
    dir_copy = strdup(path);
    c = calloc(1, sizeof(*c));
    if (!dir_copy || !c) {
        free(c);
        return -ENOMEM;
    }
    atomic_init(&c->refs, 1);
    (void)pthread_mutex_init(&c->lock, NULL);
    c->http2 = true; /* exporter-toolkit's default */
    l.dir = read_files ? dirname(dir_copy) : NULL;
    l.c = c;
    /* Loaded on first use: at start-up before the system-call filter; a reload that first
     * names users loads libcrypt under it (it allows openat and mmap). */
    r = yaml_api_get(&l.yaml, &reason);
    if (r < 0)
        r = library_fail(&l, r, reason);
    else
        r = parse_text(&l, text, size);
    if (r >= 0 && c->n_users > 0) {
        r = crypt_api_get(&c->crypt, &reason);
        if (r < 0)
            r = library_fail(&l, r, reason);
        else if (!c->crypt->gensalt_rn("$5$", TOKEN_ROUNDS, NULL, 0, c->token_salt,
                                       sizeof(c->token_salt)))
            r = errno > 0 ? -errno : -EINVAL;
    }
    if (r < 0) {
        web_config_free(c);
        return r;
    }
    *ret = c;
    return 0;
}

int web_config_load(const char *path, struct web_config **ret, char *err, size_t err_size) {
    _cleanup_(freep) char *text = NULL;
    size_t size;
    int r;

    if (err && err_size)
        err[0] = '\0';
    r = read_virtual_file_at(AT_FDCWD, path, CONFIG_MAX_SIZE, &text, &size);
    if (r < 0) {
        if (err && err_size)
            (void)snprintf(err, err_size, "%s: cannot read: %s", path, strerror(-r));
        return r == -EFBIG ? -EINVAL : r;
    }
    return web_config_parse(path, text, size, true, ret, err, err_size);
}

struct web_config *web_config_ref(struct web_config *c) {
    if (c)
        atomic_fetch_add(&c->refs, 1);
    return c;
}

struct web_config *web_config_free(struct web_config *c) {
    if (!c || atomic_fetch_sub(&c->refs, 1) > 1)
        return NULL;
    for (size_t i = 0; i < c->n_users; i++) {
        free(c->users[i].name);
        explicit_bzero(c->users[i].token, sizeof(c->users[i].token));
        free(c->users[i].hash);
    }
    free(c->users);
    explicit_bzero(c->failures, sizeof(c->failures));
    if (c->key_pem)
        explicit_bzero(c->key_pem, strlen(c->key_pem));
    free(c->key_pem);
    free(c->cert_pem);
    free(c->client_ca_pem);
    free(c->trust_pem);
    for (size_t i = 0; i < c->n_sans; i++)
        free(c->allowed_sans[i]);
    free(c->allowed_sans);
    free(c->priorities);
    for (size_t i = 0; i < WEB_HEADERS; i++)
        free(c->headers[i]);
    (void)pthread_mutex_destroy(&c->lock);
    free(c);
    return NULL;
}

const char *web_config_tls_cert(const struct web_config *c) {
    return c ? c->cert_pem : NULL;
}

const char *web_config_tls_key(const struct web_config *c) {
    return c ? c->key_pem : NULL;
}

const char *web_config_tls_priorities(const struct web_config *c) {
    return c ? c->priorities : NULL;
}

void web_config_freep(struct web_config **p) {
    *p = web_config_free(*p);
}

static bool same_text(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool web_config_same_tls(const struct web_config *a, const struct web_config *b) {
    return same_text(web_config_tls_cert(a), web_config_tls_cert(b)) &&
           same_text(web_config_tls_key(a), web_config_tls_key(b)) &&
           same_text(web_config_tls_priorities(a), web_config_tls_priorities(b)) &&
           same_text(web_config_client_trust(a), web_config_client_trust(b));
}

const char *const web_header_names[WEB_HEADERS] = {
    [WEB_HEADER_CONTENT_SECURITY_POLICY] = "Content-Security-Policy",
    [WEB_HEADER_X_FRAME_OPTIONS] = "X-Frame-Options",
    [WEB_HEADER_X_CONTENT_TYPE_OPTIONS] = "X-Content-Type-Options",
    [WEB_HEADER_X_XSS_PROTECTION] = "X-XSS-Protection",
    [WEB_HEADER_STRICT_TRANSPORT_SECURITY] = "Strict-Transport-Security",
};

const char *web_config_header(const struct web_config *c, enum web_header h) {
    return c && h >= 0 && h < WEB_HEADERS ? c->headers[h] : NULL;
}

size_t web_config_n_users(const struct web_config *c) {
    return c ? c->n_users : 0;
}
