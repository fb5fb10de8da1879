/* SPDX-License-Identifier: MIT */
/* The pod JSON parsers on a recorded-shape PodList and watch events, and every way a
 * document can be unusable; libjansson through its loaded table, as the daemon has it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "jansson_loader.h"
#include "kube_pod.h"
#include "macro.h"
#include "testutil.h"

#include <fcntl.h>

static const struct jansson_api *js;

static int load_jansson(void **state) {
    const char *reason = NULL;

    if (jansson_api_get(&js, &reason) < 0) {
        print_error("%s\n", reason);
        return -1;
    }
    return 0;
}

static char *load_fixture(const char *name, size_t *ret_len) {
    char path[4096], rel[256];
    char *buf = NULL;

    (void)snprintf(rel, sizeof(rel), "tests/kube/%s", name);
    ASSERT_OK(read_virtual_file_at(AT_FDCWD, test_source_path(path, sizeof(path), rel), 1 << 20,
                                   &buf, ret_len));
    return buf;
}

static const struct kube_pod *find_pod(const struct kube_pod_list *l, const char *name) {
    for (size_t i = 0; i < l->n_pods; i++)
        if (strcmp(l->pods[i]->name, name) == 0)
            return l->pods[i];
    fail_msg("pod %s not in the list", name);
    abort(); /* fail_msg() does not return; this tells the compiler so */
}

static const char *container(const struct kube_pod *p, const char *id) {
    for (size_t i = 0; i < p->n_containers; i++)
        if (strcmp(p->containers[i].id, id) == 0)
            return p->containers[i].name;
    return NULL;
}

static void test_strip(void **state) {
    assert_string_equal(kube_strip_container_id("containerd://abc"), "abc");
    assert_string_equal(kube_strip_container_id("cri-o://0f"), "0f");
    assert_string_equal(kube_strip_container_id("docker://x1"), "x1");
    assert_null(kube_strip_container_id("containerd://"));
    assert_null(kube_strip_container_id("://abc"));
    assert_null(kube_strip_container_id("abc"));
    assert_null(kube_strip_container_id("Docker://abc"));
    assert_null(kube_strip_container_id("a b://abc"));
    assert_null(kube_strip_container_id(NULL));
}

static void test_pod_list(void **state) {
    struct kube_pod_list l;
    const struct kube_pod *p;
    size_t len;
    _cleanup_(freep) char *json = load_fixture("podlist.json", &len);

    ASSERT_OK(kube_parse_pod_list(js, json, len, &l));
    assert_string_equal(l.resource_version, "48417");
    assert_int_equal(l.n_pods, 5);
    assert_int_equal(l.n_skipped, 0);

    p = find_pod(&l, "infer-5c9f7d6b8-x2kq4");
    assert_string_equal(p->namespace_, "serving");
    assert_string_equal(p->uid, "2fc932ce-fdcc-454b-97bd-aadfdeb4c340");
    assert_null(p->config_hash);
    assert_int_equal(p->n_containers, 2); /* the app and its init container */
    assert_string_equal(
        container(p, "aaefb9d8feed2d453b543f6d928cede7a4dbefa6a0ae7c9b990dd234c56e93b9"), "server");
    assert_string_equal(
        container(p, "01fd96f7ad292b02a8317cde4ecb8c7ef3cc06ffdd113f13410e0837eb2b2a20"),
        "fetch-model");

    p = find_pod(&l, "trainer");
    assert_int_equal(p->n_containers, 2); /* current and the OOM-killed previous instance */
    assert_string_equal(
        container(p, "b17aa1374fd717d2823252554d99fc71b3de080d3414cf93ca3d01c33b4c142f"),
        "pytorch");
    assert_string_equal(
        container(p, "35b97177dada20362ab90d90ac63cd54e8a41cf87bea34f270631b6da17f4a93"),
        "pytorch");

    p = find_pod(&l, "batch-worker-0");
    assert_int_equal(p->n_containers, 2);
    assert_string_equal(
        container(p, "a09343ca97901516c25036e2b954421254f8c68b384b536064e8999f0c4ed18d"),
        "log-shipper");

    p = find_pod(&l, "etcd-node-a");
    assert_string_equal(p->config_hash, "9aac5b5c8815def09a2ef9e37b89da55");
    assert_string_equal(
        container(p, "fd9d0ea06257a9780827cbc7fd92e3812a54fca26d63e191b73610d5d48b9cbd"), "etcd");

    p = find_pod(&l, "pending-job-8dx2p");
    assert_int_equal(p->n_containers, 0); /* waiting: no container id yet */
    kube_pod_list_done(&l);
    assert_null(l.pods);
}

