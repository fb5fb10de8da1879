/* SPDX-License-Identifier: MIT */
/*
 * The split with the context uplift given to the context holders: a hand-checked window
 * under each idle policy, the special cases, and conservation to the microjoule over
 * 100 000 random cases with learned-style weights, carries and holders.
 */
#include "testutil.h"

#include <errno.h>

#include "attribution.h"
#include "context_split.h"
#include "macro.h"

#define J UINT64_C(1000000)

/*
 * 100 J in the window, 30 J of it no-context idle, 20 J the context uplift. A held its
 * context the whole second, B for its last 250 ms, C holds none (its samples arrived after
 * it left). Weights 3 : 1 : 1.
 *   uplift 20 J by time held 1 s : 0.25 s      -> A 16 J, B 4 J
 *   the rest 80 J: idle 30 J, active 50 J by 3:1:1 -> 30, 10, 10 J
 *   unattributed: A 46, B 14, C 10, idle 30 kept   (100 J)
 *   even:         idle 10 each: A 56, B 24, C 20   (100 J)
 *   share:        80 J by 3:1:1: A 16 + 48, B 4 + 16, C 16
 */
static void test_documented_window(void **state) {
    static const uint64_t held[] = {1000000, 250000, 0};
    struct split_consumer c[] = {
        {.key = 1, .weight = 3}, {.key = 2, .weight = 1}, {.key = 3, .weight = 1}};
    struct split_request req = {.energy_uj = 100 * J, .idle_uj = 30 * J, .n = 3, .consumers = c};
    static const struct {
        enum idle_policy policy;
        uint64_t a, b, c, unattributed;
    } cases[] = {
        {IDLE_POLICY_UNATTRIBUTED, 46, 14, 10, 30},
        {IDLE_POLICY_EVEN, 56, 24, 20, 0},
        {IDLE_POLICY_SHARE, 64, 20, 16, 0},
    };
    struct split_scratch s = {0};
    struct split_result res;
    uint64_t parts[3];

    ASSERT_OK(split_scratch_reserve(&s, 3));
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        req.policy = cases[i].policy;
        ASSERT_OK(split_with_context(&req, 20 * J, held, &s, parts, &res));
        assert_int_equal(parts[0], cases[i].a * J);
        assert_int_equal(parts[1], cases[i].b * J);
        assert_int_equal(parts[2], cases[i].c * J);
        assert_int_equal(res.unattributed_idle_uj, cases[i].unattributed * J);
        assert_false(res.exclusive);
    }
    split_scratch_done(&s);
}

/* One consumer keeps the whole delta, measured (less the no-context idle under
 * unattributed); no holder, or no uplift, is the plain
 * split; an uplift above the delta is capped at it. */
static void test_special_cases(void **state) {
    static const uint64_t held[] = {1000000, 0}, none[] = {0, 0};
    struct split_consumer c[] = {{.key = 1, .weight = 1}, {.key = 2, .weight = 1}};
    struct split_request req = {.energy_uj = 10 * J,
                                .idle_uj = 4 * J,
                                .policy = IDLE_POLICY_UNATTRIBUTED,
                                .n = 1,
                                .consumers = c};
    struct split_scratch s = {0};
    struct split_result res;
    uint64_t parts[2];

    ASSERT_OK(split_scratch_reserve(&s, 2));
    ASSERT_OK(split_with_context(&req, 3 * J, held, &s, parts, &res));
    assert_int_equal(parts[0], 6 * J); /* the no-context idle stays at device level */
    assert_false(res.exclusive);
    req.policy = IDLE_POLICY_EVEN;
    ASSERT_OK(split_with_context(&req, 3 * J, held, &s, parts, &res));
    assert_int_equal(parts[0], 10 * J);
    assert_true(res.exclusive);
    req.policy = IDLE_POLICY_UNATTRIBUTED;

    req.n = 2;
    ASSERT_OK(split_with_context(&req, 3 * J, none, &s, parts, &res));
    assert_int_equal(parts[0], 3 * J);
    assert_int_equal(parts[1], 3 * J);
    assert_int_equal(res.unattributed_idle_uj, 4 * J);

    ASSERT_OK(split_with_context(&req, 0, NULL, &s, parts, &res));
    assert_int_equal(parts[0] + parts[1] + res.unattributed_idle_uj, 10 * J);

    /* 15 J of uplift in a 10 J window: all 10 J to the holder, nothing left for idle. */
    ASSERT_OK(split_with_context(&req, 15 * J, held, &s, parts, &res));
    assert_int_equal(parts[0], 10 * J);
    assert_int_equal(parts[1], 0);
    assert_int_equal(res.unattributed_idle_uj, 0);

    ASSERT_ERRNO(split_with_context(&req, 3 * J, NULL, &s, parts, &res), EINVAL);
    req.policy = _IDLE_POLICY_MAX;
    ASSERT_ERRNO(split_with_context(&req, 3 * J, held, &s, parts, &res), EINVAL);
    split_scratch_done(&s);
}

