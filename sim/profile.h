/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "scenario.h"

/* Granularity of ramps: the demand is piecewise constant in steps of this many µs. */
#define SIM_RAMP_STEP_US UINT64_C(1000)

/*
 * SM demand (percent) of a profile `rel` µs after the process started, and in *ret_next the
 * relative time at which it may next change (SIM_TIME_NEVER: never). Pure.
 */
uint32_t sim_profile_at(const struct sim_profile *p, uint64_t rel, uint64_t *ret_next);
