/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ledger.h"

/*
 * systemd services that retention dropped, kept unexported so that one that comes back (a
 * service a timer starts every hour) goes on from its counters instead of starting a series
 * at 0. Prometheus takes a series that comes back lower as a reset, but one that comes back
 * at or above its last value (a short run drawing as much as the one before it, scraped
 * once) as having grown only by the difference: each run but the first would count as
 * almost nothing. Only services: their names come back by design, while pod UIDs and
 * container ids are new each time, and a SLURM job id given again is another job (its
 * epilog would write the earlier job's energy into the new one's record). At most
 * LEDGER_PAST_MAX are kept (the oldest goes), each LEDGER_PAST_KEEP_NS after it was
 * dropped; saved with the state, with its age.
 */
#define LEDGER_PAST_MAX 1024u
#define LEDGER_PAST_KEEP_NS (UINT64_C(7) * 86400 * 1000000000)

/* Whether a workload of kind is kept when dropped. */
bool ledger_past_kind(enum workload_kind kind);

/* Keeps w's counters and labels (w is about to be freed), dropped at now_ns. */
void ledger_past_keep(struct ledger *l, const struct ledger_workload *w, uint64_t now_ns);

/* A workload just created at now_ns: it takes the counters it had when dropped, if any. */
void ledger_past_resume(struct ledger *l, struct ledger_workload *w, uint64_t now_ns);

/* One restored from a saved state, dropped age_us before now_ns. Returns 0 (an expired one,
 * or one of a kind not kept, is left out), -EINVAL (id names no workload of that kind) or
 * -ENOMEM. cpu_unseen_uj: SNAP_CPU_DOMAINS values, or NULL. */
int ledger_past_restore(struct ledger *l, enum workload_kind kind, const struct snap_identity *id,
                        uint64_t gpu_uj, uint64_t cpu_uj, const uint64_t *cpu_unseen_uj,
                        uint64_t age_us, uint64_t now_ns);

/* Iteration for the state file: `for (size_t i = 0; ledger_past_next(l, &i, now, &w, &age);)`:
 * w a workload entry's copy with the kept counters and labels, age_us since it was dropped;
 * those expired at now_ns are left out (and so not saved). Nothing scans the set at a
 * sweep: an expired one costs its memory until the set is full or the next restart. */
bool ledger_past_next(const struct ledger *l, size_t *iter, uint64_t now_ns,
                      struct ledger_workload *ret, uint64_t *ret_age_us);

void ledger_past_done(struct ledger *l);