static void test_pod_list_edge(void **state) {
    struct kube_pod_list l;
    static const char *const skipped =
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":["
        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}},"              /* no uid */
        "{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\"}},"               /* no name */
        "{\"metadata\":{\"uid\":\"u\",\"name\":\"a\",\"namespace\":\"\"}}," /* empty ns */
        "{\"metadata\":{\"uid\":\"u\",\"name\":7,\"namespace\":\"n\"}},"    /* not a string */
        "42,"
        "{\"metadata\":{\"uid\":\"u2\",\"name\":\"b\",\"namespace\":\"n\"},"
        "\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"containerID\":\"bogus\"},"
        "{\"containerID\":\"containerd://ff\"},{\"name\":\"d\",\"containerID\":\"containerd://"
        "ee\"},"
        "{\"name\":\"d\",\"containerID\":\"containerd://ee\"}]}}]}";

    ASSERT_OK(kube_parse_pod_list(js, skipped, strlen(skipped), &l));
    assert_string_equal(l.resource_version, "7");
    assert_int_equal(l.n_pods, 1);
    assert_int_equal(l.n_skipped, 5);
    assert_string_equal(l.pods[0]->uid, "u2");
    /* bad prefix and nameless status dropped, duplicate id kept once */
    assert_int_equal(l.pods[0]->n_containers, 1);
    assert_string_equal(l.pods[0]->containers[0].id, "ee");
    assert_string_equal(l.pods[0]->containers[0].name, "d");
    kube_pod_list_done(&l);

    /* The phase: Succeeded and Failed are finished, anything else (or none) is not. */
    static const char phases[] =
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"8\"},\"items\":["
        "{\"metadata\":{\"uid\":\"1\",\"name\":\"a\",\"namespace\":\"n\"},"
        "\"status\":{\"phase\":\"Succeeded\"}},"
        "{\"metadata\":{\"uid\":\"2\",\"name\":\"b\",\"namespace\":\"n\"},"
        "\"status\":{\"phase\":\"Failed\"}},"
        "{\"metadata\":{\"uid\":\"3\",\"name\":\"c\",\"namespace\":\"n\"},"
        "\"status\":{\"phase\":\"Running\"}},"
        "{\"metadata\":{\"uid\":\"4\",\"name\":\"d\",\"namespace\":\"n\"}}]}";
    ASSERT_OK(kube_parse_pod_list(js, phases, strlen(phases), &l));
    assert_int_equal(l.n_pods, 4);
    assert_true(l.pods[0]->finished);
    assert_true(l.pods[1]->finished);
    assert_false(l.pods[2]->finished);
    assert_false(l.pods[3]->finished);
    kube_pod_list_done(&l);

    /* A NUL in a free-text field of one pod (valid JSON): the list parses, the pod is
     * named, and a name with a NUL is no name. */
    static const char nul[] =
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"9\"},\"items\":["
        "{\"metadata\":{\"uid\":\"1\",\"name\":\"a\",\"namespace\":\"n\","
        "\"annotations\":{\"note\":\"x\\u0000y\"}}},"
        "{\"metadata\":{\"uid\":\"2\",\"name\":\"b\\u0000c\",\"namespace\":\"n\"}}]}";
    ASSERT_OK(kube_parse_pod_list(js, nul, strlen(nul), &l));
    assert_int_equal(l.n_pods, 1);
    assert_int_equal(l.n_skipped, 1);
    assert_string_equal(l.pods[0]->name, "a");
    kube_pod_list_done(&l);

    /* An empty node: items null or absent. */
    static const char empty[] =
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":null}";
    ASSERT_OK(kube_parse_pod_list(js, empty, strlen(empty), &l));
    assert_int_equal(l.n_pods, 0);
    kube_pod_list_done(&l);
}

static void test_pod_list_errors(void **state) {
    static const char *const bad[] = {
        "",
        "{",
        "[]",
        "null",
        "{\"kind\":\"PodList\",\"items\":[]}",                                      /* no rv */
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":5},\"items\":[]}", /* rv type */
        "{\"kind\":\"Status\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}",
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":{}}",
        "{\"kind\":\"PodList\",\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"1\"}}",
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"1\"}} trailing",
    };
    struct kube_pod_list l = {.n_pods = 99};
    char long_rv[300];

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        ASSERT_ERRNO(kube_parse_pod_list(js, bad[i], strlen(bad[i]), &l), EBADMSG);
        assert_int_equal(l.n_pods, 99); /* untouched on failure */
    }
    (void)snprintf(long_rv, sizeof(long_rv), "{\"metadata\":{\"resourceVersion\":\"%0200d\"}}", 1);
    ASSERT_ERRNO(kube_parse_pod_list(js, long_rv, strlen(long_rv), &l), EBADMSG);
}

