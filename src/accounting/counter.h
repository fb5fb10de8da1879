/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "energy_unit.h"

/*
 * Cumulative energy counters, read from hardware, turned into exact microjoule deltas.
 *
 * A counter has an explicit modulus: powercap wraps at max_energy_range_uj + 1, MSRs at
 * 2^32 raw units. Modulus 0 is a 64-bit counter: one that went down passed 2^64 when that
 * is the nearer way (perf's count, in 2^-32 J, after 2^32 J), else it was reset (NVML's,
 * at a driver reload). Raw units convert to microjoules by an exact ratio num/den (e.g.
 * 2^-14 J = 10^6 / 16384 uJ) and the fractional remainder is carried from one delta to the
 * next, so a million small deltas add up to exactly the same total as one big one.
 */

enum counter_event {
    COUNTER_ADVANCED = 0,  /* normal delta (possibly zero) */
    COUNTER_FIRST = 1,     /* first reading: baseline only, delta 0 */
    COUNTER_WRAPPED = 2,   /* passed its modulus (or 2^64) once; delta is exact */
    COUNTER_RESET = 3,     /* a non-wrapping counter went down: delta is the new value */
    COUNTER_GLITCH = 4,    /* implausibly large delta: not energy, delta 0, baseline kept */
    COUNTER_RELEVELED = 5, /* the glitch before was a new level: delta from that reading */
};

struct energy_counter {
    uint64_t modulus; /* 0: 64 bits */
    struct energy_unit unit;
    uint64_t max_delta_raw; /* 0: no plausibility bound */
    bool primed;
    uint64_t last_raw;
    uint64_t remainder; /* carried fraction, in 1/den uJ; always < den */
    uint64_t total_uj;  /* sum of all deltas returned */
    /* The last implausible reading: confirmed by a next one plausible against it (and not
     * against the baseline), it is the counter's new level. */
    bool have_suspect;
    uint64_t suspect_raw;
};

/* Returns 0, or -EINVAL for a zero denominator or numerator. */
int energy_counter_init(struct energy_counter *c, uint64_t modulus, struct energy_unit unit,
                        uint64_t max_delta_raw);

/*
 * Takes a new raw reading. Returns the enum counter_event (>= 0) and writes the delta in
 * microjoules, or -ERANGE when raw is not below a non-zero modulus (the reading is then
 * ignored and the baseline kept).
 *
 * On COUNTER_RESET the energy between the last reading and the reset cannot be known; the
 * delta is the value counted since the reset (the new raw value).
 */
int energy_counter_update(struct energy_counter *c, uint64_t raw, uint64_t *ret_delta_uj);

/* Converts a raw delta to microjoules, carrying the fraction in *remainder. */
uint64_t energy_convert(struct energy_unit unit, uint64_t delta_raw, uint64_t *remainder);
