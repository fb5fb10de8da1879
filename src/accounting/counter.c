/* SPDX-License-Identifier: MIT */
#include "counter.h"

#include <errno.h>

int energy_counter_init(struct energy_counter *c, uint64_t modulus, struct energy_unit unit,
                        uint64_t max_delta_raw) {
    if (unit.num == 0 || unit.den == 0)
        return -EINVAL;
    *c = (struct energy_counter){
        .modulus = modulus,
        .unit = unit,
        .max_delta_raw = max_delta_raw,
    };
    return 0;
}

uint64_t energy_convert(struct energy_unit unit, uint64_t delta_raw, uint64_t *remainder) {
    /* 128-bit: delta_raw * num cannot overflow, and the carried remainder is < den. */
    unsigned __int128 acc = (unsigned __int128)delta_raw * unit.num + *remainder;

    *remainder = (uint64_t)(acc % unit.den);
    return (uint64_t)(acc / unit.den);
}

int energy_counter_update(struct energy_counter *c, uint64_t raw, uint64_t *ret_delta_uj) {
    enum counter_event event = COUNTER_ADVANCED;
    uint64_t delta_raw, delta_uj;

    if (c->modulus != 0 && raw >= c->modulus)
        return -ERANGE;

    if (!c->primed) {
        c->primed = true;
        c->last_raw = raw;
        *ret_delta_uj = 0;
        return COUNTER_FIRST;
    }

    if (raw >= c->last_raw)
        delta_raw = raw - c->last_raw;
    else if (c->modulus != 0) {
        delta_raw = c->modulus - c->last_raw + raw;
        event = COUNTER_WRAPPED;
    } else {
        /* A counter that never wraps went down: it restarted from zero. */
        delta_raw = raw;
        event = COUNTER_RESET;
    }

    if (c->max_delta_raw != 0 && delta_raw > c->max_delta_raw) {
        c->last_raw = raw;
        *ret_delta_uj = 0;
        return COUNTER_GLITCH;
    }

    c->last_raw = raw;
    delta_uj = energy_convert(c->unit, delta_raw, &c->remainder);
    c->total_uj += delta_uj;
    *ret_delta_uj = delta_uj;
    return (int)event; /* clang gives this enum an unsigned type */
}
