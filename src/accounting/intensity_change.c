/* SPDX-License-Identifier: MIT */
/*
 * Phase changes: each row's error against the current fit is watched before the row is
 * learned from; a run of large errors of one sign is a change of phase (a trainer going
 * to evaluation), not noise, which misses on both sides.
 */
#include <stdlib.h>

#include "intensity_internal.h"

/* A phase change (a trainer going to evaluation): this many rows in a row, each off the
 * current fit by more than CHANGE_SIGMAS residual deviations on the same side, and the
 * past is forgotten down to CHANGE_KEEP of its weight, so the new phase is followed in a
 * few rows instead of several time constants. */
#define CHANGE_ROWS 3
#define CHANGE_SIGMAS 4.0
#define CHANGE_KEEP 0.001
/* The out-of-sample error is a mean over about this many rows. */
#define OOS_ROWS 10U

/* Keeps a row every class of which the fit knows: a window with newcomers is predicted by
 * the fit, corrected by what the fit misses on such rows near it (intensity_posterior.c). */
static void keep_reference(struct intensity_gpu *g, const struct intensity_row *row) {
    struct reference_row *ref = &g->refs[g->next_ref];

    if (row->n_touched > REFERENCE_CLASSES || row->dt_s <= 0)
        return;
    *ref = (struct reference_row){.dt_s = row->dt_s,
                                  .ctx_s = row->ctx_s,
                                  .energy_j = row->energy_j,
                                  .end_s = row->end_s,
                                  .n = (unsigned)row->n_touched};
    for (size_t k = 0; k < row->n_touched; k++) {
        uint32_t s = row->touched[k];

        ref->key[k] = g->classes[s].key;
        ref->slot[k] = s;
        ref->act[k] = row->act[s];
    }
    g->next_ref = (g->next_ref + 1) % REFERENCE_ROWS;
    if (g->n_refs < REFERENCE_ROWS)
        g->n_refs++;
}

void intensity_watch_change(struct intensity_gpu *g, const struct intensity_row *row) {
    double predicted = g->theta[PARAM_IDLE] * row->dt_s + g->theta[PARAM_CTX] * row->ctx_s;
    double z;

    for (size_t k = 0; k < row->n_touched; k++) {
        uint32_t s = row->touched[k];

        if (g->m[normal_at(PARAM_CLASS0 + s, PARAM_CLASS0 + s)] <= 0 &&
            !g->has_memory[PARAM_CLASS0 + s]) {
            g->change_run = 0; /* a class with nothing learned yet: no prediction */
            return;
        }
        predicted += g->theta[PARAM_CLASS0 + s] * row->act[s];
    }
    keep_reference(g, row);
    if (row->dt_s > 0 && g->rows > 0) {
        double e = row->energy_j - predicted,
               wt = g->oos_rows < OOS_ROWS ? 1.0 / ++g->oos_rows : 1.0 / OOS_ROWS;

        g->oos_err2 += wt * (e * e / row->dt_s - g->oos_err2);
    }
    if (g->dof < 2 || !(g->sigma_j > 0)) {
        g->change_run = 0;
        return;
    }
    /* Against the deviation from before the run: the rows of a new phase, once learned,
     * inflate the fit's own. */
    if (g->change_run == 0)
        g->change_sigma_j = g->sigma_j;
    z = (row->energy_j - predicted) / g->change_sigma_j;
    if (z > CHANGE_SIGMAS)
        g->change_run = g->change_run > 0 ? g->change_run + 1 : 1;
    else if (z < -CHANGE_SIGMAS)
        g->change_run = g->change_run < 0 ? g->change_run - 1 : -1;
    else
        g->change_run = 0;
    if (abs(g->change_run) >= CHANGE_ROWS) {
        /* As if the rows so far were much older than they are. */
        intensity_scale_sums(g, CHANGE_KEEP);
        g->n_refs = 0; /* rows of the old phase */
        /* What the present classes had learned is part of that past. */
        for (size_t k = 0; k < row->n_touched; k++)
            g->has_memory[PARAM_CLASS0 + row->touched[k]] = false;
        g->change_run = 0;
    }
}
