/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "store.h"

/*
 * --state-dir: the ledger's counters in <dir>/joulestat.state (ledger_state.h), written
 * atomically (a temporary file, fsync, rename, fsync of the directory) and read back at
 * start, so that no counter decreases across a restart (docs/DEPLOY.md, "Restarts").
 */
#define STATE_FILE_NAME "joulestat.state"

/*
 * Restores l (empty) and the GPUs' baselines (LEDGER_MAX_GPUS entries) from dir, now. No
 * file is a first start. A file that cannot be read or is not a whole state (corrupt, cut
 * short, foreign, another version) is reported, renamed to joulestat.state.bad and l left
 * empty. Returns the entries restored (>= 0), or -ENOMEM; other errors are logged and count
 * as a first start.
 */
int state_file_load(const char *dir, struct ledger *l, const struct state_clock *now,
                    struct gpu_baseline *baselines);

/* Takes dir's lock (flock on the directory, held while *ret_fd stays open): one joulestat
 * per state directory, since two would write each other's files (a second one started by
 * hand beside the unit, a rollout that starts the new pod first). Returns 0, -EWOULDBLOCK
 * when another process holds it, or another -errno (the directory cannot be opened). */
int state_file_lock(const char *dir, int *ret_fd);

/* Writes l and the baselines to dir, saved now. Returns 0 or -errno; then the old file, if
 * the new one did not take its place, is removed (where it can be), since the counters
 * published next are ahead of it. */
int state_file_save(const char *dir, const struct ledger *l, const struct gpu_baseline *baselines,
                    const struct state_clock *now);
