/* SPDX-License-Identifier: MIT */
/* Names from the pod table reach every kind of ledger entry: GPU processes, CPU processes
 * and workloads; names already set stay; unknown UIDs stay empty. Names are attached as
 * new label sets (the ones snapshots share never change), when an entry is made or when
 * a table names more. */
#include <stdlib.h>
#include <string.h>

#include "kube_labels.h"
#include "kube_table.h"
#include "ledger.h"
#include "testutil.h"

#define POD_UID "6e311cce-9b94-4a94-b353-b9546b1a9c19"
#define CTR_ID "65d752a38e1db784d521f48c3f1956f4f9a74ebb923377144f253f3aca9fa028"

static struct kube_table *one_pod_table(void) {
    char uid[] = POD_UID, name[] = "trainer", ns[] = "ml";
    char ctr_id[] = CTR_ID, ctr_name[] = "pytorch";
    struct kube_container c = {.id = ctr_id, .name = ctr_name};
    struct kube_pod pod = {
        .uid = uid,
        .name = name,
        .namespace_ = ns,
        .containers = &c,
        .n_containers = 1,
    };
    const struct kube_pod *pods[1] = {&pod};
    struct kube_table *t;

    ASSERT_OK(kube_table_build(pods, 1, 1, &t));
    return t;
}

/* The labeler as the sampler installs it, over a given table. */
static void fill_from_table(void *userdata, struct snap_identity *id) {
    const struct kube_table *t = userdata;
    const struct kube_pod_info *pod;
    const char *name;

    if (kube_table_pod_by_uid(t, id->pod_uid, &pod) >= 0 && !id->pod[0]) {
        strcpy(id->pod, pod->name);
        strcpy(id->namespace_, pod->namespace_);
    }
    if (kube_table_container_by_id(t, id->container_id, &name, NULL) >= 0 && !id->container[0])
        strcpy(id->container, name);
}

static void test_fill_every_entry_kind(void **state) {
    struct snap_identity id = {0}, other = {0};
    struct kube_table *t = one_pod_table();
    struct ledger_process *gp;
    struct snapshot *before;
    struct ledger l;
    void *value;
    size_t n;

    (void)state;
    ledger_init(&l);
    strcpy(id.pod_uid, POD_UID);
    strcpy(id.container_id, CTR_ID);
    strcpy(id.process_name, "python");
    strcpy(other.pod_uid, "11111111-2222-3333-4444-555555555555");
    strcpy(other.pod, "kept-name");

    assert_int_equal(ledger_process_get(&l, 0, 4201, 99, &id, &gp), 1);
    ASSERT_OK(ledger_add_gpu_energy(&l, gp, 1000, false, 1));
    ASSERT_OK(ledger_add_cpu_process_energy(&l, 4201, 99, &id, 0, 500, 1));
    ASSERT_OK(ledger_add_cpu_energy(&l, &other, 7, 1));
    before = ledger_snapshot(&l, NULL);
    assert_non_null(before);
    assert_ptr_equal(before->gpu_processes[0].id, gp->id); /* shared, not copied */

    ASSERT_OK(kube_labels_fill_ledger(t, &l));

    assert_string_equal(gp->id->pod, "trainer");
    assert_string_equal(gp->id->namespace_, "ml");
    assert_string_equal(gp->id->container, "pytorch");
    assert_false(gp->wl_fresh); /* its workloads copy the names at the next booking */
    /* The names come as a new label set: the one the snapshot shares stays as it was. */
    assert_ptr_not_equal(before->gpu_processes[0].id, gp->id);
    assert_string_equal(before->gpu_processes[0].id->pod, "");
    assert_null(snapshot_unref(before));
    n = 0;
    for (size_t i = 0; hashmap_next(&l.cpu_processes, &i, NULL, &value); n++) {
        const struct ledger_cpu_process *cp = value;

        assert_string_equal(cp->id->pod, "trainer");
        assert_string_equal(cp->id->namespace_, "ml");
        assert_string_equal(cp->id->container, "pytorch");
    }
    assert_int_equal(n, 1);
    n = 0;
    for (size_t i = 0; hashmap_next(&l.workloads, &i, NULL, &value); n++) {
        const struct ledger_workload *w = value;

        if (strcmp(w->id->pod_uid, POD_UID) == 0) {
            assert_string_equal(w->id->pod, "trainer");
            assert_string_equal(w->id->namespace_, "ml");
        } else {
            /* not in the table: the name it had stays, nothing is invented */
            assert_string_equal(w->id->pod, "kept-name");
            assert_string_equal(w->id->namespace_, "");
        }
    }
    assert_true(n >= 3); /* container + pod of the process, pod of `other` */

    ledger_done(&l);
    kube_table_unref(t);
}

/* With the table known when an entry is made, its labels carry the names from the start. */
static void test_names_at_creation(void **state) {
    struct kube_table *t = one_pod_table();
    struct snap_identity id = {0};
    struct ledger_process *gp;
    struct ledger l;
    const struct snap_identity *first;
    void *value;

    ledger_init(&l);
    ledger_set_labeler(&l, fill_from_table, t);
    strcpy(id.pod_uid, POD_UID);
    strcpy(id.container_id, CTR_ID);
    assert_int_equal(ledger_process_get(&l, 0, 4301, 5, &id, &gp), 1);
    assert_string_equal(gp->id->pod, "trainer");
    assert_string_equal(gp->id->container, "pytorch");
    ASSERT_OK(ledger_add_gpu_energy(&l, gp, 10, false, 1));
    first = gp->id;
    /* A table that has nothing new makes no new label set. */
    ASSERT_OK(kube_labels_fill_ledger(t, &l));
    assert_ptr_equal(gp->id, first);
    for (size_t i = 0; hashmap_next(&l.workloads, &i, NULL, &value);)
        assert_string_equal(((struct ledger_workload *)value)->id->pod, "trainer");
    ledger_done(&l);
    kube_table_unref(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_every_entry_kind),
        cmocka_unit_test(test_names_at_creation),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
