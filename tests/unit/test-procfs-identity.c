/* SPDX-License-Identifier: MIT */
/* The scanner's identity pool: one shared copy per distinct identity, reference-counted. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "procfs_identity.h"

/* An identity built the way parsers leave them: padding and string tails not zeroed. */
static void container(struct workload_identity *w, const char *cid, unsigned char junk) {
    memset(w, junk, sizeof(*w));
    w->kind = IDENTITY_POD;
    w->runtime = RUNTIME_CONTAINERD;
    w->qos = POD_QOS_BURSTABLE;
    (void)snprintf(w->container_id, sizeof(w->container_id), "%s", cid);
    (void)snprintf(w->pod_uid, sizeof(w->pod_uid), "%s", "0d0f7f2a-6c1b-4c3e-9a55-1f2e3d4c5b6a");
    w->slurm = (struct slurm_identity){0};
    w->systemd_unit[0] = '\0';
}

static void test_shared_and_released(void **state) {
    const struct workload_identity *a, *b, *c, *none;
    struct workload_identity w1, w2, w3, zero = {0};
    struct identity_pool pool;

    (void)state;
    identity_pool_init(&pool);
    container(&w1, "aa11", 0x55);
    container(&w2, "aa11", 0xaa); /* equal to w1 except in bytes nobody reads */
    container(&w3, "bb22", 0x55);

    assert_int_equal(identity_pool_get(&pool, &w1, &a), 0);
    assert_int_equal(identity_pool_get(&pool, &w2, &b), 0);
    assert_int_equal(identity_pool_get(&pool, &w3, &c), 0);
    assert_int_equal(identity_pool_get(&pool, &zero, &none), 0);
    assert_ptr_equal(a, b);
    assert_ptr_not_equal(a, c);
    assert_string_equal(a->container_id, "aa11");
    assert_string_equal(c->container_id, "bb22");
    assert_int_equal(none->kind, IDENTITY_NONE);
    assert_int_equal(pool.by_hash.size, 3);

    /* The shared copy lives while one reference is left. */
    identity_pool_put(&pool, a);
    assert_string_equal(b->container_id, "aa11");
    assert_int_equal(pool.by_hash.size, 3);
    identity_pool_put(&pool, b);
    assert_int_equal(pool.by_hash.size, 2);

    /* A Slurm step differs: another identity. */
    w1.kind = IDENTITY_SLURM_JOB;
    w1.slurm.job_id_valid = true;
    w1.slurm.job_id = 77;
    w2 = w1;
    (void)snprintf(w2.slurm.step, sizeof(w2.slurm.step), "%s", "batch");
    assert_int_equal(identity_pool_get(&pool, &w1, &a), 0);
    assert_int_equal(identity_pool_get(&pool, &w2, &b), 0);
    assert_ptr_not_equal(a, b);
    assert_int_equal(pool.by_hash.size, 4);

    identity_pool_put(&pool, a);
    identity_pool_put(&pool, b);
    identity_pool_put(&pool, c);
    identity_pool_put(&pool, none);
    identity_pool_put(&pool, NULL);
    assert_int_equal(pool.by_hash.size, 0);
    identity_pool_done(&pool);
}

/* calloc() failing on demand: the test links with -Wl,--wrap=calloc (tests/identity.cmake).
 * 0: off; n: the n-th call from now fails. */
static unsigned calloc_countdown;
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

void *__wrap_calloc(size_t n, size_t size) {
    if (calloc_countdown > 0 && --calloc_countdown == 0)
        return NULL;
    return __real_calloc(n, size);
}

/* Out of memory for the entry or for the map: -ENOMEM, *ret untouched, the pool as it was
 * (nothing leaks: the sanitizer and valgrind runs check); a pooled identity needs nothing. */
static void test_out_of_memory(void **state) {
    const struct workload_identity *a = NULL, *b, *untouched = (const void *)&state;
    struct workload_identity w1, w2;
    struct identity_pool pool;

    (void)state;
    identity_pool_init(&pool);
    container(&w1, "aa11", 0);
    container(&w2, "bb22", 0);

    calloc_countdown = 2; /* the entry is allocated, the map's first slots are not */
    b = untouched;
    assert_int_equal(identity_pool_get(&pool, &w1, &b), -ENOMEM);
    assert_ptr_equal(b, untouched);
    assert_int_equal(pool.by_hash.size, 0);

    calloc_countdown = 0;
    assert_int_equal(identity_pool_get(&pool, &w1, &a), 0);
    calloc_countdown = 1; /* the entry */
    assert_int_equal(identity_pool_get(&pool, &w2, &b), -ENOMEM);
    assert_ptr_equal(b, untouched);
    calloc_countdown = 1;
    assert_int_equal(identity_pool_get(&pool, &w1, &b), 0); /* pooled: no allocation */
    assert_ptr_equal(a, b);
    assert_int_equal(calloc_countdown, 1);
    calloc_countdown = 0;
    assert_int_equal(pool.by_hash.size, 1);

    identity_pool_put(&pool, a);
    identity_pool_put(&pool, b);
    assert_int_equal(pool.by_hash.size, 0);
    identity_pool_done(&pool);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_and_released),
        cmocka_unit_test(test_out_of_memory),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
