/* SPDX-License-Identifier: MIT */
/* The exporter-toolkit keys beyond certificate, versions, curves and users: client
 * certificates (client_auth_type, client_ca_file, client_ca, client_allowed_sans),
 * cipher_suites and the HTTP/2 rule on them, and rate_limit. The accepted and refused
 * configurations are those of exporter-toolkit's own test files (web/testdata), written
 * again here: every one it accepts loads, every one it refuses is refused with the file,
 * line and key. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "fileio.h"
#include "macro.h"
#include "webconfig.h"

static char dir[256];

static int setup(void **state) {
    char src[1024], *text;
    size_t len;

    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    /* server.crt doubles as a client CA: any certificate makes a one-certificate bundle. */
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "server.key" : "server.crt";
        char rel[64];

        (void)snprintf(rel, sizeof(rel), "tests/http/tls/%s", name);
        ASSERT_OK(read_virtual_file_at(AT_FDCWD, test_source_path(src, sizeof(src), rel), 65536,
                                       &text, &len));
        ASSERT_OK(test_write_file(dir, name, text));
        free(text);
    }
    ASSERT_OK(test_write_file(dir, "not-a-ca.pem",
                              "-----BEGIN CERTIFICATE-----\nnope\n"
                              "-----END CERTIFICATE-----\n"));
    ASSERT_OK(test_write_file(dir, "plain.txt", "no certificate here\n"));
    return 0;
}

static int teardown(void **state) {
    test_rm_rf(dir);
    return 0;
}

static int load(const char *text, char *err, size_t size, struct web_config **ret) {
    char path[512];

    ASSERT_OK(test_write_file(dir, "web.yml", text));
    (void)snprintf(path, sizeof(path), "%s/web.yml", dir);
    return web_config_load(path, ret, err, size);
}

#define TLS "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"

static struct web_config *good(const char *text) {
    struct web_config *c = NULL;
    char err[512];
    int r = load(text, err, sizeof(err), &c);

    if (r < 0)
        fail_msg("refused: %s\n--- config:\n%s", err, text);
    return c;
}

static void bad(const char *text, const char *line, const char *words) {
    struct web_config *c = NULL;
    char err[512], want[32];

    ASSERT_ERRNO(load(text, err, sizeof(err), &c), EINVAL);
    assert_null(c);
    (void)snprintf(want, sizeof(want), "web.yml%s", line);
    if (!strstr(err, words) || !strstr(err, want))
        fail_msg("message '%s' lacks '%s' or '%s'", err, want, words);
}

