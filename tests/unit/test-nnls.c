/* SPDX-License-Identifier: MIT */
/*
 * The intensity fit's dense solves: non-negative least squares on the normal equations
 * checked against its optimality conditions and, for up to 8 parameters, against every
 * active set tried in turn; the start set changes nothing; an ill-conditioned 60-parameter
 * system (classes of constant load, where coordinate descent stalled) solved exactly; a
 * singular system refused; the inverse's diagonal.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "nnls.h"

#define MAX_N 64
#define TOL 1e-9

struct problem {
    size_t n;
    double h[MAX_N * MAX_N], g[MAX_N];
};

static double uniform(uint64_t *rng) {
    return (double)test_rand_below(rng, 1u << 30) / (double)(1u << 30) * 2 - 1;
}

/* H = A'A + ridge, A with n columns; near-copies of earlier columns where collinear. */
static void random_problem(struct problem *p, size_t n, size_t rows, bool collinear,
                           uint64_t *rng) {
    double a[128][MAX_N];

    p->n = n;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < n; c++)
            a[r][c] = collinear && c > 0 && test_rand_below(rng, 2)
                          ? a[r][test_rand_below(rng, c)] * (1 + 1e-3 * uniform(rng))
                          : uniform(rng);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            double v = 0;

            for (size_t r = 0; r < rows; r++)
                v += a[r][i] * a[r][j];
            p->h[i * n + j] = v + (i == j ? 1e-6 : 0);
        }
        p->g[i] = uniform(rng) * (double)rows;
    }
}

struct room {
    double l[MAX_N * MAX_N], z[MAX_N], c[MAX_N];
    uint32_t free_at[MAX_N];
    bool free_set[MAX_N];
};

static struct nnls_work work(struct room *r) {
    return (struct nnls_work){
        .l = r->l, .z = r->z, .c = r->c, .free_at = r->free_at, .free_set = r->free_set};
}

static double objective(const struct problem *p, const double *x) {
    double v = 0;

    for (size_t i = 0; i < p->n; i++) {
        v -= p->g[i] * x[i];
        for (size_t j = 0; j < p->n; j++)
            v += 0.5 * x[i] * p->h[i * p->n + j] * x[j];
    }
    return v;
}

/* x >= 0; a positive parameter has no pull left; one at 0 wants to move by at most tol. */
static void assert_optimal(const struct problem *p, const double *x, double tol) {
    for (size_t a = 0; a < p->n; a++) {
        double want = p->g[a];

        assert_true(x[a] >= 0);
        for (size_t c = 0; c < p->n; c++)
            want -= p->h[a * p->n + c] * x[c];
        want /= p->h[a * p->n + a];
        if (x[a] > 0 ? fabs(want) > 1e-6 * (1 + x[a]) : want > tol + 1e-9)
            fail_msg("parameter %zu of %zu: x %g, still wants %g", a, p->n, x[a], want);
    }
}

/* The lowest objective of the solutions of every free set that are non-negative. */
static double brute_force(const struct problem *p) {
    struct room r;
    double best = 0, x[MAX_N];

    for (unsigned set = 1; set < 1u << p->n; set++) {
        struct nnls_work w = work(&r);
        size_t m = 0;
        bool ok = true;

        for (size_t a = 0; a < p->n; a++)
            if (set & 1u << a)
                r.free_at[m++] = (uint32_t)a;
        for (size_t i = 0; i < m; i++) {
            for (size_t j = 0; j < m; j++)
                w.l[i * m + j] = p->h[r.free_at[i] * p->n + r.free_at[j]];
            r.c[i] = p->g[r.free_at[i]];
        }
        assert_true(dense_cholesky(w.l, m));
        dense_chol_solve(w.l, m, r.c, r.c);
        for (size_t a = 0; a < p->n; a++)
            x[a] = 0;
        for (size_t i = 0; i < m; i++) {
            ok = ok && r.c[i] >= 0;
            x[r.free_at[i]] = r.c[i];
        }
        if (ok && objective(p, x) < best)
            best = objective(p, x);
    }
    return best;
}

static void test_optimal_against_every_set(void **state) {
    uint64_t rng = 2024;
    unsigned steps = 0, cases = 20000;

    for (unsigned k = 0; k < cases; k++) {
        struct problem p;
        struct room r;
        struct nnls_work w = work(&r);
        size_t n = 1 + test_rand_below(&rng, 8);
        double x[MAX_N], want;
        int ret;

        random_problem(&p, n, n + test_rand_below(&rng, 12), test_rand_below(&rng, 3) == 0, &rng);
        for (size_t a = 0; a < n; a++)
            r.free_set[a] = test_rand_below(&rng, 2);
        ret = nnls_solve(p.h, p.g, n, &w, TOL, 40, x);
        ASSERT_OK(ret);
        steps += (unsigned)ret;
        assert_optimal(&p, x, TOL);
        want = brute_force(&p);
        if (objective(&p, x) > want + 1e-9 * (1 + fabs(want)))
            fail_msg("case %u: objective %.12g, best set %.12g", k, objective(&p, x), want);
        for (size_t a = 0; a < n; a++)
            assert_true(!(x[a] > 0) || r.free_set[a]);
    }
    print_message("%u cases, %.2f factorisations each\n", cases, (double)steps / cases);
}

