/* SPDX-License-Identifier: MIT */
#include "own_math.h"
#include "intensity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "intensity_internal.h"
#include "macro.h"

/* Stored sums grow as e^(age / tau); rebased before they pass e^40. */
#define MAX_SCALE_EXPONENT 40.0
/* Learned weights are kappa / kappa_max x activity x this: integers with 16 bits to spare
 * below the activity's own precision, and no overflow for windows up to a day. */
#define WEIGHT_SCALE 65536.0
/* A learned class's weight never drops below this part of the window's mean intensity:
 * a process with activity is never given nothing by an estimate of 0 W. */
#define MIN_INTENSITY_PART 0.01
/* Weights stay below 2^62 (a window of months at full activity): no overflow in the sum. */
#define MAX_WEIGHT 4611686018427387904.0
#define CONTEXT_MAX_REL_SE 0.5
#define CONTEXT_MAX_IDLE_RATIO 3.0
/* No board's reported uplift exceeds 66 W (L40S; A100 and H100 26-50 W: [Parking] in
 * docs/SCENARIOS.md): an estimate beyond twice that is a common part of the intensities. */
#define CONTEXT_MAX_W 132.0
/* The uplift's own information (s^2) below which the rows never told it from the classes'
 * intensities: what the solve's ridge alone gives is about 1e-6 x the rows. */
#define CONTEXT_MIN_INFO 0.001
/* A row is unsaturated below this total SM activity; the uplift is learned only when at
 * least this part of the recent rows is. */
#define UNSATURATED_ACTIVITY 0.9
#define CONTEXT_MIN_UNSATURATED 0.05

static double or_default(double v, double def) {
    return v > 0 ? v : def;
}

void intensity_scratch_done(struct intensity_scratch *s) {
    free(s->h);
    free(s->chol);
    *s = (struct intensity_scratch){0};
}

int intensity_gpu_new(const struct intensity_options *o, struct intensity_scratch *shared,
                      struct intensity_gpu **ret) {
    struct intensity_gpu *g = calloc(1, sizeof(*g));
    struct intensity_options opt = o ? *o : (struct intensity_options){0};

    if (!g)
        return -ENOMEM;
    opt.tau_s = or_default(opt.tau_s, INTENSITY_DEFAULT_TAU_S);
    opt.row_s = or_default(opt.row_s, INTENSITY_DEFAULT_ROW_S);
    opt.max_classes = opt.max_classes ? opt.max_classes : INTENSITY_DEFAULT_MAX_CLASSES;
    if (opt.max_classes > INTENSITY_MAX_CLASSES_LIMIT)
        opt.max_classes = INTENSITY_MAX_CLASSES_LIMIT;
    opt.max_live = opt.max_live ? opt.max_live : INTENSITY_DEFAULT_MAX_LIVE;
    if (opt.max_live > opt.max_classes)
        opt.max_live = opt.max_classes;
    opt.min_info = or_default(opt.min_info, 0.25);
    opt.max_rel_se = or_default(opt.max_rel_se, 0.1);
    opt.min_se_w = or_default(opt.min_se_w, 5.0);
    opt.memory_weight = or_default(opt.memory_weight, 0.5);
    opt.idle_prior_weight = or_default(opt.idle_prior_weight, 10.0);
    g->opt = opt;
    g->scratch = shared ? shared : &g->own_scratch;
    g->dim = PARAM_CLASS0;
    hashmap_init(&g->index);
    hashmap_init(&g->family_index);
    if (intensity_grow_slots(g, MIN((size_t)INITIAL_SLOTS, (size_t)opt.max_classes)) < 0) {
        intensity_gpu_free(g);
        return -ENOMEM;
    }
    *ret = g;
    return 0;
}

struct intensity_gpu *intensity_gpu_free(struct intensity_gpu *g) {
    if (!g)
        return NULL;
    hashmap_done(&g->index);
    intensity_families_free(g);
    free(g->classes);
    free(g->m);
    free(g->b);
    free(g->theta);
    free(g->memory);
    free(g->se);
    free(g->has_memory);
    free(g->learned);
    free(g->cur.touched);
    free(g->cur.act);
    free(g->pending.touched);
    free(g->pending.act);
    free(g->slot_of);
    free(g->win_kappa_j);
    free(g->win_act);
    free(g->win_touched);
    free(g->win_kappa);
    free(g->win_est);
    free(g->live);
    free(g->frozen);
    intensity_scratch_done(&g->own_scratch);
    free(g->g);
    free(g->x);
    free(g->r);
    free(g->hinv_diag);
    free(g->z);
    free(g->c);
    free(g->free_at);
    free(g->free_set);
    free(g);
    return NULL;
}

