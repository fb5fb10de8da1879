/* SPDX-License-Identifier: MIT */
#pragma once

#include "snapshot.h"

/*
 * A hand-built snapshot for exposition tests: GPU 0 time-sliced by three processes
 * (39 %, 1 %, 0 % SM; the DCGM 2071 J case, split exactly), GPU 1 with one exclusive
 * process and no power reading, two RAPL domains, pods, containers, a SLURM job, and
 * label values that need escaping. Returns NULL on ENOMEM.
 */
struct snapshot *sample_snapshot_new(void);

/* GPU 0's energy and the parts it splits into, in µJ, for exact checks. */
#define SAMPLE_GPU0_ENERGY_UJ UINT64_C(2071000000)
