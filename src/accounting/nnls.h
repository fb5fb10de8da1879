/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Small dense solves for the intensity fit: Cholesky factors of symmetric positive definite
 * matrices (row-major n x n, lower triangle used) and non-negative least squares on the
 * normal equations: min x'Hx/2 - g'x over x >= 0.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* In-place Cholesky factor of l (lower). Returns false if it is not positive definite. */
bool dense_cholesky(double *l, size_t n);
/* x = H^-1 rhs from H's factor l; x may be rhs. */
void dense_chol_solve(const double *l, size_t n, const double *rhs, double *x);
/* out = diag(H^-1) from H's factor l; y is n doubles of room. */
void dense_inverse_diagonal(const double *l, size_t n, double *y, double *out);

/* Room for nnls_solve() over n parameters. */
struct nnls_work {
    double *l;         /* n x n */
    double *z, *c;     /* n each */
    uint32_t *free_at; /* n */
    bool *free_set;    /* n: on entry, the free set to start from (a guess); on return, the
                        * parameters left free */
};

/* Solves min x'Hx/2 - g'x, x >= 0, for H (n x n) positive definite. A parameter held at 0 is
 * freed when it wants to move by more than tol (in x's units, alone). Returns the number of
 * steps (solves of a free set) taken; -ERANGE after max_steps (x then holds the last feasible
 * point) or -EDOM if a free set's matrix is not positive definite (x is then feasible, not
 * optimal). */
int nnls_solve(const double *h, const double *g, size_t n, const struct nnls_work *w, double tol,
               unsigned max_steps, double *x);