static void test_start_set_changes_nothing(void **state) {
    uint64_t rng = 77;

    for (unsigned k = 0; k < 500; k++) {
        struct problem p;
        struct room r;
        struct nnls_work w = work(&r);
        size_t n = 2 + test_rand_below(&rng, 20);
        double first[MAX_N], x[MAX_N];

        random_problem(&p, n, n + 10, k % 2, &rng);
        for (unsigned start = 0; start < 3; start++) {
            for (size_t a = 0; a < n; a++)
                r.free_set[a] = start == 0 ? true : start == 1 ? false : test_rand_below(&rng, 2);
            ASSERT_OK(nnls_solve(p.h, p.g, n, &w, TOL, 200, start ? x : first));
        }
        for (size_t a = 0; a < n; a++)
            assert_true(fabs(x[a] - first[a]) <= 1e-7 * (1 + fabs(first[a])));
    }
}

/* A 60-class system of groups of near-copies of one load (H ill-conditioned, as on a GPU
 * of constant-load processes), solved in at most max_steps: from the unconstrained
 * solution's positive part, as the intensity fit starts, or from nothing free. */
static int solve_collinear(uint64_t *rng, bool from_unconstrained, unsigned max_steps,
                           struct problem *p, double *x) {
    struct room r;
    struct nnls_work w = work(&r);

    random_problem(p, 60, 100, true, rng);
    memcpy(w.l, p->h, sizeof(p->h[0]) * 60 * 60);
    assert_true(dense_cholesky(w.l, 60));
    dense_chol_solve(w.l, 60, p->g, x);
    for (size_t a = 0; a < 60; a++)
        r.free_set[a] = from_unconstrained && x[a] > 0;
    return nnls_solve(p->h, p->g, 60, &w, TOL, max_steps, x);
}

/* The optimum is reached in a few steps. */
static void test_ill_conditioned(void **state) {
    uint64_t rng = 5;
    unsigned worst = 0;

    for (unsigned k = 0; k < 20; k++) {
        struct problem p;
        double x[MAX_N];
        int ret = solve_collinear(&rng, true, 200, &p, x);

        ASSERT_OK(ret);
        assert_optimal(&p, x, TOL);
        worst = (unsigned)ret > worst ? (unsigned)ret : worst;
    }
    print_message("at most %u steps\n", worst);
}

static void test_singular_refused(void **state) {
    /* Two copies of one parameter: no free set holding both can be factored. */
    const double h[] = {1, 1, 1, 1}, g[] = {1, 1};
    struct room r;
    struct nnls_work w = work(&r);
    double x[2] = {5, 5};

    r.free_set[0] = r.free_set[1] = true;
    assert_int_equal(nnls_solve(h, g, 2, &w, TOL, 40, x), -EDOM);
    assert_true(x[0] >= 0 && x[1] >= 0);
    /* From one of them, the other never needs freeing: the optimum. */
    r.free_set[0] = true;
    r.free_set[1] = false;
    assert_int_equal(nnls_solve(h, g, 2, &w, TOL, 40, x), 1);
    assert_true(fabs(x[0] - 1) < 1e-12 && !(x[1] > 0));
}

/* Out of steps: -ERANGE, and x is still feasible (the fit keeps it as an estimate). */
static void test_out_of_steps(void **state) {
    uint64_t rng = 5;
    unsigned cut = 0;

    for (unsigned k = 0; k < 20; k++) {
        struct problem p;
        double x[MAX_N];
        int ret = solve_collinear(&rng, false, 2, &p, x);

        if (ret == -ERANGE)
            cut++;
        else
            ASSERT_OK(ret);
        for (size_t a = 0; a < 60; a++)
            assert_true(x[a] >= 0);
    }
    assert_true(cut > 0); /* from nothing free, 60 parameters need more than 2 steps */
}

static void test_inverse_diagonal(void **state) {
    /* H = [[4, 2, 0], [2, 5, 1], [0, 1, 3]]: det 44; diag(H^-1) = (14, 12, 16) / 44. */
    double l[] = {4, 2, 0, 2, 5, 1, 0, 1, 3}, y[3], d[3];

    assert_true(dense_cholesky(l, 3));
    dense_inverse_diagonal(l, 3, y, d);
    assert_true(fabs(d[0] - 14.0 / 44) < 1e-12);
    assert_true(fabs(d[1] - 12.0 / 44) < 1e-12);
    assert_true(fabs(d[2] - 16.0 / 44) < 1e-12);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_optimal_against_every_set),
        cmocka_unit_test(test_start_set_changes_nothing),
        cmocka_unit_test(test_ill_conditioned),
        cmocka_unit_test(test_singular_refused),
        cmocka_unit_test(test_out_of_steps),
        cmocka_unit_test(test_inverse_diagonal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
