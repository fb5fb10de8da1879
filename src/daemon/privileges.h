/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/* Capability numbers (linux/capability.h) of those the steady state may keep. */
#define PRIV_CAP_DAC_READ_SEARCH 2
#define PRIV_CAP_SYS_PTRACE 19
#define PRIV_CAP_BPF 39

/*
 * The capabilities `serve` still needs once every source is open, as a bit mask of
 * capability numbers (docs/DEPLOY.md, "Privileges after start"):
 *   - CAP_SYS_PTRACE: other users' /proc/<pid>/environ, read for processes that start later
 *     (SLURM job ids of SLUID-only cgroups and of nodes without Slurm cgroups);
 *   - CAP_DAC_READ_SEARCH, only with --web.config.file: the certificate and key a reload
 *     reads may be readable by root only;
 *   - CAP_BPF, only while the process scan reads the eBPF task iterator (task_iter): before
 *     Linux 6.5 every bpf() command, BPF_ITER_CREATE included, needs it where unprivileged
 *     BPF is off; the system-call filter allows that one command alone.
 * Everything the sources open at start (powercap energy_uj, /dev/cpu/N/msr, perf events,
 * the NVIDIA device nodes) stays open, so CAP_SYS_RAWIO, CAP_PERFMON and the rest go.
 */
uint64_t privileges_steady_state(const struct config *cfg, bool task_iter);

/*
 * In every thread of the process: drops every capability outside `keep` from the
 * effective, permitted and inheritable sets, clears the ambient set, drops the rest of the
 * bounding set where CAP_SETPCAP allows it, and sets no-new-privileges. Threads other than
 * the caller are reached by a signal (capabilities and no-new-privileges belong to each
 * thread; a thread created later inherits them from its creator), and waited for, up to
 * 2 s each round. Returns 0, -ETIMEDOUT when a thread did not answer (it blocks the
 * signal), or -errno. On success *ret_kept (if not NULL) gets the effective set left.
 */
int privileges_drop(uint64_t keep, uint64_t *ret_kept);

/* The calling thread's effective capabilities as a mask; 0 on error. */
uint64_t privileges_effective(void);
