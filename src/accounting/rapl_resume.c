/* SPDX-License-Identifier: MIT */
#include "rapl_resume.h"

/* Whether the counter may have passed its modulus more than once in since_us: its range at
 * RAPL_DOWNTIME_MAX_WATTS (W x us = uJ, in raw units: den / num) is shorter. */
static bool may_wrap_twice(const struct energy_counter *counter, uint64_t since_us) {
    unsigned __int128 bound_raw = (unsigned __int128)RAPL_DOWNTIME_MAX_WATTS * since_us *
                                  counter->unit.den / counter->unit.num;

    return bound_raw >= counter->modulus;
}

/* since_us of unknown energy at now_ns, once per domain however many of its dies say so
 * at that instant: the time is the domain's, not a die's (the longest counts). */
void rapl_add_unknown(struct ledger_rapl *lr, uint64_t now_ns, uint64_t since_us) {
    if (lr->unknown_at_ns != now_ns) {
        lr->unknown_at_ns = now_ns;
        lr->unknown_at_us = 0;
    }
    if (since_us > lr->unknown_at_us) {
        lr->downtime_unknown_us += since_us - lr->unknown_at_us;
        lr->unknown_at_us = since_us;
    }
}

static uint64_t since_read_us(const struct ledger_rapl *lr, uint32_t die, uint64_t now_ns) {
    return (int64_t)now_ns > lr->raw_read_ns[die]
               ? (uint64_t)((int64_t)now_ns - lr->raw_read_ns[die]) / 1000
               : 0;
}

bool rapl_gap_unknown(struct energy_counter *counter, struct ledger_rapl *lr, uint32_t die,
                      uint64_t now_ns) {
    uint64_t since_us;

    if (!counter->primed || counter->modulus == 0 || counter->unit.num == 0 ||
        die >= LEDGER_RAPL_MAX_DIES || !(lr->raw_valid & (1u << die)))
        return false;
    since_us = since_read_us(lr, die, now_ns);
    if (!may_wrap_twice(counter, since_us))
        return false;
    rapl_add_unknown(lr, now_ns, since_us);
    counter->primed = false; /* the next reading is a new baseline */
    return true;
}

bool rapl_resume(struct energy_counter *counter, struct ledger_rapl *lr, uint32_t die,
                 uint64_t now_ns) {
    uint32_t bit = die < LEDGER_RAPL_MAX_DIES ? 1u << die : 0;
    uint64_t since_us;

    if (!(lr->restored & bit))
        return false;
    lr->restored &= ~bit;
    /* From the saved reading, not from the restart: a die not read for a while (RAPL
     * unreadable for a run, a zone missing) was saved again with its old reading. */
    since_us = since_read_us(lr, die, now_ns);
    if ((lr->raw_stale & bit) || counter->modulus == 0 || lr->modulus != counter->modulus ||
        lr->unit_num != counter->unit.num || lr->unit_den != counter->unit.den) {
        rapl_add_unknown(lr, now_ns, since_us);
        return false;
    }
    if (may_wrap_twice(counter, since_us)) {
        rapl_add_unknown(lr, now_ns, since_us);
        return false;
    }
    counter->primed = true;
    counter->last_raw = lr->raw[die];
    return true;
}

bool rapl_implausible(struct ledger_rapl *lr, uint32_t die, uint64_t now_ns, uint64_t delta_uj) {
    uint64_t since_us;

    if (die >= LEDGER_RAPL_MAX_DIES || !(lr->raw_valid & (1u << die)))
        return false;
    since_us = since_read_us(lr, die, now_ns);
    /* W x us = uJ; a joule of slack for when the reading was taken within the scan */
    if ((unsigned __int128)delta_uj <=
        (unsigned __int128)RAPL_DOWNTIME_MAX_WATTS * since_us + RAPL_IMPLAUSIBLE_SLACK_UJ)
        return false;
    rapl_add_unknown(lr, now_ns, since_us);
    return true;
}

bool rapl_missed_a_scan(const struct ledger_rapl *lr, uint32_t die, uint64_t window_start_ns) {
    return window_start_ns != 0 && die < LEDGER_RAPL_MAX_DIES && (lr->raw_valid & (1u << die)) &&
           lr->raw_read_ns[die] < (int64_t)window_start_ns;
}

void rapl_keep_raw(struct ledger_rapl *lr, const struct rapl_reading *rd, uint64_t now_ns) {
    if (rd->die >= LEDGER_RAPL_MAX_DIES)
        return;
    lr->raw_valid |= 1u << rd->die;
    lr->raw_stale &= ~(1u << rd->die);
    lr->raw[rd->die] = rd->raw;
    lr->raw_read_ns[rd->die] = (int64_t)now_ns;
    lr->modulus = rd->modulus;
    lr->unit_num = rd->unit.num;
    lr->unit_den = rd->unit.den;
}