static void row_add(struct intensity_row *row, uint32_t s, double a) {
    if (a <= 0)
        return;
    if (row->act[s] <= 0)
        row->touched[row->n_touched++] = s;
    row->act[s] += a;
}

static void row_reset(struct intensity_row *row) {
    for (size_t i = 0; i < row->n_touched; i++)
        row->act[row->touched[i]] = 0;
    row->n_touched = 0;
    row->open = row->tainted = false;
    row->dt_s = row->ctx_s = row->energy_j = row->end_s = 0;
}

double intensity_decay_now(const struct intensity_gpu *g) {
    return own_exp(-(g->clock_s - g->t_ref_s) / g->opt.tau_s);
}

void intensity_scale_sums(struct intensity_gpu *g, double f) {
    for (size_t i = 0; i < normal_size(g->dim); i++)
        g->m[i] *= f;
    for (size_t i = 0; i < g->dim; i++)
        g->b[i] *= f;
    g->syy *= f;
    g->neff *= f;
    g->unsaturated *= f;
}

/* Brings the stored sums to the scale of time t, so new weights start again at 1. */
static void rebase(struct intensity_gpu *g, double t) {
    intensity_scale_sums(g, own_exp(-(t - g->t_ref_s) / g->opt.tau_s));
    g->t_ref_s = t;
}

/* Adds a complete row to the normal equations: only the present classes' entries move. */
static void learn_row(struct intensity_gpu *g, const struct intensity_row *row) {
    size_t n = row->n_touched + PARAM_CLASS0;
    double wt, y = row->energy_j;

    if ((row->end_s - g->t_ref_s) / g->opt.tau_s > MAX_SCALE_EXPONENT)
        rebase(g, row->end_s);
    wt = own_exp((row->end_s - g->t_ref_s) / g->opt.tau_s);
    for (size_t a = 0; a < n; a++) {
        size_t i = a < PARAM_CLASS0 ? a : PARAM_CLASS0 + row->touched[a - PARAM_CLASS0];
        double xi = a == PARAM_IDLE  ? row->dt_s
                    : a == PARAM_CTX ? row->ctx_s
                                     : row->act[i - PARAM_CLASS0];

        g->b[i] += wt * xi * y;
        for (size_t c = a; c < n; c++) { /* (i, j) and (j, i) are one entry */
            size_t j = c < PARAM_CLASS0 ? c : PARAM_CLASS0 + row->touched[c - PARAM_CLASS0];
            double xj = c == PARAM_IDLE  ? row->dt_s
                        : c == PARAM_CTX ? row->ctx_s
                                         : row->act[j - PARAM_CLASS0];

            g->m[normal_at(i, j)] += wt * xi * xj;
        }
    }
    g->syy += wt * y * y;
    g->neff += wt;
    if (row->dt_s > 0) {
        double total = 0;

        for (size_t k = 0; k < row->n_touched; k++)
            total += row->act[row->touched[k]];
        if (total < UNSATURATED_ACTIVITY * row->dt_s)
            g->unsaturated += wt;
    }
    g->rows++;
}

static void drop_rows(struct intensity_gpu *g) {
    row_reset(&g->cur);
    row_reset(&g->pending);
}

void intensity_drop_rows(struct intensity_gpu *g) {
    drop_rows(g);
}

bool intensity_has_row_before(const struct intensity_gpu *g) {
    return g->pending.open || g->cur.open;
}

/* Adds the window to the rows, and learns from the row that waited for it. */
static int learn_window(struct intensity_gpu *g, const struct intensity_window *w) {
    struct intensity_row *early_row = g->pending.open ? &g->pending : g->cur.open ? &g->cur : NULL;
    int r = 0;

    g->cur.open = true;
    for (size_t i = 0; i < w->n; i++) {
        const struct intensity_consumer *c = &w->consumers[i];
        uint64_t early = c->early < c->activity ? c->early : c->activity;

        if (c->activity == 0)
            continue;
        if (g->slot_of[i] == NO_SLOT) {
            g->cur.tainted = true;
            if (early_row)
                early_row->tainted = true;
            continue;
        }
        /* The early part happened before this window: it goes where its energy went. */
        if (early_row)
            row_add(early_row, g->slot_of[i], (double)early / PCT_US_PER_SM_S);
        row_add(&g->cur, g->slot_of[i], (double)(c->activity - early) / PCT_US_PER_SM_S);
    }
    if (g->pending.open) {
        if (!g->pending.tainted) {
            intensity_watch_change(g, &g->pending);
            learn_row(g, &g->pending);
            r = intensity_solve(g);
        }
        row_reset(&g->pending);
    }
    g->cur.dt_s += (double)w->duration_us / 1e6;
    g->cur.ctx_s += (double)w->context_us / 1e6;
    g->cur.energy_j += (double)w->energy_uj / 1e6;
    g->cur.end_s = g->clock_s + (double)w->duration_us / 1e6;
    if (g->cur.dt_s >= g->opt.row_s) {
        struct intensity_row t = g->pending;

        g->pending = g->cur;
        g->cur = t;
    }
    return r;
}

