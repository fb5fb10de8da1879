/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Pure parser of the node-wide `cpu` line of <procfs>/stat (USER_HZ ticks summed over all
 * CPUs), and the active/idle split of a window used by the CPU energy split.
 */
struct cpu_times {
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
    uint64_t guest, guest_nice; /* already included in user and nice: never added again */
    unsigned n_cpus;            /* "cpu<N>" lines (CPUs online); 0 when the text has none */
};

/*
 * Finds the "cpu " line in `size` bytes of /proc/stat text. Fields a very old kernel does
 * not print are zero; at least user, nice, system and idle must be present. Returns 0,
 * -ENODATA (no cpu line) or -EINVAL / -ERANGE (malformed). ret_times is written only on
 * success.
 */
int proc_cpu_stat_parse(const char *buf, size_t size, struct cpu_times *ret_times);

/* user + nice + system + irq + softirq + steal. */
uint64_t cpu_times_active(const struct cpu_times *t);
/* idle + iowait. */
uint64_t cpu_times_idle(const struct cpu_times *t);

/*
 * Active and total (active + idle) ticks between two readings. Each field is differenced on
 * its own and a field that went backwards counts as zero (iowait is known to decrease on
 * tickless kernels), so the result is never negative.
 */
void cpu_times_window(const struct cpu_times *prev, const struct cpu_times *cur,
                      uint64_t *ret_active, uint64_t *ret_total);
