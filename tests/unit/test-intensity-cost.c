/* SPDX-License-Identifier: MIT */
/*
 * What the intensity estimator costs per window, printed, not asserted (the machine is
 * shared; docs and the header quote these figures): a few classes, 64 live classes, and
 * the 256-class cap with 120 processes in every window. Each configuration runs 1 s
 * windows, so every window completes a row and solves (the worst case: with shorter
 * windows the solve is paid once per second). The test asserts only that the estimator
 * runs and stays bounded in what it tracks.
 */
#include "testutil.h"

#include <stdlib.h>
#include <time.h>

#include "intensity.h"

#define S UINT64_C(1000000)
#define MAX_N 128

static double now_us(void) {
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* n processes per window drawn from n_classes classes; returns the mean us per window. */
static double measure(unsigned n_classes, size_t n, unsigned windows) {
    struct intensity_consumer c[MAX_N];
    struct intensity_share sh[MAX_N];
    struct intensity_result res;
    struct intensity_gpu *g;
    uint64_t rng = n_classes * 1000 + n;
    double start, elapsed = 0;

    ASSERT_OK(intensity_gpu_new(NULL, NULL, &g));
    for (unsigned w = 0; w < windows; w++) {
        double energy = 60;

        for (size_t i = 0; i < n; i++) {
            uint64_t cls = (w / 8 + i) % n_classes;

            c[i] = (struct intensity_consumer){
                .class_key = cls + 1,
                .activity = test_rand_below(&rng, 100) * S / (n > 10 ? 10 : 1),
            };
            energy += (double)(20 + 5 * (cls % 80)) * (double)c[i].activity / 1e8;
        }
        start = now_us();
        ASSERT_OK(intensity_window(g,
                                   &(struct intensity_window){.duration_us = S,
                                                              .context_us = S,
                                                              .energy_uj = (uint64_t)(energy * 1e6),
                                                              .learn = true,
                                                              .idle_prior_known = true,
                                                              .idle_prior_w = 60,
                                                              .n = n,
                                                              .consumers = c},
                                   sh, &res));
        elapsed += now_us() - start;
    }
    intensity_gpu_free(g);
    return elapsed / windows;
}

static void test_cost_per_window(void **state) {
    static const struct {
        unsigned classes;
        size_t n;
        unsigned windows;
        const char *what;
    } cases[] = {
        {4, 8, 400, "4 classes, 8 processes"},
        {64, 16, 100, "64 classes, 16 processes per window"},
        {256, 120, 50, "256 classes, 120 processes per window"},
    };
    unsigned windows = getenv("JOULESTAT_COST_WINDOWS") ? 4 : 1;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        print_message("%-40s %8.1f us per window (one row and one solve each)\n", cases[i].what,
                      measure(cases[i].classes, cases[i].n, windows * cases[i].windows));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_per_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
