/* SPDX-License-Identifier: MIT */
/*
 * New workloads beside known ones, split by the window's own energy. Rows are learned one
 * window late, so a job that lives 80 ms is split before anything is learned of it, and
 * the shrinkage of intensity.c gave it SM share: 50 W jobs beside a 40 W trainer each got
 * 17 % less than they drew. The window's energy says more: what the fit predicts of the
 * classes it knows, and what is left for the new ones.
 *
 * One Kalman measurement update of the new classes' intensities, the known ones held at
 * their estimates: with P the prediction of the known part (idle, uplift, known classes),
 * pv its variance (the fit's error on rows it had not learned from yet, scaled to the
 * window; its own residual before any), and each new class c a prior mean mu_c (its
 * family's estimate, else what the known classes draw per unit of activity: SM share) and
 * variance v_c (its family's spread, with a standard deviation of at least a quarter of
 * its estimate, else as broad as the window's mean power),
 *
 *     gain = (dE - P - sum mu_c A_c) / (sum v_c A_c^2 + pv),   kappa_c = mu_c + v_c A_c gain
 *
 * P is the fit's prediction plus what the fit missed, per second, on the last rows in which
 * the same known classes ran alone: the fit is global and a short job's energy is a joule
 * or two of a window of tens, so a miss of a third of a percent near now (a steady trainer
 * whose power the fit cannot tell from the uplift) is a tenth of the job.
 *
 * It stands aside (the caller keeps SM share) when it cannot say: a window shorter than a
 * row, no known class or no new one, a newcomer whose samples mostly reach back before the
 * window, a prediction less sure than the new classes' priors when none has its family's,
 * the known part alone above
 * the window's energy, or a new intensity far beyond any the GPU shows (the fit is off in
 * this window, not the newcomer a furnace).
 */
#include <math.h>

#include "own_math.h"
#include "intensity_internal.h"

/* The largest weight: 2^40, room for 2^22 consumers below 2^62. */
#define POSTERIOR_SCALE 1099511627776.0
/* A new class's intensity never drops below this part of the known classes' draw per unit
 * of activity: a prediction a little high leaves a process with activity something. */
#define MIN_POSTERIOR_PART 0.01
/* A new class's intensity from the window may reach this many times the highest the GPU's
 * known classes show, or the window's mean power. */
#define MAX_KAPPA_RATIO 3.0
/* A class whose rows so far carried less than this of the window's activity squared is
 * still new: a quarter, half the activity. */
#define NEW_SEEN_PART 0.25
/* Rows in which the fit's own residual stands in for its error on unseen rows. */
#define FIRST_ROWS 2U
/* The fit's miss is taken from at least this many reference rows, none older than
 * REFERENCE_AGE_ROWS rows. */
#define REFERENCE_MIN_ROWS 2U
#define REFERENCE_AGE_ROWS 10.0
/* Windows shorter than this part of a row are left to SM share (ticks jitter around 1 s). */
#define MIN_ROW_PART 0.9
/* As a prior for a run not measured yet, its family's estimate is no surer than this part
 * of it: runs of one command differ with their inputs, and the members' estimates, each
 * from a row or two, are surer of themselves than they are (a family of 50 W jobs at
 * 51-54 W +- 5 W left every new run at SM share, since its window could not beat that). */
#define MIN_PRIOR_SE_PART 0.25
/* Without family priors, the prediction of the known classes must be at least this much
 * surer than the new ones' priors (variances): else the window's residual tells nothing of
 * the new ones. */
#define MAX_PREDICTION_VAR_PART 0.5

/* The prior of a new class (touched in this window): its family's estimate, no surer than
 * MIN_PRIOR_SE_PART of it, else like the known ones, as uncertain as the window's mean
 * power: anything from nothing to the board's whole draw. true when it is its family's. */
static bool new_prior(const struct intensity_gpu *g, uint32_t s, double like_known, double window_w,
                      double *ret_mu, double *ret_var) {
    double kappa, se, floor_se = g->opt.min_se_w;

    if (window_estimate(g, s, &kappa, &se)) {
        if (se < MIN_PRIOR_SE_PART * kappa)
            se = MIN_PRIOR_SE_PART * kappa;
    } else {
        kappa = like_known;
        se = kappa > window_w ? kappa : window_w;
    }
    if (se < floor_se)
        se = floor_se;
    *ret_mu = kappa;
    *ret_var = se * se;
    return g->win_est[s].known;
}

/* Its mean activity per second over the rows it is remembered from (the rows' weighted sum
 * of its activity x their length, over that of their lengths squared). */
static double usual_activity(const struct intensity_gpu *g, uint32_t s) {
    size_t p = PARAM_CLASS0 + s;
    double dt2 = g->m[normal_at(PARAM_IDLE, PARAM_IDLE)];

    return dt2 > 0 ? g->m[normal_at(p, PARAM_IDLE)] / dt2 : 0;
}

