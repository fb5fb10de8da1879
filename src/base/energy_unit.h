/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/*
 * The unit a raw energy counter counts in: one raw unit is num/den microjoules, an exact
 * ratio (2^-14 J = 10^6 / 16384 uJ). Sources attach it to each reading; the accounting
 * converts with it (counter.h), carrying the fraction.
 */
struct energy_unit {
    uint64_t num;
    uint64_t den;
};

#define ENERGY_UNIT_UJ ((struct energy_unit){1, 1})
#define ENERGY_UNIT_MJ ((struct energy_unit){1000, 1})

/* The unit 2^-esu J, as MSR_RAPL_POWER_UNIT encodes it (esu in 0..31). */
static inline struct energy_unit energy_unit_from_esu(unsigned esu) {
    return (struct energy_unit){UINT64_C(1000000), UINT64_C(1) << (esu & 31U)};
}
