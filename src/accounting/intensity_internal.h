/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"
#include "intensity.h"

/*
 * Parameters are indexed 0 = P_idle, 1 = P_ctx, PARAM_CLASS0 + slot = kappa of the class
 * in that slot. The normal matrix is dense over the slots allocated so far (stride `dim`):
 * a GPU rarely sees more than a few classes, and the rows touch only the classes present.
 */
#define PARAM_IDLE 0U
#define PARAM_CTX 1U
#define PARAM_CLASS0 2U
#define NO_SLOT UINT32_MAX
/* Percent-microseconds per SM fraction x second. */
#define PCT_US_PER_SM_S 1e8
/* Recent rows the fit could predict, kept to judge its miss near now (intensity_posterior.c):
 * this many, of at most REFERENCE_CLASSES classes each. */
#define REFERENCE_ROWS 4U
#define REFERENCE_CLASSES 4U

struct intensity_row {
    bool open;
    bool tainted; /* a class in it had no slot: dropped instead of learned from */
    double dt_s, ctx_s, energy_j;
    double end_s;     /* learning clock at its end */
    size_t n_touched; /* slots with activity */
    uint32_t *touched;
    double *act; /* [cap] SM fraction x s per slot */
};

/* A row in which every class had something learned, as it was before it was learned from. */
struct reference_row {
    double dt_s, ctx_s, energy_j, end_s;
    unsigned n;
    uint64_t key[REFERENCE_CLASSES]; /* its classes' keys: a slot may be reused */
    uint32_t slot[REFERENCE_CLASSES];
    double act[REFERENCE_CLASSES];
};

struct intensity_class {
    uint64_t key;
    bool in_use;
    double last_seen_s; /* learning clock */
    uint32_t family;    /* family slot + 1, 0 for none */
    /* What its estimate last added to its family: 1/se^2 and theta/se^2, theta^2/se^2. */
    double fam_w, fam_wt, fam_wtt;
};

/* The classes of one command on this GPU (intensity_family.c): pooled estimates for a
 * class too short-lived to be learned alone. Sums over its members' contributions. */
struct intensity_family {
    uint64_t key;
    unsigned members;   /* classes that ever added to it (evicted ones still count) */
    unsigned tracked;   /* classes in the table that belong to it now */
    double last_seen_s; /* learning clock: when one of its classes was last in a window */
    double w, wt, wtt;
};

struct intensity_gpu {
    struct intensity_options opt;

    /* Classes: key -> slot + 1. */
    struct hashmap index;
    size_t cap; /* slots allocated */
    size_t n_used;
    struct intensity_class *classes;

    /* Forgotten normal equations, stored x e^((t - t_ref) / tau) at the time t each row was
     * added; multiply by e^(-(clock - t_ref) / tau) to read them now. */
    size_t dim; /* PARAM_CLASS0 + cap */
    double *m;  /* symmetric dim x dim, packed: see normal_at() */
    double *b;  /* dim */
    double syy, neff;
    double unsaturated; /* rows with the GPU clearly below full activity, stored like neff */
    double t_ref_s;
    double clock_s; /* sum of window durations: immune to clock steps */
    unsigned rows;  /* rows learned from */

    /* Families: key -> slot + 1; at most max_classes, the least recently seen one with no
     * class left in the table making room for a new one. */
    struct hashmap family_index;
    size_t n_families, families_cap;
    struct intensity_family *families;

    /* Per parameter: estimate, memory, state at the last solve. */
    double *theta, *memory, *se;
    bool *has_memory, *learned;
    double kappa_ref; /* the GPU's mean intensity, information-weighted */
    double idle_prior_w;
    bool idle_prior_known;
    double sigma_j, dof;   /* residual standard deviation (J per row), degrees of freedom */
    double ctx_info;       /* P_ctx's conditional information at the last solve, s^2 */
    int change_run;        /* rows in a row far off the fit, signed by the side */
    double change_sigma_j; /* sigma_j when the run began */
    /* How far the fit misses a row it has not learned from yet: a moving mean of the
     * squared error per second of row (J^2/s), over oos_rows rows. */
    double oos_err2;
    unsigned oos_rows;

    /* Rows: the one being gathered, and the last complete one, which waits for the next
     * window's early activity before it is learned from. */
    struct intensity_row cur, pending;
    /* The last rows the fit could predict, newest at refs[(next_ref + REFERENCE_ROWS - 1) %
     * REFERENCE_ROWS]: its miss on them corrects its prediction of a window with newcomers. */
    struct reference_row refs[REFERENCE_ROWS];
    unsigned n_refs, next_ref;

    /* Per-window scratch. */
    size_t win_cap;
    uint32_t *slot_of;   /* per consumer */
    size_t n_slot_of;    /* consumers in slot_of from the last window: hints for this one */
    double *win_kappa_j; /* per consumer: its energy by the window's update (J) */
    double *win_act;     /* [cap] per slot, this window */
    uint32_t *win_touched;
    double *win_kappa;              /* [cap] per slot: the intensity this window's split uses */
    struct class_estimate *win_est; /* [cap] per touched slot: its estimate this window */

