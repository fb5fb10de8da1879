/* SPDX-License-Identifier: MIT */
#pragma once

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

/*
 * The GnuTLS priority string allowing exactly the versions min..max (the rest of GnuTLS's
 * NORMAL set unchanged), checked by GnuTLS. Returns 0, -EINVAL (min > max, or refused by
 * GnuTLS, e.g. by a system policy), -EOPNOTSUPP (no GnuTLS), -ENOMEM. *ret (malloc'd) is
 * written only on success.
 */
int tls_priorities(int min, int max, char **ret);

/*
 * Checks that the PEM certificate (chain) and key parse and belong together. Returns 0, or
 * -EINVAL with GnuTLS's reason in *ret_reason (static text), -EOPNOTSUPP, -ENOMEM.
 */
int tls_check_pair(const char *cert_pem, const char *key_pem, const char **ret_reason);
