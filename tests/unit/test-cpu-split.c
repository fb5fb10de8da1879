/* SPDX-License-Identifier: MIT */
/* The CPU energy split: active/idle from /proc/stat, active by CPU time, idle by policy,
 * and exact conservation. */
#include "testutil.h"

#include <errno.h>

#include "attribution.h"
#include "cpu_split.h"
#include "macro.h"

struct fixture {
    struct split_scratch scratch;
};

static int setup(void **state) {
    struct fixture *f = calloc(1, sizeof(*f));

    if (!f || split_scratch_reserve(&f->scratch, 64) < 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state) {
    struct fixture *f = *state;

    split_scratch_done(&f->scratch);
    free(f);
    return 0;
}

static const uint64_t keys3[] = {30, 10, 20};
static const uint64_t cpu3[] = {600, 200, 200};

/* 100 J over a window where the node was 3/4 busy: 75 J active, 25 J idle. */
static struct cpu_split_request req3(enum idle_policy p) {
    return (struct cpu_split_request){
        .energy_uj = 100000000,
        .active_ticks = 300,
        .total_ticks = 400,
        .policy = p,
        .n = 3,
        .keys = keys3,
        .cpu_time = cpu3,
    };
}

static void assert_conserved(const struct cpu_split_request *q, const uint64_t *parts,
                             const struct cpu_split_result *r) {
    unsigned __int128 sum = (unsigned __int128)r->unattributed_active_uj + r->unattributed_idle_uj;

    for (size_t i = 0; i < q->n; i++)
        sum += parts[i];
    if (sum != q->energy_uj)
        fail_msg("not conserved: %llu != %llu", (unsigned long long)sum,
                 (unsigned long long)q->energy_uj);
    assert_int_equal(r->active_uj + r->idle_uj, q->energy_uj);
}

static void test_policies(void **state) {
    struct fixture *f = *state;
    struct cpu_split_request q = req3(IDLE_POLICY_UNATTRIBUTED);
    struct cpu_split_result r;
    uint64_t p[3];

    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(r.active_uj, 75000000);
    assert_int_equal(r.idle_uj, 25000000);
    assert_int_equal(p[0], 45000000);
    assert_int_equal(p[1], 15000000);
    assert_int_equal(p[2], 15000000);
    assert_int_equal(r.unattributed_idle_uj, 25000000);
    assert_int_equal(r.unattributed_active_uj, 0);
    assert_conserved(&q, p, &r);

    /* even: 25 J / 3 = 8 333 333 uJ rest 1, which goes to the smallest key (10). */
    q = req3(IDLE_POLICY_EVEN);
    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(p[0], 45000000 + 8333333);
    assert_int_equal(p[1], 15000000 + 8333334);
    assert_int_equal(p[2], 15000000 + 8333333);
    assert_int_equal(r.unattributed_idle_uj, 0);
    assert_conserved(&q, p, &r);

    /* share: everything by CPU time, i.e. dE * w / sum(w). */
    q = req3(IDLE_POLICY_SHARE);
    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(p[0], 60000000);
    assert_int_equal(p[1], 20000000);
    assert_int_equal(p[2], 20000000);
    assert_conserved(&q, p, &r);
}

static void test_untracked_cpu_time(void **state) {
    struct fixture *f = *state;
    struct cpu_split_request q = req3(IDLE_POLICY_UNATTRIBUTED);
    struct cpu_split_result r;
    uint64_t p[3];

    /* The node was busy for 2000 us; the three consumers account for 1000 of them. */
    q.node_cpu_time = 2000;
    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(p[0], 22500000);
    assert_int_equal(p[1], 7500000);
    assert_int_equal(p[2], 7500000);
    assert_int_equal(r.unattributed_active_uj, 37500000);
    assert_int_equal(r.unattributed_idle_uj, 25000000);
    assert_conserved(&q, p, &r);

    q.policy = IDLE_POLICY_SHARE;
    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(p[0], 30000000);
    assert_int_equal(r.unattributed_active_uj, 37500000);
    assert_int_equal(r.unattributed_idle_uj, 12500000);
    assert_conserved(&q, p, &r);

    /* Less node time than the consumers' (read at slightly different instants): ignored. */
    q.policy = IDLE_POLICY_UNATTRIBUTED;
    q.node_cpu_time = 900;
    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(p[0], 45000000);
    assert_int_equal(r.unattributed_active_uj, 0);
}

static void test_nobody_busy(void **state) {
    struct fixture *f = *state;
    static const uint64_t zero[] = {0, 0, 0};
    struct cpu_split_request q = req3(IDLE_POLICY_UNATTRIBUTED);
    struct cpu_split_result r;
    uint64_t p[3] = {7, 7, 7};

    /* No consumers at all: everything stays at package level, whatever the policy. */
    for (int pol = 0; pol < 3; pol++) {
        const enum idle_policy pols[] = {IDLE_POLICY_UNATTRIBUTED, IDLE_POLICY_EVEN,
                                         IDLE_POLICY_SHARE};

        q = req3(pols[pol]);
        q.n = 0;
        ASSERT_OK(cpu_split(&q, &f->scratch, NULL, &r));
        assert_int_equal(r.unattributed_active_uj, 75000000);
        assert_int_equal(r.unattributed_idle_uj, 25000000);
    }

    /* Consumers that used no CPU: active energy has no owner; only "even" gives idle. */
    q = req3(IDLE_POLICY_EVEN);
    q.cpu_time = zero;
    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(r.unattributed_active_uj, 75000000);
    assert_int_equal(r.unattributed_idle_uj, 0);
    assert_int_equal(p[1], 8333334);
    assert_conserved(&q, p, &r);
    q.policy = IDLE_POLICY_SHARE;
    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(p[0] + p[1] + p[2], 0);
    assert_int_equal(r.unattributed_idle_uj, 25000000);

    /* No /proc/stat progress (total 0): the window counts as idle. */
    q = req3(IDLE_POLICY_UNATTRIBUTED);
    q.active_ticks = q.total_ticks = 0;
    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(r.active_uj, 0);
    assert_int_equal(p[0] + p[1] + p[2], 0);
    assert_int_equal(r.unattributed_idle_uj, 100000000);
}

static void test_dram_follows_weights(void **state) {
    struct fixture *f = *state;
    struct cpu_split_request q = req3(IDLE_POLICY_SHARE);
    struct cpu_split_result r;
    uint64_t p[3];

    /* The Skylake-X DRAM delta (30 J) split by the same request as the package. */
    q.energy_uj = 30000000;
    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(p[0], 18000000);
    assert_int_equal(p[1], 6000000);
    assert_int_equal(p[2], 6000000);
}

static void test_rounding_is_exact(void **state) {
    struct fixture *f = *state;
    static const uint64_t keys[] = {3, 1, 2}, w[] = {1, 1, 1};
    struct cpu_split_request q = {
        .energy_uj = 10,
        .active_ticks = 1,
        .total_ticks = 1,
        .policy = IDLE_POLICY_UNATTRIBUTED,
        .n = 3,
        .keys = keys,
        .cpu_time = w,
    };
    struct cpu_split_result r;
    uint64_t p[3];

    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(p[0], 3);
    assert_int_equal(p[1], 4); /* key 1 */
    assert_int_equal(p[2], 3);

    /* The largest energy and a 1/3 active fraction: no overflow, floor of the exact value. */
    q.energy_uj = UINT64_MAX;
    q.active_ticks = 1;
    q.total_ticks = 3;
    ASSERT_OK(cpu_split(&q, &f->scratch, p, &r));
    assert_int_equal(r.active_uj, UINT64_MAX / 3);
    assert_conserved(&q, p, &r);
}

static void test_errors(void **state) {
    struct fixture *f = *state;
    struct split_scratch small = {0};
    struct cpu_split_request q = req3(IDLE_POLICY_MEMORY);
    struct cpu_split_result r = {.active_uj = 123};
    uint64_t p[3];

    ASSERT_ERRNO(cpu_split(&q, &f->scratch, p, &r), EINVAL);
    q.policy = _IDLE_POLICY_MAX;
    ASSERT_ERRNO(cpu_split(&q, &f->scratch, p, &r), EINVAL);
    q = req3(IDLE_POLICY_EVEN);
    q.active_ticks = 401;
    ASSERT_ERRNO(cpu_split(&q, &f->scratch, p, &r), EINVAL);
    q = req3(IDLE_POLICY_EVEN);
    q.keys = NULL;
    ASSERT_ERRNO(cpu_split(&q, &f->scratch, p, &r), EINVAL);
    q = req3(IDLE_POLICY_EVEN);
    ASSERT_ERRNO(cpu_split(&q, &f->scratch, NULL, &r), EINVAL);
    q.n = SPLIT_MAX_CONSUMERS;
    ASSERT_ERRNO(cpu_split(&q, &f->scratch, p, &r), EINVAL);
    /* The untracked slot needs n + 1. */
    q = req3(IDLE_POLICY_EVEN);
    ASSERT_OK(split_scratch_reserve(&small, 3));
    ASSERT_ERRNO(cpu_split(&q, &small, p, &r), ENOBUFS);
    assert_int_equal(r.active_uj, 123); /* untouched on failure */
    ASSERT_OK(split_scratch_reserve(&small, 4));
    ASSERT_OK(cpu_split(&q, &small, p, &r));
    split_scratch_done(&small);
}

/* Seeded property test: conservation, exact floors, bounded rounding, order independence. */
static void test_random_conservation(void **state) {
    struct fixture *f = *state;
    const enum idle_policy pols[] = {IDLE_POLICY_UNATTRIBUTED, IDLE_POLICY_EVEN, IDLE_POLICY_SHARE};
    uint64_t seed = 20240601, keys[40], cpu[40], parts[40], keys2[40], cpu2[40], parts2[40];
    unsigned cases = 20000;

    for (unsigned c = 0; c < cases; c++) {
        size_t n = (size_t)test_rand_below(&seed, 21);
        struct cpu_split_request q = {.n = n, .keys = keys, .cpu_time = cpu};
        struct cpu_split_result r, r2;
        unsigned __int128 tracked = 0, W;
        uint64_t shift = test_rand_below(&seed, 64);

        q.energy_uj = test_rand_next(&seed) >> shift;
        q.total_ticks = test_rand_below(&seed, 4) == 0 ? 0 : 1 + test_rand_below(&seed, 1000000);
        q.active_ticks = q.total_ticks ? test_rand_below(&seed, q.total_ticks + 1) : 0;
        q.policy = pols[test_rand_below(&seed, 3)];
        for (size_t i = 0; i < n; i++) {
            keys[i] = c * 64 + i * 7 + 1; /* unique */
            cpu[i] = test_rand_below(&seed, 5) == 0 ? 0 : test_rand_next(&seed) >> 30;
            tracked += cpu[i];
        }
        q.node_cpu_time = test_rand_below(&seed, 2) ? 0 : test_rand_next(&seed) >> 29;

        ASSERT_OK(cpu_split(&q, &f->scratch, parts, &r));
        assert_conserved(&q, parts, &r);
        assert_int_equal(r.active_uj, q.total_ticks ? (uint64_t)((unsigned __int128)q.energy_uj *
                                                                 q.active_ticks / q.total_ticks)
                                                    : 0);
        if (q.policy == IDLE_POLICY_UNATTRIBUTED || n == 0)
            assert_int_equal(r.unattributed_idle_uj, r.idle_uj);
        if (q.policy == IDLE_POLICY_EVEN && n > 0)
            assert_int_equal(r.unattributed_idle_uj, 0);

        /* Each part is within rounding of its exact share. */
        W = tracked + (q.node_cpu_time > tracked ? q.node_cpu_time - tracked : 0);
        for (size_t i = 0; i < n && W > 0; i++) {
            uint64_t a = (uint64_t)((unsigned __int128)r.active_uj * cpu[i] / W), lo = a, hi;

            if (q.policy == IDLE_POLICY_SHARE)
                lo += (uint64_t)((unsigned __int128)r.idle_uj * cpu[i] / W);
            else if (q.policy == IDLE_POLICY_EVEN)
                lo += r.idle_uj / n;
            hi = lo + (q.policy == IDLE_POLICY_UNATTRIBUTED ? 1 : 2);
            if (parts[i] < lo || parts[i] > hi)
                fail_msg("case %u: part %zu = %llu outside [%llu, %llu]", c, i,
                         (unsigned long long)parts[i], (unsigned long long)lo,
                         (unsigned long long)hi);
        }

        /* Reversed order gives every key the same energy. */
        for (size_t i = 0; i < n; i++) {
            keys2[i] = keys[n - 1 - i];
            cpu2[i] = cpu[n - 1 - i];
        }
        q.keys = keys2;
        q.cpu_time = cpu2;
        ASSERT_OK(cpu_split(&q, &f->scratch, parts2, &r2));
        for (size_t i = 0; i < n; i++)
            assert_int_equal(parts2[i], parts[n - 1 - i]);
        assert_int_equal(r2.unattributed_active_uj, r.unattributed_active_uj);
        assert_int_equal(r2.unattributed_idle_uj, r.unattributed_idle_uj);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policies),
        cmocka_unit_test(test_untracked_cpu_time),
        cmocka_unit_test(test_nobody_busy),
        cmocka_unit_test(test_dram_follows_weights),
        cmocka_unit_test(test_rounding_is_exact),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_random_conservation),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