static int reserve_window(struct intensity_gpu *g, size_t n) {
    uint32_t *p;
    double *j;

    if (n <= g->win_cap)
        return 0;
    p = reallocarray(g->slot_of, n, sizeof(*p));
    if (!p)
        return -ENOMEM;
    g->slot_of = p;
    j = reallocarray(g->win_kappa_j, n, sizeof(*j));
    if (!j)
        return -ENOMEM;
    g->win_kappa_j = j;
    g->win_cap = n;
    return 0;
}

/* What the window uses of a class: its estimate and how uncertain it is. A class with no
 * information at all is not known (it takes the others' mean); one held from an earlier
 * solve (frozen, remembered) counts as certain. */
static bool own_estimate(const struct intensity_gpu *g, uint32_t s, double *ret_kappa,
                         double *ret_se) {
    size_t p = PARAM_CLASS0 + s;

    if (g->m[normal_at(p, p)] <= 0 && !g->has_memory[p])
        return false;
    *ret_kappa = g->theta[p] > 0 ? g->theta[p] : 0;
    *ret_se = g->se[p] > 0 ? g->se[p] : 0;
    if (g->se[p] <= 0 && !g->has_memory[p])
        return false; /* never solved with data yet */
    return true;
}

/* Its own estimate combined with its family's (precision-weighted), or the family's alone
 * for a class with none yet. An estimate held as certain stays as it is. */
bool intensity_class_estimate(const struct intensity_gpu *g, uint32_t s, double *ret_kappa,
                              double *ret_se) {
    double kappa, se, family_kappa, family_var, precision;
    bool own = own_estimate(g, s, &kappa, &se);

    if (!intensity_family_estimate(g, s, &family_kappa, &family_var) || (own && se <= 0)) {
        if (own) {
            *ret_kappa = kappa;
            *ret_se = se;
        }
        return own;
    }
    if (!own) {
        *ret_kappa = family_kappa;
        *ret_se = sqrt(family_var);
        return true;
    }
    precision = 1 / (se * se) + 1 / family_var;
    *ret_kappa = (kappa / (se * se) + family_kappa / family_var) / precision;
    *ret_se = sqrt(1 / precision);
    return true;
}

/*
 * The split weights and the result from the current estimates. Each active class's
 * intensity is shrunk towards the window's mean intensity by how uncertain it is
 * (empirical Bayes): with tau^2 the spread of the estimates beyond their noise,
 * kappa_eff = mean + (kappa - mean) x tau^2 / (tau^2 + se^2). Estimates that differ by no
 * more than their noise all become the mean (SM share); well-measured ones keep their own.
 * New classes beside known ones, where that gives no learned split, may be split by their
 * window's energy instead (intensity_posterior.c).
 */
