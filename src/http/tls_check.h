/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

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
enum tls_curve { TLS_CURVE_P256, TLS_CURVE_P384, TLS_CURVE_P521, TLS_CURVE_X25519, _TLS_CURVE_MAX };

/* "CurveP256", "CurveP384", "CurveP521", "X25519" -> enum tls_curve; -EINVAL otherwise. */
int tls_curve_from_string(const char *s);

struct tls_settings {
    int min_version, max_version;          /* enum tls_version */
    enum tls_curve curves[_TLS_CURVE_MAX]; /* preference order; n_curves 0: GnuTLS's */
    unsigned n_curves;
    bool server_precedence; /* prefer_server_cipher_suites */
};

/*
 * The GnuTLS priority string for t: GnuTLS's NORMAL set with exactly the versions
 * min..max, the groups of `curves` in that order when given, and the server's preference
 * order when server_precedence; checked by GnuTLS. Returns 0, -EINVAL (min > max, or
 * refused by GnuTLS, e.g. by a system policy), -EOPNOTSUPP (no GnuTLS), -ENOMEM. *ret
 * (malloc'd) is written only on success.
 */
int tls_priorities(const struct tls_settings *t, char **ret);

/*
 * Checks that the PEM certificate (chain) and key parse and belong together. Returns 0, or
 * -EINVAL with GnuTLS's reason in *ret_reason (static text), -EOPNOTSUPP, -ENOMEM.
 */
int tls_check_pair(const char *cert_pem, const char *key_pem, const char **ret_reason);
