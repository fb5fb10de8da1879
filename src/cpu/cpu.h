/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * src/cpu: what the CPUs measured and who used them, read from the kernel.
 *
 *   rapl.h        the RAPL energy counters (powercap, perf or MSR; units per model in
 *                 rapl_units.h): raw counters with their modulus and unit, read once per
 *                 process scan; the caller turns them into microjoules (counter.h).
 *   cpu_groups.h  the workloads' CPU groups: one per container, pod or job, with its
 *                 cgroup's cumulative CPU time (cgroup_cpu.h), read once per scan.
 *   slurm_watch.h SLURM job cgroups followed with inotify as they come and go, read to
 *                 their end (cpu_groups_slurm.c books it).
 *   cgroup_cpu.h  one cgroup's cumulative CPU time, v2, hybrid or v1 (also `run`'s own
 *                 cgroup's, run_cgroup.c).
 *
 * Contract: sources only read; they return -errno and never log above debug; their file
 * descriptors stay open between reads and a read does not allocate once warm. Other
 * folders include this header's headers only, never the *_internal.h ones.
 */
#include "cgroup_cpu.h"  /* IWYU pragma: export */
#include "cpu_groups.h"  /* IWYU pragma: export */
#include "rapl.h"        /* IWYU pragma: export */
#include "slurm_watch.h" /* IWYU pragma: export */
