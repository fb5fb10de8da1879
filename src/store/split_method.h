/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * How a GPU window's active energy was split among its processes: by the learned power
 * intensity of each (src/accounting/intensity.h), or by SM share and why the learned split
 * did not apply. Exported per GPU (docs/METRICS.md).
 */
enum split_method {
    SPLIT_LEARNED,          /* learned intensity x SM activity */
    SPLIT_NO_ACTIVITY,      /* no process had SM activity in the window */
    SPLIT_SINGLE_CLASS,     /* one workload active: the learned split equals SM share */
    SPLIT_TOO_FEW_ROWS,     /* not enough windows learned from yet */
    SPLIT_NOT_IDENTIFIABLE, /* fewer than two of the active workloads are identifiable */
    _SPLIT_METHOD_MAX,
};

/* "learned", "no_activity", "single_class", "too_few_rows", "not_identifiable"; NULL out
 * of range. */
const char *split_method_to_string(enum split_method m);

/* How the GPU was shared in a window (docs/METRICS.md, joulestat_gpu_sharing). */
enum gpu_sharing {
    SHARING_NONE,         /* no process */
    SHARING_EXCLUSIVE,    /* one process */
    SHARING_TIME_SLICING, /* two or more processes taking turns on the SMs */
    SHARING_MPS,          /* an MPS server's clients running at once */
    SHARING_MIG,          /* MIG instances with SMs of their own */
    _SHARING_MAX,
};

/* "none", "exclusive", "time-slicing", "mps", "mig"; NULL out of range. */
const char *gpu_sharing_to_string(enum gpu_sharing m);

/* Where a MIG GPU's instance activity came from in a window (joulestat_gpu_mig_activity). */
enum mig_activity {
    MIG_ACTIVITY_SIZE, /* not measured: the instances are weighted by their size */
    MIG_ACTIVITY_GPM,  /* NVML's GPM (Hopper and later) */
    MIG_ACTIVITY_DCGM, /* DCGM's nv-hostengine (Ampere) */
    _MIG_ACTIVITY_MAX,
};

/* "size", "gpm", "dcgm"; NULL out of range. */
const char *mig_activity_to_string(enum mig_activity m);
