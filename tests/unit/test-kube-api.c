/* SPDX-License-Identifier: MIT */
/* The API client's error paths without a server: token problems, nothing listening, the
 * in-cluster URL, and a watcher that must report and stop promptly. (The working paths run
 * against a fake HTTPS API server in tests/kube/kube-e2e.sh.) */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "kube_api.h"
#include "kube_labels.h"
#include "testutil.h"

static void test_in_cluster_url(void **state) {
    char buf[128];

    (void)unsetenv("KUBERNETES_SERVICE_HOST");
    (void)unsetenv("KUBERNETES_SERVICE_PORT");
    ASSERT_ERRNO(kube_api_in_cluster_url(buf, sizeof(buf)), ENOENT);
    (void)setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    ASSERT_ERRNO(kube_api_in_cluster_url(buf, sizeof(buf)), ENOENT);
    (void)setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    ASSERT_OK(kube_api_in_cluster_url(buf, sizeof(buf)));
    assert_string_equal(buf, "https://10.96.0.1:443");
    (void)setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
    ASSERT_OK(kube_api_in_cluster_url(buf, sizeof(buf)));
    assert_string_equal(buf, "https://[fd00:10:96::1]:443");
    ASSERT_ERRNO(kube_api_in_cluster_url(buf, 10), ENAMETOOLONG);
    (void)setenv("KUBERNETES_SERVICE_PORT", "", 1);
    ASSERT_ERRNO(kube_api_in_cluster_url(buf, sizeof(buf)), ENOENT);
    (void)unsetenv("KUBERNETES_SERVICE_HOST");
    (void)unsetenv("KUBERNETES_SERVICE_PORT");
}

static void test_probe_token_errors(void **state) {
    char dir[256], path[512];
    struct kube_report rep;
    struct kube_api_options o = {.url = "http://127.0.0.1:1", .node_name = "node-a"};

    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    (void)snprintf(path, sizeof(path), "%s/token", dir);
    o.token_file = path;
    ASSERT_ERRNO(kube_api_probe(&o, &rep), ENOENT);
    assert_false(rep.ok);
    assert_int_equal(rep.failure, KUBE_FAIL_TOKEN);
    assert_int_equal(rep.err, -ENOENT);
    assert_string_equal(rep.detail, path);

    /* whitespace only, or a token with a line break inside: not a bearer token */
    ASSERT_OK(test_write_file(dir, "token", " \n\t\n"));
    ASSERT_ERRNO(kube_api_probe(&o, &rep), ENODATA);
    assert_int_equal(rep.failure, KUBE_FAIL_TOKEN);
    ASSERT_OK(test_write_file(dir, "token", "abc\ndef\n"));
    ASSERT_ERRNO(kube_api_probe(&o, &rep), ENODATA);
    test_rm_rf(dir);
}

static void test_probe_unreachable(void **state) {
    struct kube_report rep;
    struct kube_api_options o = {.url = "http://127.0.0.1:1", .node_name = "node-a"};

    ASSERT_ERRNO(kube_api_probe(&o, &rep), ECONNREFUSED);
    assert_false(rep.ok);
    assert_int_equal(rep.failure, KUBE_FAIL_CONNECT);
    assert_non_null(strstr(rep.detail, "127.0.0.1"));
    assert_string_equal(kube_failure_to_string(rep.failure), "connect");
    assert_string_equal(kube_failure_to_string(KUBE_FAIL_AUTH), "auth");
    assert_string_equal(kube_failure_to_string(_KUBE_FAIL_MAX), "unknown");

    /* a scheme libcurl may not use for this client */
    o.url = "file:///etc";
    ASSERT_ERRNO(kube_api_probe(&o, &rep), ECONNREFUSED);
    assert_int_equal(rep.failure, KUBE_FAIL_CONNECT);
}

struct reports {
    atomic_uint n;
    atomic_int last_failure;
};

static void on_report(const struct kube_report *rep, void *userdata) {
    struct reports *r = userdata;

    atomic_store(&r->last_failure, rep->ok ? -1 : (int)rep->failure);
    atomic_fetch_add(&r->n, 1);
}

/* Nothing listens: the watcher reports connect failures with backoff (10 ms, 20 ms, ...)
 * and has no table; it stops within a second when freed, even in a backoff sleep. */
static void test_watcher_backoff_and_stop(void **state) {
    struct reports reports = {0};
    struct kube_api_options o = {
        .url = "http://127.0.0.1:1",
        .node_name = "node-a",
        .backoff_min_ns = 10 * NSEC_PER_MSEC,
        .backoff_max_ns = 40 * NSEC_PER_MSEC,
        .report = on_report,
        .userdata = &reports,
    };
    struct kube_api *a = NULL;
    uint64_t start;

    ASSERT_OK(kube_api_start(&o, &a));
    start = clock_monotonic_ns();
    while (atomic_load(&reports.n) < 5 && clock_monotonic_ns() - start < 5 * NSEC_PER_SEC)
        (void)usleep(5000);
    assert_true(atomic_load(&reports.n) >= 5);
    assert_int_equal(atomic_load(&reports.last_failure), KUBE_FAIL_CONNECT);
    assert_null(kube_api_get_table(a));

    start = clock_monotonic_ns();
    assert_null(kube_api_free(a));
    assert_true(clock_monotonic_ns() - start < NSEC_PER_SEC);

    /* a long backoff is interrupted too */
    o.backoff_min_ns = o.backoff_max_ns = 60 * NSEC_PER_SEC;
    atomic_store(&reports.n, 0);
    ASSERT_OK(kube_api_start(&o, &a));
    while (atomic_load(&reports.n) < 1)
        (void)usleep(5000);
    start = clock_monotonic_ns();
    assert_null(kube_api_free(a));
    assert_true(clock_monotonic_ns() - start < NSEC_PER_SEC);
    assert_null(kube_api_free(NULL));

    o.url = NULL;
    ASSERT_ERRNO(kube_api_start(&o, &a), EINVAL);
}

/* A CA file named on purpose that cannot be read: the API is not asked (the system's CAs in
 * its place would let any server with a public certificate answer). The default one absent
 * (outside a pod): the system's CAs verify, and the watcher starts. */
static void test_ca_file_pinned(void **state) {
    struct kube_labels_options o = {.enabled = true,
                                    .api_url = "https://127.0.0.1:1",
                                    .token_file = "",
                                    .ca_file = "/nonexistent/ca.crt",
                                    .node_name = "node-a",
                                    .retention_ns = NSEC_PER_SEC};
    struct kube_labels *k = NULL;

    ASSERT_OK(kube_labels_new(&o, &k));
    assert_null(k);
    o.ca_file = KUBE_DEFAULT_CA_FILE;
    ASSERT_OK(kube_labels_new(&o, &k));
    assert_non_null(k);
    assert_null(kube_labels_free(k));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_cluster_url),    cmocka_unit_test(test_probe_token_errors),
        cmocka_unit_test(test_probe_unreachable), cmocka_unit_test(test_watcher_backoff_and_stop),
        cmocka_unit_test(test_ca_file_pinned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