/* A class nothing is remembered of, whose rows so far carried less than NEW_SEEN_PART of
 * this window's activity (squared): new in this window or the last (its row waits for the
 * next window), or seen only by the edge of a sample that reached back before it. */
bool intensity_is_new(const struct intensity_gpu *g, uint32_t s) {
    size_t p = PARAM_CLASS0 + s;
    double seen, now;

    if (s == NO_SLOT) /* untracked: nothing to learn of it, new or not */
        return false;
    seen = g->m[normal_at(p, p)] * intensity_decay_now(g);
    now = g->win_act[s];
    return !g->has_memory[p] && (seen <= 0 || seen < NEW_SEEN_PART * now * now);
}

/* Each process its class's intensity x its activity; when the uplift is not handed out
 * apart, the classes the prediction covered carry it, by activity, as they did in it. */
static void posterior_shares(struct intensity_gpu *g, const struct intensity_window *w,
                             bool context_booked, double context_j,
                             struct intensity_share *shares) {
    double most = 0, known_act = 0;

    for (size_t i = 0; i < w->n; i++)
        if (!intensity_is_new(g, g->slot_of[i]))
            known_act += (double)split_act(&w->consumers[i]);
    for (size_t i = 0; i < w->n; i++) {
        uint32_t s = g->slot_of[i];
        double a = (double)split_act(&w->consumers[i]), j;

        /* Only a consumer with no activity can be without a slot here (the caller stands
         * aside for an active one): it drew nothing. */
        if (s == NO_SLOT) {
            g->win_kappa_j[i] = 0;
            continue;
        }
        j = g->win_kappa[s] * a / PCT_US_PER_SM_S;
        if (!context_booked && !intensity_is_new(g, s) && known_act > 0)
            j += context_j * a / known_act;
        g->win_kappa_j[i] = j;
        most = j > most ? j : most;
    }
    for (size_t i = 0; i < w->n; i++) {
        uint32_t s = g->slot_of[i];
        uint64_t a = split_act(&w->consumers[i]);

        shares[i] = (struct intensity_share){
            .weight = most > 0 && isfinite(g->win_kappa_j[i])
                          ? (uint64_t)own_llround(g->win_kappa_j[i] / most * POSTERIOR_SCALE)
                          : a,
            .watts = s != NO_SLOT ? g->theta[PARAM_CLASS0 + s] : 0,
            .learned = s != NO_SLOT && g->learned[PARAM_CLASS0 + s],
        };
    }
}

/* The activity-weighted mean intensity of the known classes alone: the window's mean also
 * holds the new ones' family priors, and a prediction of the known part shrunk towards
 * those moves its energy to the newcomers (a 40 W trainer shrunk to 38 W gave a 2.6 J job
 * 3.4 J). `fallback` when no known class has an estimate. */
static double known_mean(const struct intensity_gpu *g, const uint32_t *touched, size_t n_touched,
                         double fallback) {
    double act = 0, sum = 0;

    for (size_t k = 0; k < n_touched; k++) {
        uint32_t s = touched[k];
        double kappa, se;

        if (intensity_is_new(g, s) || !window_estimate(g, s, &kappa, &se))
            continue;
        act += g->win_act[s];
        sum += g->win_act[s] * kappa;
    }
    return act > 0 ? sum / act : fallback;
}

/* What the fit misses per second, as the known part is predicted below, on the recent
 * reference rows whose classes are exactly this window's n_known known ones. false when
 * fewer than REFERENCE_MIN_ROWS are. */
static bool reference_miss(const struct intensity_gpu *g, unsigned n_known, bool context_booked,
                           double *ret_watts) {
    double miss = 0, dt = 0;
    unsigned used = 0;

    for (unsigned r = 0; r < g->n_refs; r++) {
        const struct reference_row *ref = &g->refs[r];
        double pred = g->theta[PARAM_IDLE] * ref->dt_s, act = 0, usual = 0, context_j;
        bool same =
            ref->n == n_known && g->clock_s - ref->end_s <= REFERENCE_AGE_ROWS * g->opt.row_s;

        for (unsigned k = 0; same && k < ref->n; k++) {
            uint32_t s = ref->slot[k];

            same = g->classes[s].key == ref->key[k] && g->win_act[s] > 0 && !intensity_is_new(g, s);
            pred += g->win_kappa[s] * ref->act[k];
            act += ref->act[k];
            usual += usual_activity(g, s) * ref->dt_s;
        }
        if (!same)
            continue;
        context_j = g->theta[PARAM_CTX] * ref->ctx_s;
        if (!context_booked && usual > 0)
            context_j *= act / usual;
        miss += ref->energy_j - (pred + context_j);
        dt += ref->dt_s;
        used++;
    }
    if (used < REFERENCE_MIN_ROWS || dt <= 0)
        return false;
    *ret_watts = miss / dt;
    return true;
}

