/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/*
 * Learned power intensity: per GPU, how many watts each workload draws per unit of SM
 * activity, learned from the device's measured energy and the per-process activity in
 * each window. The split of a window then weights each process by its learned intensity
 * x its activity instead of by its activity alone (SM share): a busy-waiting process at
 * 100 % SM and 40 W no longer gets the energy of a 450 W trainer beside it.
 *
 * Model, per row k (consecutive windows gathered to at least `row_s`):
 *
 *     dE_k = P_idle x dt_k + P_ctx x t_ctx,k + sum_c kappa_c x A_c,k + noise
 *
 * dE in J, dt the row length, t_ctx the time at least one context was held (s), A_c the
 * SM activity of class c (sum over its processes of SM fraction x seconds), kappa_c >= 0
 * in W per 100 % SM. P_idle is the no-context idle, P_ctx the uplift a held context adds
 * (P0 clocks). A class is what the caller says shares an intensity: the processes of one
 * workload (one container, one command in one cgroup), so a short job's hundredth run
 * starts from what the first 99 taught.
 *
 * Method: exponentially forgotten least squares in information form. Each row adds its
 * outer product to a normal matrix, touching only the classes present in it (O(m^2) for m
 * classes); forgetting is a time constant `tau_s` (weights decay as e^(-age/tau)), kept
 * lazily as one growing scale so old entries are never rewritten. After each row the
 * system over the recently seen ("live") classes is solved: Cholesky for the
 * unconstrained solution, then active sets (nnls.c), started from the last solve's, if
 * any coefficient came out negative (non-negative least squares). Chosen over a Kalman
 * filter because a Kalman covariance update touches every tracked class on every row
 * (O(K^2) for K classes), while the information form pays per row only for the classes
 * present, and the solve cost is bounded by the live cap and paid once per row.
 *
 * Forgetting vs memory: forgetting alone would lose what a class taught as soon as it
 * stops running. Each parameter therefore keeps a memory: its value at the last solve where
 * it was identifiable, held as a prior of strength `memory_weight` (0.5 s^2, the information
 * of two 1 s rows of the class alone at 50 %: small beside live data, decisive when the
 * data has decayed). The memory counts as information below, so a class seen again is
 * learned from its first window while its memory's standard error passes (c). P_idle takes
 * the caller's idle power (idle_power.c) as a prior when known.
 *
 * Identifiable: parameter j is learned when, at the last solve, (a) the effective number of
 * rows exceeds the parameters by 2, (b) its conditional information 1 / (H^-1)_jj is at
 * least `min_info` (s^2: about 1 s of the class alone at 50 %; two classes that only ever
 * run together in proportion have almost none, whatever the amount of data), and (c) its
 * standard error sigma / sqrt(info) is at most max(max_rel_se x kappa_j, 5 % of the GPU's
 * mean intensity, min_se_w), sigma the residual standard deviation of the rows.
 *
 * Use in a window (never worse than SM share at the level of groups): each active class
 * with an estimate is shrunk towards the window's activity-weighted mean intensity by how
 * uncertain it is (empirical Bayes): with tau^2 the spread of the estimates beyond their
 * squared standard errors, kappa_eff = mean + (kappa - mean) x tau^2 / (tau^2 + se^2).
 * Estimates that differ by no more than their noise all become the mean, which is SM share
 * (fallback, said so); well-measured ones keep their own. A class with no estimate yet gets
 * the mean of the others' kappa_eff, so that the unlearned group keeps exactly its SM share
 * (pooling from the whole GPU could give a 40 W newcomer a 450 W trainer's intensity, worse
 * than SM share). A window where that gives no learned split but has new classes beside
 * known ones is split by its own energy: the known part predicted, the rest to the new
 * ones (intensity_posterior.c). Every weight is an input to distribute()/split_energy(),
 * so the split stays exact to the microjoule whatever is learned. "Learned" in a class's info (and
 * the exported intensity) still means identifiable by (a)-(c) above.
 *
 * Context uplift: when P_ctx is identifiable, or the idle power is known (a prior or
 * learned) and P_ctx's standard error is within half of it, the result carries
 * P_ctx x t_ctx (uJ), for the caller to give to the processes holding a context, evenly
 * over the time each held it (context_split.h), under every idle policy; the no-context
 * idle follows the policy. The looser test is because the alternative, the uplift split
 * by activity, gives a holder that computes little almost none of it: on the simulated
 * mixes a bound of 0.5 gave the lowest error (0.2: +0.3 points, 1.0: a constant load
 * mistaken for uplift). On a GPU kept fully busy the uplift is not identifiable at all
 * (the activities always add up to 100 %) and a fit may take most of the active power for
 * it: an uplift above three times the idle power is never handed out. Nor is one the rows
 * never told apart from the classes (its conditional information at the ridge's level:
 * constant loads, every row alike), however small its standard error looks.
 *
 * Cost (K classes tracked per GPU, at most max_classes; L live, at most max_live; n
 * consumers and m classes in a window): per window O(n) (hash look-ups, sums); per row
 * O(m^2) to add it; per solve (once per row) O(L^3) for the Cholesky and the inverse's
 * diagonal, and when a coefficient is held at 0 one more O(L^3) factor of the free set,
 * then O(L^2) per active-set step (a median of 4 steps on a GPU of 64 processes, at most
 * 40); O((L + F)^2) for the residual with F the tracked classes not live.
 *
 * Memory per GPU: half of (K + 2)^2 doubles for the normal matrix, grown with K (8
 * classes: 0.4 KiB; 256: 260 KiB), and (L + 2)^2 x 2 for the solve, shared by the GPUs
 * of one accounting. Nothing is allocated once the tables have grown to the GPU's class
 * count; a new class beyond max_classes evicts the least recently seen one.
 *
 * Families: a consumer may name its command (family_key); a class with too little data
 * takes its family's pooled estimate as a prior (intensity_family.c).
 *
 * Exported (docs/METRICS.md): per process, `<prefix>_power_intensity_watts`, the learned
 * intensity of its class in W per 100 % SM (absent until its class is identifiable); per
 * GPU, `joulestat_gpu_learned_split` (1 while the learned split is in use in the last
 * window, 0 in fallback) and `joulestat_gpu_split_windows_total{method}`, the windows by
 * split_method_to_string().
 */

