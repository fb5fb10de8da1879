/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup_path.h"
#include "procfs.h"
#include "snapshot.h"

/*
 * The rows of `joulestat ps`: one per process, joining what a process scan says about it
 * (identity, state) with what the sampler's snapshot measured for it (GPU energy, pod and
 * namespace names). Pure data, no I/O: ps.c prints them.
 */

#define PS_GPUS_MAX 16

struct ps_row {
    uint32_t pid;
    uint32_t ppid;
    char state; /* '?' for a process only the snapshot knows (gone since) */
    bool kernel_thread;
    bool live; /* in the process scan */
    struct snap_identity id;
    struct workload_identity w; /* a copy: valid after the scanner is gone */
    unsigned n_gpus;
    unsigned gpus[PS_GPUS_MAX];
    uint64_t gpu_measured_uj;
    uint64_t gpu_estimated_uj;
    uint64_t cpu_uj[SNAP_CPU_DOMAINS]; /* per enum rapl_domain */
};

/* CPU energy as the workload series count it: package + dram (core, uncore and psys
 * overlap the package). */
uint64_t ps_row_cpu_uj(const struct ps_row *r);

struct ps_rows {
    struct ps_row *rows;
    size_t n, cap;
    size_t n_sorted; /* rows[0, n_sorted) are sorted by pid: looked up by bisection */
};

/* Adds one row per live scan row (EXITED rows are skipped). Returns 0 or -ENOMEM. */
int ps_rows_add_scan(struct ps_rows *t, const struct procfs_process *p, size_t n);

/* Adds the snapshot's GPU processes: energy, GPU indexes and the pod/namespace/container
 * names go to the row of the same pid, a new row is made for a pid the scan did not see.
 * Returns 0 or -ENOMEM. */
int ps_rows_add_gpu(struct ps_rows *t, const struct snapshot *snap);

/* Adds the snapshot's per-process CPU energy (--cpu-process-metrics) to the row of the same
 * pid, or a new row for a pid the scan did not see. Returns 0 or -ENOMEM. */
int ps_rows_add_cpu(struct ps_rows *t, const struct snapshot *snap);

/* Sorts by pid. Call after ps_rows_add_scan() so the joins bisect. */
void ps_rows_sort(struct ps_rows *t);

void ps_rows_done(struct ps_rows *t);
