/* SPDX-License-Identifier: MIT */
/*
 * The solve behind intensity.c: non-negative least squares over the live parameters, with
 * each parameter's memory as a prior, and per parameter whether it is identifiable.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "intensity_internal.h"
#include "nnls.h"
#include "own_math.h"

/* Classes not seen for this many time constants leave the live set (their data has
 * decayed below e^-5); they keep their estimate and memory. */
#define LIVE_SPAN_TAUS 5.0
/* The non-negative solve: steps at most, and how far (W) a class held at 0 must
 * want to move to be freed. */
#define MAX_NNLS_STEPS 40
#define NNLS_TOLERANCE_W 1e-6
/* The weak ridge that keeps the system positive definite: this part of the diagonal. */
#define RIDGE_PART 1e-6
#define RIDGE_FLOOR 1e-9
/* Residual standard deviation floor: this part of the rows' rms energy (the model is
 * never exact, and a noise-free fit must not make every estimate look certain). */
#define SIGMA_FLOOR_PART 1e-3
/* Degrees of freedom below this: too few rows for the parameters. */
#define MIN_DOF 2.0
/* A class's standard error may always reach this part of the GPU's mean intensity. */
#define REF_SE_PART 0.05

/* Room for a solve over n class slots: at most max_live of them are live, and a GPU with a
 * few workloads needs a few (a full 64 are 35 KiB per matrix). */
static int reserve_solve(struct intensity_gpu *g, size_t n) {
    size_t want = (n < g->opt.max_live ? n : g->opt.max_live) + PARAM_CLASS0;
    struct intensity_scratch *s = g->scratch;
    double **vectors[] = {&g->g, &g->x, &g->r, &g->z, &g->c, &g->hinv_diag};
    uint32_t *u;
    bool *f;

    if (s->cap < want) {
        double *h = reallocarray(s->h, want * want, sizeof(*h));

        if (!h)
            return -ENOMEM;
        s->h = h;
        h = reallocarray(s->chol, want * want, sizeof(*h));
        if (!h)
            return -ENOMEM;
        s->chol = h;
        s->cap = want;
    }
    if (g->solve_cap < want) {
        for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
            double *v = reallocarray(*vectors[i], want, sizeof(*v));

            if (!v)
                return -ENOMEM;
            *vectors[i] = v;
        }
        u = reallocarray(g->live, want, sizeof(*u));
        if (!u)
            return -ENOMEM;
        g->live = u;
        u = reallocarray(g->free_at, want, sizeof(*u));
        if (!u)
            return -ENOMEM;
        g->free_at = u;
        f = reallocarray(g->free_set, want, sizeof(*f));
        if (!f)
            return -ENOMEM;
        g->free_set = f;
        g->solve_cap = want;
    }
    /* frozen[] holds up to every slot; it grows with the slots. */
    if (g->frozen_cap < n) {
        u = reallocarray(g->frozen, n, sizeof(*u));
        if (!u)
            return -ENOMEM;
        g->frozen = u;
        g->frozen_cap = n;
    }
    return 0;
}

static double stored(const struct intensity_gpu *g, size_t i, size_t j) {
    return g->m[normal_at(i, j)];
}

/* The weight now of parameter p's most recent row: e^(-age / tau), at most 1. */
static double class_weight_now(const struct intensity_gpu *g, size_t p) {
    double age = g->clock_s - g->classes[p - PARAM_CLASS0].last_seen_s;

    return age > 0 ? own_exp(-age / g->opt.tau_s) : 1;
}

/* Splits the classes with data into live (recently seen, most recent first, capped) and
 * frozen. live[0..1] are P_idle and P_ctx. Returns the live count; *ret_frozen the rest. */
