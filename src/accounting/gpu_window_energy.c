/* SPDX-License-Identifier: MIT */
/*
 * A GPU window's energy: the counter's delta (a reset or a glitch said, never booked), or,
 * on a GPU without a counter, its power integrated between readings, polled faster than
 * the window (gpu_accounting_poll()) so that a load changing within it is counted.
 */
#include "gpu_accounting.h"
#include "gpu_accounting_internal.h"

/* The least time a counter delta is bounded by (max power x this): a step or two. */
#define GLITCH_BOUND_MIN_US 1000000

/* A power reading no board draws (above the plausibility bound of the counters' deltas) is
 * garbage, not power: integrated, one would be hundreds of kilojoules. */
static bool power_plausible(const struct gpu_accounting *a, bool valid, uint32_t power_mw) {
    return valid && (double)power_mw <= a->opts.max_power_watts * 1000.0;
}

/* Trapezoid from the last power reading to this one: (P0 + P1) / 2 * dt; mW * us = nJ, so
 * the unit is 1/2000 uJ. Monotonic time: a step of the wall clock is no energy. */
static uint64_t integrate_power(struct gpu_track *t, uint32_t power_mw, uint64_t now_ns) {
    uint64_t dt_us = now_ns > t->last_power_ns ? (now_ns - t->last_power_ns) / 1000 : 0;
    uint64_t uj =
        energy_convert((struct energy_unit){1, 2000},
                       ((uint64_t)t->last_power_mw + power_mw) * dt_us, &t->power_remainder);

    t->last_power_mw = power_mw;
    t->last_power_ns = now_ns;
    return uj;
}

bool window_energy(struct gpu_accounting *a, struct gpu_track *t,
                   const struct gpu_device_reading *d, uint64_t now_ns, uint64_t *ret_uj,
                   struct gpu_tick_stats *stats) {
    bool power_ok = power_plausible(a, d->power_valid, d->power_mw);
    uint64_t delta;
    int event;

    if (d->energy_valid) {
        /* No GPU draws more than max_power: a bigger jump is a glitch, not energy. The
         * counter moves in steps (about 100 ms), and a step holds what was drawn since the
         * step before, which came after the reading before the one that showed it: that is
         * how far back a delta may reach, and at least a second. (Bounded by the window
         * alone, a 100 ms step in a 10 ms window after a late tick was a "glitch", lost.) */
        uint64_t since = t->energy_since_ns ? t->energy_since_ns : t->window_start_ns;
        uint64_t bound_us = MAX(now_ns > since ? (now_ns - since) / 1000 : 0, GLITCH_BOUND_MIN_US);

        t->counter.max_delta_raw =
            (uint64_t)(a->opts.max_power_watts * (double)bound_us / 1000.0) + 1;
        event = energy_counter_update(&t->counter, d->energy_mj, &delta);
        if (event == COUNTER_RESET)
            stats->counter_resets++;
        if (event == COUNTER_GLITCH) {
            stats->counter_glitches++;
            /* Should the next delta be counted from the reading before this one (a spike),
             * it holds this window's energy too: whose it was, the window's samples cannot
             * say (device level, no_data). From this one (a new level), it is its own. */
            t->after_glitch = true;
        }
        if (event < 0 || event == COUNTER_GLITCH)
            return false;
        if (t->after_glitch && event != COUNTER_RELEVELED)
            t->gap = true; /* from the reading before the glitch: two windows' energy */
        t->after_glitch = false;
        if (event == COUNTER_FIRST || delta > 0)
            t->energy_since_ns =
                event != COUNTER_FIRST && t->energy_read_ns ? t->energy_read_ns : now_ns;
        t->energy_read_ns = now_ns;
        /* The counter answers again after windows integrated from power: this one's energy
         * is the power's up to now, the counter's from here on. */
        if (event == COUNTER_FIRST && t->power_primed && t->window_open && power_ok) {
            delta = t->power_polled_uj + integrate_power(t, d->power_mw, now_ns);
            event = COUNTER_ADVANCED;
        }
        /* The power reading kept too: should the counter stop answering (NOT_SUPPORTED), the
         * window it leaves open is integrated from here, not dropped. */
        t->power_primed = power_ok;
        if (power_ok) {
            t->last_power_mw = d->power_mw;
            t->last_power_ns = now_ns;
        }
        t->power_polled_uj = 0;
        if (event == COUNTER_FIRST)
            return false;
        *ret_uj = delta;
        return t->window_open;
    }
    /* The counter stopped answering: should it answer again, its delta would span the
     * windows integrated here as well. It starts over from its next reading. */
    t->counter.primed = false;
    t->after_glitch = false;
    if (!power_ok)
        return false;
    if (!t->power_primed || !t->window_open) {
        t->power_primed = true;
        t->last_power_mw = d->power_mw;
        t->last_power_ns = now_ns;
        t->power_polled_uj = 0;
        return false;
    }
    *ret_uj = t->power_polled_uj + integrate_power(t, d->power_mw, now_ns);
    t->power_polled_uj = 0;
    return true;
}

void gpu_accounting_poll(struct gpu_accounting *a, const struct gpu_poll_reading *polls, size_t n,
                         uint64_t now_ns) {
    for (size_t i = 0; i < n; i++) {
        struct gpu_track *t;

        if (polls[i].index >= LEDGER_MAX_GPUS || !polls[i].power_valid)
            continue;
        t = &a->tracks[polls[i].index];
        if (!power_plausible(a, true, polls[i].power_mw))
            continue;
        if (t->power_primed && t->window_open && now_ns > t->last_power_ns)
            t->power_polled_uj += integrate_power(t, polls[i].power_mw, now_ns);
    }
}
