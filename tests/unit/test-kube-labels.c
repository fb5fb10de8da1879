/* SPDX-License-Identifier: MIT */
/* Names from the pod table reach every kind of ledger entry: GPU processes, CPU processes
 * and workloads; names already set stay; unknown UIDs stay empty. */
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

static void test_fill_every_entry_kind(void **state) {
    struct snap_identity id = {0}, other = {0};
    struct kube_table *t = one_pod_table();
    struct ledger_process *gp;
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

    assert_int_equal(ledger_process_get(&l, 0, 4201, 99, &gp), 1);
    gp->id = id;
    ASSERT_OK(ledger_add_gpu_energy(&l, gp, 1000, false, 1));
    ASSERT_OK(ledger_add_cpu_process_energy(&l, 4201, 99, &id, 0, 500, 1));
    ASSERT_OK(ledger_add_cpu_energy(&l, &other, 7, 1));

    kube_labels_fill_ledger(t, &l);

    assert_string_equal(gp->id.pod, "trainer");
    assert_string_equal(gp->id.namespace_, "ml");
    assert_string_equal(gp->id.container, "pytorch");
    n = 0;
    for (size_t i = 0; hashmap_next(&l.cpu_processes, &i, NULL, &value); n++) {
        const struct ledger_cpu_process *cp = value;

        assert_string_equal(cp->id.pod, "trainer");
        assert_string_equal(cp->id.namespace_, "ml");
        assert_string_equal(cp->id.container, "pytorch");
    }
    assert_int_equal(n, 1);
    n = 0;
    for (size_t i = 0; hashmap_next(&l.workloads, &i, NULL, &value); n++) {
        const struct ledger_workload *w = value;

        if (strcmp(w->id.pod_uid, POD_UID) == 0) {
            assert_string_equal(w->id.pod, "trainer");
            assert_string_equal(w->id.namespace_, "ml");
        } else {
            /* not in the table: the name it had stays, nothing is invented */
            assert_string_equal(w->id.pod, "kept-name");
            assert_string_equal(w->id.namespace_, "");
        }
    }
    assert_true(n >= 3); /* container + pod of the process, pod of `other` */

    ledger_done(&l);
    kube_table_unref(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_every_entry_kind),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
