/* SPDX-License-Identifier: MIT */
/* Client certificates in tls_server_config: client_auth_type, client_ca_file / client_ca,
 * client_allowed_sans, with exporter-toolkit's rules between them. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "fileio.h"
#include "macro.h"
#include "tls_check.h"
#include "webconfig_internal.h"

/* Where distributions keep the system's authorities (the first found is used); the
 * verifying types without a client CA verify against them, as Go does with the system
 * roots. */
static const char *const system_ca_bundles[] = {
    "/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Arch */
    "/etc/pki/tls/certs/ca-bundle.crt",   /* Fedora, RHEL */
    "/etc/ssl/ca-bundle.pem",             /* openSUSE */
    "/etc/ssl/cert.pem",                  /* Alpine */
};
#define CA_MAX_SIZE (4u << 20)
#define MAX_SANS 256

static const struct {
    const char *name;
    enum web_client_auth type;
} auth_types[] = {
    {"NoClientCert", WEB_CLIENT_AUTH_NONE},
    {"RequestClientCert", WEB_CLIENT_AUTH_REQUEST},
    {"RequireAnyClientCert", WEB_CLIENT_AUTH_REQUIRE_ANY},
    /* exporter-toolkit's older name of RequireAnyClientCert, still accepted there */
    {"RequireClientCert", WEB_CLIENT_AUTH_REQUIRE_ANY},
    {"VerifyClientCertIfGiven", WEB_CLIENT_AUTH_VERIFY_IF_GIVEN},
    {"RequireAndVerifyClientCert", WEB_CLIENT_AUTH_REQUIRE_AND_VERIFY},
};

static int parse_auth_type(struct loader *l, const yaml_node_t *k, const yaml_node_t *v) {
    const char *s = scalar(v);

    if (l->client_auth_at)
        return web_config_fail(l, k, "tls_server_config.client_auth_type given twice");
    l->client_auth_at = k;
    if (is_null(v) || (s && !*s))
        return 0; /* empty: NoClientCert */
    for (size_t i = 0; i < ARRAY_SIZE(auth_types); i++)
        if (s && strcmp(s, auth_types[i].name) == 0) {
            l->c->client_auth = auth_types[i].type;
            return 0;
        }
    return web_config_fail(l, v,
                           "tls_server_config.client_auth_type: '%s' is not NoClientCert, "
                           "RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven or "
                           "RequireAndVerifyClientCert",
                           s ? s : "");
}

static int parse_ca(struct loader *l, const char *key, const yaml_node_t *k, const yaml_node_t *v) {
    const char *why = NULL, *text = scalar(v);
    int r;

    if (l->client_ca_at)
        return web_config_fail(l, k, "tls_server_config: %s given twice (or with %s)", key,
                               strcmp(key, "client_ca") == 0 ? "client_ca_file" : "client_ca");
    l->client_ca_at = k;
    if (strcmp(key, "client_ca_file") == 0)
        r = web_config_read_file(l, v, key, &l->c->client_ca_pem);
    else if (!text || !*text)
        r = web_config_fail(l, v, "tls_server_config.client_ca must be PEM text");
    else
        r = (l->c->client_ca_pem = strdup(text)) ? 0 : -ENOMEM;
    if (r < 0)
        return r;
    r = tls_check_ca(l->c->client_ca_pem, &why);
    if (r == -EINVAL)
        return web_config_fail(l, v, "tls_server_config.%s: %s", key, why);
    return r < 0 ? r : 0;
}

static int parse_sans(struct loader *l, const yaml_node_t *k, const yaml_node_t *v) {
    size_t n;

    if (l->sans_at)
        return web_config_fail(l, k, "tls_server_config.client_allowed_sans given twice");
    l->sans_at = k;
    if (is_null(v))
        return 0;
    if (v->type != YAML_SEQUENCE_NODE)
        return web_config_fail(l, v, "tls_server_config.client_allowed_sans must be a list");
    n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    if (n > MAX_SANS)
        return web_config_fail(l, v, "tls_server_config.client_allowed_sans: more than %d",
                               MAX_SANS);
    l->c->allowed_sans = calloc(n + 1, sizeof(char *));
    if (!l->c->allowed_sans)
        return -ENOMEM;
    for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
        const yaml_node_t *item = doc_node(l, *i);
        const char *san = scalar(item);

        if (!san || !*san)
            return web_config_fail(l, item,
                                   "tls_server_config.client_allowed_sans: entries must be "
                                   "non-empty strings");
        l->c->allowed_sans[l->c->n_sans] = strdup(san);
        if (!l->c->allowed_sans[l->c->n_sans])
            return -ENOMEM;
        l->c->n_sans++;
    }
    return 0;
}

