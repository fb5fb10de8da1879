/* SPDX-License-Identifier: MIT */
#include "idle_power.h"

#include <string.h>

/* The 10th percentile: robust against a window that caught a process starting up. */
#define IDLE_PERCENTILE 10U

void idle_power_init(struct idle_power *ip, double watts) {
    memset(ip, 0, sizeof(*ip));
    if (watts >= 0) {
        ip->configured = true;
        ip->configured_mw = (uint64_t)(watts * 1000.0 + 0.5);
    }
}

/* Stores one observation and takes the percentile again: an insertion sort of at most 64
 * values, only when a new observation arrives. */
static void record(struct idle_power *ip, uint64_t mw) {
    uint64_t sorted[IDLE_POWER_HISTORY];
    unsigned n;

    ip->history_mw[ip->next] = mw;
    ip->next = (ip->next + 1) % IDLE_POWER_HISTORY;
    if (ip->count < IDLE_POWER_HISTORY)
        ip->count++;
    n = ip->count;
    for (unsigned i = 0; i < n; i++) {
        uint64_t v = ip->history_mw[i];
        unsigned j = i;

        for (; j > 0 && sorted[j - 1] > v; j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = v;
    }
    ip->estimate_mw = sorted[(n - 1) * IDLE_PERCENTILE / 100U];
}

void idle_power_observe(struct idle_power *ip, uint64_t energy_uj, uint64_t duration_us) {
    if (ip->configured || duration_us == 0)
        return;
    ip->pending_uj += energy_uj;
    ip->pending_us += duration_us;
    if (ip->pending_us < IDLE_OBSERVATION_US)
        return;
    energy_uj = ip->pending_uj;
    duration_us = ip->pending_us;
    ip->pending_uj = ip->pending_us = 0;
    /* uJ / us = W; times 1000 for mW. */
    record(ip, (uint64_t)((unsigned __int128)energy_uj * 1000U / duration_us));
}

unsigned idle_power_history(const struct idle_power *ip, uint64_t *ret_mw) {
    unsigned oldest = (ip->next + IDLE_POWER_HISTORY - ip->count) % IDLE_POWER_HISTORY;

    for (unsigned i = 0; i < ip->count; i++)
        ret_mw[i] = ip->history_mw[(oldest + i) % IDLE_POWER_HISTORY];
    return ip->count;
}

void idle_power_restore(struct idle_power *ip, const uint64_t *mw, unsigned n) {
    if (ip->configured)
        return;
    ip->count = ip->next = 0;
    ip->estimate_mw = 0;
    for (unsigned i = 0; i < n; i++)
        record(ip, mw[i]);
}

void idle_power_interrupt(struct idle_power *ip) {
    ip->pending_uj = ip->pending_us = 0;
}

bool idle_power_known(const struct idle_power *ip) {
    return ip->configured || ip->count > 0;
}

double idle_power_watts(const struct idle_power *ip) {
    return (double)(ip->configured ? ip->configured_mw : ip->estimate_mw) / 1000.0;
}

uint64_t idle_power_energy_uj(const struct idle_power *ip, uint64_t duration_us) {
    uint64_t mw = ip->configured ? ip->configured_mw : ip->estimate_mw;

    /* mW * us = nJ. */
    return (uint64_t)((unsigned __int128)mw * duration_us / 1000U);
}
