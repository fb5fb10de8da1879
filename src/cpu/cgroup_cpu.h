/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/*
 * CPU time used by one cgroup, for the CPU energy split: cgroup v2 `cpu.stat` usage_usec,
 * or cgroup v1 `cpuacct.usage` (nanoseconds, converted to microseconds). The cgroup
 * directory and, after the first read, its usage file stay open between reads (on trees
 * that are not a cgroup filesystem, a file replaced or removed is noticed and reopened).
 */

enum cgroup_cpu_kind {
    CGROUP_CPU_V2,        /* <sysfs>/fs/cgroup/<path>/cpu.stat */
    CGROUP_CPU_V2_HYBRID, /* <sysfs>/fs/cgroup/unified/<path>/cpu.stat */
    CGROUP_CPU_V1,        /* <sysfs>/fs/cgroup/{cpuacct,cpu,cpuacct}/<path>/cpuacct.usage */
};

struct cgroup_cpu;

/*
 * Opens the cgroup `path` (as in /proc/<pid>/cgroup, e.g. "/kubepods.slice/..."), relative
 * to the sysfs root. Tries v2, the hybrid unified mount, then v1 cpuacct. A path read in
 * another cgroup namespace, which climbs out of it first ("/../../kubepods-burstable.slice/
 * ..."), is found below the mount's root as its names allow (a systemd slice names its
 * ancestors). Returns 0, -ENOENT when no hierarchy has that cgroup, -EINVAL for a path with
 * ".." elsewhere (or nothing below the climb), or -errno. *ret is written only on success.
 */
int cgroup_cpu_open(int sys_fd, const char *path, struct cgroup_cpu **ret);
struct cgroup_cpu *cgroup_cpu_free(struct cgroup_cpu *c);

enum cgroup_cpu_kind cgroup_cpu_get_kind(const struct cgroup_cpu *c);

/*
 * Cumulative CPU time of the cgroup (all its descendants included), in microseconds.
 * Returns 0, -ENOENT when the cgroup was removed, -EINVAL when the file is malformed, or
 * -ENODATA when cpu.stat has no usage_usec, or -errno. ret_usage_us only on success.
 */
int cgroup_cpu_read(struct cgroup_cpu *c, uint64_t *ret_usage_us);

/* Pure: usage_usec from the text of a v2 cpu.stat. Returns 0, -ENODATA or -EINVAL. */
int cgroup_cpu_stat_parse_usage(const char *text, uint64_t *ret_usage_us);
