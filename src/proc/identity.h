/* SPDX-License-Identifier: MIT */
#pragma once

#include "cgroup_path.h"
#include "gpu_accounting.h"
#include "procfs.h"
#include "snapshot.h"

/* The label set of a process: its name and the workload its cgroup names. Pod, namespace
 * and container names stay empty until the Kubernetes API fills them. */
void identity_to_labels(const struct workload_identity *w, const char *comm,
                        struct snap_identity *ret);

/* process_resolve_fn over a procfs scanner: (start time, identity) of a pid NVML reports. */
int identity_resolve_pid(void *scanner, uint32_t pid, struct process_info *ret);
