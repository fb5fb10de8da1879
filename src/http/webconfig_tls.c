/* SPDX-License-Identifier: MIT */
/* tls_server_config of the web configuration: certificate and key (files or inline PEM,
 * checked to pair with GnuTLS), TLS versions, curves and the server's preference. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "fileio.h"
#include "macro.h"
#include "tls_check.h"
#include "webconfig_internal.h"

#define PEM_MAX_SIZE (1u << 20)

int web_config_read_file(struct loader *l, const yaml_node_t *value, const char *key, char **ret) {
    _cleanup_(freep) char *full = NULL;
    const char *name = scalar(value);
    char *content;
    size_t size;
    int r;

    if (!name || !*name)
        return web_config_fail(l, value, "tls_server_config.%s must be a file name", key);
    if (!l->dir)
        return web_config_fail(l, value, "tls_server_config.%s: files are not read here", key);
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
        return web_config_fail(l, value, "tls_server_config.%s: cannot read '%s': %s", key, full,
                               strerror(-r));
    if (size == 0 || strlen(content) != size) {
        free(content);
        return web_config_fail(l, value, "tls_server_config.%s: '%s' is empty or not PEM text", key,
                               full);
    }
    free(*ret);
    *ret = content;
    return 0;
}

/* tls_server_config.cert / key: the PEM text itself. */
static int inline_pem(struct loader *l, const yaml_node_t *value, const char *key, char **ret) {
    const char *text = scalar(value);
    char *copy;

    if (!text || !*text)
        return web_config_fail(l, value, "tls_server_config.%s must be PEM text", key);
    copy = strdup(text);
    if (!copy)
        return -ENOMEM;
    free(*ret);
    *ret = copy;
    return 0;
}

/* cipher_suites: a list of Go's names of secure suites (exporter-toolkit takes Go's). */
static int parse_ciphers(struct loader *l, const yaml_node_t *k, const yaml_node_t *v,
                         struct tls_settings *t) {
    if (l->ciphers_at)
        return web_config_fail(l, k, "tls_server_config.cipher_suites given twice");
    l->ciphers_at = k;
    if (is_null(v))
        return 0;
    if (v->type != YAML_SEQUENCE_NODE)
        return web_config_fail(l, v, "tls_server_config.cipher_suites must be a list");
    for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
        const yaml_node_t *item = doc_node(l, *i);
        int c = tls_cipher_from_string(scalar(item));

        if (c < 0)
            return web_config_fail(l, item,
                                   "tls_server_config.cipher_suites: unknown cipher suite '%s' "
                                   "(Go's names of secure suites, such as "
                                   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)",
                                   scalar(item) ? scalar(item) : "");
        t->ciphers |= 1u << c;
    }
    l->c->ciphers = t->ciphers;
    return 0;
}

/* min_version / max_version: TLS10 ... TLS13, as exporter-toolkit names them. */
static int parse_version(struct loader *l, const yaml_node_t *k, const yaml_node_t *v,
                         const yaml_node_t **seen, int *ret) {
    const char *key = scalar(k);
    int r;

    if (*seen)
        return web_config_fail(l, k, "tls_server_config.%s given twice", key);
    r = tls_version_from_string(scalar(v));
    if (r < 0)
        return web_config_fail(l, v,
                               "tls_server_config.%s: '%s' is not TLS10, TLS11, TLS12 or TLS13",
                               key, scalar(v) ? scalar(v) : "");
    *seen = k;
    *ret = r;
    return 0;
}

/* curve_preferences: a list of Go curve names, in preference order. */
static int parse_curves(struct loader *l, const yaml_node_t *v, struct tls_settings *t) {
    if (is_null(v))
        return 0;
    if (v->type != YAML_SEQUENCE_NODE)
        return web_config_fail(l, v, "tls_server_config.curve_preferences must be a list");
    for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
        const yaml_node_t *item = doc_node(l, *i);
        int c = tls_curve_from_string(scalar(item));

        if (c < 0)
            return web_config_fail(l, item,
                                   "tls_server_config.curve_preferences: '%s' is not CurveP256, "
                                   "CurveP384, CurveP521, X25519, X25519MLKEM768, "
                                   "SecP256r1MLKEM768 or SecP384r1MLKEM1024",
                                   scalar(item) ? scalar(item) : "");
        for (unsigned j = 0; j < t->n_curves; j++)
            if (t->curves[j] == (enum tls_curve)c)
                return web_config_fail(
                    l, item, "tls_server_config.curve_preferences: '%s' given twice", scalar(item));
        t->curves[t->n_curves++] = c;
    }
    return 0;
}