/* exporter-toolkit's valid files with client certificates and cipher suites. */
static void test_accepted(void **state) {
    struct web_config *c;

    /* All of Go's secure suites, a client certificate verified when given, no CA: the
     * system's authorities are used, as Go does. */
    c = good(TLS "  client_auth_type: VerifyClientCertIfGiven\n  cipher_suites:\n"
                 "  - TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\n"
                 "  - TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\n"
                 "  - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
                 "  - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n"
                 "  - TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256\n"
                 "  - TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256\n"
                 "  - TLS_AES_128_GCM_SHA256\n  - TLS_AES_256_GCM_SHA384\n"
                 "  - TLS_CHACHA20_POLY1305_SHA256\n"
                 "  - TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA\n"
                 "  - TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA\n"
                 "  - TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA\n"
                 "  - TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA\n"
                 "  - TLS_RSA_WITH_AES_128_CBC_SHA\n  - TLS_RSA_WITH_AES_256_CBC_SHA\n"
                 "  - TLS_RSA_WITH_AES_128_GCM_SHA256\n  - TLS_RSA_WITH_AES_256_GCM_SHA384\n");
    assert_int_equal(web_config_client_auth(c), WEB_CLIENT_AUTH_VERIFY_IF_GIVEN);
    assert_non_null(web_config_client_trust(c));
    assert_non_null(strstr(web_config_tls_priorities(c), ":-KX-ALL:-CIPHER-ALL:-MAC-ALL:"
                                                         "+ECDHE-ECDSA:+ECDHE-RSA:+RSA:"));
    c = web_config_free(c);

    /* Two suites, TLS 1.2 only: exactly their parts. */
    c = good(TLS "  client_auth_type: VerifyClientCertIfGiven\n  cipher_suites:\n"
                 "  - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
                 "  - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n"
                 "  min_version: TLS12\n  max_version: TLS12\n");
    assert_string_equal(web_config_tls_priorities(c),
                        "NORMAL:-VERS-ALL:+VERS-TLS1.2:-KX-ALL:-CIPHER-ALL:-MAC-ALL:+ECDHE-RSA:"
                        "+AES-128-GCM:+AES-256-GCM:+AEAD:%SERVER_PRECEDENCE");
    c = web_config_free(c);

    /* A suite HTTP/2 cannot use is fine with http2 off, in any of the YAML 1.1 spellings
     * exporter-toolkit's decoder (go-yaml v2) reads as false (yes and On: true). */
    static const char *const off[] = {"false", "False", "FALSE", "no", "No", "off", "OFF", "n"};
    for (size_t i = 0; i < ARRAY_SIZE(off); i++) {
        char text[256];

        (void)snprintf(text, sizeof(text),
                       TLS "  cipher_suites: [TLS_RSA_WITH_AES_128_CBC_SHA]\n  max_version: "
                           "TLS12\n  prefer_server_cipher_suites: %s\n"
                           "http_server_config:\n  http2: %s\n",
                       i % 2 ? "yes" : "On", off[i]);
        c = good(text);
        assert_non_null(strstr(web_config_tls_priorities(c), "%SERVER_PRECEDENCE"));
        c = web_config_free(c);
    }

    /* A certificate required, not verified; the older name of the same. */
    c = good(TLS "  client_auth_type: RequireAnyClientCert\n");
    assert_int_equal(web_config_client_auth(c), WEB_CLIENT_AUTH_REQUIRE_ANY);
    assert_string_equal(web_config_client_trust(c), web_config_tls_cert(c));
    c = web_config_free(c);
    c = good(TLS "  client_auth_type: RequireClientCert\n");
    assert_int_equal(web_config_client_auth(c), WEB_CLIENT_AUTH_REQUIRE_ANY);
    c = web_config_free(c);

    /* Verified against a CA file (relative to the config), with allowed SANs. */
    c = good(TLS "  client_auth_type: RequireAndVerifyClientCert\n"
                 "  client_ca_file: server.crt\n"
                 "  client_allowed_sans: [one, test3, two]\n");
    assert_int_equal(web_config_client_auth(c), WEB_CLIENT_AUTH_REQUIRE_AND_VERIFY);
    assert_string_equal(web_config_client_trust(c), web_config_tls_cert(c));
    assert_int_equal(web_config_n_allowed_sans(c), 3);
    assert_true(web_config_san_allowed(c, "test3"));
    assert_false(web_config_san_allowed(c, "test"));
    assert_false(web_config_san_allowed(c, NULL));
    c = web_config_free(c);

    /* NoClientCert spelt out, RequestClientCert: no SANs needed. */
    c = good(TLS "  client_auth_type: NoClientCert\n");
    assert_null(web_config_client_trust(c));
    assert_true(web_config_san_allowed(c, "anything"));
    c = web_config_free(c);
    c = good(TLS "  client_auth_type: RequestClientCert\n  client_ca_file: server.crt\n");
    assert_int_equal(web_config_client_auth(c), WEB_CLIENT_AUTH_REQUEST);
    c = web_config_free(c);

    /* Every curve, the post-quantum hybrids last (Go 1.24's and Go 1.26's): offered where
     * GnuTLS has them, left out (the others still offered) where it does not. */
    c = good(TLS "  client_auth_type: VerifyClientCertIfGiven\n  curve_preferences:\n"
                 "    - CurveP256\n    - CurveP384\n    - CurveP521\n    - X25519\n"
                 "    - X25519MLKEM768\n    - SecP256r1MLKEM768\n    - SecP384r1MLKEM1024\n");
    assert_non_null(strstr(web_config_tls_priorities(c),
                           ":-GROUP-ALL:+GROUP-SECP256R1:+GROUP-SECP384R1:+GROUP-SECP521R1:"
                           "+GROUP-X25519"));
    c = web_config_free(c);

    /* Rate limits: Go durations, and an integer (nanoseconds, as Go's YAML decoder). */
    c = good("rate_limit:\n  interval: \"1s\"\n  burst: 0\n");
    c = web_config_free(c);
    c = good("rate_limit:\n  interval: 1m30s\n  burst: 10\n");
    c = web_config_free(c);
    c = good("rate_limit:\n  interval: 1000000\n");
    assert_null(web_config_free(c));
}