static size_t select_live(struct intensity_gpu *g, size_t *ret_frozen) {
    double since = g->clock_s - LIVE_SPAN_TAUS * g->opt.tau_s;
    size_t n_live = PARAM_CLASS0, n_frozen = 0, max_live = g->opt.max_live + PARAM_CLASS0;

    g->live[PARAM_IDLE] = PARAM_IDLE;
    g->live[PARAM_CTX] = PARAM_CTX;
    for (size_t s = 0; s < g->cap; s++) {
        uint32_t p = (uint32_t)(PARAM_CLASS0 + s);

        if (!g->classes[s].in_use || stored(g, p, p) <= 0)
            continue;
        if (g->classes[s].last_seen_s < since) {
            g->frozen[n_frozen++] = p;
            continue;
        }
        /* Insertion by last seen, newest first; the oldest falls out to frozen. */
        size_t at = n_live;
        while (at > PARAM_CLASS0 &&
               g->classes[g->live[at - 1] - PARAM_CLASS0].last_seen_s < g->classes[s].last_seen_s)
            at--;
        if (at >= max_live) {
            g->frozen[n_frozen++] = p;
            continue;
        }
        if (n_live == max_live)
            g->frozen[n_frozen++] = g->live[--n_live];
        memmove(&g->live[at + 1], &g->live[at], (n_live - at) * sizeof(*g->live));
        g->live[at] = p;
        n_live++;
    }
    *ret_frozen = n_frozen;
    return n_live;
}

/* H and g over the live parameters, priors included; frozen classes enter as constants. */
static void assemble(struct intensity_gpu *g, size_t n, size_t n_frozen, double s) {
    double *h = g->scratch->h;

    for (size_t a = 0; a < n; a++) {
        size_t p = g->live[a];
        double ga = s * g->b[p], ridge, center, prior = 0, prior_at = 0;

        for (size_t c = 0; c < n; c++)
            h[a * n + c] = s * stored(g, p, g->live[c]);
        for (size_t f = 0; f < n_frozen; f++)
            ga -= s * stored(g, p, g->frozen[f]) * g->theta[g->frozen[f]];

        if (p == PARAM_IDLE && g->idle_prior_known) {
            prior = g->opt.idle_prior_weight;
            prior_at = g->idle_prior_w;
        } else if (g->has_memory[p]) {
            prior = g->opt.memory_weight;
            prior_at = g->memory[p];
        }
        center = p >= PARAM_CLASS0 ? g->kappa_ref : 0;
        ridge = RIDGE_PART * h[a * n + a] + RIDGE_FLOOR;
        h[a * n + a] += prior + ridge;
        g->g[a] = ga + prior * prior_at + ridge * center;
    }
}

/* The residual sum of squares of the data (no priors) at the new estimates. */
static double residual_ss(const struct intensity_gpu *g, size_t n, size_t n_frozen, double s) {
    double quad = 0, lin = 0;
    size_t total = n + n_frozen;

    for (size_t a = 0; a < total; a++) {
        size_t p = a < n ? g->live[a] : g->frozen[a - n];
        double tp = a < n ? g->x[a] : g->theta[p];

        lin += tp * g->b[p];
        for (size_t c = 0; c < total; c++) {
            size_t q = c < n ? g->live[c] : g->frozen[c - n];
            double tq = c < n ? g->x[c] : g->theta[q];

            quad += tp * tq * stored(g, p, q);
        }
    }
    return s * (g->syy - 2 * lin + quad);
}

/* A solve that failed: every live parameter keeps what it had learned, nothing new. */
static int learn_nothing(struct intensity_gpu *g, size_t n) {
    g->ctx_info = 0;
    for (size_t a = 0; a < n; a++)
        g->learned[g->live[a]] = g->has_memory[g->live[a]];
    g->dof = 0;
    return 0;
}

