/* SPDX-License-Identifier: MIT */
#include "webconfig.h"

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "fileio.h"
#include "macro.h"

#define CONFIG_MAX_SIZE (1u << 20)
#define PEM_MAX_SIZE (1u << 20)
#define TOKEN_ROUNDS 1000

struct web_user {
    char *name;
    char *hash;
    /* SHA-256-crypt of the last accepted password (with the config's salt), or "". */
    char token[CRYPT_OUTPUT_SIZE];
};

struct web_config {
    char *cert_pem;
    char *key_pem;
    struct web_user *users;
    size_t n_users;
    size_t cap_users;
    char token_salt[CRYPT_GENSALT_OUTPUT_SIZE];
    pthread_mutex_t lock;
};

/* Parsing state: the document, the file's directory and where to put the message. */
struct loader {
    const char *path;
    char *dir;
    yaml_document_t *doc;
    struct web_config *c;
    char *err;
    size_t err_size;
};

_printf_(3, 4) static int fail(struct loader *l, const yaml_node_t *at, const char *fmt, ...) {
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

static const char *scalar(const yaml_node_t *n) {
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* An empty value ("key:") reads as an empty plain scalar; treat it as absent. */
static bool is_null(const yaml_node_t *n) {
    const char *s = scalar(n);

    return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (!*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0);
}

static int read_pem(struct loader *l, const yaml_node_t *value, const char *key, char **ret) {
    _cleanup_(freep) char *full = NULL;
    const char *name = scalar(value);
    char *content;
    size_t size;
    int r;

    if (!name || !*name)
        return fail(l, value, "tls_server_config.%s must be a file name", key);
    if (name[0] == '/')
        full = strdup(name);
    else if (asprintf(&full, "%s/%s", l->dir, name) < 0)
        full = NULL;
    if (!full)
        return -ENOMEM;
    r = read_virtual_file_at(AT_FDCWD, full, PEM_MAX_SIZE, &content, &size);
    if (r == -ENOMEM)
        return r;
    if (r < 0)
        return fail(l, value, "tls_server_config.%s: cannot read '%s': %s", key, full,
                    strerror(-r));
    if (size == 0 || strlen(content) != size) {
        free(content);
        return fail(l, value, "tls_server_config.%s: '%s' is empty or not PEM text", key, full);
    }
    free(*ret);
    *ret = content;
    return 0;
}

static const char *const tls_unsupported[] = {
    "client_auth_type",
    "client_ca_file",
    "client_allowed_sans",
    "min_version",
    "max_version",
    "cipher_suites",
    "prefer_server_cipher_suites",
    "curve_preferences",
    "cert",
    "key",
};

static bool in_list(const char *key, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, list[i]) == 0)
            return true;
    return false;
}

static int parse_tls(struct loader *l, const yaml_node_t *map) {
    bool seen_cert = false, seen_key = false;
    int r;

    if (is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return fail(l, map, "tls_server_config must be a mapping");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
        const char *key = scalar(k);

        if (!key)
            return fail(l, k, "tls_server_config: keys must be plain names");
        if (strcmp(key, "cert_file") == 0 || strcmp(key, "key_file") == 0) {
            bool cert = key[0] == 'c';

            if (cert ? seen_cert : seen_key)
                return fail(l, k, "tls_server_config.%s given twice", key);
            r = read_pem(l, v, key, cert ? &l->c->cert_pem : &l->c->key_pem);
            if (r < 0)
                return r;
            *(cert ? &seen_cert : &seen_key) = true;
        } else if (in_list(key, tls_unsupported, ARRAY_SIZE(tls_unsupported)))
            return fail(l, k, "tls_server_config.%s is not supported by joulestat", key);
        else
            return fail(l, k, "unknown key '%s' in tls_server_config", key);
    }
    if (seen_cert != seen_key)
        return fail(l, map, "tls_server_config needs both cert_file and key_file");
    return 0;
}

