/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "ledger.h"

/*
 * Workloads that retention dropped, kept unexported so that one that comes back (a systemd
 * service a timer starts every hour, a SLURM job id given again) goes on from its counters
 * instead of starting a series at 0. Prometheus takes a series that comes back lower as a
 * reset, but one that comes back at or above its last value (a short run drawing as much
 * as the one before it, scraped once) as having grown only by the difference: each run but
 * the first would be counted as almost nothing. At most LEDGER_PAST_MAX are kept, each for
 * LEDGER_PAST_KEEP_NS; saved with the state.
 */
#define LEDGER_PAST_MAX 8192u
#define LEDGER_PAST_KEEP_NS (UINT64_C(7) * 86400 * 1000000000)

/* Keeps w's counters and labels (w is about to be freed), dropped at now_ns. */
void ledger_past_keep(struct ledger *l, const struct ledger_workload *w, uint64_t now_ns);

/* A workload just created at now_ns: it takes the counters it had when dropped, if any. */
void ledger_past_resume(struct ledger *l, struct ledger_workload *w, uint64_t now_ns);

/* One restored from a saved state, as dropped at now_ns. Returns 0, -EINVAL (id names no
 * workload of that kind) or -ENOMEM. cpu_unseen_uj: SNAP_CPU_DOMAINS values, or NULL. */
int ledger_past_restore(struct ledger *l, enum workload_kind kind, const struct snap_identity *id,
                        uint64_t gpu_uj, uint64_t cpu_uj, const uint64_t *cpu_unseen_uj,
                        uint64_t now_ns);

/* Iteration for the state file: `for (size_t i = 0; ledger_past_next(l, &i, &w);)`, w a
 * workload entry's copy with the kept counters and labels. */
bool ledger_past_next(const struct ledger *l, size_t *iter, struct ledger_workload *ret);

void ledger_past_done(struct ledger *l);
