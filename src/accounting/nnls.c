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

/* x = H^-1 rhs over m parameters from H's factor, its rows `stride` apart; x may be rhs. */
static void chol_solve_rows(const double *l, size_t stride, size_t m, const double *rhs,
                            double *x) {
    for (size_t i = 0; i < m; i++)
        x[i] = (rhs[i] - dot(&l[i * stride], x, i)) / l[i * stride + i];
    /* L' x = y by rows of L: each x[i] found takes its part from the ones before it. */
    for (size_t i = m; i-- > 0;) {
        double xi = x[i] / l[i * stride + i];

        x[i] = xi;
        for (size_t k = 0; k < i; k++)
            x[k] -= l[i * stride + k] * xi;
    }
}

void dense_chol_solve(const double *l, size_t n, const double *rhs, double *x) {
    chol_solve_rows(l, n, n, rhs, x);
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

/*
 * The free set's factor, kept from step to step: free_at[0..m) in the factor's order, its
 * rows in l with a stride of n. A step frees or binds a few parameters; changing the factor
 * for each costs O(m^2), where factoring again cost O(m^3) (the fit's solves took four
 * factorisations of 60 parameters, most of their time).
 */

/* Appends parameter a to the factor of m. false when the matrix is no longer positive
 * definite (in rounding). */
static bool factor_append(const double *h, size_t n, size_t m, size_t a,
                          const struct nnls_work *w) {
    double *row = &w->l[m * n], d;

    for (size_t j = 0; j < m; j++)
        row[j] = (h[a * n + w->free_at[j]] - dot(row, &w->l[j * n], j)) / w->l[j * n + j];
    d = h[a * n + a] - dot(row, row, m);
    if (!(d > 0))
        return false;
    row[m] = sqrt(d);
    w->free_at[m] = (uint32_t)a;
    return true;
}

/* Factors the free set free_at[0..m) from scratch, a row at a time. */
static bool factor_free(const double *h, size_t n, size_t m, const struct nnls_work *w) {
    for (size_t i = 0; i < m; i++)
        if (!factor_append(h, n, i, w->free_at[i], w))
            return false;
    return true;
}

/* Removes position k from the factor of m: its row goes, and rotations of neighbouring
 * columns (Givens) make the rows below it triangular again. */
static void factor_remove(size_t n, size_t m, size_t k, const struct nnls_work *w) {
    double *l = w->l;

    for (size_t i = k; i + 1 < m; i++) {
        for (size_t j = 0; j <= i + 1; j++)
            l[i * n + j] = l[(i + 1) * n + j];
        w->free_at[i] = w->free_at[i + 1];
    }
    for (size_t j = k; j + 1 < m; j++) {
        double a = l[j * n + j], b = l[j * n + j + 1], r = sqrt(a * a + b * b), c = a / r,
               s = b / r;

        for (size_t i = j; i + 1 < m; i++) {
            double u = l[i * n + j], v = l[i * n + j + 1];

            l[i * n + j] = c * u + s * v;
            l[i * n + j + 1] = c * v - s * u;
        }
    }
}

/* z = H_FF^-1 g_F over the m free parameters from their factor, 0 elsewhere. */
static void solve_free(const double *g, size_t n, size_t m, const struct nnls_work *w) {
    for (size_t i = 0; i < m; i++)
        w->c[i] = g[w->free_at[i]];
    chol_solve_rows(w->l, n, m, w->c, w->c);
    for (size_t a = 0; a < n; a++)
        w->z[a] = 0;
    for (size_t i = 0; i < m; i++)
        w->z[w->free_at[i]] = w->c[i];
}

/* Binds the free parameters with z <= 0 (x NULL), or the blocker and those x puts at 0,
 * keeping the factor. Returns the new m. */
static size_t bind_where(size_t n, size_t m, const struct nnls_work *w, const double *x,
                         size_t blocker) {
    for (size_t i = m; i-- > 0;) {
        size_t a = w->free_at[i];
        bool bind = x ? a == blocker || x[a] <= 0 : w->z[a] <= 0;

        if (!bind)
            continue;
        w->free_set[a] = false;
        factor_remove(n, m, i, w);
        m--;
    }
    return m;
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
 * orthant, steps back to the first free parameter that reaches 0 and binds it. The free
 * set is factored once; each step then changes its factor by the parameters it frees or
 * binds.
 */
int nnls_solve(const double *h, const double *g, size_t n, const struct nnls_work *w, double tol,
               unsigned max_steps, double *x) {
    bool started = false;
    size_t m = 0;

    for (size_t a = 0; a < n; a++) {
        x[a] = 0;
        if (w->free_set[a])
            w->free_at[m++] = (uint32_t)a;
    }
    if (!factor_free(h, n, m, w))
        return -EDOM;
    for (unsigned step = 0; step < max_steps; step++) {
        double alpha = 1;
        size_t blocker = SIZE_MAX, add;

        solve_free(g, n, m, w);
        if (!started) {
            size_t kept = bind_where(n, m, w, NULL, SIZE_MAX);

            started = kept == m;
            m = kept;
            if (!started)
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
                if (a == blocker || x[a] <= 0)
                    x[a] = 0;
            }
            m = bind_where(n, m, w, x, blocker);
            continue;
        }
        for (size_t a = 0; a < n; a++)
            x[a] = w->z[a];
        add = most_wanting(h, g, n, w->free_set, x, tol);
        if (add == SIZE_MAX)
            return (int)step + 1;
        if (!factor_append(h, n, m, add, w))
            return -EDOM;
        w->free_set[add] = true;
        m++;
    }
    return -ERANGE;
}
