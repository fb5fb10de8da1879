/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "energy_unit.h"
#include "rapl_units.h"

/*
 * CPU energy from RAPL, through one of three kernel interfaces:
 *   powercap  <sysfs>/class/powercap/intel-rapl[-mmio]:*  energy_uj (uJ, wraps at
 *             max_energy_range_uj + 1; the kernel applies the per-model units);
 *   perf      <sysfs>/bus/event_source/devices/power      64-bit counts in 2^-32 J that
 *             never wrap in user space (the kernel applies the per-model units);
 *   msr       <dev>/cpu/N/msr                             raw 32-bit counters; units from
 *             MSR_RAPL_POWER_UNIT and the model table in rapl_units.h.
 * `auto` tries them in that order and takes the first that reads.
 *
 * The source only reads: each sample returns the raw counters with their modulus and unit,
 * and the caller turns them into exact microjoule deltas with struct energy_counter. File
 * descriptors stay open between samples and sampling does not allocate.
 */

enum rapl_mode {
    RAPL_MODE_AUTO,
    RAPL_MODE_POWERCAP,
    RAPL_MODE_PERF,
    RAPL_MODE_MSR,
    RAPL_MODE_OFF,
    _RAPL_MODE_MAX,
};

/* "auto", "powercap", "perf", "msr", "off" (the --rapl-source values). */
const char *rapl_mode_to_string(enum rapl_mode m);
/* Returns the mode (>= 0) or -EINVAL. */
int rapl_mode_from_string(const char *s);

/* Opens a perf event; returns an fd or -errno. Tests replace perf_event_open(2) with it. */
typedef int (*rapl_perf_open_fn)(uint32_t type, uint64_t config, int cpu, void *userdata);

struct rapl_options {
    int sys_fd;  /* --path.sysfs */
    int dev_fd;  /* --path.dev (cpu/N/msr) */
    int proc_fd; /* --path.procfs (cpuinfo, sys/kernel/perf_event_paranoid) */
    enum rapl_mode mode;
    enum rapl_dram_unit_rule dram_unit_rule; /* msr only: Broadwell-DE's DRAM unit */
    rapl_perf_open_fn perf_open;             /* NULL: the perf_event_open(2) system call */
    void *perf_userdata;
    /* The CPU, as an earlier open read it (rapl_status.cpu), so that a reopen does not
     * depend on reading it again: without the vendor, an AMD package's counter is kept once
     * per CCD. Vendor unknown (zeroed): read from <procfs>/cpuinfo. */
    struct cpu_id cpu;
};

#define RAPL_REASON_MAX 1024

/* What rapl_open() decided and why, for `joulestat check` and one log line. Always
 * written, on success and on failure. */
struct rapl_status {
    enum rapl_mode chosen; /* RAPL_MODE_OFF when nothing could be opened */
    int error;             /* 0, or the -errno that made the (last) tried interface fail */
    struct cpu_id cpu;     /* the CPU it went by; vendor unknown when it could not be read */
    char reason[RAPL_REASON_MAX];
};

struct rapl_reading {
    uint32_t package; /* physical package id */
    uint32_t die;     /* die within the package (multi-die Intel parts), else 0 */
    enum rapl_domain domain;
    bool valid;       /* false: this counter could not be read in this sample */
    uint64_t raw;     /* counter value in `unit`s */
    uint64_t modulus; /* the counter wraps to 0 here; 0: never wraps */
    struct energy_unit unit;
};

struct rapl;

/*
 * Opens the interface o->mode names (or the first usable one for RAPL_MODE_AUTO) and
 * checks that every counter reads once. Returns 0; -ENODEV when nothing RAPL-like exists
 * (or mode is off), -EACCES/-EPERM when it exists but may not be read, -ENOMEM, or another
 * -errno. *ret is written only on success; status is always filled in.
 */
int rapl_open(const struct rapl_options *o, struct rapl **ret, struct rapl_status *status);

/* Closes everything; accepts NULL; returns NULL. */
struct rapl *rapl_free(struct rapl *r);

enum rapl_mode rapl_get_mode(const struct rapl *r);
/* The counters it reads. */
size_t rapl_count(const struct rapl *r);

/* Opens again, by their sysfs path (powercap), the counters the last rapl_sample() could not
 * read: the kernel registers a zone anew when its package's CPUs come back, and the file
 * held open reads nothing more. A counter whose new file reads takes it; the next sample
 * reads it from its last reading on. Returns how many were opened again. */
int rapl_reopen_unread(struct rapl *r, int sys_fd);

/*
 * Reads every counter once. *ret_readings points into the source and stays valid until the
 * next rapl_sample() or rapl_free(); a counter that failed this time has valid = false.
 * Returns the number of valid readings (>= 0), or -EIO when none could be read.
 */
int rapl_sample(struct rapl *r, const struct rapl_reading **ret_readings, size_t *ret_n);
