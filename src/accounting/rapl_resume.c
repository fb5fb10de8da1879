/* SPDX-License-Identifier: MIT */
#include "rapl_resume.h"

bool rapl_resume(struct energy_counter *counter, struct ledger_rapl *lr, uint64_t downtime_us) {
    unsigned __int128 bound_raw;

    if (!lr->restored)
        return false;
    lr->restored = false;
    if (counter->modulus == 0 || lr->modulus != counter->modulus ||
        lr->unit_num != counter->unit.num || lr->unit_den != counter->unit.den) {
        lr->downtime_unknown_us += downtime_us;
        return false;
    }
    /* The most it can have counted while down: W x µs = µJ, in raw units (den / num). */
    bound_raw = (unsigned __int128)RAPL_DOWNTIME_MAX_WATTS * downtime_us * counter->unit.den /
                counter->unit.num;
    if (bound_raw >= counter->modulus) {
        lr->downtime_unknown_us += downtime_us;
        return false;
    }
    counter->primed = true;
    counter->last_raw = lr->raw;
    return true;
}

void rapl_keep_raw(struct ledger_rapl *lr, const struct rapl_reading *rd) {
    lr->raw_valid = true;
    lr->raw = rd->raw;
    lr->modulus = rd->modulus;
    lr->unit_num = rd->unit.num;
    lr->unit_den = rd->unit.den;
}
