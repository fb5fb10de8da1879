/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Pure parser of one /proc/<pid>/schedstat buffer (Documentation/scheduler/sched-stats):
 *
 *   "<on-CPU ns> <run-queue wait ns> <timeslices>\n"
 *
 * The first field is the task's sum_exec_runtime: the CPU time of that one task (for
 * <pid>/schedstat the thread group leader, not the other threads), in nanoseconds. A kernel
 * whose scheduler statistics are off prints "0 0 0".
 *
 * Parses `len` bytes of `buf` (need not be NUL-terminated): three unsigned decimal fields
 * separated by single spaces, an optional trailing newline. Returns 0 with *ret_run_ns,
 * or -EINVAL for anything else. *ret_run_ns is written only on success.
 */
int proc_pid_schedstat_parse(const char *buf, size_t len, uint64_t *ret_run_ns);
