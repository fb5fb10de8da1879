/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "counter.h"
#include "ledger.h"
#include "rapl.h"

/*
 * A RAPL counter across a restart of joulestat (--state-dir): its last reading is kept in
 * the ledger and saved with it; when joulestat comes back, the counter's first reading is
 * measured from the saved one, and that energy, drawn while joulestat was down, is booked
 * as unattributed downtime. A counter that may have wrapped more than once while down
 * (its range at RAPL_DOWNTIME_MAX_WATTS is shorter than the time down), whose modulus or
 * unit changed, or that does not count across an open (perf) cannot say how much: the time
 * is booked as downtime of unknown energy instead, never guessed.
 */

/* No CPU package or DRAM domain draws more on average; a bound, not an estimate. */
#define RAPL_DOWNTIME_MAX_WATTS 1000u

/* At a counter's first reading in this run (counter just initialised), at now_ns: whether
 * it continues from lr's restored reading of the same die (not stale: raw_stale), so that
 * its first delta is the energy drawn since that reading. Consumes that die's restored
 * reading either way. */
bool rapl_resume(struct energy_counter *counter, struct ledger_rapl *lr, uint32_t die,
                 uint64_t now_ns);

/* The same bound while running: a counter not read for longer than it can count without
 * ambiguity (joulestat stalled, the zone unreadable for a while) may have wrapped more than
 * once, and its next delta would be short by whole ranges. Called before a primed counter's
 * update at now_ns (the monotonic clock, which does not count a suspend): when so, the time
 * since the die's last kept reading is booked in lr as of unknown energy, and the counter
 * is unprimed, so that reading is its new baseline. Returns whether it did. */
bool rapl_gap_unknown(struct energy_counter *counter, struct ledger_rapl *lr, uint32_t die,
                      uint64_t now_ns);

/* What a counter stepping back is not a wrap of: reset (a package reset, a resume from
 * suspend, which the monotonic clock does not count) or one bogus reading (a VM, msr-safe),
 * taken for one wrap, would book up to the counter's whole range at once (162 kJ in a 10 s
 * window). Called after the counter's update and before rapl_keep_raw() at now_ns: whether
 * delta_uj is more than RAPL_DOWNTIME_MAX_WATTS can draw since the die's last reading; if
 * so, that time is booked in lr as of unknown energy and the delta must not be booked (the
 * reading is the counter's new baseline). */
#define RAPL_IMPLAUSIBLE_SLACK_UJ UINT64_C(1000000)
bool rapl_implausible(struct ledger_rapl *lr, uint32_t die, uint64_t now_ns, uint64_t delta_uj);

/* since_us of unknown energy at now_ns, added once per domain however many of its dies say
 * so at that instant (the longest counts). */
void rapl_add_unknown(struct ledger_rapl *lr, uint64_t now_ns, uint64_t since_us);

/* Whether the die's counter, read before, did not read at the scan at window_start_ns (the
 * one before this): its next delta reaches over windows it did not see. */
bool rapl_missed_a_scan(const struct ledger_rapl *lr, uint32_t die, uint64_t window_start_ns);

/* Keeps the reading, taken at now_ns, in lr (by its die), for the state file. */
void rapl_keep_raw(struct ledger_rapl *lr, const struct rapl_reading *rd, uint64_t now_ns);
