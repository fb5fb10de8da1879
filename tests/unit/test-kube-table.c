/* SPDX-License-Identifier: MIT */
/* The immutable pod table (lookups, collisions, preference between same-named pods) and
 * the watcher's model (LIST replace, upsert, delete, retention, restarted containers). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kube_labels.h"
#include "kube_model.h"
#include "kube_table.h"
#include "ledger.h"
#include "macro.h"
#include "testutil.h"

/* A pod "ns/name" with uid and containers given as "id=name" pairs. */
static struct kube_pod *make_pod(const char *ns, const char *name, const char *uid,
                                 const char *hash, size_t n, const char *const *containers) {
    struct kube_pod *p = calloc(1, sizeof(*p));

    assert_non_null(p);
    p->uid = strdup(uid);
    p->name = strdup(name);
    p->namespace_ = strdup(ns);
    p->config_hash = hash ? strdup(hash) : NULL;
    p->containers = calloc(MAX(n, 1), sizeof(*p->containers));
    assert_non_null(p->containers);
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(containers[i], '=');

        p->containers[i].id = strndup(containers[i], (size_t)(eq - containers[i]));
        p->containers[i].name = strdup(eq + 1);
    }
    p->n_containers = n;
    return p;
}

static void assert_pod(const struct kube_table *t, const char *uid, const char *ns,
                       const char *name, bool deleted) {
    const struct kube_pod_info *p;

    ASSERT_OK(kube_table_pod_by_uid(t, uid, &p));
    assert_string_equal(p->namespace_, ns);
    assert_string_equal(p->name, name);
    assert_int_equal(p->deleted, deleted);
}

static const char *container_name(const struct kube_table *t, const char *id) {
    const char *name;

    if (kube_table_container_by_id(t, id, &name, NULL) < 0)
        return NULL;
    return name;
}

static void test_table_lookups(void **state) {
    static const char *const c1[] = {"aaaa=server", "bbbb=fetch"};
    static const char *const c2[] = {"cccc=etcd"};
    struct kube_pod *pods[3] = {
        make_pod("serving", "infer", "u-1", NULL, 2, c1),
        make_pod("kube-system", "etcd-node-a", "u-2", "9aac5b5c8815def09a2ef9e37b89da55", 1, c2),
        make_pod("ml", "trainer", "u-3", NULL, 0, NULL),
    };
    const struct kube_pod_info *p;
    struct kube_table *t;
    const char *uid, *name;

    pods[2]->deleted_ns = 5;
    ASSERT_OK(kube_table_build((const struct kube_pod *const *)pods, 3, 42, &t));
    for (size_t i = 0; i < 3; i++)
        kube_pod_free(pods[i]); /* the table owns copies */

    assert_int_equal(kube_table_generation(t), 42);
    assert_int_equal(kube_table_n_pods(t, true), 3);
    assert_int_equal(kube_table_n_pods(t, false), 2);
    assert_pod(t, "u-1", "serving", "infer", false);
    assert_pod(t, "u-3", "ml", "trainer", true);
    /* a static pod is found by the kubelet's config hash that its cgroup path carries */
    assert_pod(t, "9aac5b5c8815def09a2ef9e37b89da55", "kube-system", "etcd-node-a", false);
    ASSERT_ERRNO(kube_table_pod_by_uid(t, "u-4", &p), ENOENT);
    ASSERT_ERRNO(kube_table_pod_by_uid(t, "", &p), ENOENT);

    assert_string_equal(container_name(t, "aaaa"), "server");
    assert_string_equal(container_name(t, "bbbb"), "fetch");
    ASSERT_OK(kube_table_container_by_id(t, "cccc", &name, &p));
    assert_string_equal(name, "etcd");
    assert_string_equal(p->uid, "u-2");
    assert_null(container_name(t, "dddd"));

    ASSERT_OK(kube_table_uid_by_name(t, "ml", "trainer", &uid));
    assert_string_equal(uid, "u-3");
    /* a static pod by its config hash, as its processes are booked */
    ASSERT_OK(kube_table_uid_by_name(t, "kube-system", "etcd-node-a", &uid));
    assert_string_equal(uid, "9aac5b5c8815def09a2ef9e37b89da55");
    ASSERT_ERRNO(kube_table_uid_by_name(t, "ml", "infer", &uid), ENOENT);
    ASSERT_ERRNO(kube_table_uid_by_name(t, "serving/infer", "", &uid), ENOENT);
    /* a pod that has finished: known, but holding nothing */
    {
        struct kube_pod *done = make_pod("batch", "job-x", "u-9", NULL, 0, NULL);
        struct kube_table *t2;

        done->finished = true;
        ASSERT_OK(kube_table_build((const struct kube_pod *const *)&done, 1, 43, &t2));
        kube_pod_free(done);
        ASSERT_ERRNO(kube_table_uid_by_name(t2, "batch", "job-x", &uid), ESRCH);
        assert_null(kube_table_unref(t2));
    }

    assert_ptr_equal(kube_table_ref(t), t);
    assert_null(kube_table_unref(t));
    assert_pod(t, "u-1", "serving", "infer", false); /* still referenced once */
    assert_null(kube_table_unref(t));
    assert_null(kube_table_unref(NULL));
}

