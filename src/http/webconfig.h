/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The exporter-toolkit web configuration (--web.config.file), the subset joulestat
 * serves:
 *
 *   tls_server_config:
 *     cert_file: server.crt      # relative paths are relative to the config file
 *     key_file: server.key       # checked to parse and to match the certificate
 *     min_version: TLS12         # TLS10 ... TLS13; the default TLS12
 *     max_version: TLS13         # the default TLS13
 *     curve_preferences: [X25519, CurveP256]   # CurveP256/P384/P521, X25519, ML-KEM hybrids
 *     cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]  # Go's secure suite names
 *     prefer_server_cipher_suites: true        # the default
 *     client_auth_type: RequireAndVerifyClientCert  # or NoClientCert (default), ...
 *     client_ca_file: ca.crt     # or client_ca: with the PEM text
 *     client_allowed_sans: [scraper.example]   # needs RequireAny/RequireAndVerify
 *                                # (client certificates are checked in the handshake)
 *     # or cert: / key: with the PEM text itself
 *   http_server_config:
 *     headers:                   # Content-Security-Policy, X-Frame-Options (deny,
 *       X-Frame-Options: deny    # sameorigin), X-Content-Type-Options (nosniff),
 *                                # X-XSS-Protection, Strict-Transport-Security
 *     http2: false               # accepted; joulestat speaks HTTP/1.1 only
 *   rate_limit:                  # every request but /healthz: 429 over the limit
 *     interval: 1s               # one request more per interval (Go duration)
 *     burst: 10                  # at most this many at once
 *   basic_auth_users:
 *     alice: $2y$10$...           # bcrypt hashes ($2a$, $2b$, $2y$)
 *
 * Every key exporter-toolkit documents is served, with its defaults and checks
 * (docs/METRICS.md, "HTTP endpoints"); keys it does not know are refused.
 * Library code: no logging; errors come back as -errno plus a message for the caller.
 */

struct web_config;

/*
 * Loads and validates path: parses the YAML, reads the certificate and key into memory,
 * checks that every hash has bcrypt's shape and a cost libxcrypt computes (04..31), without
 * computing one (a costly hash never delays start-up). Returns 0, -ENOENT/-EACCES when path itself
 * cannot be read, -EINVAL for any problem in it (bad YAML, unknown or unsupported key,
 * missing or unreadable cert/key file, bad hash), -ENOMEM, or -ENOENT/-ELIBBAD when libyaml
 * (any file) or libcrypt (a file with users) cannot be loaded. On failure, err (if not NULL)
 * receives a message naming the file, line and key, or the library and its package. *ret is
 * written only on success.
 */
int web_config_load(const char *path, struct web_config **ret, char *err, size_t err_size);
/* web_config_load() on text already read; path names it in messages and, with
 * read_files, is where certificate and key paths are relative to. Without read_files any
 * file key is refused, and nothing but the text is read (the fuzz target). */
int web_config_parse(const char *path, const char *text, size_t size, bool read_files,
                     struct web_config **ret, char *err, size_t err_size);

/* A configuration is reference-counted (the server holds one while it uses it, so a reload
 * can replace it under running requests): web_config_ref() adds a reference and returns c;
 * web_config_free() drops one and frees on the last. Both accept NULL; free returns NULL. */
struct web_config *web_config_ref(struct web_config *c);
struct web_config *web_config_free(struct web_config *c);
void web_config_freep(struct web_config **p);

/* PEM text of the certificate (chain) and key, NUL-terminated; NULL without TLS. */
const char *web_config_tls_cert(const struct web_config *c);
const char *web_config_tls_key(const struct web_config *c);
/* The GnuTLS priority string for min_version..max_version (default TLS12..TLS13); NULL
 * without TLS. */