/*
 * 100 000 random windows: weights as the estimator gives them (scaled intensity x
 * activity up to 2^62, zeros included), energies up to 2^50 uJ, up to 300 consumers,
 * random holders and uplift, carries, every policy (allocation with and without pods).
 * Conservation holds to the microjoule, no part exceeds the delta, a consumer that holds
 * no context and has no weight gets nothing under `unattributed`, carries stay bounded.
 */
static void test_conservation_random(void **state) {
    enum { MAX_N = 300, MAX_PODS = 4 };
    struct split_consumer c[MAX_N], pods[MAX_PODS];
    uint64_t held[MAX_N], parts[MAX_N], pod_parts[MAX_PODS], rng = 77;
    int64_t carries[MAX_N];
    struct split_scratch s = {0};
    struct split_result res;

    ASSERT_OK(split_scratch_reserve(&s, MAX_N));
    for (int k = 0; k < 100000; k++) {
        size_t n = test_rand_below(&rng, 10) == 0 ? test_rand_below(&rng, MAX_N + 1)
                                                  : test_rand_below(&rng, 9);
        size_t n_pods = test_rand_below(&rng, MAX_PODS + 1);
        uint64_t energy = test_rand_next(&rng) >> (14 + test_rand_below(&rng, 50));
        uint64_t context = test_rand_below(&rng, 3) ? test_rand_below(&rng, energy + 2) : 0;
        struct split_request req = {
            .energy_uj = energy,
            .idle_uj = test_rand_below(&rng, energy + 2),
            .policy = (enum idle_policy)test_rand_below(&rng, _IDLE_POLICY_MAX),
            .n = n,
            .consumers = c,
            .n_holders = n_pods,
            .holders = pods,
            .holder_parts = pod_parts,
            .carries = test_rand_below(&rng, 4) ? carries : NULL,
        };
        unsigned __int128 sum = 0;

        for (size_t i = 0; i < n; i++) {
            c[i] = (struct split_consumer){
                .key = test_rand_next(&rng),
                .weight = test_rand_below(&rng, 5) == 0
                              ? 0
                              : test_rand_next(&rng) >> (2 + test_rand_below(&rng, 62)),
                .memory = test_rand_below(&rng, 1u << 20),
            };
            held[i] = test_rand_below(&rng, 3) == 0 ? 0 : 1 + test_rand_below(&rng, 1000000);
            carries[i] =
                (int64_t)test_rand_below(&rng, 2 * (uint64_t)SPLIT_CARRY_MAX + 1) - SPLIT_CARRY_MAX;
        }
        for (size_t i = 0; i < n_pods; i++)
            pods[i] = (struct split_consumer){.key = i + 1, .weight = 1 + test_rand_below(&rng, 3)};
        ASSERT_OK(split_with_context(&req, context, held, &s, parts, &res));
        for (size_t i = 0; i < n; i++) {
            sum += parts[i];
            assert_true(parts[i] <= energy);
            if (n > 1 && req.policy == IDLE_POLICY_UNATTRIBUTED && held[i] == 0 &&
                c[i].weight == 0) {
                bool any_weight = false;

                for (size_t j = 0; j < n; j++)
                    any_weight = any_weight || c[j].weight > 0;
                if (any_weight)
                    assert_int_equal(parts[i], 0);
            }
            if (req.carries)
                assert_true(carries[i] <= SPLIT_CARRY_MAX && carries[i] >= -SPLIT_CARRY_MAX);
        }
        if (req.policy == IDLE_POLICY_ALLOCATION && n_pods > 0)
            for (size_t i = 0; i < n_pods; i++)
                sum += pod_parts[i];
        sum += res.unattributed_idle_uj + res.unattributed_no_consumer_uj;
        assert_true(sum == energy);
    }
    split_scratch_done(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_documented_window),
        cmocka_unit_test(test_special_cases),
        cmocka_unit_test(test_conservation_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