#define INTENSITY_DEFAULT_TAU_S 15.0
#define INTENSITY_DEFAULT_ROW_S 1.0
#define INTENSITY_DEFAULT_MAX_CLASSES 256U
#define INTENSITY_DEFAULT_MAX_LIVE 64U
/* The normal matrix is dense over the slots: 1024 classes are 8 MiB, the most allowed. */
#define INTENSITY_MAX_CLASSES_LIMIT 1024U

/* Zero (or negative) fields take the defaults. */
struct intensity_options {
    double tau_s;             /* forgetting time constant (15 s: a step is followed in ~50 s) */
    double row_s;             /* windows are gathered into rows of at least this length (1 s) */
    unsigned max_classes;     /* classes tracked per GPU (256, at most 1024) */
    unsigned max_live;        /* classes solved jointly, the most recently seen (64) */
    double min_info;          /* identifiability: information floor, s^2 (0.25) */
    double max_rel_se;        /* identifiability: standard error / intensity (0.1) */
    double min_se_w;          /* identifiability: a standard error this small always passes (5 W) */
    double memory_weight;     /* strength of a learned value's memory, s^2 (0.5) */
    double idle_prior_weight; /* strength of the caller's idle power as a prior, s^2 (10) */
};

struct intensity_consumer {
    uint64_t class_key;  /* the workload; a process without one passes its own key */
    uint64_t family_key; /* its command on this GPU, pooled across workloads; 0: none */
    uint64_t activity;   /* SM weight in the window, percent-microseconds */
    uint64_t early;      /* the part of activity that lies at or before the window start */
    bool split_given;    /* the split weighs split_activity, not activity */
    uint64_t split_activity;
};