const char *web_config_tls_priorities(const struct web_config *c);
/* tls_server_config.client_auth_type, as exporter-toolkit (Go's crypto/tls) names them. */
enum web_client_auth {
    WEB_CLIENT_AUTH_NONE,            /* NoClientCert (the default) */
    WEB_CLIENT_AUTH_REQUEST,         /* RequestClientCert: asked for, not required, not verified */
    WEB_CLIENT_AUTH_REQUIRE_ANY,     /* RequireAnyClientCert: required, not verified */
    WEB_CLIENT_AUTH_VERIFY_IF_GIVEN, /* VerifyClientCertIfGiven */
    WEB_CLIENT_AUTH_REQUIRE_AND_VERIFY, /* RequireAndVerifyClientCert */
};
enum web_client_auth web_config_client_auth(const struct web_config *c);
/* The PEM authorities GnuTLS is given to ask for and verify client certificates (the
 * client CA, else for the verifying types the system's bundle); NULL when client_auth_type
 * asks for none. */
const char *web_config_client_trust(const struct web_config *c);
/* client_allowed_sans: whether a SAN of the client certificate (DNS name, e-mail, IP
 * address as text, URI) is one listed; true when no list is given. */
/* Whether a client certificate can verify at all: false for a verifying client_auth_type
 * with no client CA where the system has no CA bundle (then none does). */
bool web_config_client_verifiable(const struct web_config *c);
/* Whether client_ca_file or client_ca was given. */
bool web_config_client_ca_given(const struct web_config *c);
bool web_config_san_allowed(const struct web_config *c, const char *san);
size_t web_config_n_allowed_sans(const struct web_config *c);
/* rate_limit: takes one request's token at now_ns (a bucket of `burst` tokens, one more
 * every `interval`, full at start, as Go's rate.Limiter). 1 allowed, 0 over the limit (429);
 * always 1 without a rate_limit. Thread-safe. */
int web_config_rate_take(struct web_config *c, uint64_t now_ns);
/* Whether both have the same TLS material and versions (both NULL: no TLS, equal). */
bool web_config_same_tls(const struct web_config *a, const struct web_config *b);
/* http_server_config.headers: added to every response when set. */
enum web_header {
    WEB_HEADER_CONTENT_SECURITY_POLICY,
    WEB_HEADER_X_FRAME_OPTIONS,
    WEB_HEADER_X_CONTENT_TYPE_OPTIONS,
    WEB_HEADER_X_XSS_PROTECTION,
    WEB_HEADER_STRICT_TRANSPORT_SECURITY,
    WEB_HEADERS
};
extern const char *const web_header_names[WEB_HEADERS];
/* The header's value, or NULL when not set. */
const char *web_config_header(const struct web_config *c, enum web_header h);
/* Number of basic-auth users; 0 means no authentication. */
size_t web_config_n_users(const struct web_config *c);

/* bcrypt checks that may run at once; the server's other workers stay free for scrapes
 * whose credentials are remembered, and for /healthz. */
#define WEB_AUTH_MAX_CHECKS 2

/*
 * Checks a user/password pair: 1 accepted, 0 refused (unknown user or wrong password,
 * indistinguishable by timing: an unknown user still costs one bcrypt), -EBUSY when the
 * answer is not remembered and WEB_AUTH_MAX_CHECKS bcrypt checks are already running (try
 * again later), -ENOMEM. Accepted and refused pairs are remembered (as salted tokens, see
 * web_auth.c) for the life of this configuration, so a repeated pair, right or wrong, does
 * not run bcrypt again. Thread-safe.
 */
int web_config_check_password(struct web_config *c, const char *user, const char *password);
/* The cheap half of it, which never runs bcrypt: 1 or 0 when the pair's answer is
 * remembered (or there are no users: 0), -ENOENT when only web_config_check_password() can
 * tell, -ENOMEM. */
int web_config_check_remembered(struct web_config *c, const char *user, const char *password);
/* c, loaded to replace old and not yet in use by any other thread (its salt is read
 * without the lock): takes old's salt and each accepted token of a user whose name and hash
 * are the same in both, so that a reload does not send the scraper back to bcrypt.
 * Remembered failures are not taken. */
void web_config_keep_remembered(struct web_config *c, struct web_config *old);
