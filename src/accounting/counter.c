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

/* A 64-bit counter (modulus 0) that went down passed 2^64 when that is the nearer way
 * (perf's RAPL count, in 2^-32 J, does after 2^32 J); else it started over from zero
 * (NVML's, at a driver reload, never near 2^63 mJ). */
static bool wrapped_64(uint64_t from, uint64_t to) {
    return to - from < from - to; /* both modulo 2^64 */
}

/* to - from in raw units, across one wrap; false when the counter started over. */
static bool forward_delta(const struct energy_counter *c, uint64_t from, uint64_t to,
                          uint64_t *ret) {
    if (to >= from)
        *ret = to - from;
    else if (c->modulus != 0)
        *ret = c->modulus - from + to;
    else if (wrapped_64(from, to))
        *ret = to - from;
    else
        return false;
    return true;
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
    else if (forward_delta(c, c->last_raw, raw, &delta_raw))
        event = COUNTER_WRAPPED;
    else {
        /* A counter that never wraps went down: it restarted from zero. */
        delta_raw = raw;
        event = COUNTER_RESET;
    }

    if (c->max_delta_raw != 0 && delta_raw > c->max_delta_raw) {
        /* The baseline stays: a reading that was garbage once (a spike) leaves the next
         * one plausible against it, and nothing is lost. Two in a row that agree are a new
         * level: from the first of them on (what came before it is not known). */
        uint64_t from_suspect;

        if (!c->have_suspect || !forward_delta(c, c->suspect_raw, raw, &from_suspect) ||
            from_suspect > c->max_delta_raw) {
            c->suspect_raw = raw;
            c->have_suspect = true;
            *ret_delta_uj = 0;
            return COUNTER_GLITCH;
        }
        delta_raw = from_suspect;
        event = COUNTER_RELEVELED;
    }

    c->have_suspect = false;
    c->last_raw = raw;
    delta_uj = energy_convert(c->unit, delta_raw, &c->remainder);
    c->total_uj += delta_uj;
    *ret_delta_uj = delta_uj;
    return (int)event; /* clang gives this enum an unsigned type */
}