static void test_table_same_name(void **state) {
    /* the same pod name three times: two deleted generations and the live one */
    struct kube_pod *pods[3] = {
        make_pod("ml", "trainer", "old-1", NULL, 0, NULL),
        make_pod("ml", "trainer", "live", NULL, 0, NULL),
        make_pod("ml", "trainer", "old-2", NULL, 0, NULL),
    };
    struct kube_table *t;
    const char *uid;

    pods[0]->deleted_ns = 100;
    pods[2]->deleted_ns = 200;
    for (unsigned order = 0; order < 3; order++) {
        /* rotate the input so the winner does not depend on order */
        const struct kube_pod *in[3] = {pods[order % 3], pods[(order + 1) % 3],
                                        pods[(order + 2) % 3]};

        ASSERT_OK(kube_table_build(in, 3, 1, &t));
        ASSERT_OK(kube_table_uid_by_name(t, "ml", "trainer", &uid));
        assert_string_equal(uid, "live");
        (void)kube_table_unref(t);
    }
    pods[1]->deleted_ns = 150;
    for (unsigned order = 0; order < 3; order++) {
        const struct kube_pod *in[3] = {pods[order % 3], pods[(order + 1) % 3],
                                        pods[(order + 2) % 3]};

        ASSERT_OK(kube_table_build(in, 3, 1, &t));
        ASSERT_OK(kube_table_uid_by_name(t, "ml", "trainer", &uid));
        assert_string_equal(uid, "old-2"); /* the most recently deleted */
        (void)kube_table_unref(t);
    }
    for (size_t i = 0; i < 3; i++)
        kube_pod_free(pods[i]);
}

/* Many pods: every one found by each key, nothing found that was not put in. */
static void test_table_many(void **state) {
    enum { N = 2000 };
    struct kube_pod **pods = calloc(N, sizeof(*pods));
    struct kube_table *t;
    char uid[64], name[64], cid[80], cspec[128];

    assert_non_null(pods);
    for (unsigned i = 0; i < N; i++) {
        const char *c[1] = {cspec};

        (void)snprintf(uid, sizeof(uid), "%08x-0000-4000-8000-%012u", i * 2654435761u, i);
        (void)snprintf(name, sizeof(name), "pod-%u", i);
        (void)snprintf(cspec, sizeof(cspec), "%064u=c%u", i, i);
        pods[i] = make_pod(i % 2 ? "odd" : "even", name, uid, NULL, 1, c);
    }
    ASSERT_OK(kube_table_build((const struct kube_pod *const *)pods, N, 7, &t));
    for (unsigned i = 0; i < N; i++) {
        const char *u;

        (void)snprintf(name, sizeof(name), "pod-%u", i);
        (void)snprintf(cid, sizeof(cid), "%064u", i);
        (void)snprintf(cspec, sizeof(cspec), "c%u", i);
        assert_pod(t, pods[i]->uid, i % 2 ? "odd" : "even", name, false);
        assert_string_equal(container_name(t, cid), cspec);
        ASSERT_OK(kube_table_uid_by_name(t, i % 2 ? "odd" : "even", name, &u));
        assert_string_equal(u, pods[i]->uid);
        ASSERT_ERRNO(kube_table_uid_by_name(t, i % 2 ? "even" : "odd", name, &u), ENOENT);
    }
    (void)kube_table_unref(t);
    for (unsigned i = 0; i < N; i++)
        kube_pod_free(pods[i]);
    free(pods);
}

