/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A fake /proc kept in step with a scenario: <dir>/stat (btime), <dir>/uptime and, for each
 * process alive at the current time, <dir>/<pid>/{stat,cgroup,comm,cmdline}. A pid directory
 * appears and disappears atomically (built under a dot-name, then renamed), so a reader
 * walking the tree never sees a half-written process.
 *
 * Each program is also written, at its start, to <dir>/.exec/<pid>/ (JOULESTAT_SIM_EXEC_RECORDS)
 * and kept there after it exits, until its pid starts another: what an exec watcher reads of a
 * program at its exec (src/proc/exec_watch.h), however short it lives.
 *
 * Clock: btime = floor((t0 - uptime at t = 0) / 1 s); a process's field-22 start time is
 * (its absolute start - btime) in ticks of 1/SIM_CLK_TCK s, as the kernel reports it.
 */

#include <stdint.h>

#include "scenario.h"

#define SIM_CLK_TCK 100u

struct sim_procfs;

/* Opens (creating if missing) the directory. Returns 0 or -errno. */
int sim_procfs_open(const char *dir, struct sim_procfs **ret);
struct sim_procfs *sim_procfs_free(struct sim_procfs *fs);

/* Starts over for a scenario whose t = 0 is t0_us (µs since the epoch): removes the pid
 * directories written before and writes stat and uptime. Keeps a pointer to sc. */
int sim_procfs_reset(struct sim_procfs *fs, const struct sim_scenario *sc, uint64_t t0_us);

/* Brings the tree to scenario time t: removes exited processes, then adds started ones.
 * Returns 0 or the first -errno met (the rest is still done). */
int sim_procfs_sync(struct sim_procfs *fs, uint64_t t);

/* Boot time (s since the epoch) and a process's start in ticks, as written. */
uint64_t sim_procfs_btime(const struct sim_scenario *sc, uint64_t t0_us);
uint64_t sim_procfs_start_ticks(const struct sim_scenario *sc, uint64_t t0_us,
                                const struct sim_process *p);