/* The pair must parse and match, and the versions be allowed: checked now, with the lines
 * to blame, rather than when the server fails to start. */
static int check_tls(struct loader *l, const yaml_node_t *map, const yaml_node_t *min_at,
                     const struct tls_settings *t) {
    const char *why = NULL;
    int r;

    if (t->min_version > t->max_version)
        return web_config_fail(l, min_at,
                               "tls_server_config.min_version TLS1%d is above max_version TLS1%d",
                               t->min_version - TLS_VERSION_1_0, t->max_version - TLS_VERSION_1_0);
    if (!l->c->cert_pem)
        return 0;
    r = tls_check_pair(l->c->cert_pem, l->c->key_pem, &why);
    if (r == -EINVAL)
        return web_config_fail(
            l, map, "tls_server_config: cert_file and key_file are not a usable pair: %s", why);
    if (r < 0)
        return r;
    r = tls_priorities(t, &l->c->priorities);
    if (r == -EINVAL)
        return web_config_fail(
            l, min_at ? min_at : map,
            "tls_server_config: these TLS versions, curves and cipher suites are refused "
            "by GnuTLS");
    return r;
}

int web_config_parse_tls(struct loader *l, const yaml_node_t *map) {
    const yaml_node_t *min_at = NULL, *max_at = NULL, *curves_at = NULL, *prefer_at = NULL;
    struct tls_settings t = {
        .min_version = TLS_VERSION_1_2, .max_version = TLS_VERSION_1_3, .server_precedence = true};
    bool seen_cert = false, seen_key = false;
    int r;

    if (is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return web_config_fail(l, map, "tls_server_config must be a mapping");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = doc_node(l, p->key);
        const yaml_node_t *v = doc_node(l, p->value);
        const char *key = scalar(k);

        if (!key)
            return web_config_fail(l, k, "tls_server_config: keys must be plain names");
        if (strcmp(key, "cert_file") == 0 || strcmp(key, "key_file") == 0 ||
            strcmp(key, "cert") == 0 || strcmp(key, "key") == 0) {
            bool cert = key[0] == 'c', file = strchr(key, '_') != NULL;

            /* Inline PEM or a file, one of the two (exporter-toolkit's rule). */
            if (cert ? seen_cert : seen_key)
                return web_config_fail(l, k, "tls_server_config: %s given twice (or with %s)", key,
                                       cert ? (file ? "cert" : "cert_file")
                                            : (file ? "key" : "key_file"));
            r = file ? web_config_read_file(l, v, key, cert ? &l->c->cert_pem : &l->c->key_pem)
                     : inline_pem(l, v, key, cert ? &l->c->cert_pem : &l->c->key_pem);
            if (r < 0)
                return r;
            *(cert ? &seen_cert : &seen_key) = true;
        } else if (strcmp(key, "min_version") == 0) {
            r = parse_version(l, k, v, &min_at, &t.min_version);
            if (r < 0)
                return r;
        } else if (strcmp(key, "max_version") == 0) {
            r = parse_version(l, k, v, &max_at, &t.max_version);
            if (r < 0)
                return r;
        } else if (strcmp(key, "curve_preferences") == 0) {
            if (curves_at)
                return web_config_fail(l, k, "tls_server_config.curve_preferences given twice");
            curves_at = k;
            r = parse_curves(l, v, &t);
            if (r < 0)
                return r;
        } else if (strcmp(key, "prefer_server_cipher_suites") == 0) {
            if (prefer_at)
                return web_config_fail(l, k,
                                       "tls_server_config.prefer_server_cipher_suites given twice");
            prefer_at = k;
            r = web_config_bool(v);
            if (r < 0)
                return web_config_fail(
                    l, v, "tls_server_config.prefer_server_cipher_suites must be true or false");
            t.server_precedence = r;
        } else if (strcmp(key, "cipher_suites") == 0) {
            r = parse_ciphers(l, k, v, &t);
            if (r < 0)
                return r;
        } else {
            r = web_config_parse_client(l, key, k, v);
            if (r < 0)
                return r;
            if (r == 0)
                return web_config_fail(l, k, "unknown key '%s' in tls_server_config", key);
        }
    }
    if (seen_cert != seen_key)
        return web_config_fail(
            l, map,
            "tls_server_config needs both a certificate and a key (cert_file or cert, "
            "key_file or key)");
    r = check_tls(l, map, min_at ? min_at : max_at, &t);
    if (r < 0)
        return r;
    l->c->tls13_only = t.min_version >= TLS_VERSION_1_3;
    return web_config_check_client(l, map);
}
