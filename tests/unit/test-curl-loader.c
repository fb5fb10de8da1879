/* SPDX-License-Identifier: MIT */
/* libcurl loaded on demand: the table works when the library is there; a missing, broken or
 * wrong library gives -ENOENT/-ELIBBAD with the reason; and with JOULESTAT_CURL_LIBRARY
 * pointing at a missing file (the test hook, read once per process) the Kubernetes probe and
 * watcher report KUBE_FAIL_LIBRARY with the install hint, the watcher exactly once. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "curl_loader.h"
#include "kube_api.h"
#include "testutil.h"

#define MISSING_PATH "/nonexistent-joulestat-test/libcurl.so.4"

static void test_open_and_call_through_table(void **state) {
    struct curl_api *api = NULL;
    const char *reason = NULL;
    struct curl_slist *list;
    char *escaped;
    CURL *curl;
    long status = -1;

    ASSERT_OK(curl_api_open(NULL, &api, &reason));
    assert_non_null(api);
    assert_null(reason);
    assert_int_equal(api->global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
    curl = api->easy_init();
    assert_non_null(curl);
    escaped = api->easy_escape(curl, "node a/b", 0);
    assert_string_equal(escaped, "node%20a%2Fb");
    api->free_mem(escaped);
    /* the variadic entry points pass their arguments through */
    assert_int_equal(api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L), CURLE_OK);
    assert_int_equal(api->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https,http"), CURLE_OK);
    assert_int_equal(api->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "nosuchproto"),
                     CURLE_UNSUPPORTED_PROTOCOL);
    assert_int_equal(api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status), CURLE_OK);
    assert_int_equal(status, 0);
    /* nothing listens on port 1 */
    assert_int_equal(api->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http"), CURLE_OK);
    assert_int_equal(api->easy_setopt(curl, CURLOPT_URL, "http://127.0.0.1:1/"), CURLE_OK);
    assert_int_equal(api->easy_perform(curl), CURLE_COULDNT_CONNECT);
    assert_string_equal(api->easy_strerror(CURLE_COULDNT_CONNECT), "Couldn't connect to server");
    list = api->slist_append(NULL, "Accept: application/json");
    assert_non_null(list);
    assert_string_equal(list->data, "Accept: application/json");
    api->slist_free_all(list);
    api->easy_cleanup(curl);
    api->global_cleanup();
    assert_null(curl_api_free(api));
    assert_null(curl_api_free(NULL));
}

static void test_open_errors(void **state) {
    struct curl_api *sentinel = (struct curl_api *)&sentinel, *api = sentinel;
    const char *reason = NULL;
    char dir[256], path[512];

    /* not there, by path or by soname: the install hint */
    ASSERT_ERRNO(curl_api_open(MISSING_PATH, &api, &reason), ENOENT);
    assert_string_equal(reason, CURL_LIBRARY_MISSING);
    assert_ptr_equal(api, sentinel);
    reason = NULL;
    ASSERT_ERRNO(curl_api_open("libjoulestat-no-such-curl.so.4", &api, &reason), ENOENT);
    assert_string_equal(reason, CURL_LIBRARY_MISSING);

    /* a file that is not a shared library */
    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    ASSERT_OK(test_write_file(dir, "libcurl.so.4", "not an ELF file\n"));
    (void)snprintf(path, sizeof(path), "%s/libcurl.so.4", dir);
    ASSERT_ERRNO(curl_api_open(path, &api, &reason), ELIBBAD);
    assert_string_equal(reason, "the libcurl library exists but cannot be loaded");
    test_rm_rf(dir);

    /* a real library without curl's functions */
    ASSERT_ERRNO(curl_api_open("libm.so.6", &api, &reason), ELIBBAD);
    assert_string_equal(reason, "the libcurl library lacks a required function (too old?)");
    assert_ptr_equal(api, sentinel);
}

/* main() set JOULESTAT_CURL_LIBRARY to a missing file before the first curl_api_get(). */
static void test_get_missing_is_cached(void **state) {
    const struct curl_api *sentinel = (const struct curl_api *)&sentinel, *api = sentinel;
    const char *reason = NULL;

    for (int i = 0; i < 2; i++) {
        ASSERT_ERRNO(curl_api_get(&api, &reason), ENOENT);
        assert_string_equal(reason, "libcurl.so.4 not found: install libcurl4 (Debian) to get "
                                    "pod names from the Kubernetes API");
        assert_ptr_equal(api, sentinel);
        /* read once: a later change of the variable does not load anything */
        (void)setenv(CURL_LIBRARY_ENV, "", 1);
    }
    (void)setenv(CURL_LIBRARY_ENV, MISSING_PATH, 1);
}

static void test_probe_without_libcurl(void **state) {
    struct kube_api_options o = {.url = "http://127.0.0.1:1", .node_name = "node-a"};
    struct kube_report rep;

    memset(&rep, 0xaa, sizeof(rep));
    ASSERT_ERRNO(kube_api_probe(&o, &rep), ENOENT);
    assert_false(rep.ok);
    assert_int_equal(rep.failure, KUBE_FAIL_LIBRARY);
    assert_int_equal(rep.err, -ENOENT);
    assert_int_equal(rep.http_status, 0);
    assert_string_equal(rep.detail, CURL_LIBRARY_MISSING);
    assert_string_equal(kube_failure_to_string(rep.failure), "library");
}

struct reports {
    atomic_uint n, n_library;
    atomic_int err;
    char detail[256]; /* of the first report */
};

static void on_report(const struct kube_report *rep, void *userdata) {
    struct reports *r = userdata;

    if (atomic_fetch_add(&r->n, 1) == 0)
        memcpy(r->detail, rep->detail, sizeof(r->detail));
    if (!rep->ok && rep->failure == KUBE_FAIL_LIBRARY)
        atomic_fetch_add(&r->n_library, 1);
    atomic_store(&r->err, rep->err);
}

/* The watcher starts, reports once (no retries with backoff), serves no table, and stops
 * promptly. */
static void test_watcher_without_libcurl(void **state) {
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
    assert_int_equal(atomic_load(&reports.err), -ENOENT);
    assert_string_equal(reports.detail, CURL_LIBRARY_MISSING);
    assert_null(kube_api_get_table(a));

    start = clock_monotonic_ns();
    assert_null(kube_api_free(a));
    assert_true(clock_monotonic_ns() - start < NSEC_PER_SEC);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_and_call_through_table),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_get_missing_is_cached),
        cmocka_unit_test(test_probe_without_libcurl),
        cmocka_unit_test(test_watcher_without_libcurl),
    };

    /* Before any curl_api_get(): the process-wide load sees the missing library. */
    (void)setenv(CURL_LIBRARY_ENV, MISSING_PATH, 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
