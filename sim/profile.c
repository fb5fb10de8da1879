/* SPDX-License-Identifier: MIT */
#include "profile.h"

static uint32_t duty_at(const struct sim_profile *p, uint64_t rel, uint64_t *ret_next) {
    if (p->on_us == 0 || p->on_us >= p->period_us) {
        *ret_next = SIM_TIME_NEVER;
        return p->on_us == 0 ? p->low : p->level;
    }
    /* on during [phase + k*period, phase + k*period + on) */
    uint64_t shift = p->period_us - p->phase_us % p->period_us;
    uint64_t pos = (rel + shift) % p->period_us;
    if (pos < p->on_us) {
        *ret_next = rel + (p->on_us - pos);
        return p->level;
    }
    *ret_next = rel + (p->period_us - pos);
    return p->low;
}

static uint32_t ramp_at(const struct sim_profile *p, uint64_t rel, uint64_t *ret_next) {
    if (rel >= p->ramp_us) {
        *ret_next = SIM_TIME_NEVER;
        return p->level;
    }
    uint64_t step_start = rel / SIM_RAMP_STEP_US * SIM_RAMP_STEP_US;
    uint64_t next = step_start + SIM_RAMP_STEP_US;
    *ret_next = next < p->ramp_us ? next : p->ramp_us;
    /* linear from low to level, evaluated at the start of the step */
    int64_t span = (int64_t)p->level - (int64_t)p->low;
    int64_t v = (int64_t)p->low + span * (int64_t)step_start / (int64_t)p->ramp_us;
    return (uint32_t)v;
}

uint32_t sim_profile_at(const struct sim_profile *p, uint64_t rel, uint64_t *ret_next) {
    switch (p->kind) {
    case SIM_PROFILE_DUTY:
        return duty_at(p, rel, ret_next);
    case SIM_PROFILE_RAMP:
        return ramp_at(p, rel, ret_next);
    case SIM_PROFILE_CONSTANT:
    default:
        *ret_next = SIM_TIME_NEVER;
        return p->level;
    }
}
