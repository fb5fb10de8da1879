/* SPDX-License-Identifier: MIT */
/*
 * The slot keeps the snapshot a publish replaces as its spare when no reader holds it, and
 * the next snapshot is built in the spare's arrays (grown when the ledger grew). A
 * snapshot still held by a reader is freed by that reader. ASan and valgrind check that
 * nothing is freed twice or lost.
 */
#include "testutil.h"

#include <stdatomic.h>

#include "ledger.h"
#include "snapshot.h"

static void add_processes(struct ledger *l, uint32_t first_pid, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        struct ledger_process *p;

        ASSERT_OK(ledger_process_get(l, 0, first_pid + i, 1, &(struct snap_identity){0}, &p));
        p->measured_uj = first_pid + i;
    }
}

static void test_spare_is_reused(void **state) {
    struct snapshot_slot *slot = snapshot_slot_new();
    struct snapshot *s1, *s2, *spare, *s3;
    struct ledger l;

    (void)state;
    assert_non_null(slot);
    ledger_init(&l);
    add_processes(&l, 100, 2);
    s1 = ledger_snapshot(&l, NULL);
    assert_non_null(s1);
    snapshot_slot_publish(slot, s1);
    assert_null(snapshot_slot_take_spare(slot)); /* nothing replaced yet */

    s2 = ledger_snapshot(&l, NULL);
    assert_non_null(s2);
    snapshot_slot_publish(slot, s2); /* s1 had no reader: it becomes the spare */
    spare = snapshot_slot_take_spare(slot);
    assert_ptr_equal(spare, s1);
    assert_int_equal(spare->n_gpu_processes, 0);
    assert_true(spare->cap_gpu_processes >= 2);
    assert_null(snapshot_slot_take_spare(slot));

    add_processes(&l, 200, 30); /* beyond the spare's arrays */
    s3 = ledger_snapshot(&l, spare);
    assert_ptr_equal(s3, s1);
    assert_int_equal(s3->n_gpu_processes, 32);
    assert_true(s3->cap_gpu_processes >= 32);
    assert_int_equal(s3->gpu_processes[0].pid, 100);
    assert_int_equal(s3->gpu_processes[31].pid, 229);
    assert_int_equal(s3->gpu_processes[31].energy_measured_uj, 229);
    snapshot_slot_publish(slot, s3);

    ledger_done(&l);
    assert_null(snapshot_slot_free(slot)); /* frees the current one and the spare (s2) */
}

static void test_held_snapshot_is_freed_by_its_reader(void **state) {
    struct snapshot_slot *slot = snapshot_slot_new();
    struct snapshot *held;
    struct ledger l;

    (void)state;
    ledger_init(&l);
    add_processes(&l, 100, 3);
    snapshot_slot_publish(slot, ledger_snapshot(&l, NULL));
    held = snapshot_slot_get(slot); /* a scrape in progress */
    snapshot_slot_publish(slot, ledger_snapshot(&l, NULL));
    assert_null(snapshot_slot_take_spare(slot));
    assert_int_equal(held->n_gpu_processes, 3);    /* still whole for its reader */
    assert_int_equal(atomic_load(&held->refs), 1); /* the last reference: */
    (void)snapshot_unref(held);                    /* freed here */

    snapshot_slot_publish(slot, ledger_snapshot(&l, NULL));
    held = snapshot_slot_take_spare(slot); /* taken: ours to free */
    assert_non_null(held);
    assert_int_equal(atomic_load(&held->refs), 1);
    (void)snapshot_unref(held);
    ledger_done(&l);
    assert_null(snapshot_slot_free(slot));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spare_is_reused),
        cmocka_unit_test(test_held_snapshot_is_freed_by_its_reader),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
