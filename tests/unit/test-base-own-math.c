/* SPDX-License-Identifier: MIT */
/* The daemon's own exp() and llround() against libm's, over their whole ranges. */
#include "testutil.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "own_math.h"

/* Distance in units in the last place between two finite doubles of one sign. */
static uint64_t ulps(double a, double b) {
    int64_t ia, ib;

    memcpy(&ia, &a, sizeof(ia));
    memcpy(&ib, &b, sizeof(ib));
    return ia > ib ? (uint64_t)(ia - ib) : (uint64_t)(ib - ia);
}

static void test_exp_within_two_ulp(void **state) {
    uint64_t rng = 0x9e3779b97f4a7c15, worst = 0;
    double worst_x = 0;

    /* A dense sweep of the range the estimator uses (exponents of -age/tau and back), then
     * random points over the whole domain, subnormal results included. */
    for (int i = -200000; i <= 200000; i++) {
        double x = i * 1e-4;
        uint64_t u = ulps(own_exp(x), exp(x));

        if (u > worst) {
            worst = u;
            worst_x = x;
        }
    }
    for (int i = 0; i < 200000; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        double x = -745.0 + 1454.7 * (double)(rng >> 11) / 0x1p53;
        uint64_t u = ulps(own_exp(x), exp(x));

        if (u > worst) {
            worst = u;
            worst_x = x;
        }
    }
    print_message("worst: %" PRIu64 " ulp at x = %.17g\n", worst, worst_x);
    assert_true(worst <= 2);
}

static void test_exp_edges(void **state) {
    assert_int_equal(ulps(own_exp(0), 1.0), 0);
    assert_true(ulps(own_exp(1), M_E) <= 1);
    assert_true(ulps(own_exp(-1), 1 / M_E) <= 1);
    assert_true(isinf(own_exp(710)) && own_exp(710) > 0);
    assert_true(isfinite(own_exp(709.7)) && ulps(own_exp(709.7), exp(709.7)) <= 2);
    assert_true(own_exp(-746) <= 0 && own_exp(-746) >= 0);
    assert_true(own_exp(-744) > 0 && ulps(own_exp(-744), exp(-744)) <= 1);
    assert_true(isnan(own_exp(__builtin_nan(""))));
    assert_true(own_exp(-HUGE_VAL) <= 0 && isinf(own_exp(HUGE_VAL)));
}

static void test_llround_as_libm(void **state) {
    static const double cases[] = {0.0,
                                   0.5,
                                   -0.5,
                                   1.5,
                                   -1.5,
                                   2.5,
                                   -2.5,
                                   0.49999999999999994,
                                   -0.49999999999999994,
                                   1e15 + 0.5,
                                   -1e15 - 0.5,
                                   0x1p52,
                                   -0x1p52,
                                   0x1p52 + 1,
                                   0x1p62,
                                   -0x1p62,
                                   123456.4999,
                                   -7.5000001};
    uint64_t rng = 12345;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(own_llround(cases[i]), llround(cases[i]));
    for (int i = 0; i < 100000; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        double x = ((double)(rng >> 11) / 0x1p53 - 0.5) * 0x1p41;

        assert_int_equal(own_llround(x), llround(x));
        x = (double)(int64_t)(rng >> 30) / 2; /* halves */
        assert_int_equal(own_llround(x), llround(x));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp_within_two_ulp),
        cmocka_unit_test(test_exp_edges),
        cmocka_unit_test(test_llround_as_libm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
