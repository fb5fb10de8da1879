/* SPDX-License-Identifier: MIT */
/* The optional libraries missing: this file is built three times with the loaders compiled
 * to look for sonames that do not exist (tests/libs.cmake). Without libseccomp `serve`'s
 * system-call filter is not installed, with a message naming its package. Without libyaml
 * a web configuration does not load, with a message naming the library and its package.
 * Without libcrypt a configuration without users still loads (the library is not asked
 * for), one with users does not. Without libjansson the Kubernetes probe and watcher
 * report the library once and the watcher serves no table. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "clock.h"
#include "crypt_loader.h"
#include "jansson_loader.h"
#include "kube_api.h"
#include "macro.h"
#include "syscall_filter.h"
#include "testutil.h"
#include "webconfig.h"
#include "yaml_loader.h"

/* A user with a bcrypt-shaped hash: only its shape is checked at load. */
#define USERS                                                                                      \
    "basic_auth_users:\n  prom: $2y$04$abcdefghijklmnopqrstuu5Ym6bGTNr8jKYXd3BZmrkPDU5SqE1em\n"
#define NO_USERS "http_server_config:\n  http2: false\n"

#ifndef TEST_MISSING_SECCOMP
static int parse(const char *text, struct web_config **ret, char *err, size_t size) {
    return web_config_parse("web.yml", text, strlen(text), false, ret, err, size);
}
#endif

#if defined(TEST_MISSING_SECCOMP)

/* serve's filter without libseccomp: -ENOENT, which serve reports with this text, and
 * nothing installed (the process goes on unfiltered). */
static void test_filter_without_libseccomp(void **state) {
    if (!syscall_filter_supported())
        skip(); /* this build has no filter (ASan) */
    ASSERT_ERRNO(syscall_filter_install(false), ENOENT);
    assert_int_equal(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 0);
    assert_int_equal(syscall_filter_refusals(), 0);
    assert_non_null(strstr(SECCOMP_LIBRARY_MISSING, "install libseccomp2 (Debian)"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_without_libseccomp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#elif defined(TEST_MISSING_YAML)

/* Any file, users or not: the error names libyaml, every time. */
static void test_web_config_without_libyaml(void **state) {
    const char *texts[] = {NO_USERS, USERS, NO_USERS};
    char err[256];

    for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
        struct web_config *sentinel = (struct web_config *)&sentinel, *c = sentinel;

        ASSERT_ERRNO(parse(texts[i], &c, err, sizeof(err)), ENOENT);
        assert_string_equal(err, "web.yml: " YAML_LIBRARY_MISSING);
        assert_ptr_equal(c, sentinel);
    }
    assert_non_null(strstr(YAML_LIBRARY_MISSING, "install libyaml-0-2 (Debian)"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_web_config_without_libyaml),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void test_web_config_without_libcrypt(void **state) {
    struct web_config *c = NULL, *sentinel = (struct web_config *)&sentinel;
    char err[256];

    /* libyaml is there; libcrypt is not asked for */
    ASSERT_OK(parse(NO_USERS, &c, err, sizeof(err)));
    assert_int_equal(web_config_n_users(c), 0);
    assert_int_equal(web_config_check_password(c, "prom", "secret"), 0);
    web_config_free(c);

    for (int i = 0; i < 2; i++) {
        c = sentinel;
        ASSERT_ERRNO(parse(USERS, &c, err, sizeof(err)), ENOENT);
        assert_string_equal(err, "web.yml: " CRYPT_LIBRARY_MISSING);
        assert_ptr_equal(c, sentinel);
    }
    assert_non_null(strstr(CRYPT_LIBRARY_MISSING, "install libcrypt1 (Debian)"));
}

static void test_probe_without_libjansson(void **state) {
    struct kube_api_options o = {.url = "http://127.0.0.1:1", .node_name = "node-a"};
    struct kube_report rep;

    memset(&rep, 0xaa, sizeof(rep));
    ASSERT_ERRNO(kube_api_probe(&o, &rep), ENOENT);
    assert_false(rep.ok);
    assert_int_equal(rep.failure, KUBE_FAIL_LIBRARY);
    assert_int_equal(rep.err, -ENOENT);
    assert_string_equal(rep.detail, JANSSON_LIBRARY_MISSING);
    assert_non_null(strstr(JANSSON_LIBRARY_MISSING, "install libjansson4 (Debian)"));
}

struct reports {
    atomic_uint n, n_library;
    char detail[256]; /* of the first report */
};

static void on_report(const struct kube_report *rep, void *userdata) {
    struct reports *r = userdata;

    if (atomic_fetch_add(&r->n, 1) == 0)
        memcpy(r->detail, rep->detail, sizeof(r->detail));
    if (!rep->ok && rep->failure == KUBE_FAIL_LIBRARY)
        atomic_fetch_add(&r->n_library, 1);
}

/* One report, no retries, no table; the watcher stops promptly. */
static void test_watcher_without_libjansson(void **state) {
    struct reports reports = {0};
    struct kube_api_options o = {
        .url = "http://127.0.0.1:1",
        .node_name = "node-a",
        .backoff_min_ns = NSEC_PER_MSEC,
        .backoff_max_ns = 2 * NSEC_PER_MSEC,
        .report = on_report,
        .userdata = &reports,
    };
    struct kube_api *a = NULL;
    uint64_t start;

    ASSERT_OK(kube_api_start(&o, &a));
    start = clock_monotonic_ns();
    while (atomic_load(&reports.n) < 1 && clock_monotonic_ns() - start < 5 * NSEC_PER_SEC)
        (void)usleep(2000);
    /* with a 1 ms backoff, retries would show up as many more reports in 200 ms */
    (void)usleep(200000);
    assert_int_equal(atomic_load(&reports.n), 1);
    assert_int_equal(atomic_load(&reports.n_library), 1);
    assert_string_equal(reports.detail, JANSSON_LIBRARY_MISSING);
    assert_null(kube_api_get_table(a));
    start = clock_monotonic_ns();
    assert_null(kube_api_free(a));
    assert_true(clock_monotonic_ns() - start < NSEC_PER_SEC);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_web_config_without_libcrypt),
        cmocka_unit_test(test_probe_without_libjansson),
        cmocka_unit_test(test_watcher_without_libjansson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