int intensity_solve(struct intensity_gpu *g) {
    double s = intensity_decay_now(g), rss, sigma, neff, ref_num = 0, ref_den = 0;
    double n_data;
    size_t n, n_frozen;
    bool positive = true;
    int r;

    r = reserve_solve(g, g->cap);
    if (r < 0)
        return r;
    n = select_live(g, &n_frozen);
    assemble(g, n, n_frozen, s);
    memcpy(g->scratch->chol, g->scratch->h, n * n * sizeof(*g->scratch->chol));
    if (!dense_cholesky(g->scratch->chol, n))
        return learn_nothing(g, n); /* not positive definite even with the ridge */
    dense_chol_solve(g->scratch->chol, n, g->g, g->x);
    dense_inverse_diagonal(g->scratch->chol, n, g->r, g->hinv_diag);
    for (size_t a = 0; a < n; a++)
        positive = positive && g->x[a] >= 0;
    if (!positive) {
        /* The optimum over x >= 0, from the last solve's free set: the parameters with a
         * positive estimate (a new class starts at the GPU's mean intensity). Its room is
         * the factor's, no longer needed. */
        struct nnls_work w = {.l = g->scratch->chol,
                              .z = g->z,
                              .c = g->c,
                              .free_at = g->free_at,
                              .free_set = g->free_set};

        for (size_t a = 0; a < n; a++)
            g->free_set[a] = g->theta[g->live[a]] > 0;
        /* -ERANGE leaves the last feasible point, an estimate all the same; -EDOM (a free
         * set's matrix, part of one just factored, fails in rounding) leaves none. */
        if (nnls_solve(g->scratch->h, g->g, n, &w, NNLS_TOLERANCE_W, MAX_NNLS_STEPS, g->x) == -EDOM)
            return learn_nothing(g, n);
    }

    /* Parameters with data: the intercepts (when seen) and every class with rows. A class
     * fitted to rows that have since faded uses up only what they still weigh: a run of
     * 80 ms seen 30 s ago fits its own row exactly, and that row now counts e^-2. */
    n_data = 0;
    for (size_t f = 0; f < n_frozen; f++)
        n_data += class_weight_now(g, g->frozen[f]);
    for (size_t a = 0; a < n; a++)
        if (stored(g, g->live[a], g->live[a]) > 0)
            n_data += g->live[a] < PARAM_CLASS0 ? 1 : class_weight_now(g, g->live[a]);
    neff = s * g->neff;
    rss = residual_ss(g, n, n_frozen, s);
    g->dof = neff - n_data;
    sigma = sqrt((rss > 0 ? rss : 0) / (g->dof > 1 ? g->dof : 1));
    if (neff > 0 && sigma < SIGMA_FLOOR_PART * sqrt(s * g->syy / neff))
        sigma = SIGMA_FLOOR_PART * sqrt(s * g->syy / neff);
    g->sigma_j = sigma;

    for (size_t a = 0; a < n; a++) {
        size_t p = g->live[a];
        double info = 1 / g->hinv_diag[a], se = sigma * sqrt(g->hinv_diag[a]);
        double limit = g->opt.max_rel_se * g->x[a];
        bool ok;

        if (p >= PARAM_CLASS0 && REF_SE_PART * g->kappa_ref > limit)
            limit = REF_SE_PART * g->kappa_ref;
        if (g->opt.min_se_w > limit)
            limit = g->opt.min_se_w;
        ok = g->dof >= MIN_DOF && info >= g->opt.min_info && se <= limit;
        g->theta[p] = g->x[a];
        g->se[p] = se;
        if (p == PARAM_CTX)
            g->ctx_info = info;
        if (p >= PARAM_CLASS0 && stored(g, p, p) > 0)
            intensity_family_update(g, (uint32_t)(p - PARAM_CLASS0), g->x[a], se);
        g->learned[p] = ok;
        if (ok) {
            g->memory[p] = g->x[a];
            g->has_memory[p] = true;
        }
        if (ok && p >= PARAM_CLASS0) {
            double w = stored(g, p, p);

            ref_num += w * g->x[a];
            ref_den += w;
        }
    }
    /* Classes out of the live set hold what they had learned. */
    for (size_t f = 0; f < n_frozen; f++) {
        size_t p = g->frozen[f];

        g->learned[p] = g->has_memory[p];
        g->se[p] = 0;
        if (g->has_memory[p])
            g->theta[p] = g->memory[p];
    }
    if (ref_den > 0)
        g->kappa_ref = ref_num / ref_den;
    return 0;
}