/* The same client CA inline (client_ca), and a configuration that differs from another
 * only in its client CA needs a new TLS server. */
static void test_inline_ca_and_reload(void **state) {
    _cleanup_(freep) char *crt = NULL, *text = NULL;
    struct web_config *a, *b;
    char path[512];
    size_t len;

    (void)snprintf(path, sizeof(path), "%s/server.crt", dir);
    ASSERT_OK(read_virtual_file_at(AT_FDCWD, path, 65536, &crt, &len));
    /* A YAML block scalar: each line indented by four spaces. */
    {
        char block[8192];
        size_t n = 0;

        for (const char *p = crt; *p && n + 8 < sizeof(block); p++) {
            if (p == crt || p[-1] == '\n')
                n += (size_t)snprintf(block + n, sizeof(block) - n, "    ");
            block[n++] = *p;
        }
        block[n] = '\0';
        assert_true(asprintf(&text,
                             TLS "  client_auth_type: RequireAndVerifyClientCert\n"
                                 "  client_ca: |\n%s",
                             block) > 0);
    }
    a = good(text);
    assert_string_equal(web_config_client_trust(a), crt);
    b = good(TLS);
    assert_false(web_config_same_tls(a, b));
    web_config_free(b);
    b = good(TLS "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: server.crt\n");
    assert_true(web_config_same_tls(a, b)); /* same CA text, same server */
    web_config_free(b);
    web_config_free(a);
}