static void window_shares(struct intensity_gpu *g, const struct intensity_window *w,
                          bool context_booked, struct intensity_share *shares,
                          struct intensity_result *res) {
    double act_sum = 0, mean = 0, spread = 0, noise = 0, tau2, kappa_max = 0;
    double known_weight = 0, known_act = 0;
    size_t n_touched = 0;
    bool posterior, newcomer = false;
    unsigned unslotted = 0, known = 0;

    /* The window's activity per class. */
    for (size_t i = 0; i < w->n; i++) {
        uint32_t s = g->slot_of[i];
        double a = (double)split_act(&w->consumers[i]) / PCT_US_PER_SM_S;

        if (a <= 0)
            continue;
        if (s == NO_SLOT) {
            unslotted++;
            continue;
        }
        if (g->win_act[s] <= 0)
            g->win_touched[n_touched++] = s;
        g->win_act[s] += a;
    }
    res->classes_active = (unsigned)n_touched + unslotted;
    for (size_t k = 0; k < n_touched; k++) {
        uint32_t s = g->win_touched[k];
        struct class_estimate *e = &g->win_est[s];
        double kappa, se;

        e->known = intensity_class_estimate(g, s, &e->kappa, &e->se);
        newcomer = newcomer || intensity_is_new(g, s);
        if (!window_estimate(g, s, &kappa, &se))
            continue;
        known++;
        res->classes_learned += g->learned[PARAM_CLASS0 + s];
        act_sum += g->win_act[s];
        mean += g->win_act[s] * kappa;
    }
    mean = act_sum > 0 ? mean / act_sum : 0;
    for (size_t k = 0; k < n_touched; k++) {
        uint32_t s = g->win_touched[k];
        double kappa, se;

        if (!window_estimate(g, s, &kappa, &se))
            continue;
        spread += g->win_act[s] * (kappa - mean) * (kappa - mean);
        noise += g->win_act[s] * se * se;
    }
    tau2 = act_sum > 0 ? (spread - noise) / act_sum : 0;
    if (tau2 < 0)
        tau2 = 0;
    /* Not learned, but new classes beside known ones: the window's own energy may say
     * what the new ones drew. */
    posterior =
        unslotted == 0 && n_touched >= 2 && res->idle_known &&
        (newcomer || !(known >= 2 && tau2 > 0 && mean > 0)) &&
        intensity_posterior(g, w, g->win_touched, n_touched, mean, tau2, context_booked, shares);
    for (size_t k = 0; k < n_touched; k++)
        g->win_act[g->win_touched[k]] = 0;
    if (posterior) {
        res->reason = SPLIT_LEARNED;
        res->learned = true;
        return;
    }

    if (res->classes_active == 0)
        res->reason = SPLIT_NO_ACTIVITY;
    else if (res->classes_active == 1)
        res->reason = SPLIT_SINGLE_CLASS;
    else if (known >= 2 && tau2 > 0 && mean > 0)
        res->reason = SPLIT_LEARNED;
    else
        res->reason = g->dof < 2 ? SPLIT_TOO_FEW_ROWS : SPLIT_NOT_IDENTIFIABLE;
    res->learned = res->reason == SPLIT_LEARNED;

    /* Known classes their shrunk intensity; the others the mean of those, so that together
     * they keep exactly their SM share (pooling a 40 W newcomer with a 450 W trainer's
     * intensity would be worse than SM share). */
    for (size_t i = 0; i < w->n; i++) {
        uint32_t s = g->slot_of[i];
        double kappa, se, a = (double)split_act(&w->consumers[i]);

        /* A slot with activity was touched: its estimate is taken already. One with none
         * gets no weight whatever it is. */
        shares[i].learned = s != NO_SLOT && a > 0 && window_estimate(g, s, &kappa, &se);
        if (!shares[i].learned)
            continue;
        /* tau2 and se both 0 (a class held as certain, no spread between classes): 0/0. */
        kappa = mean + (kappa - mean) * (tau2 > 0 ? tau2 / (tau2 + se * se) : 0);
        if (kappa < MIN_INTENSITY_PART * mean)
            kappa = MIN_INTENSITY_PART * mean;
        shares[i].watts = kappa;
        known_weight += a * kappa;
        known_act += a;
    }
    for (size_t i = 0; i < w->n; i++) {
        if (!shares[i].learned)
            shares[i].watts = known_act > 0 ? known_weight / known_act : mean;
        if (split_act(&w->consumers[i]) > 0)
            kappa_max = shares[i].watts > kappa_max ? shares[i].watts : kappa_max;
    }
    res->classes_pooled = res->learned ? res->classes_active - known : 0;
    for (size_t i = 0; i < w->n; i++) {
        uint32_t s = g->slot_of[i];
        uint64_t a = split_act(&w->consumers[i]);
        double kappa = shares[i].watts, weight;
        bool learned = s != NO_SLOT && g->learned[PARAM_CLASS0 + s];

        shares[i] = (struct intensity_share){
            .weight = a,
            .watts = s != NO_SLOT ? g->theta[PARAM_CLASS0 + s] : 0,
            .learned = learned,
        };
        if (!res->learned || a == 0 || kappa_max <= 0)
            continue;
        weight = (double)a * (kappa / kappa_max) * WEIGHT_SCALE;
        shares[i].weight =
            weight < MAX_WEIGHT ? (uint64_t)own_llround(weight) : (uint64_t)MAX_WEIGHT;
    }
}

/* The uplift is measured well enough to be given to the holders by time held: its standard
 * error within CONTEXT_MAX_REL_SE of it. Looser than the classes' test: giving
 * it by activity instead is the larger error for a holder that computes little. */
