/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * src/proc: the processes of the node and who they are.
 *
 *   procfs.h    the process scanner: every process with its CPU time and its workload
 *               identity (cgroup path and environment, parsed by src/parse), keyed by
 *               (pid, start time) so a reused pid is a new process.
 *   identity.h  a pid NVML reports, resolved once into its start time and labels.
 *   exec_watch.h  the kernel's exec/exit events: who a process was, read while it lived.
 *
 * Contract: a process that vanishes mid-read is skipped, never an error; one scanner
 * belongs to the sampler thread; rows and identities are owned by the scanner until the
 * next scan. Other folders include this header's headers only.
 */
#include "exec_watch.h" /* IWYU pragma: export */
#include "identity.h"   /* IWYU pragma: export */
#include "procfs.h"     /* IWYU pragma: export */