/* exporter-toolkit's refused files, and the checks on the new keys. */
static void test_refused(void **state) {
    bad(TLS "  client_auth_type: Bogus\n", ":4:",
        "client_auth_type: 'Bogus' is not NoClientCert, RequestClientCert, "
        "RequireAnyClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert");
    /* A CA without a client_auth_type that asks for a certificate. */
    bad(TLS "  client_ca_file: server.crt\n",
        ":4:", "a client CA is given but client_auth_type is NoClientCert");
    bad(TLS "  client_ca_file: somefile\n", ":4:", "client_ca_file: cannot read");
    /* A CA file with no certificate in it. */
    bad(TLS "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: not-a-ca.pem\n",
        ":5:", "client_ca_file: ");
    bad(TLS "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: plain.txt\n",
        ":5:", "client_ca_file: holds no PEM certificate");
    bad(TLS "  client_auth_type: RequireAndVerifyClientCert\n  client_ca: nothing\n",
        ":5:", "client_ca: holds no PEM certificate");
    bad(TLS "  client_ca_file: server.crt\n  client_ca: x\n  client_auth_type: RequestClientCert\n",
        ":5:", "client_ca given twice (or with client_ca_file)");
    /* SANs only where a certificate is required. */
    bad(TLS "  client_auth_type: VerifyClientCertIfGiven\n  client_allowed_sans: [one]\n", ":5:",
        "client_allowed_sans needs client_auth_type RequireAnyClientCert or "
        "RequireAndVerifyClientCert");
    bad(TLS "  client_allowed_sans: [one]\n", ":4:", "client_allowed_sans needs");
    bad(TLS "  client_auth_type: RequireAnyClientCert\n  client_allowed_sans: one\n",
        ":5:", "client_allowed_sans must be a list");
    bad("tls_server_config:\n  client_auth_type: RequireAnyClientCert\n",
        ":2:", "client certificates need TLS");
    /* Cipher suites: invented, insecure (Go refuses them too), not a list. */
    bad(TLS "  cipher_suites: [TLS_RSA_WITH_MY_SECURE_CIPHER]\n",
        ":4:", "unknown cipher suite 'TLS_RSA_WITH_MY_SECURE_CIPHER'");
    bad(TLS "  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n",
        ":4:", "unknown cipher suite 'TLS_RSA_WITH_RC4_128_SHA'");
    bad(TLS "  cipher_suites: TLS_AES_128_GCM_SHA256\n", ":4:", "cipher_suites must be a list");
    /* HTTP/2 (on by default) needs ECDHE with AES-128-GCM in the list. */
    bad(TLS "  client_auth_type: VerifyClientCertIfGiven\n"
            "  cipher_suites:\n    - TLS_RSA_WITH_AES_128_CBC_SHA\n  max_version: TLS12\n",
        ":5:", "cipher_suites lacks the suite HTTP/2 requires");
    bad(TLS "  cipher_suites: [TLS_RSA_WITH_AES_128_CBC_SHA]\n"
            "http_server_config:\n  http2: true\n",
        ":4:", "set http_server_config.http2: false");
    /* TLS 1.3 only: its suites are not configured, and HTTP/2 has what it needs (Go). */
    web_config_free(good(TLS "  min_version: TLS13\n"
                             "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n"));
    bad(TLS "  cipher_suites: [TLS_RSA_WITH_AES_128_CBC_SHA]\n"
            "http_server_config:\n  http2: yes\n",
        ":4:", "set http_server_config.http2: false");
    bad(TLS "http_server_config:\n  http2: \"false\"\n",
        ":5:", "http_server_config.http2 must be true or false");
    /* Rate limits. */
    bad("rate_limit:\n  interval: fast\n", ":2:", "rate_limit.interval: 'fast' is not a duration");
    bad("rate_limit:\n  interval: -1s\n", ":2:", "rate_limit.interval: '-1s' is negative");
    bad("rate_limit:\n  interval: 1.5\n", ":2:", "is not a duration");
    bad("rate_limit:\n  burst: 1.5\n", ":2:", "rate_limit.burst must be a whole number");
    bad("rate_limit:\n  every: 1s\n", ":2:", "unknown key 'every' in rate_limit");
    bad("rate_limit: 5\n", ":1:", "rate_limit must be a mapping");
}

/* The bucket: burst at start, one more per interval, never above burst; burst 0 refuses
 * everything (Go's rate.Limiter with a zero burst). */
static void test_rate_bucket(void **state) {
    const uint64_t s = 1000000000ULL, t0 = 5 * s;
    struct web_config *c;

    c = good("rate_limit:\n  interval: 1s\n  burst: 2\n");
    assert_int_equal(web_config_rate_take(c, t0), 1);
    assert_int_equal(web_config_rate_take(c, t0), 1);
    assert_int_equal(web_config_rate_take(c, t0), 0);
    assert_int_equal(web_config_rate_take(c, t0 + s / 2), 0);
    assert_int_equal(web_config_rate_take(c, t0 + s), 1);
    assert_int_equal(web_config_rate_take(c, t0 + s), 0);
    /* A long pause fills the bucket to its burst, not beyond. */
    assert_int_equal(web_config_rate_take(c, t0 + 100 * s), 1);
    assert_int_equal(web_config_rate_take(c, t0 + 100 * s), 1);
    assert_int_equal(web_config_rate_take(c, t0 + 100 * s), 0);
    c = web_config_free(c);

    c = good("rate_limit:\n  interval: 1s\n  burst: 0\n");
    assert_int_equal(web_config_rate_take(c, t0), 0);
    assert_int_equal(web_config_rate_take(c, t0 + 10 * s), 0);
    c = web_config_free(c);

    c = good("basic_auth_users: {}\n"); /* no rate_limit: no limit */
    for (int i = 0; i < 100; i++)
        assert_int_equal(web_config_rate_take(c, t0), 1);
    c = web_config_free(c);
    assert_int_equal(web_config_rate_take(NULL, t0), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_inline_ca_and_reload),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_rate_bucket),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
