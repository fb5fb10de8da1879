/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "crypt_loader.h"
#include "fileio.h"
#include "macro.h"
#include "webconfig.h"

static char dir[256];

static int setup(void **state) {
    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    return 0;
}

static int teardown(void **state) {
    test_rm_rf(dir);
    return 0;
}

/* libcrypt as the daemon loads it. */
static const struct crypt_api *crypt_lib(void) {
    const struct crypt_api *api = NULL;
    const char *reason = NULL;

    if (crypt_api_get(&api, &reason) < 0)
        fail_msg("%s", reason);
    return api;
}

/* A bcrypt hash of password made here, with the cheapest cost so the tests stay fast. */
static void make_hash(const char *prefix, const char *password, char *out, size_t size) {
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    struct crypt_data *cd = calloc(1, sizeof(*cd));
    const char *h;

    assert_non_null(cd);
    assert_non_null(crypt_lib()->gensalt_rn(prefix, 4, NULL, 0, salt, sizeof(salt)));
    h = crypt_lib()->rn(password, salt, cd, sizeof(*cd));
    assert_non_null(h);
    assert_int_equal(strlen(h), 60);
    (void)snprintf(out, size, "%s", h);
    free(cd);
}

static const char *config_path(const char *name) {
    static char path[512];

    (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
    return path;
}

/* The test TLS material (tests/http/tls/NAME) as text; the caller frees it. */
static char *tls_file(const char *name) {
    char rel[64], path[1024];
    char *text;
    size_t len;

    (void)snprintf(rel, sizeof(rel), "tests/http/tls/%s", name);
    ASSERT_OK(read_virtual_file_at(AT_FDCWD, test_source_path(path, sizeof(path), rel), 65536,
                                   &text, &len));
    return text;
}

/* PEM text indented for a YAML block scalar (every line after the first gets 4 spaces);
 * kept in a static slot per call site pair, freed at exit by the OS. */
static const char *indent(const char *text) {
    static char bufs[2][8192];
    static int next;
    char *out = bufs[next++ % 2];
    size_t n = 0;

    for (const char *p = text; *p && n + 8 < sizeof(bufs[0]); p++) {
        out[n++] = *p;
        if (*p == '\n' && p[1])
            n += (size_t)snprintf(out + n, sizeof(bufs[0]) - n, "    ");
    }
    while (n > 0 && out[n - 1] == '\n')
        n--;
    out[n] = '\0';
    return out;
}

/* Copies tests/http/tls/NAME to the test directory as AS. */
static void put_tls_file(const char *name, const char *as) {
    _cleanup_(freep) char *text = tls_file(name);

    ASSERT_OK(test_write_file(dir, as, text));
}

/* Loads a config with the given text; returns the result and leaves the message in err. */
static int load_text(const char *text, char *err, size_t err_size, struct web_config **ret) {
    ASSERT_OK(test_write_file(dir, "web.yml", text));
    return web_config_load(config_path("web.yml"), ret, err, err_size);
}

static void test_full_config(void **state) {
    char alice[64], bob[64], text[1024], err[512];
    struct web_config *c = NULL;
    _cleanup_(freep) char *crt = tls_file("server.crt");
    _cleanup_(freep) char *key = tls_file("server.key");

    make_hash("$2b$", "wonderland", alice, sizeof(alice));
    make_hash("$2y$", "builder", bob, sizeof(bob));
    put_tls_file("server.crt", "tls/server.crt");
    put_tls_file("server.key", "tls/server.key");
    (void)snprintf(text, sizeof(text),
                   "# comment\n"
                   "tls_server_config:\n"
                   "  cert_file: tls/server.crt\n"
                   "  key_file: \"tls/server.key\"\n"
                   "basic_auth_users:\n"
                   "  alice: %s\n"
                   "  bob: '%s'\n",
                   alice, bob);
    ASSERT_OK(load_text(text, err, sizeof(err), &c));
    assert_string_equal(err, "");
    assert_string_equal(web_config_tls_cert(c), crt);
    assert_string_equal(web_config_tls_key(c), key);
    /* The default versions: TLS 1.2 and 1.3 only. */
    assert_string_equal(web_config_tls_priorities(c),
                        "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3:%SERVER_PRECEDENCE");
    assert_int_equal(web_config_n_users(c), 2);

    assert_int_equal(web_config_check_password(c, "alice", "wonderland"), 1);
    assert_int_equal(web_config_check_password(c, "alice", "wonderland"), 1); /* cached */
    assert_int_equal(web_config_check_password(c, "alice", "Wonderland"), 0);
    assert_int_equal(web_config_check_password(c, "alice", "wonderland2"), 0);
    assert_int_equal(web_config_check_password(c, "alice", ""), 0);
    assert_int_equal(web_config_check_password(c, "bob", "wonderland"), 0); /* other's */
    assert_int_equal(web_config_check_password(c, "bob", "builder"), 1);
    assert_int_equal(web_config_check_password(c, "carol", "builder"), 0);
    assert_int_equal(web_config_check_password(c, "", ""), 0);
    assert_int_equal(web_config_check_password(c, NULL, "x"), 0);
    /* After a cached success, the cache still refuses other passwords. */
    assert_int_equal(web_config_check_password(c, "bob", "builder "), 0);
    assert_int_equal(web_config_check_password(c, "bob", "builder"), 1);

    /* Reloaded: a user whose hash is the same keeps its accepted password without bcrypt;
     * one whose hash changed, and every remembered failure, start over. */
    {
        struct web_config *again = NULL;
        char carol[64], text2[2048];

        make_hash("$2y$", "builder", carol, sizeof(carol));
        (void)snprintf(text2, sizeof(text2),
                       "tls_server_config:\n  cert_file: tls/server.crt\n"
                       "  key_file: tls/server.key\nbasic_auth_users:\n  alice: %s\n  bob: %s\n",
                       alice, carol);
        ASSERT_OK(load_text(text2, err, sizeof(err), &again));
        assert_int_equal(web_config_check_remembered(again, "alice", "wonderland"), -ENOENT);
        web_config_keep_remembered(again, c);
        assert_int_equal(web_config_check_remembered(again, "alice", "wonderland"), 1);
        assert_int_equal(web_config_check_remembered(again, "bob", "builder"), -ENOENT);
        assert_int_equal(web_config_check_remembered(again, "alice", "Wonderland"), -ENOENT);
        assert_int_equal(web_config_check_password(again, "bob", "builder"), 1);
        web_config_free(again);
    }
    c = web_config_free(c);
    assert_null(c);
}

static void test_minimal_configs(void **state) {
    char hash[64], text[1024], err[256];
    struct web_config *c = NULL;

    /* Empty file: no TLS, no users. */
    ASSERT_OK(load_text("", err, sizeof(err), &c));
    assert_null(web_config_tls_cert(c));
    assert_int_equal(web_config_n_users(c), 0);
    assert_int_equal(web_config_check_password(c, "a", "b"), 0);
    c = web_config_free(c);
    /* Keys present but empty. */
    ASSERT_OK(load_text("tls_server_config:\nbasic_auth_users: ~\nrate_limit: NULL\n"
                        "http_server_config: Null\n",
                        err, sizeof(err), &c));
    assert_null(web_config_tls_key(c));
    c = web_config_free(c);
    /* Users only; an absolute certificate path. */
    make_hash("$2y$", "pw", hash, sizeof(hash));
    (void)snprintf(text, sizeof(text), "basic_auth_users:\n  u: %s\n", hash);
    ASSERT_OK(load_text(text, NULL, 0, &c));
    assert_int_equal(web_config_n_users(c), 1);
    assert_int_equal(web_config_check_password(c, "u", "pw"), 1);
    c = web_config_free(c);
    put_tls_file("server.crt", "abs.crt");
    put_tls_file("server.key", "abs.key");
    (void)snprintf(text, sizeof(text),
                   "tls_server_config:\n  cert_file: %s/abs.crt\n"
                   "  key_file: %s/abs.key\n",
                   dir, dir);
    ASSERT_OK(load_text(text, err, sizeof(err), &c));
    assert_non_null(strstr(web_config_tls_cert(c), "BEGIN CERTIFICATE"));
    c = web_config_free(c);
    /* TLS versions. */
    (void)snprintf(text, sizeof(text),
                   "tls_server_config:\n  cert_file: abs.crt\n  key_file: abs.key\n"
                   "  min_version: TLS13\n");
    ASSERT_OK(load_text(text, err, sizeof(err), &c));
    assert_string_equal(web_config_tls_priorities(c),
                        "NORMAL:-VERS-ALL:+VERS-TLS1.3:%SERVER_PRECEDENCE");
    c = web_config_free(c);
    (void)snprintf(text, sizeof(text),
                   "tls_server_config:\n  cert_file: abs.crt\n  key_file: abs.key\n"
                   "  min_version: TLS10\n  max_version: TLS12\n");
    ASSERT_OK(load_text(text, err, sizeof(err), &c));
    assert_string_equal(
        web_config_tls_priorities(c),
        "NORMAL:-VERS-ALL:+VERS-TLS1.0:+VERS-TLS1.1:+VERS-TLS1.2:%SERVER_PRECEDENCE");
    c = web_config_free(c);
    /* Curves in preference order; the client's preference. */
    (void)snprintf(text, sizeof(text),
                   "tls_server_config:\n  cert_file: abs.crt\n  key_file: abs.key\n"
                   "  curve_preferences: [X25519, CurveP384]\n"
                   "  prefer_server_cipher_suites: false\n");
    ASSERT_OK(load_text(text, err, sizeof(err), &c));
    assert_string_equal(web_config_tls_priorities(c), "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3"
                                                      ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP384R1");
    c = web_config_free(c);
    /* Inline PEM, security headers (a blank one stays unset), http2 accepted. */
    {
        _cleanup_(freep) char *crt = tls_file("server.crt"), *key = tls_file("server.key");
        _cleanup_(freep) char *inline_text = NULL;

        assert_true(
            asprintf(&inline_text,
                     "tls_server_config:\n  cert: |\n    %s\n  key: |\n    %s\n"
                     "http_server_config:\n  http2: false\n  headers:\n"
                     "    X-Frame-Options: sameorigin\n    X-Content-Type-Options: nosniff\n"
                     "    Strict-Transport-Security: max-age=31536000\n"
                     "    Content-Security-Policy: \"\"\n",
                     indent(crt), indent(key)) > 0);
        ASSERT_OK(load_text(inline_text, err, sizeof(err), &c));
        assert_string_equal(web_config_tls_cert(c), crt);
        assert_string_equal(web_config_header(c, WEB_HEADER_X_FRAME_OPTIONS), "sameorigin");
        assert_string_equal(web_config_header(c, WEB_HEADER_X_CONTENT_TYPE_OPTIONS), "nosniff");
        assert_string_equal(web_config_header(c, WEB_HEADER_STRICT_TRANSPORT_SECURITY),
                            "max-age=31536000");
        assert_null(web_config_header(c, WEB_HEADER_CONTENT_SECURITY_POLICY));
        assert_null(web_config_header(c, WEB_HEADER_X_XSS_PROTECTION));
        c = web_config_free(c);
    }
    assert_null(web_config_free(NULL));
}

/* Each bad config: -EINVAL and a message with the line and the words that explain it. */
static void check_bad(const char *text, const char *line, const char *words) {
    char err[512], want[64];
    struct web_config *c = NULL;

    ASSERT_ERRNO(load_text(text, err, sizeof(err), &c), EINVAL);
    assert_null(c);
    if (!strstr(err, words))
        fail_msg("message '%s' lacks '%s'", err, words);
    (void)snprintf(want, sizeof(want), "web.yml%s", line);
    if (!strstr(err, want))
        fail_msg("message '%s' lacks '%s'", err, want);
}

static void test_bad_configs(void **state) {
    char hash[64], text[512];

    make_hash("$2b$", "pw", hash, sizeof(hash));
    ASSERT_OK(test_write_file(dir, "c.pem", "C\n"));
    ASSERT_OK(test_write_file(dir, "k.pem", "K\n"));
    ASSERT_OK(test_write_file(dir, "empty.pem", ""));

    check_bad("basic_auth_users: {}\nfoo: 1\n", ":2:", "unknown key 'foo'");
    /* Keys found only on exporter-toolkit's unmerged branches: refused, as its released
     * code (yaml.UnmarshalStrict) refuses them. */
    check_bad("auth_excluded_paths:\n  - /metrics\n", ":1:", "unknown key 'auth_excluded_paths'");
    check_bad("bearer_auth_tokens:\n  - Token\n", ":1:", "unknown key 'bearer_auth_tokens'");
    check_bad("ip_socket_config:\n  ipv4_ttl: 2\n", ":1:", "unknown key 'ip_socket_config'");
    check_bad("tls_server_config:\n  client_allowed_san_regex: x\n",
              ":2:", "unknown key 'client_allowed_san_regex' in tls_server_config");
    check_bad("tls_server_config:\n  client_cert_allowed_cn: test\n",
              ":2:", "unknown key 'client_cert_allowed_cn' in tls_server_config");
    check_bad("tls_server_config:\n  cert_file: c.pem\n  key_fil: k.pem\n",
              ":3:", "unknown key 'key_fil' in tls_server_config");
    check_bad("tls_server_config:\n  client_auth_type: RequireAndVerifyClientCert\n",
              ":2:", "client certificates need TLS");
    check_bad("http_server_config:\n  http2: maybe\n",
              ":2:", "http_server_config.http2 must be true or false");
    check_bad("http_server_config:\n  rate: 1\n",
              ":2:", "unknown key 'rate' in http_server_config");
    check_bad("http_server_config:\n  headers:\n    Server: x\n",
              ":3:", "'Server' is not one of Content-Security-Policy");
    check_bad("http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
              ":3:", "X-Frame-Options: 'allow' is not deny or sameorigin");
    check_bad("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n",
              ":3:", "'sniff' is not nosniff");
    /* exporter-toolkit compares names and values exactly, and refuses a blank value where
     * it has a list of values. */
    check_bad("http_server_config:\n  headers:\n    x-frame-options: deny\n",
              ":3:", "'x-frame-options' is not one of Content-Security-Policy");
    check_bad("http_server_config:\n  headers:\n    X-Frame-Options: DENY\n",
              ":3:", "X-Frame-Options: 'DENY' is not deny or sameorigin");
    check_bad("http_server_config:\n  headers:\n    X-Frame-Options: \"\"\n",
              ":3:", "X-Frame-Options: '' is not deny or sameorigin");
    check_bad("http_server_config:\n  headers:\n    X-Content-Type-Options: \"\"\n",
              ":3:", "X-Content-Type-Options: '' is not nosniff");
    check_bad("http_server_config:\n  headers: [a]\n",
              ":2:", "headers must be a mapping of header: value");
    check_bad("tls_server_config:\n  cert_file: c.pem\n  cert: C\n  key_file: k.pem\n",
              ":3:", "cert given twice (or with cert_file)");
    check_bad("tls_server_config:\n  cert_file: nothere.pem\n  key_file: k.pem\n",
              ":2:", "nothere.pem': No such file or directory");
    check_bad("tls_server_config:\n  cert_file: c.pem\n  key_file: empty.pem\n",
              ":3:", "empty or not PEM");
    check_bad("tls_server_config:\n  cert_file: c.pem\n",
              ":2:", "needs both a certificate and a key");
    check_bad("tls_server_config:\n  cert_file: [a]\n  key_file: k.pem\n",
              ":2:", "cert_file must be a file name");
    check_bad("tls_server_config: yes\n", ":1:", "tls_server_config must be a mapping");
    put_tls_file("server.crt", "good.crt");
    put_tls_file("other.key", "other.key");
    check_bad("tls_server_config:\n  cert_file: good.crt\n  key_file: other.key\n", ":2:",
              "cert_file and key_file are not a usable pair: The certificate and the given key "
              "do not match");
    check_bad("tls_server_config:\n  cert_file: good.crt\n  key_file: k.pem\n",
              ":2:", "not a usable pair");
    check_bad("tls_server_config:\n  min_version: TLS14\n",
              ":2:", "tls_server_config.min_version: 'TLS14' is not TLS10, TLS11, TLS12 or TLS13");
    check_bad("tls_server_config:\n  max_version: TLS11\n  min_version: TLS13\n",
              ":3:", "min_version TLS13 is above max_version TLS11");
    check_bad("tls_server_config:\n  min_version: TLS12\n  min_version: TLS12\n",
              ":3:", "min_version given twice");
    check_bad("tls_server_config:\n  curve_preferences: [CurveP256, P-521]\n", ":2:",
              "curve_preferences: 'P-521' is not CurveP256, CurveP384, CurveP521, X25519, "
              "X25519MLKEM768, SecP256r1MLKEM768 or SecP384r1MLKEM1024");
    check_bad("tls_server_config:\n  curve_preferences: X25519\n",
              ":2:", "curve_preferences must be a list");
    check_bad("rate_limit:\n  interval: 1s\n  burst: -5\n",
              ":3:", "rate_limit.burst must be a whole number");
    /* A quoted boolean is a string to Go's YAML decoder, which it refuses there. */
    check_bad("tls_server_config:\n  prefer_server_cipher_suites: \"true\"\n",
              ":2:", "prefer_server_cipher_suites must be true or false");
    check_bad("basic_auth_users: [a, b]\n", ":1:", "must be a mapping of user: bcrypt-hash");
    check_bad("basic_auth_users:\n  alice: [unclosed\n", ":3:1:", "invalid YAML");
    check_bad("basic_auth_users:\n  alice: \"open\n", ":3:1:", "at line 2");
    check_bad("basic_auth_users:\n  alice: plaintext\n",
              ":2:", "basic_auth_users.alice: not a bcrypt hash");
    check_bad("basic_auth_users:\n  alice: "
              "$6$salt$abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV\n",
              ":2:", "not a bcrypt hash");
    /* bcrypt-shaped, but cost 99 is outside what libxcrypt computes. */
    check_bad("basic_auth_users:\n  alice: "
              "$2y$99$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\n",
              ":2:", "basic_auth_users.alice: bcrypt cost outside 04..31");
    check_bad("basic_auth_users:\n  alice: "
              "$2y$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ0123!\n",
              ":2:", "outside its alphabet");
    check_bad("- a\n- b\n", ":1:", "top level must be a mapping");
    check_bad("[1, 2]: x\n", ":1:", "keys must be plain names");
    (void)snprintf(text, sizeof(text), "basic_auth_users:\n  a: %s\n  a: %s\n", hash, hash);
    check_bad(text, ":3:", "user 'a' given twice");
    (void)snprintf(text, sizeof(text), "basic_auth_users:\n  \"a:b\": %s\n", hash);
    check_bad(text, ":2:", "contains ':'");
    check_bad("tls_server_config: {}\ntls_server_config: {}\n", ":2:", "given twice");
    check_bad("tls_server_config:\n  cert_file: c.pem\n  cert_file: c.pem\n  key_file: k.pem\n",
              ":3:", "cert_file given twice");
}

static double elapsed_ms(const struct timespec *t0) {
    struct timespec t1;

    (void)clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* A costly hash does not delay loading: only its shape is checked (cost 17 would take
 * several seconds to compute once, cost 31 days: loading it used to hang; the hashes are a
 * cost-4 one relabelled, valid in shape). */
static void test_costly_hash_loads_fast(void **state) {
    static const char *const costs[] = {"17", "18", "31"};
    char hash[64], text[256];

    make_hash("$2y$", "pw", hash, sizeof(hash));
    for (size_t i = 0; i < ARRAY_SIZE(costs); i++) {
        struct web_config *c = NULL;
        struct timespec t0;
        double ms;

        hash[4] = costs[i][0];
        hash[5] = costs[i][1];
        (void)snprintf(text, sizeof(text), "basic_auth_users:\n  u: %s\n", hash);
        (void)clock_gettime(CLOCK_MONOTONIC, &t0);
        ASSERT_OK(load_text(text, NULL, 0, &c));
        ms = elapsed_ms(&t0);
        if (ms > 200)
            fail_msg("loading a cost-%s hash took %.0f ms", costs[i], ms);
        assert_int_equal(web_config_n_users(c), 1);
        c = web_config_free(c);
    }
}

/* What Go's bcrypt accepts, accepted here: a hash whose salt carries padding bits other
 * than 0 (some older libraries wrote them), and a password of any length, of which bcrypt
 * reads 72 bytes (libxcrypt refuses 512 or more outright: that was a 500). */
static void test_bcrypt_as_go_reads_it(void **state) {
    static const char alphabet[] =
        "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    char hash[64], text[512], long_pw[700], long_name[300];
    struct web_config *c = NULL;
    size_t v;

    (void)state;
    make_hash("$2y$", "pw", hash, sizeof(hash));
    v = (size_t)(strchr(alphabet, hash[28]) - alphabet);
    hash[28] = alphabet[(v & 0x30) | 0x0f]; /* the same salt, other padding */
    (void)snprintf(text, sizeof(text), "basic_auth_users:\n  u: %s\n", hash);
    ASSERT_OK(load_text(text, NULL, 0, &c));
    assert_int_equal(web_config_check_password(c, "u", "pw"), 1);
    assert_int_equal(web_config_check_password(c, "u", "pW"), 0);
    c = web_config_free(c);

    memset(long_pw, 'k', sizeof(long_pw) - 1);
    long_pw[sizeof(long_pw) - 1] = '\0';
    make_hash("$2y$", long_pw + sizeof(long_pw) - 1 - 72, hash, sizeof(hash)); /* 72 k's */
    (void)snprintf(text, sizeof(text), "basic_auth_users:\n  u: %s\n", hash);
    ASSERT_OK(load_text(text, NULL, 0, &c));
    assert_int_equal(web_config_check_password(c, "u", long_pw), 1);
    long_pw[10] = 'x';
    assert_int_equal(web_config_check_password(c, "u", long_pw), 0);
    assert_int_equal(web_config_check_password(c, "nobody", long_pw), 0);
    memset(long_name, 'n', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    assert_int_equal(web_config_check_password(c, long_name, "pw"), 0);
    c = web_config_free(c);
}

/* Wrong passwords are remembered: the second identical attempt runs no bcrypt. */
static void test_failures_remembered(void **state) {
    char hash[64], salt[CRYPT_GENSALT_OUTPUT_SIZE], text[256];
    struct crypt_data *cd = calloc(1, sizeof(*cd));
    struct web_config *c = NULL;
    struct timespec t0;
    double first, second, again;

    assert_non_null(cd);
    assert_non_null(crypt_lib()->gensalt_rn("$2y$", 12, NULL, 0, salt, sizeof(salt)));
    (void)snprintf(hash, sizeof(hash), "%s", crypt_lib()->rn("right", salt, cd, sizeof(*cd)));
    free(cd);
    (void)snprintf(text, sizeof(text), "basic_auth_users:\n  u: %s\n", hash);
    ASSERT_OK(load_text(text, NULL, 0, &c));

    (void)clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(web_config_check_password(c, "u", "wrong"), 0);
    first = elapsed_ms(&t0);
    (void)clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(web_config_check_password(c, "u", "wrong"), 0);
    second = elapsed_ms(&t0);
    /* An unknown user's refusal is remembered too. */
    assert_int_equal(web_config_check_password(c, "nobody", "wrong"), 0);
    (void)clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(web_config_check_password(c, "nobody", "wrong"), 0);
    again = elapsed_ms(&t0);
    /* The right password still works after the wrong ones, and is remembered. */
    assert_int_equal(web_config_check_password(c, "u", "right"), 1);
    assert_int_equal(web_config_check_password(c, "u", "right"), 1);
    print_message("bcrypt cost 12: first wrong attempt %.1f ms, repeated %.2f ms\n", first, second);
    if (first < 20 || second > first / 10 || second > 20 || again > 20)
        fail_msg("a repeated wrong password took %.1f ms (the first %.1f ms)", second, first);
    c = web_config_free(c);
}

static void test_config_file_errors(void **state) {
    struct web_config *c = NULL;
    char err[256];

    ASSERT_ERRNO(web_config_load(config_path("missing.yml"), &c, err, sizeof(err)), ENOENT);
    assert_null(c);
    assert_non_null(strstr(err, "missing.yml: cannot read: No such file or directory"));
    /* A directory is not a config file. */
    ASSERT_OK(test_write_file(dir, "sub/x", "x"));
    assert_true(web_config_load(config_path("sub"), &c, NULL, 0) < 0);
    assert_null(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_full_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_minimal_configs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_configs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_file_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_costly_hash_loads_fast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failures_remembered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bcrypt_as_go_reads_it, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
