/* SPDX-License-Identifier: MIT */
#include "nnls.h"

#include <errno.h>
#include <math.h>

/* a . b over n elements, in four partial sums: the solves' inner loop, which one running
 * sum would hold to a floating-point add's latency per element. */
static double dot(const double *a, const double *b, size_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t k = 0;

    for (; k + 4 <= n; k += 4) {
        s0 += a[k] * b[k];
        s1 += a[k + 1] * b[k + 1];
        s2 += a[k + 2] * b[k + 2];
        s3 += a[k + 3] * b[k + 3];
    }
    for (; k < n; k++)
        s0 += a[k] * b[k];
    return (s0 + s1) + (s2 + s3);
}

bool dense_cholesky(double *l, size_t n) {
    for (size_t j = 0; j < n; j++) {
        double d = l[j * n + j] - dot(&l[j * n], &l[j * n], j);

        if (!(d > 0))
            return false;
        d = sqrt(d);
        l[j * n + j] = d;
        for (size_t i = j + 1; i < n; i++)
            l[i * n + j] = (l[i * n + j] - dot(&l[i * n], &l[j * n], j)) / d;
    }
    return true;
}

void dense_chol_solve(const double *l, size_t n, const double *rhs, double *x) {
    for (size_t i = 0; i < n; i++)
        x[i] = (rhs[i] - dot(&l[i * n], x, i)) / l[i * n + i];
    /* L' x = y by rows of L: each x[i] found takes its part from the ones before it. */
    for (size_t i = n; i-- > 0;) {
        double xi = x[i] / l[i * n + i];

        x[i] = xi;
        for (size_t k = 0; k < i; k++)
            x[k] -= l[i * n + k] * xi;
    }
}

/* Column j of L^-1 by forward substitution, summed in squares. */
void dense_inverse_diagonal(const double *l, size_t n, double *y, double *out) {
    for (size_t j = 0; j < n; j++) {
        double sum;

        y[j] = 1 / l[j * n + j];
        sum = y[j] * y[j];
        for (size_t i = j + 1; i < n; i++) {
            y[i] = -dot(&l[i * n + j], &y[j], i - j) / l[i * n + i];
            sum += y[i] * y[i];
        }
        out[j] = sum;
    }
}

/* z = H_FF^-1 g_F over the m free parameters, 0 elsewhere. */
static bool solve_free(const double *h, const double *g, size_t n, size_t m,
                       const struct nnls_work *w) {
    const uint32_t *f = w->free_at;

    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j <= i; j++)
            w->l[i * m + j] = h[f[i] * n + f[j]];
    if (!dense_cholesky(w->l, m))
        return false;
    for (size_t i = 0; i < m; i++)
        w->c[i] = g[f[i]];
    dense_chol_solve(w->l, m, w->c, w->c);
    for (size_t a = 0; a < n; a++)
        w->z[a] = 0;
    for (size_t i = 0; i < m; i++)
        w->z[f[i]] = w->c[i];
    return true;
}

/* The bound parameter that most wants to move, by more than tol; SIZE_MAX if none. */
static size_t most_wanting(const double *h, const double *g, size_t n, const bool *free_set,
                           const double *x, double tol) {
    size_t add = SIZE_MAX;
    double best = tol;

    for (size_t a = 0; a < n; a++) {
        double want = g[a];

        if (free_set[a])
            continue;
        want = (want - dot(&h[a * n], x, n)) / h[a * n + a];
        if (want > best) {
            best = want;
            add = a;
        }
    }
    return add;
}

/*
 * Active sets (Lawson and Hanson's NNLS, on the normal equations). The free set given is
 * shrunk until its own solution is positive, a feasible start; from there each step frees
 * the bound parameter that most wants to move and, where the new solution leaves the
 * orthant, steps back to the first free parameter that reaches 0 and binds it. Started from
 * the last solve's set, one or two factorisations usually do.
 */
int nnls_solve(const double *h, const double *g, size_t n, const struct nnls_work *w, double tol,
               unsigned max_steps, double *x) {
    bool started = false;

    for (size_t a = 0; a < n; a++)
        x[a] = 0;
    for (unsigned step = 0; step < max_steps; step++) {
        double alpha = 1;
        size_t m = 0, blocker = SIZE_MAX, add;

        for (size_t a = 0; a < n; a++)
            if (w->free_set[a])
                w->free_at[m++] = (uint32_t)a;
        if (!solve_free(h, g, n, m, w))
            return -EDOM;
        if (!started) {
            bool dropped = false;

            for (size_t i = 0; i < m; i++)
                if (w->z[w->free_at[i]] <= 0) {
                    w->free_set[w->free_at[i]] = false;
                    dropped = true;
                }
            started = !dropped;
            if (dropped)
                continue;
        }
        for (size_t i = 0; i < m; i++) {
            size_t a = w->free_at[i];

            if (w->z[a] <= 0 && x[a] / (x[a] - w->z[a]) < alpha) {
                alpha = x[a] / (x[a] - w->z[a]);
                blocker = a;
            }
        }
        if (blocker != SIZE_MAX) {
            for (size_t i = 0; i < m; i++) {
                size_t a = w->free_at[i];

                x[a] += alpha * (w->z[a] - x[a]);
                if (a == blocker || x[a] <= 0) {
                    x[a] = 0;
                    w->free_set[a] = false;
                }
            }
            continue;
        }
        for (size_t a = 0; a < n; a++)
            x[a] = w->z[a];
        add = most_wanting(h, g, n, w->free_set, x, tol);
        if (add == SIZE_MAX)
            return (int)step + 1;
        w->free_set[add] = true;
    }
    return -ERANGE;
}