bool intensity_posterior(struct intensity_gpu *g, const struct intensity_window *w,
                         const uint32_t *touched, size_t n_touched, double mean_kappa, double tau2,
                         bool context_booked, struct intensity_share *shares) {
    double dur_s = (double)w->duration_us / 1e6, energy_j = (double)w->energy_uj / 1e6;
    double total_act = 0, known_act = 0, known_usual = 0, known_j = 0, pred_new = 0, new_var = 0;
    double most_w = mean_kappa > g->kappa_ref ? mean_kappa : g->kappa_ref;
    double window_w, context_j, pred_known, pred_var, like_known, gain, miss_w;
    unsigned n_known = 0;
    bool informed = false;

    /* The prediction is judged by the fit's error on whole rows: a shorter window (a
     * sampling interval under a second) swings with its processes' phases far more. */
    if (g->rows == 0 || w->energy_uj == 0 || dur_s < MIN_ROW_PART * g->opt.row_s)
        return false;
    window_w = energy_j / dur_s;
    most_w = window_w > most_w ? window_w : most_w;
    mean_kappa = known_mean(g, touched, n_touched, mean_kappa);
    for (size_t k = 0; k < n_touched; k++) {
        uint32_t s = touched[k];
        double kappa, se;

        total_act += g->win_act[s];
        if (intensity_is_new(g, s))
            continue;
        /* Shrunk as the learned split shrinks it, so that the known classes together
         * predict what their mean intensity does. */
        if (window_estimate(g, s, &kappa, &se))
            g->win_kappa[s] =
                mean_kappa + (kappa - mean_kappa) * (tau2 > 0 ? tau2 / (tau2 + se * se) : 0);
        else
            g->win_kappa[s] = g->theta[PARAM_CLASS0 + s];
        n_known++;
        known_act += g->win_act[s];
        known_usual += usual_activity(g, s) * dur_s;
        known_j += g->win_kappa[s] * g->win_act[s];
        most_w = g->win_kappa[s] > most_w ? g->win_kappa[s] : most_w;
    }
    if (known_act <= 0 || known_act >= total_act)
        return false; /* no known class, or no new one */
    /* A newcomer whose samples reach back before the window for the most part drew most of
     * their energy in windows already split: this one's residual is not its. */
    for (size_t i = 0; i < w->n; i++) {
        const struct intensity_consumer *c = &w->consumers[i];

        if (intensity_is_new(g, g->slot_of[i]) && 2 * c->early > c->activity)
            return false;
    }
    /* An uplift not told apart from the known classes' intensities is split with them by
     * activity, and moves with it as theirs does: a trainer slowed by the newcomer beside
     * it draws less, whichever of the two terms the fit put its power in. */
    context_j = g->theta[PARAM_CTX] * (double)w->context_us / 1e6;
    if (!context_booked && known_usual > 0)
        context_j *= known_act / known_usual;
    pred_known = g->theta[PARAM_IDLE] * dur_s + known_j + context_j;
    if (reference_miss(g, n_known, context_booked, &miss_w))
        pred_known += miss_w * dur_s;
    /* The known ones alone already draw more than the window did: the fit is off here. */
    if (pred_known >= energy_j)
        return false;
    /* What the known classes draw per unit of activity, the uplift with them when it is
     * split with them: a newcomer is like them until its window says otherwise (SM share). */
    like_known = (known_j + (context_booked ? 0 : context_j)) / known_act;

    for (size_t k = 0; k < n_touched; k++) {
        uint32_t s = touched[k];
        double mu, var;

        if (!intensity_is_new(g, s))
            continue;
        informed = new_prior(g, s, like_known, window_w, &mu, &var) || informed;
        pred_new += mu * g->win_act[s];
        new_var += var * g->win_act[s] * g->win_act[s];
    }
    /* In the first rows, before any was checked unseen, the fit's own residual; later, a
     * fit never checked (every row had a newcomer in it) is not trusted. */
    if (g->oos_rows == 0 && g->rows > FIRST_ROWS)
        return false;
    pred_var = g->oos_rows ? g->oos_err2 * dur_s : g->sigma_j * g->sigma_j * dur_s / g->opt.row_s;
    /* The window says little of them: with its family's prior a newcomer keeps about that
     * (the update below moves it little), without one SM share is what it would get. */
    if (!informed && pred_var > MAX_PREDICTION_VAR_PART * new_var)
        return false;

    gain = (energy_j - pred_known - pred_new) / (new_var + pred_var);
    for (size_t k = 0; k < n_touched; k++) {
        uint32_t s = touched[k];
        double mu, var, kappa, floor_w = MIN_POSTERIOR_PART * like_known;

        if (!intensity_is_new(g, s))
            continue;
        new_prior(g, s, like_known, window_w, &mu, &var);
        kappa = mu + var * g->win_act[s] * gain;
        /* Far beyond anything this GPU has shown: not the new class's draw but the fit
         * being off in this window. */
        if (kappa > MAX_KAPPA_RATIO * most_w)
            return false;
        g->win_kappa[s] = kappa > floor_w ? kappa : floor_w;
    }
    posterior_shares(g, w, context_booked, context_j, shares);
    return true;
}
