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
    [TLS_CURVE_X25519_MLKEM768] = "X25519MLKEM768",
    [TLS_CURVE_SECP256R1_MLKEM768] = "SecP256r1MLKEM768",
    [TLS_CURVE_SECP384R1_MLKEM1024] = "SecP384r1MLKEM1024",
};

/* GnuTLS's names of the same groups. */
static const char *const curve_groups[_TLS_CURVE_MAX] = {
    [TLS_CURVE_P256] = "GROUP-SECP256R1",
    [TLS_CURVE_P384] = "GROUP-SECP384R1",
    [TLS_CURVE_P521] = "GROUP-SECP521R1",
    [TLS_CURVE_X25519] = "GROUP-X25519",
    [TLS_CURVE_X25519_MLKEM768] = "GROUP-X25519-MLKEM768",
    [TLS_CURVE_SECP256R1_MLKEM768] = "GROUP-SECP256R1-MLKEM768",
    [TLS_CURVE_SECP384R1_MLKEM1024] = "GROUP-SECP384R1-MLKEM1024",
};

/* Whether this GnuTLS knows the group (a priority string naming it parses). */
static bool group_known(const char *group) {
    gnutls_priority_t p;
    char s[64];

    (void)snprintf(s, sizeof(s), "NORMAL:+%s", group);
    if (gnutls_priority_init(&p, s, NULL) < 0)
        return false;
    gnutls_priority_deinit(p);
    return true;
}

int tls_curve_from_string(const char *s) {
    for (int i = 0; i < _TLS_CURVE_MAX; i++)
        if (s && strcmp(s, curve_names[i]) == 0)
            return i;
    return -EINVAL;
}