int web_config_parse_client(struct loader *l, const char *key, const yaml_node_t *k,
                            const yaml_node_t *v) {
    int r;

    if (strcmp(key, "client_auth_type") == 0)
        r = parse_auth_type(l, k, v);
    else if (strcmp(key, "client_ca_file") == 0 || strcmp(key, "client_ca") == 0)
        r = parse_ca(l, key, k, v);
    else if (strcmp(key, "client_allowed_sans") == 0)
        r = parse_sans(l, k, v);
    else
        return 0;
    return r < 0 ? r : 1;
}

/* The verifying types without a client CA: the system's authorities; where there are none,
 * no certificate verifies (no_authorities), never one the server's own chain signed. The
 * others only need GnuTLS to ask for a certificate: any authority does, the client CA or
 * else the server's own chain. */
static int choose_trust(struct loader *l) {
    struct web_config *c = l->c;
    bool verify = c->client_auth == WEB_CLIENT_AUTH_VERIFY_IF_GIVEN ||
                  c->client_auth == WEB_CLIENT_AUTH_REQUIRE_AND_VERIFY;
    const char *from = c->client_ca_pem ? c->client_ca_pem : c->cert_pem;
    char *bundle = NULL;
    size_t size;
    int r;

    if (verify && !c->client_ca_pem) {
        for (size_t i = 0; l->dir && i < ARRAY_SIZE(system_ca_bundles); i++) {
            r = read_virtual_file_at(AT_FDCWD, system_ca_bundles[i], CA_MAX_SIZE, &bundle, &size);
            if (r == -ENOMEM)
                return r;
            if (r >= 0) {
                c->trust_pem = bundle;
                return 0;
            }
        }
        c->no_authorities = true; /* GnuTLS still asks with the server's chain below */
    }
    c->trust_pem = strdup(from);
    return c->trust_pem ? 0 : -ENOMEM;
}

int web_config_check_client(struct loader *l, const yaml_node_t *map) {
    struct web_config *c = l->c;

    if (c->client_ca_pem && c->client_auth == WEB_CLIENT_AUTH_NONE)
        return web_config_fail(l, l->client_ca_at,
                               "tls_server_config: a client CA is given but client_auth_type is "
                               "NoClientCert (set one that asks for a certificate)");
    if (c->allowed_sans && c->client_auth != WEB_CLIENT_AUTH_REQUIRE_ANY &&
        c->client_auth != WEB_CLIENT_AUTH_REQUIRE_AND_VERIFY)
        return web_config_fail(l, l->sans_at,
                               "tls_server_config.client_allowed_sans needs client_auth_type "
                               "RequireAnyClientCert or RequireAndVerifyClientCert");
    if ((c->client_auth != WEB_CLIENT_AUTH_NONE || c->client_ca_pem) && !c->cert_pem)
        return web_config_fail(l, map,
                               "tls_server_config: client certificates need TLS (cert_file or "
                               "cert, key_file or key)");
    if (c->client_auth == WEB_CLIENT_AUTH_NONE)
        return 0;
    return choose_trust(l);
}

enum web_client_auth web_config_client_auth(const struct web_config *c) {
    return c ? c->client_auth : WEB_CLIENT_AUTH_NONE;
}

const char *web_config_client_trust(const struct web_config *c) {
    return c && c->client_auth != WEB_CLIENT_AUTH_NONE ? c->trust_pem : NULL;
}

bool web_config_client_ca_given(const struct web_config *c) {
    return c && c->client_ca_pem;
}

bool web_config_client_verifiable(const struct web_config *c) {
    return c && !c->no_authorities;
}

size_t web_config_n_allowed_sans(const struct web_config *c) {
    return c ? c->n_sans : 0;
}

bool web_config_san_allowed(const struct web_config *c, const char *san) {
    if (!c || !c->allowed_sans)
        return true;
    for (size_t i = 0; i < c->n_sans; i++)
        if (san && strcmp(c->allowed_sans[i], san) == 0)
            return true;
    return false;
}