static bool context_measured(const struct intensity_gpu *g) {
    double se = g->se[PARAM_CTX], ctx = g->theta[PARAM_CTX];

    /* With one workload the uplift goes to it whatever it is estimated to be, and a
     * constant load is easily mistaken for it: only a shared GPU needs it. */
    if (g->rows == 0 || g->n_used < 2 || !(se > 0 && ctx > 0) || g->neff <= 0)
        return false;
    /* Seen below full activity often enough: only those rows tell the uplift from the
     * intensities (below). */
    if (g->unsaturated < CONTEXT_MIN_UNSATURATED * g->neff)
        return false;
    /* While the GPU is fully busy the activities add up to 100 % in every row, and the
     * uplift cannot be told from a common part of the intensities, whatever its error says
     * (the priors make it look small): such a fit takes most of the active power for
     * uplift. A held context raises the board to P0 clocks, which costs about as much as
     * its idle (A100 +26 W over 55 W, H100 +50 W over 70 W, L40S +66 W over 35 W): more
     * than three times the idle is not an uplift. Loads that never vary apart (every row
     * alike) give the uplift no information of its own: the fit puts their common power
     * wherever the ridge pulls it, and a residual near zero makes that look certain. */
    return ctx <= CONTEXT_MAX_IDLE_RATIO * g->theta[PARAM_IDLE] && se <= CONTEXT_MAX_REL_SE * ctx &&
           g->ctx_info >= CONTEXT_MIN_INFO;
}

int intensity_window(struct intensity_gpu *g, const struct intensity_window *w,
                     struct intensity_share *shares, struct intensity_result *ret) {
    struct intensity_result res = {0};
    int r;

    if (w->n > 0 && (!w->consumers || !shares))
        return -EINVAL;
    if (w->context_us > w->duration_us)
        return -EINVAL;
    r = reserve_window(g, w->n);
    if (r < 0)
        return r;
    for (size_t i = 0; i < w->n; i++) {
        r = intensity_class_slot(g, w->consumers[i].class_key,
                                 i < g->n_slot_of ? g->slot_of[i] : NO_SLOT, &g->slot_of[i]);
        if (r >= 0 && g->slot_of[i] != NO_SLOT)
            r = intensity_family_join(g, g->slot_of[i], w->consumers[i].family_key);
        if (r < 0) {
            g->n_slot_of = 0;
            return r;
        }
    }
    g->n_slot_of = w->n;
    g->idle_prior_known = w->idle_prior_known && w->idle_prior_w >= 0;
    g->idle_prior_w = w->idle_prior_w;

    if (w->learn) {
        r = learn_window(g, w);
        if (r < 0)
            return r;
    } else
        drop_rows(g);
    g->clock_s += (double)w->duration_us / 1e6;

    /* With a prior for the idle power, its posterior is known from the first solve on: the
     * prior is knowledge, and only the data can move it. */
    res.idle_known = g->learned[PARAM_IDLE] || (g->idle_prior_known && g->rows > 0);
    /* However it was measured, an uplift no board comes near, or above three times a known
     * idle, is a common part of the intensities (120 steady processes over 60 rows put 160
     * of their 210 W in it). */
    res.context_known =
        (g->learned[PARAM_CTX] || (res.idle_known && context_measured(g))) &&
        g->theta[PARAM_CTX] <= CONTEXT_MAX_W &&
        (!res.idle_known || g->theta[PARAM_CTX] <= CONTEXT_MAX_IDLE_RATIO * g->theta[PARAM_IDLE]);
    window_shares(g, w, res.context_known, shares, &res);
    res.idle_watts = g->theta[PARAM_IDLE];
    res.context_watts = g->theta[PARAM_CTX];
    if (res.context_known) {
        double uj = g->theta[PARAM_CTX] * (double)w->context_us;

        res.context_uj = uj >= (double)w->energy_uj ? w->energy_uj : (uint64_t)own_llround(uj);
    }
    *ret = res;
    return 0;
}

int intensity_class_get(const struct intensity_gpu *g, uint64_t class_key,
                        struct intensity_class_info *ret) {
    uintptr_t v = (uintptr_t)hashmap_get(&g->index, class_key);
    size_t p;

    if (!v)
        return -ENOENT;
    p = PARAM_CLASS0 + (v - 1);
    *ret = (struct intensity_class_info){
        .watts = g->theta[p],
        .se_watts = g->se[p],
        .learned = g->learned[p],
        .in_family = g->classes[v - 1].family != 0,
    };
    return 0;
}
