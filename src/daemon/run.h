/* SPDX-License-Identifier: MIT */
#pragma once

#include "config.h"

/*
 * `joulestat run [--json] -- CMD ARGS...`: runs the command, follows it and every process
 * it starts (the processes of a cgroup of its own where one can be made, run_cgroup.h, and
 * its process tree, found in /proc at each scan), and when it exits prints the
 * energy they used, like `perf stat`: GPU per device (measured or estimated), CPU by RAPL
 * domain, duration and mean power. It opens the sources itself (no daemon needed); a
 * source that is missing is said so and the rest is reported.
 *
 * Returns 0 with *ret_status the command's exit status (128 + signal when killed) and
 * *ret_signal the signal that killed it (0: it exited), also when no report could be made
 * after it ran (said so); or -errno when the command could not be started or waited for,
 * with *ret_status a shell's status when it was not started (126: found but not
 * executable, 127 otherwise), untouched on other failures.
 */
int run_command(const struct config *cfg, int *ret_status, int *ret_signal);