    /* Solve scratch, (max_live + 2) parameters at most. */
    size_t solve_cap, frozen_cap;
    uint32_t *live;   /* parameter indices */
    uint32_t *frozen; /* tracked classes with data, not live */
    double *g, *x, *r, *z, *c, *hinv_diag;
    uint32_t *free_at; /* the non-negative solve's room */
    bool *free_set;
    struct intensity_scratch own_scratch, *scratch; /* scratch: own_scratch or shared */
};

/* Where entry (i, j) of the normal matrix lives: only its upper triangle is stored, column
 * after column, so it takes half the room (17 KiB at 64 classes, not 35) and a GPU that
 * grows its slots appends columns with the old ones in place. */
static inline size_t normal_at(size_t i, size_t j) {
    return i <= j ? j * (j + 1) / 2 + i : i * (i + 1) / 2 + j;
}

/* The number of entries stored for dim parameters. */
static inline size_t normal_size(size_t dim) {
    return dim * (dim + 1) / 2;
}

/* Watches a complete row against the fit before it is learned from (intensity_change.c);
 * on a change of phase, forgets the past. A row the fit can predict is kept in refs. */
void intensity_watch_change(struct intensity_gpu *g, const struct intensity_row *row);

/* Puts class slot s into the family of that key (0: none), once. */
int intensity_family_join(struct intensity_gpu *g, uint32_t s, uint64_t family_key);
/* The class in slot s leaves its family (the slot is being cleared); what it taught stays. */
void intensity_family_leave(struct intensity_gpu *g, uint32_t s);
/* Replaces what class slot s adds to its family by its new estimate and standard error. */
void intensity_family_update(struct intensity_gpu *g, uint32_t s, double theta, double se);
/* Its family's estimate for class slot s from the other members, and the variance of a
 * member about it. false when the family is too small to tell. */
bool intensity_family_estimate(const struct intensity_gpu *g, uint32_t s, double *ret_kappa,
                               double *ret_var);
void intensity_families_free(struct intensity_gpu *g);

/* Its own estimate combined with its family's; false when it has none (intensity.c). */
bool intensity_class_estimate(const struct intensity_gpu *g, uint32_t s, double *ret_kappa,
                              double *ret_se);

/* intensity_class_estimate() of a slot the window touched, taken once per window. */
struct class_estimate {
    double kappa, se;
    bool known;
};
static inline bool window_estimate(const struct intensity_gpu *g, uint32_t s, double *ret_kappa,
                                   double *ret_se) {
    if (!g->win_est[s].known)
        return false;
    *ret_kappa = g->win_est[s].kappa;
    *ret_se = g->win_est[s].se;
    return true;
}
/* A class nothing is remembered of whose rows so far carried less than a quarter of this
 * window's activity (squared, win_act): its own estimate, if any, is an edge's. */
bool intensity_is_new(const struct intensity_gpu *g, uint32_t s);
/* The split of a window with new classes beside known ones, from the window's own energy
 * (intensity_posterior.c), into shares. win_act holds the touched slots' activity; mean
 * and tau2 are the window's shrinkage (intensity.c). false, shares untouched, when it
 * cannot say. */
bool intensity_posterior(struct intensity_gpu *g, const struct intensity_window *w,
                         const uint32_t *touched, size_t n_touched, double mean_kappa, double tau2,
                         bool context_booked, struct intensity_share *shares);

/* The activity the split weighs: the caller's smoothed one where it gives one. */
static inline uint64_t split_act(const struct intensity_consumer *c) {
    return c->split_given ? c->split_activity : c->activity;
}

/* Solves the live system and updates theta, learned, se, memory (intensity_solve.c). */
int intensity_solve(struct intensity_gpu *g);
/* Multiplies every stored sum of the rows by f (the forgetting, and a change of phase). */
void intensity_scale_sums(struct intensity_gpu *g, double f);
/* e^(-(clock - t_ref) / tau): the factor that turns stored sums into current ones. */
double intensity_decay_now(const struct intensity_gpu *g);

/* The first allocation of class slots. */
#define INITIAL_SLOTS 8U
/* Grows every per-slot table from cap to new_cap slots. On failure the tables that did
 * grow keep their old contents and the old cap stays in force (intensity_slots.c). */
int intensity_grow_slots(struct intensity_gpu *g, size_t new_cap);
/* The slot of class key, added if new (NO_SLOT when the table is full of classes in use).
 * hint is the slot it likely has (the same consumer's in the last window; NO_SLOT: none):
 * a tracked class is found there without the index. */
int intensity_class_slot(struct intensity_gpu *g, uint64_t key, uint32_t hint, uint32_t *ret);