/* bcrypt: "$2a$", "$2b$" or "$2y$", two cost digits, '$', 53 characters. */
static bool bcrypt_shaped(const char *h) {
    return strlen(h) == 60 && h[0] == '$' && h[1] == '2' && strchr("aby", h[2]) && h[3] == '$' &&
           h[6] == '$';
}

static int add_user(struct loader *l, const yaml_node_t *k, const yaml_node_t *v) {
    struct web_config *c = l->c;
    const char *name = scalar(k), *hash = scalar(v);
    struct web_user *u;

    if (!name || !*name)
        return fail(l, k, "basic_auth_users: user names must be non-empty strings");
    if (strchr(name, ':'))
        return fail(l, k, "basic_auth_users: user name '%s' contains ':'", name);
    for (size_t i = 0; i < c->n_users; i++)
        if (strcmp(c->users[i].name, name) == 0)
            return fail(l, k, "basic_auth_users: user '%s' given twice", name);
    if (!hash || !bcrypt_shaped(hash))
        return fail(l, v, "basic_auth_users.%s: not a bcrypt hash ($2y$...)", name);
    if (grow_array(&c->users, &c->cap_users, c->n_users + 1, sizeof(*c->users)) < 0)
        return -ENOMEM;
    u = &c->users[c->n_users];
    *u = (struct web_user){.name = strdup(name), .hash = strdup(hash)};
    if (!u->name || !u->hash) {
        free(u->name);
        free(u->hash);
        return -ENOMEM;
    }
    c->n_users++;
    return 0;
}

static int parse_users(struct loader *l, const yaml_node_t *map) {
    int r;

    if (is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return fail(l, map, "basic_auth_users must be a mapping of user: bcrypt-hash");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        r = add_user(l, yaml_document_get_node(l->doc, p->key),
                     yaml_document_get_node(l->doc, p->value));
        if (r < 0)
            return r;
    }
    return 0;
}

static int parse_root(struct loader *l, const yaml_node_t *root) {
    bool seen_tls = false, seen_users = false;
    int r;

    /* An empty file is a valid configuration: no TLS, no authentication. */
    if (!root || is_null(root))
        return 0;
    if (root->type != YAML_MAPPING_NODE)
        return fail(l, root, "the top level must be a mapping");
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
        const char *key = scalar(k);

        if (!key)
            return fail(l, k, "keys must be plain names");
        if (strcmp(key, "tls_server_config") == 0) {
            if (seen_tls)
                return fail(l, k, "tls_server_config given twice");
            seen_tls = true;
            r = parse_tls(l, v);
        } else if (strcmp(key, "basic_auth_users") == 0) {
            if (seen_users)
                return fail(l, k, "basic_auth_users given twice");
            seen_users = true;
            r = parse_users(l, v);
        } else if (strcmp(key, "http_server_config") == 0)
            return fail(l, k, "http_server_config is not supported by joulestat");
        else
            return fail(l, k, "unknown key '%s'", key);
        if (r < 0)
            return r;
    }
    return 0;
}

/* Every hash must work with this libxcrypt (cost in range, known variant). */
static int check_hashes(struct loader *l, struct crypt_data *cd) {
    for (size_t i = 0; i < l->c->n_users; i++) {
        const char *out = crypt_rn("", l->c->users[i].hash, cd, sizeof(*cd));

        if (!out || out[0] == '*')
            return fail(l, NULL, "basic_auth_users.%s: bcrypt hash rejected by libxcrypt",
                        l->c->users[i].name);
    }
    return 0;
}

static int parse_text(struct loader *l, const char *text, size_t size) {
    yaml_parser_t parser;
    yaml_document_t doc;
    int r;

    if (!yaml_parser_initialize(&parser))
        return -ENOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
    if (!yaml_parser_load(&parser, &doc)) {
        if (parser.error == YAML_MEMORY_ERROR)
            r = -ENOMEM;
        else if (parser.context)
            r = fail(l, NULL, "line %zu column %zu: invalid YAML: %s (%s at line %zu)",
                     parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                     parser.problem ? parser.problem : "parse error", parser.context,
                     parser.context_mark.line + 1);
        else
            r = fail(l, NULL, "line %zu column %zu: invalid YAML: %s", parser.problem_mark.line + 1,
                     parser.problem_mark.column + 1,
                     parser.problem ? parser.problem : "parse error");
        yaml_parser_delete(&parser);
        return r;
    }
    l->doc = &doc;
    r = parse_root(l, yaml_document_get_root_node(&doc));
    l->doc = NULL;
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return r;
}

