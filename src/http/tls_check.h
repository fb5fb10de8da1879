/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * TLS settings of the web configuration, checked with GnuTLS (the library libmicrohttpd
 * serves TLS with) when the file is loaded, so that a problem is reported with the file
 * and key that caused it rather than as a server that fails to start.
 */

/* TLS protocol versions as the web configuration names them (TLS10 ... TLS13). */
enum tls_version {
    TLS_VERSION_1_0 = 10,
    TLS_VERSION_1_1 = 11,
    TLS_VERSION_1_2 = 12,
    TLS_VERSION_1_3 = 13,
};

/* "TLS12" -> TLS_VERSION_1_2; -EINVAL for anything else. */
int tls_version_from_string(const char *s);

/* Key-exchange groups by their exporter-toolkit (Go) names. */
/* The post-quantum hybrids (X25519MLKEM768 from Go 1.24, SecP256r1MLKEM768 and
 * SecP384r1MLKEM1024 from Go 1.26, which exporter-toolkit accepts when built with it) are
 * offered only where GnuTLS has them (3.8.9 and later); elsewhere they are left out of the
 * groups offered. */
enum tls_curve {
    TLS_CURVE_P256,
    TLS_CURVE_P384,
    TLS_CURVE_P521,
    TLS_CURVE_X25519,
    TLS_CURVE_X25519_MLKEM768,
    TLS_CURVE_SECP256R1_MLKEM768,
    TLS_CURVE_SECP384R1_MLKEM1024,
    _TLS_CURVE_MAX
};

/* "CurveP256", "CurveP384", "CurveP521", "X25519", "X25519MLKEM768", "SecP256r1MLKEM768",
 * "SecP384r1MLKEM1024" -> enum tls_curve; -EINVAL otherwise. */
int tls_curve_from_string(const char *s);

/* cipher_suites: the names Go's crypto/tls accepts as secure (tls.CipherSuites()), which
 * are the ones exporter-toolkit accepts. */
enum tls_cipher {
    TLS_CIPHER_ECDHE_ECDSA_AES_128_GCM,
    TLS_CIPHER_ECDHE_ECDSA_AES_256_GCM,
    TLS_CIPHER_ECDHE_RSA_AES_128_GCM,
    TLS_CIPHER_ECDHE_RSA_AES_256_GCM,
    TLS_CIPHER_ECDHE_ECDSA_CHACHA20,
    TLS_CIPHER_ECDHE_RSA_CHACHA20,
    TLS_CIPHER_TLS13_AES_128_GCM,
    TLS_CIPHER_TLS13_AES_256_GCM,
    TLS_CIPHER_TLS13_CHACHA20,
    TLS_CIPHER_ECDHE_ECDSA_AES_128_CBC,
    TLS_CIPHER_ECDHE_ECDSA_AES_256_CBC,
    TLS_CIPHER_ECDHE_RSA_AES_128_CBC,
    TLS_CIPHER_ECDHE_RSA_AES_256_CBC,
    TLS_CIPHER_RSA_AES_128_CBC,
    TLS_CIPHER_RSA_AES_256_CBC,
    TLS_CIPHER_RSA_AES_128_GCM,
    TLS_CIPHER_RSA_AES_256_GCM,
    _TLS_CIPHER_MAX
};

/* "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" -> enum tls_cipher; -EINVAL otherwise. */
int tls_cipher_from_string(const char *s);
/* Whether the set (bits of enum tls_cipher) holds one of the two suites HTTP/2 requires
 * (RFC 7540 9.2.2; Go refuses to serve HTTP/2 without one): ECDHE with AES-128-GCM. */
bool tls_ciphers_allow_http2(uint32_t ciphers);

struct tls_settings {
    int min_version, max_version;          /* enum tls_version */
    uint32_t ciphers;                      /* bits of enum tls_cipher; 0: GnuTLS's NORMAL */
    enum tls_curve curves[_TLS_CURVE_MAX]; /* preference order; n_curves 0: GnuTLS's */
    unsigned n_curves;
    bool server_precedence; /* prefer_server_cipher_suites */
};

/*
 * The GnuTLS priority string for t: GnuTLS's NORMAL set with exactly the versions
 * min..max, the groups of `curves` in that order when given, the key exchanges, ciphers
 * and MACs of `ciphers` when given (GnuTLS combines them: any listed key exchange with any
 * listed cipher, where the version allows it), and the server's preference order when
 * server_precedence; checked by GnuTLS. Returns 0, -EINVAL (min > max, or
 * refused by GnuTLS, e.g. by a system policy), -EOPNOTSUPP (no GnuTLS), -ENOMEM. *ret
 * (malloc'd) is written only on success.
 */
int tls_priorities(const struct tls_settings *t, char **ret);

/*
 * Checks that the PEM certificate (chain) and key parse and belong together. Returns 0, or
 * -EINVAL with GnuTLS's reason in *ret_reason (static text), -EOPNOTSUPP, -ENOMEM.
 */
int tls_check_pair(const char *cert_pem, const char *key_pem, const char **ret_reason);

/*
 * Checks that pem holds at least one X.509 certificate (a client CA bundle). Returns the
 * number of certificates, or -EINVAL with the reason in *ret_reason (static text),
 * -EOPNOTSUPP, -ENOMEM.
 */
int tls_check_ca(const char *pem, const char **ret_reason);