static void test_table_empty(void **state) {
    struct kube_table *t;
    const struct kube_pod_info *p;
    const char *uid;

    ASSERT_OK(kube_table_build(NULL, 0, 0, &t));
    assert_int_equal(kube_table_n_pods(t, true), 0);
    ASSERT_ERRNO(kube_table_pod_by_uid(t, "x", &p), ENOENT);
    ASSERT_ERRNO(kube_table_container_by_id(t, "x", NULL, NULL), ENOENT);
    ASSERT_ERRNO(kube_table_uid_by_name(t, "a", "b", &uid), ENOENT);
    (void)kube_table_unref(t);
}

static struct kube_table *build(const struct kube_model *m) {
    static uint64_t gen;
    struct kube_table *t;

    ASSERT_OK(kube_model_build(m, ++gen, &t));
    return t;
}

static void test_model(void **state) {
    static const char *const v1[] = {"c-old=pytorch"};
    static const char *const v2[] = {"c-new=pytorch"};
    static const char *const inf[] = {"c-inf=server"};
    const uint64_t s = NSEC_PER_SEC;
    struct kube_model m;
    struct kube_pod_list list = {0};
    struct kube_table *t;
    const char *uid;

    kube_model_init(&m, 300 * s);
    assert_int_equal(kube_model_next_expiry(&m), UINT64_MAX);

    /* LIST: two pods */
    list.pods = calloc(2, sizeof(*list.pods));
    list.pods[0] = make_pod("ml", "trainer", "t-1", NULL, 1, v1);
    list.pods[1] = make_pod("serving", "infer", "i-1", NULL, 1, inf);
    list.n_pods = 2;
    ASSERT_OK(kube_model_replace(&m, &list, 10 * s));
    assert_int_equal(list.n_pods, 0);
    kube_pod_list_done(&list);
    assert_int_equal(m.n_pods, 2);

    /* the container restarts: the old id stays known */
    ASSERT_OK(kube_model_upsert(&m, make_pod("ml", "trainer", "t-1", NULL, 1, v2)));
    t = build(&m);
    assert_string_equal(container_name(t, "c-old"), "pytorch");
    assert_string_equal(container_name(t, "c-new"), "pytorch");
    (void)kube_table_unref(t);

    /* deleted and recreated under the same name with a new UID */
    ASSERT_OK(kube_model_delete(&m, make_pod("ml", "trainer", "t-1", NULL, 1, v2), 20 * s));
    ASSERT_OK(kube_model_upsert(&m, make_pod("ml", "trainer", "t-2", NULL, 0, NULL)));
    assert_int_equal(kube_model_next_expiry(&m), 320 * s);
    t = build(&m);
    assert_pod(t, "t-1", "ml", "trainer", true);
    assert_pod(t, "t-2", "ml", "trainer", false);
    assert_string_equal(container_name(t, "c-old"), "pytorch"); /* kept through DELETED */
    ASSERT_OK(kube_table_uid_by_name(t, "ml", "trainer", &uid));
    assert_string_equal(uid, "t-2");
    assert_int_equal(kube_table_n_pods(t, false), 2);
    (void)kube_table_unref(t);

    /* a second DELETED does not restart the retention clock */
    ASSERT_OK(kube_model_delete(&m, make_pod("ml", "trainer", "t-1", NULL, 0, NULL), 30 * s));
    assert_int_equal(kube_model_next_expiry(&m), 320 * s);

    /* retention: not yet, then gone */
    assert_int_equal(kube_model_expire(&m, 319 * s), 0);
    assert_int_equal(kube_model_expire(&m, 320 * s), 1);
    assert_int_equal(m.n_pods, 2);
    assert_int_equal(kube_model_next_expiry(&m), UINT64_MAX);

    /* re-LIST after an outage: infer vanished meanwhile, t-2 stays */
    list.pods = calloc(1, sizeof(*list.pods));
    list.pods[0] = make_pod("ml", "trainer", "t-2", NULL, 0, NULL);
    list.n_pods = 1;
    ASSERT_OK(kube_model_replace(&m, &list, 400 * s));
    kube_pod_list_done(&list);
    t = build(&m);
    assert_pod(t, "i-1", "serving", "infer", true);
    assert_pod(t, "t-2", "ml", "trainer", false);
    (void)kube_table_unref(t);
    assert_int_equal(kube_model_next_expiry(&m), 700 * s);

    /* a deleted pod that comes back in a LIST is live again */
    list.pods = calloc(1, sizeof(*list.pods));
    list.pods[0] = make_pod("serving", "infer", "i-1", NULL, 0, NULL);
    list.n_pods = 1;
    ASSERT_OK(kube_model_replace(&m, &list, 410 * s));
    kube_pod_list_done(&list);
    t = build(&m);
    assert_pod(t, "i-1", "serving", "infer", false);
    assert_pod(t, "t-2", "ml", "trainer", true);
    /* the infer container id from before the outage is still there */
    assert_string_equal(container_name(t, "c-inf"), "server");
    (void)kube_table_unref(t);
    kube_model_done(&m);
}

