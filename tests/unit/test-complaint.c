/* SPDX-License-Identifier: MIT */
/* The rate limiter of repeated failures (struct complaint): said at the first failure, then
 * at doubling intervals; a recovery said once after a failure that was; and a source that
 * fails and recovers over and over said at the same intervals, not at every flap. */
#include "testutil.h"

#include "clock.h"
#include "log.h"

#define S(x) ((uint64_t)(x)*NSEC_PER_SEC)
#define MS(x) ((uint64_t)(x)*NSEC_PER_MSEC)

static void test_lasting_failure(void **state) {
    struct complaint c = {0};

    (void)state;
    assert_true(complain_should_log(&c, S(100)));
    assert_false(complain_should_log(&c, S(105)));
    assert_true(complain_should_log(&c, S(110))); /* 10 s */
    assert_false(complain_should_log(&c, S(125)));
    assert_true(complain_should_log(&c, S(130))); /* 20 s */
    assert_false(complain_should_log(&c, S(165)));
    assert_true(complain_should_log(&c, S(170))); /* 40 s */
    assert_true(complain_release(&c));
    assert_false(complain_release(&c)); /* said once */
}

/* A GPU lost and found at every tick: one warning and one recovery in the first 10 s,
 * then one of each at each doubled interval, never one per flap. */
static void test_flapping(void **state) {
    struct complaint c = {0};
    unsigned said = 0, recovered = 0;

    (void)state;
    for (uint64_t t = S(100); t < S(100) + S(35); t += MS(100)) {
        said += complain_should_log(&c, t);
        recovered += complain_release(&c);
    }
    /* at 100 s, 110 s (10 s later), 130 s (20 s later): three in 35 s, not 350 */
    assert_int_equal(said, 3);
    assert_int_equal(recovered, 3);
}

/* Quiet for twice its interval: a new failure is a story of its own, said at once, and
 * backed off from the first interval again. */
static void test_quiet_starts_over(void **state) {
    struct complaint c = {0};

    (void)state;
    assert_true(complain_should_log(&c, S(100)));
    assert_true(complain_should_log(&c, S(110))); /* interval now 20 s, next at 130 s */
    assert_true(complain_release(&c));
    assert_false(complain_should_log(&c, S(120))); /* within the backoff */
    assert_false(complain_release(&c));            /* its recovery not said either */
    assert_true(complain_should_log(&c, S(200)));  /* quiet since: said */
    assert_true(complain_release(&c));
    assert_false(complain_should_log(&c, S(205))); /* 10 s again, not 40 */
    assert_true(complain_should_log(&c, S(210)));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lasting_failure),
        cmocka_unit_test(test_flapping),
        cmocka_unit_test(test_quiet_starts_over),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
