/* SPDX-License-Identifier: MIT */
#pragma once

#include "cgroup_path.h"
#include "gpu_accounting.h"
#include "procfs.h"
#include "snapshot.h"

/* process_resolve_fn over a procfs scanner: (start time, identity) of a pid NVML reports. */
int identity_resolve_pid(void *scanner, uint32_t pid, struct process_info *ret);