/* A crash-looping pod keeps a bounded history of container ids. */
static void test_model_restart_bound(void **state) {
    struct kube_model m;
    struct kube_table *t;
    char spec[64];

    kube_model_init(&m, 0);
    for (unsigned i = 0; i < 100; i++) {
        const char *c[1] = {spec};

        (void)snprintf(spec, sizeof(spec), "id-%u=app", i);
        ASSERT_OK(kube_model_upsert(&m, make_pod("ns", "loop", "u", NULL, 1, c)));
    }
    assert_int_equal(m.n_pods, 1);
    assert_int_equal(m.pods[0]->n_containers, 33); /* current + 32 earlier */
    t = build(&m);
    assert_string_equal(container_name(t, "id-99"), "app");
    assert_string_equal(container_name(t, "id-67"), "app");
    assert_null(container_name(t, "id-66"));
    (void)kube_table_unref(t);
    kube_model_done(&m);
}

#define CID_T "3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a"
#define CID_T2 "4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b"

/* A container is named from the API server only as a container of the process's own pod
 * (a static pod's found by its config hash): an id alone is one anybody can name a cgroup
 * after (below a user's own manager), and it would take another pod's names. */
static void test_container_named_in_its_pod(void **state) {
    static const char *const ctr[] = {CID_T "=pytorch"};
    static const char *const etcd_ctr[] = {CID_T2 "=etcd"};
    struct kube_pod *pods[] = {
        make_pod("ml", "trainer", "u-1", NULL, 1, ctr),
        /* a static pod: its cgroup carries the kubelet's config hash, not the UID */
        make_pod("kube-system", "etcd-node-a", "u-2", "9aac5b5c8815def09a2ef9e37b89da55", 1,
                 etcd_ctr),
    };
    struct ledger_process *own, *bare, *other, *etcd;
    struct snap_identity id = {0};
    struct kube_table *t = NULL;
    struct ledger l;

    (void)state;
    ASSERT_OK(kube_table_build((const struct kube_pod *const *)pods, 2, 1, &t));
    kube_pod_free(pods[0]);
    kube_pod_free(pods[1]);
    ledger_init(&l);
    strcpy(id.container_id, CID_T);
    strcpy(id.pod_uid, "u-1");
    assert_true(ledger_process_get(&l, 0, 1, 1, &id, &own) >= 0);
    id.pod_uid[0] = '\0';
    assert_true(ledger_process_get(&l, 0, 2, 1, &id, &bare) >= 0);
    strcpy(id.pod_uid, "u-2");
    assert_true(ledger_process_get(&l, 0, 3, 1, &id, &other) >= 0);
    strcpy(id.pod_uid, "9aac5b5c8815def09a2ef9e37b89da55");
    strcpy(id.container_id, CID_T2);
    assert_true(ledger_process_get(&l, 0, 4, 1, &id, &etcd) >= 0);
    assert_true(kube_labels_fill_ledger(t, &l) >= 0);
    assert_string_equal(etcd->id->container, "etcd");
    assert_string_equal(own->id->container, "pytorch");
    assert_string_equal(own->id->pod, "trainer");
    assert_string_equal(bare->id->container, "");
    assert_string_equal(other->id->container, "");
    ledger_done(&l);
    assert_null(kube_table_unref(t));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_lookups),
        cmocka_unit_test(test_table_same_name),
        cmocka_unit_test(test_container_named_in_its_pod),
        cmocka_unit_test(test_table_many),
        cmocka_unit_test(test_table_empty),
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_model_restart_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