struct intensity_window {
    uint64_t duration_us;
    uint64_t context_us; /* time at least one context was held (<= duration_us) */
    uint64_t energy_uj;  /* measured delta of the window */
    /* false: do not learn from this window (no energy, a gap, a glitch, no per-process
     * utilisation, MIG); the rows around it are dropped, the weights still computed. */
    bool learn;
    bool idle_prior_known;
    double idle_prior_w; /* the caller's idle power (configured or learned), if known */
    size_t n;
    const struct intensity_consumer *consumers;
};

/* Per consumer: its weight for the split and the intensity used for it. */
struct intensity_share {
    uint64_t weight; /* split_consumer.weight: SM activity in fallback, else scaled kappa x A */
    double watts;    /* its class's current estimate, W per 100 % SM (0 when none yet) */
    bool learned;    /* its class is identifiable */
};

struct intensity_result {
    bool learned; /* the learned split is in use in this window */
    enum split_method reason;
    bool idle_known;     /* P_idle identifiable */
    bool context_known;  /* P_ctx identifiable */
    uint64_t context_uj; /* P_ctx x context_us, at most energy_uj; 0 unless context_known */
    double idle_watts, context_watts; /* current estimates */
    unsigned classes_active;          /* distinct classes with activity in the window */
    unsigned classes_learned;         /* of those, identifiable */
    unsigned classes_pooled;          /* of those, given the learned ones' mean intensity */
};

struct intensity_gpu;

/* The solve's two square matrices, (L + 2)^2 doubles each. GPUs solved one after another on
 * one thread may share them: 8 GPUs of 64 live classes then hold 70 KiB, not 560. */
struct intensity_scratch {
    size_t cap; /* parameters */
    double *h, *chol;
};
void intensity_scratch_done(struct intensity_scratch *s);

/* shared: the scratch this GPU solves in, kept by the caller until every GPU using it is
 * freed; NULL: its own. Returns 0 or -ENOMEM. ret written only on success. */
int intensity_gpu_new(const struct intensity_options *o, struct intensity_scratch *shared,
                      struct intensity_gpu **ret);
struct intensity_gpu *intensity_gpu_free(struct intensity_gpu *g);

/* A window the learner does not see (a gap, joulestat down, a glitch, no per-process
 * utilisation): the rows gathered around it are dropped, so that no row spans it, and
 * activity sampled before the next window's start is not placed in a row before the gap. */
void intensity_drop_rows(struct intensity_gpu *g);

/*
 * One window: learns from it (when w->learn), then fills shares[0..w->n) and *ret. Returns
 * 0, -EINVAL (NULL arrays with n > 0, context_us > duration_us) or -ENOMEM (a table could
 * not grow: the caller splits by SM activity as before). shares and ret are written only
 * on success.
 */
int intensity_window(struct intensity_gpu *g, const struct intensity_window *w,
                     struct intensity_share *shares, struct intensity_result *ret);

/* Whether the next window's activity from before its start has a row to be learned in: a
 * window was learned from since the rows were last dropped (else that part is dropped). */
bool intensity_has_row_before(const struct intensity_gpu *g);

struct intensity_class_info {
    double watts;    /* W per 100 % SM */
    double se_watts; /* its standard error at the last solve (0 when not live) */
    bool learned;    /* identifiable (or remembered from when it was) */
    bool in_family;  /* it pools with the other runs of its command (intensity_family.c) */
};

/* What is known of a class. Returns 0, or -ENOENT when it is not tracked. */
int intensity_class_get(const struct intensity_gpu *g, uint64_t class_key,
                        struct intensity_class_info *ret);
