/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ledger.h"
#include "ledger_restart.h"
#include "strbuf.h"

/*
 * The ledger's counters as text, so that they survive a restart (--state-dir,
 * docs/DEPLOY.md "Restarts"): every GPU, RAPL domain, GPU process, CPU process series, pod
 * allocation of a GPU and workload with its labels and counters, and each GPU's raw energy
 * counter when last read, from which the energy drawn while joulestat was down is known.
 * Pure: the daemon does the file I/O.
 *
 * Format: a first line "joulestat-state 2"; a line "host" with the boot and clocks of the
 * save (ledger_restart.h); one entry a line, fields separated by tabs, in "name=value"
 * pairs after the entry's kind, so that a newer version can add fields; a last line "end"
 * with the number of entries, so that a file cut short is known. Label values are escaped:
 * '%' and bytes up to 0x20 and 0x7f as %XX. A state of version 1 (no host and no end
 * line) is still read.
 */

#define GPU_BASELINE_IDLE_MAX 64

/* What a GPU's accounting carries across a restart: its raw energy counter when it was last
 * read, in the sample clock (host real time), and the idle power it was seen drawing (mW,
 * oldest first). uuid: the GPU's when it was saved (filled on restore). */
struct gpu_baseline {
    bool valid; /* raw_mj and at_us hold a reading */
    uint64_t raw_mj;
    uint64_t at_us;
    unsigned n_idle;
    uint64_t idle_mw[GPU_BASELINE_IDLE_MAX];
    char uuid[SNAP_LABEL_MAX];
};

/* Appends the state text to out, saved now. baselines: LEDGER_MAX_GPUS entries (NULL:
 * none). */
void ledger_state_format(const struct ledger *l, const struct gpu_baseline *baselines,
                         const struct state_clock *now, struct strbuf *out);

/*
 * Restores the counters of text (size bytes, NUL-terminated) into l, whose entries are new:
 * each is restored inactive as of now->mono_ns, so it is kept for the retention time unless
 * its process or workload is seen again, when it continues from the saved values; a RAPL
 * reading that does not count on (a reboot, a time unknown) is restored stale. file_wall_us:
 * when the file was written, for a state of version 1. baselines (LEDGER_MAX_GPUS entries)
 * receive the saved raw counters (0 after a reboot), their windows' starts in today's wall
 * clock, idle observations and UUIDs; *ret_restart (may be NULL) how long joulestat was down
 * and whether the raw counters count on. Returns the number of entries, -EBADMSG with
 * *ret_bad_line
 * (1-based) for text that is not a whole state of this format (l may then hold a part of
 * it: the caller starts over with an empty ledger), or -ENOMEM.
 */
int ledger_state_restore(struct ledger *l, const char *text, size_t size,
                         const struct state_clock *now, uint64_t file_wall_us,
                         struct gpu_baseline *baselines, struct ledger_restart *ret_restart,
                         unsigned *ret_bad_line);