int web_config_load(const char *path, struct web_config **ret, char *err, size_t err_size) {
    _cleanup_(freep) char *text = NULL, *dir_copy = NULL;
    _cleanup_(freep) struct crypt_data *cd = NULL;
    struct loader l = {.path = path, .err = err, .err_size = err_size};
    struct web_config *c;
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
    dir_copy = strdup(path);
    cd = calloc(1, sizeof(*cd));
    c = calloc(1, sizeof(*c));
    if (!dir_copy || !cd || !c) {
        free(c);
        return -ENOMEM;
    }
    (void)pthread_mutex_init(&c->lock, NULL);
    l.dir = dirname(dir_copy);
    l.c = c;
    r = parse_text(&l, text, size);
    if (r >= 0)
        r = check_hashes(&l, cd);
    if (r >= 0 && c->n_users > 0 &&
        !crypt_gensalt_rn("$5$", TOKEN_ROUNDS, NULL, 0, c->token_salt, sizeof(c->token_salt)))
        r = errno > 0 ? -errno : -EINVAL;
    if (r < 0) {
        web_config_free(c);
        return r;
    }
    *ret = c;
    return 0;
}

struct web_config *web_config_free(struct web_config *c) {
    if (!c)
        return NULL;
    for (size_t i = 0; i < c->n_users; i++) {
        free(c->users[i].name);
        explicit_bzero(c->users[i].token, sizeof(c->users[i].token));
        free(c->users[i].hash);
    }
    free(c->users);
    if (c->key_pem)
        explicit_bzero(c->key_pem, strlen(c->key_pem));
    free(c->key_pem);
    free(c->cert_pem);
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

size_t web_config_n_users(const struct web_config *c) {
    return c ? c->n_users : 0;
}

/* Compares the whole of both strings whatever their contents, so the time does not say
 * where they differ. */
static bool equal_const_time(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b), n = MAX(la, lb);
    unsigned char diff = la != lb;

    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)((i < la ? a[i] : 0) ^ (i < lb ? b[i] : 0));
    return diff == 0;
}

int web_config_check_password(struct web_config *c, const char *user, const char *password) {
    _cleanup_(freep) struct crypt_data *cd = NULL;
    struct web_user *u = NULL;
    char token[CRYPT_OUTPUT_SIZE] = "";
    const char *out;
    bool ok = false;

    if (!c || c->n_users == 0 || !user || !password)
        return 0;
    cd = calloc(1, sizeof(*cd));
    if (!cd)
        return -ENOMEM;
    for (size_t i = 0; i < c->n_users; i++)
        if (strcmp(c->users[i].name, user) == 0)
            u = &c->users[i];

    /* The cheap path: the same password as last accepted for this user. */
    out = crypt_rn(password, c->token_salt, cd, sizeof(*cd));
    if (u && out && out[0] != '*') {
        (void)snprintf(token, sizeof(token), "%s", out);
        (void)pthread_mutex_lock(&c->lock);
        ok = u->token[0] && equal_const_time(u->token, token);
        (void)pthread_mutex_unlock(&c->lock);
        if (ok)
            goto done;
    }
    /* An unknown user is checked against another user's hash (same cost), then refused,
     * so timing does not tell which user names exist. */
    out = crypt_rn(password, u ? u->hash : c->users[0].hash, cd, sizeof(*cd));
    ok = u && out && out[0] != '*' && equal_const_time(out, u->hash);
    if (ok && token[0]) {
        (void)pthread_mutex_lock(&c->lock);
        memcpy(u->token, token, sizeof(token));
        (void)pthread_mutex_unlock(&c->lock);
    }
done:
    explicit_bzero(token, sizeof(token));
    explicit_bzero(cd, sizeof(*cd));
    return ok;
}
