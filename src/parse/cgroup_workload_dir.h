/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "cgroup_path.h"

/*
 * Pure: the cgroup directory that holds a whole workload, for reading its cumulative CPU
 * time (cpu.stat / cpuacct.usage include every descendant):
 *   container (with or without a pod)  the component naming the container id
 *                                      ("cri-containerd-<id>.scope", "docker-<id>.scope",
 *                                      "libpod-<id>.scope", cgroupfs "<id>");
 *   SLURM job step                     "job_<id>/step_<s>" (or "<SLUID>/step_<s>"): the
 *                                      step's directory, the group of a step's processes;
 *   SLURM job (no step known)          "job_<id>", or the SLUID directory (Slurm >= 26.05).
 * A pod-level process (pod UID, no container id) gets -ENOENT: its pod slice also holds
 * the pod's containers, which are workloads of their own.
 *
 * text is /proc/<pid>/cgroup (len bytes); w is what cgroup_file_parse() made of it. The v2
 * line ("0::") is tried first, then v1 lines whose controllers include cpuacct. The
 * deepest matching component wins (a kubelet nested in a docker container). The result is
 * the path up to and including that component, e.g. "/kubepods.slice/.../x.scope".
 * Returns 0, -ENOENT (no workload directory in any usable line), -ENAMETOOLONG (does not
 * fit in size), -EINVAL (NULL arguments). buf is written only on success.
 */
int cgroup_workload_dir(const char *text, size_t len, const struct workload_identity *w, char *buf,
                        size_t size);