/* Go's name, and the GnuTLS key exchange (NULL: TLS 1.3, none), cipher and MAC. */
static const struct {
    const char *name, *kx, *cipher, *mac;
} ciphers[_TLS_CIPHER_MAX] = {
    [TLS_CIPHER_ECDHE_ECDSA_AES_128_GCM] = {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
                                            "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
    [TLS_CIPHER_ECDHE_ECDSA_AES_256_GCM] = {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                                            "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
    [TLS_CIPHER_ECDHE_RSA_AES_128_GCM] = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA",
                                          "AES-128-GCM", "AEAD"},
    [TLS_CIPHER_ECDHE_RSA_AES_256_GCM] = {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA",
                                          "AES-256-GCM", "AEAD"},
    [TLS_CIPHER_ECDHE_ECDSA_CHACHA20] = {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                                         "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
    [TLS_CIPHER_ECDHE_RSA_CHACHA20] = {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA",
                                       "CHACHA20-POLY1305", "AEAD"},
    [TLS_CIPHER_TLS13_AES_128_GCM] = {"TLS_AES_128_GCM_SHA256", NULL, "AES-128-GCM", "AEAD"},
    [TLS_CIPHER_TLS13_AES_256_GCM] = {"TLS_AES_256_GCM_SHA384", NULL, "AES-256-GCM", "AEAD"},
    [TLS_CIPHER_TLS13_CHACHA20] = {"TLS_CHACHA20_POLY1305_SHA256", NULL, "CHACHA20-POLY1305",
                                   "AEAD"},
    [TLS_CIPHER_ECDHE_ECDSA_AES_128_CBC] = {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA",
                                            "AES-128-CBC", "SHA1"},
    [TLS_CIPHER_ECDHE_ECDSA_AES_256_CBC] = {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA",
                                            "AES-256-CBC", "SHA1"},
    [TLS_CIPHER_ECDHE_RSA_AES_128_CBC] = {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA",
                                          "AES-128-CBC", "SHA1"},
    [TLS_CIPHER_ECDHE_RSA_AES_256_CBC] = {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA",
                                          "AES-256-CBC", "SHA1"},
    [TLS_CIPHER_RSA_AES_128_CBC] = {"TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1"},
    [TLS_CIPHER_RSA_AES_256_CBC] = {"TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1"},
    [TLS_CIPHER_RSA_AES_128_GCM] = {"TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM",
                                    "AEAD"},
    [TLS_CIPHER_RSA_AES_256_GCM] = {"TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM",
                                    "AEAD"},
};

int tls_cipher_from_string(const char *s) {
    for (int i = 0; i < _TLS_CIPHER_MAX; i++)
        if (s && strcmp(s, ciphers[i].name) == 0)
            return i;
    return -EINVAL;
}

bool tls_ciphers_allow_http2(uint32_t set) {
    return set &
           ((1u << TLS_CIPHER_ECDHE_RSA_AES_128_GCM) | (1u << TLS_CIPHER_ECDHE_ECDSA_AES_128_GCM));
}

/* Appends ":+NAME" for each distinct part (kx, cipher or mac, by offset) of the set. */
static size_t add_parts(char *buf, size_t size, size_t n, uint32_t set, int part) {
    for (int i = 0; i < _TLS_CIPHER_MAX; i++) {
        const char *name = part == 0   ? ciphers[i].kx
                           : part == 1 ? ciphers[i].cipher
                                       : ciphers[i].mac;
        bool seen = false;

        if (!(set & (1u << i)) || !name)
            continue;
        for (int j = 0; j < i && !seen; j++) {
            const char *other = part == 0   ? ciphers[j].kx
                                : part == 1 ? ciphers[j].cipher
                                            : ciphers[j].mac;

            seen = (set & (1u << j)) && other && strcmp(other, name) == 0;
        }
        if (!seen && n < size)
            n += (size_t)snprintf(buf + n, size - n, ":+%s", name);
    }
    return n;
}

int tls_priorities(const struct tls_settings *t, char **ret) {
    gnutls_priority_t check;
    char buf[768];
    unsigned known = 0;
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
    for (unsigned i = 0; i < t->n_curves; i++) {
        if (!group_known(curve_groups[t->curves[i]]))
            continue; /* the ML-KEM hybrids before GnuTLS 3.8.9 */
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, ":+%s", curve_groups[t->curves[i]]);
        known++;
    }
    if (t->n_curves > 0 && known == 0)
        return -EINVAL; /* none of the groups asked for can be offered */
    if (t->ciphers) {
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, ":-KX-ALL:-CIPHER-ALL:-MAC-ALL");
        for (int part = 0; part < 3; part++)
            n = add_parts(buf, sizeof(buf), n, t->ciphers, part);
    }
    if (n >= sizeof(buf))
        return -EINVAL;
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

/* Credentials for one try at loading PEM text: 0, -ENOMEM, or tls_init()'s error. */
static int try_credentials(gnutls_certificate_credentials_t *ret) {
    int r = tls_init();

    if (r < 0)
        return r;
    return gnutls_certificate_allocate_credentials(ret) < 0 ? -ENOMEM : 0;
}

/* What a GnuTLS load returned: the same when >= 0, else -ENOMEM, or -EINVAL with GnuTLS's
 * reason. */
static int load_result(int r, const char **ret_reason) {
    if (r == GNUTLS_E_MEMORY_ERROR)
        return -ENOMEM;
    if (r < 0) {
        *ret_reason = gnutls_strerror(r);
        return -EINVAL;
    }
    return r;
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
    r = try_credentials(&cred);
    if (r < 0)
        return r;
    r = gnutls_certificate_set_x509_key_mem2(cred, &cert, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_certificate_free_credentials(cred);
    r = load_result(r, ret_reason);
    return r < 0 ? r : 0;
}

int tls_check_ca(const char *pem, const char **ret_reason) {
    gnutls_certificate_credentials_t cred;
    gnutls_datum_t d = {(unsigned char *)(uintptr_t)pem, (unsigned)strlen(pem)};
    int r;

    if (!strstr(pem, "-----BEGIN CERTIFICATE-----")) {
        *ret_reason = "holds no PEM certificate";
        return -EINVAL;
    }
    r = try_credentials(&cred);
    if (r < 0)
        return r;
    r = gnutls_certificate_set_x509_trust_mem(cred, &d, GNUTLS_X509_FMT_PEM);
    gnutls_certificate_free_credentials(cred);
    r = load_result(r, ret_reason);
    if (r == 0) {
        *ret_reason = "holds no certificate GnuTLS can read";
        return -EINVAL;
    }
    return r;
}
