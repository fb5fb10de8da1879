/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

#include "config.h"

/*
 * `joulestat check` for the two energy sources. Each opens its source, reads it twice
 * --sample-interval apart and prints, in the "name    state     detail" lines of check:
 * the readings (power, energy over the interval, the processes on each GPU and their
 * utilisation samples), what works, what does not, and one "fix:" line for the first
 * thing to do. Both return true when the source gives energy.
 */

/* proc_fd: --path.procfs, for process names (may be < 0). */
bool check_gpu_source(const struct config *cfg, int proc_fd);

/* Only sys_fd is needed for powercap and perf; MSRs also need dev_fd and proc_fd. */
bool check_rapl_source(const struct config *cfg, int sys_fd, int dev_fd, int proc_fd);
