/* SPDX-License-Identifier: MIT */
#include "tls_check.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls_init.h"

int tls_version_from_string(const char *s) {
    static const char *const names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};

    for (int i = 0; i < 4; i++)
        if (s && strcmp(s, names[i]) == 0)
            return TLS_VERSION_1_0 + i;
    return -EINVAL;
}

static const char *const curve_names[_TLS_CURVE_MAX] = {
    [TLS_CURVE_P256] = "CurveP256",
    [TLS_CURVE_P384] = "CurveP384",
    [TLS_CURVE_P521] = "CurveP521",
    [TLS_CURVE_X25519] = "X25519",
};

/* GnuTLS's names of the same groups. */
static const char *const curve_groups[_TLS_CURVE_MAX] = {
    [TLS_CURVE_P256] = "GROUP-SECP256R1",
    [TLS_CURVE_P384] = "GROUP-SECP384R1",
    [TLS_CURVE_P521] = "GROUP-SECP521R1",
    [TLS_CURVE_X25519] = "GROUP-X25519",
};

int tls_curve_from_string(const char *s) {
    for (int i = 0; i < _TLS_CURVE_MAX; i++)
        if (s && strcmp(s, curve_names[i]) == 0)
            return i;
    return -EINVAL;
}

int tls_priorities(const struct tls_settings *t, char **ret) {
    gnutls_priority_t check;
    char buf[256];
    size_t n;
    char *out;
    int r;

    if (t->min_version < TLS_VERSION_1_0 || t->max_version > TLS_VERSION_1_3 ||
        t->min_version > t->max_version || t->n_curves > _TLS_CURVE_MAX)
        return -EINVAL;
    r = tls_init();
    if (r < 0)
        return r;
    n = (size_t)snprintf(buf, sizeof(buf), "NORMAL:-VERS-ALL");
    for (int v = t->min_version; v <= t->max_version; v++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, ":+VERS-TLS1.%d", v - TLS_VERSION_1_0);
    if (t->n_curves > 0)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, ":-GROUP-ALL");
    for (unsigned i = 0; i < t->n_curves; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, ":+%s", curve_groups[t->curves[i]]);
    if (t->server_precedence)
        (void)snprintf(buf + n, sizeof(buf) - n, ":%%SERVER_PRECEDENCE");
    if (gnutls_priority_init(&check, buf, NULL) < 0)
        return -EINVAL;
    gnutls_priority_deinit(check);
    out = strdup(buf);
    if (!out)
        return -ENOMEM;
    *ret = out;
    return 0;
}

int tls_check_pair(const char *cert_pem, const char *key_pem, const char **ret_reason) {
    gnutls_certificate_credentials_t cred;
    gnutls_datum_t cert = {(unsigned char *)(uintptr_t)cert_pem, (unsigned)strlen(cert_pem)};
    gnutls_datum_t key = {(unsigned char *)(uintptr_t)key_pem, (unsigned)strlen(key_pem)};
    int r;

    /* GnuTLS's own words for these ("The requested data were not available.") name
     * neither file. */
    if (!strstr(cert_pem, "-----BEGIN CERTIFICATE-----")) {
        *ret_reason = "cert_file holds no PEM certificate";
        return -EINVAL;
    }
    if (!strstr(key_pem, "PRIVATE KEY-----")) {
        *ret_reason = "key_file holds no PEM private key";
        return -EINVAL;
    }
    r = tls_init();
    if (r < 0)
        return r;
    if (gnutls_certificate_allocate_credentials(&cred) < 0)
        return -ENOMEM;
    r = gnutls_certificate_set_x509_key_mem2(cred, &cert, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_certificate_free_credentials(cred);
    if (r == GNUTLS_E_MEMORY_ERROR)
        return -ENOMEM;
    if (r < 0) {
        *ret_reason = gnutls_strerror(r);
        return -EINVAL;
    }
    return 0;
}