static void test_watch_events(void **state) {
    struct kube_event e;
    size_t len;
    _cleanup_(freep) char *pod = load_fixture("pod-trainer-v2.json", &len);
    _cleanup_(freep) char *line = NULL;

    assert_true(asprintf(&line, "{\"type\":\"ADDED\",\"object\":%s}", pod) > 0);
    /* the fixture has resourceVersion "0": fine for a parser */
    ASSERT_OK(kube_parse_watch_event(js, line, strlen(line), &e));
    assert_int_equal(e.type, KUBE_EVENT_ADDED);
    assert_string_equal(e.resource_version, "0");
    assert_string_equal(e.pod->uid, "7922aa99-d4aa-4885-a953-82976860b23a");
    assert_string_equal(e.pod->name, "trainer");
    assert_int_equal(e.pod->n_containers, 1);
    assert_string_equal(e.pod->containers[0].id,
                        "1c33afbc9e5aa6c69150d1af05254b562a4b17c313fc6153e3625cf456922bfe");
    kube_event_done(&e);
    assert_null(e.pod);
    free(line);
    line = NULL;

    assert_true(asprintf(&line, "{\"type\":\"DELETED\",\"object\":%s}", pod) > 0);
    ASSERT_OK(kube_parse_watch_event(js, line, strlen(line), &e));
    assert_int_equal(e.type, KUBE_EVENT_DELETED);
    kube_event_done(&e);

    static const char bookmark[] = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\","
                                   "\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
                                   "\"50123\",\"annotations\":{\"k8s.io/initial-events-end\":"
                                   "\"true\"}}}}";
    ASSERT_OK(kube_parse_watch_event(js, bookmark, strlen(bookmark), &e));
    assert_int_equal(e.type, KUBE_EVENT_BOOKMARK);
    assert_string_equal(e.resource_version, "50123");
    assert_null(e.pod);

    static const char gone[] =
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
        "\"status\":\"Failure\",\"message\":\"too old resource version: 48417 (50001)\","
        "\"reason\":\"Expired\",\"code\":410}}";
    ASSERT_OK(kube_parse_watch_event(js, gone, strlen(gone), &e));
    assert_int_equal(e.type, KUBE_EVENT_ERROR);
    assert_int_equal(e.error_code, 410);
    assert_string_equal(e.error_message, "too old resource version: 48417 (50001)");
}

static void test_watch_errors(void **state) {
    static const char *const bad[] = {
        "",
        "{\"type\":\"ADDED\"}",
        "{\"type\":\"RENAMED\",\"object\":{}}",
        "{\"type\":7,\"object\":{}}",
        "{\"object\":{}}",
        "{\"type\":\"ADDED\",\"object\":[]}",
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}", /* no uid */
        /* no resourceVersion */
        ("{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"uid\":\"u\",\"name\":\"a\","
         "\"namespace\":\"n\"}}}"),
        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}",
        "{\"type\":\"ERROR\",\"object\":{\"code\":\"410\"}}",
        "{\"type\":\"ERROR\",\"object\":{\"code\":99}}",
        "{\"type\":\"ERROR\",\"object\":{\"code\":600}}",
    };
    struct kube_event e = {.error_code = -1};

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        ASSERT_ERRNO(kube_parse_watch_event(js, bad[i], strlen(bad[i]), &e), EBADMSG);
        assert_int_equal(e.error_code, -1);
    }
}

/* Every prefix of a real event is rejected cleanly (no crash, no leak under ASan). */
static void test_truncations(void **state) {
    size_t len;
    _cleanup_(freep) char *json = load_fixture("podlist.json", &len);
    struct kube_pod_list l;

    for (size_t n = 0; n < len; n += 7) {
        int r = kube_parse_pod_list(js, json, n, &l);

        if (r >= 0)
            fail_msg("a %zu-byte prefix parsed", n);
        assert_int_equal(r, -EBADMSG);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip),         cmocka_unit_test(test_pod_list),
        cmocka_unit_test(test_pod_list_edge), cmocka_unit_test(test_pod_list_errors),
        cmocka_unit_test(test_watch_events),  cmocka_unit_test(test_watch_errors),
        cmocka_unit_test(test_truncations),
    };
    return cmocka_run_group_tests(tests, load_jansson, NULL);
}
