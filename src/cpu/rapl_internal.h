/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by the RAPL backends (rapl_powercap.c, rapl_perf.c, rapl_msr.c) and their tests;
 * not for other callers: they use rapl.h. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuinfo.h"
#include "rapl.h"

enum rapl_slot_kind {
    RAPL_SLOT_TEXT_UJ, /* decimal text at offset 0 (powercap energy_uj) */
    RAPL_SLOT_MSR32,   /* 8 bytes at the register's offset, low 32 bits */
    RAPL_SLOT_PERF64,  /* 8-byte count of a perf event */
};

struct rapl_slot {
    int fd;
    enum rapl_slot_kind kind;
    uint64_t offset;
};

struct rapl {
    enum rapl_mode mode;
    bool dies_merged;  /* a package's dies kept as one counter, die 0 (AMD's CCDs) */
    struct cpu_id cpu; /* the CPU it was opened for */
    size_t n, cap_slots, cap_readings;
    struct rapl_slot *slots;
    struct rapl_reading *readings;
};

struct rapl *rapl_new(enum rapl_mode mode);

/* Adds a counter read through fd (ownership taken, also on failure) and reads it once.
 * Returns 0, -ENOMEM, or the read error (the counter is then not added). */
int rapl_add_counter(struct rapl *r, int fd, enum rapl_slot_kind kind, uint64_t offset,
                     const struct rapl_reading *tmpl);

/* One read of one counter. Returns 0 or -errno (-EINVAL for unparsable text). */
int rapl_read_slot(const struct rapl_slot *s, uint64_t *ret_raw);

bool rapl_has_domain(const struct rapl *r, uint32_t package, uint32_t die, enum rapl_domain domain);

/* Backends: each fills `reason` (on success what it found, on failure why not). */
int rapl_powercap_open(const struct rapl_options *o, struct rapl **ret, char *reason, size_t size);
int rapl_perf_open(const struct rapl_options *o, struct rapl **ret, char *reason, size_t size);
int rapl_msr_open(const struct rapl_options *o, struct rapl **ret, char *reason, size_t size);

/* rapl_reopen_unread() for powercap: each unread counter from the zone that now counts its
 * domain, package and die. Returns how many were opened again. */
int rapl_powercap_reopen_unread(struct rapl *rapl, int sys_fd, const struct cpu_id *cpu);

/*
 * Writes a one-line explanation of `err` while opening `object` with `mode` into buf,
 * naming the fix where there is one (root or a udev rule for energy_uj, CAP_SYS_RAWIO and
 * `modprobe msr` for MSRs, CAP_PERFMON or perf_event_paranoid for perf).
 */
void rapl_explain_error(enum rapl_mode mode, int err, const char *object, char *buf, size_t size);

/* Reads <proc>/cpuinfo. Returns 0 or -errno. */
int rapl_read_cpu_id(int proc_fd, struct cpu_id *ret_id);
/* o->cpu when its vendor is known, else rapl_read_cpu_id(). Returns 0 or -errno. */
int rapl_cpu_of(const struct rapl_options *o, struct cpu_id *ret_id);

/* CPU topology under <sysfs>/devices/system/cpu. */
struct rapl_cpu {
    uint32_t cpu;
    uint32_t package;
    uint32_t die;
};

/* Package and die of one CPU (die 0 when the kernel has no die_id). Returns 0 or -errno. */
int rapl_cpu_topology(int sys_fd, uint32_t cpu, struct rapl_cpu *ret_cpu);
/* The lowest-numbered CPU of every (package, die), sorted by (package, die). *ret_cpus is
 * malloc'ed. Returns 0, -ENOENT when no CPU has topology, or -errno. */
int rapl_lead_cpus(int sys_fd, struct rapl_cpu **ret_cpus, size_t *ret_n);

/*
 * Parses a powercap zone `name`: "package-P", "package-P-die-D", "core", "uncore", "dram",
 * "psys", "psys-P". *ret_has_package is false for sub-zone names that take their package
 * from the parent zone. Returns 0 or -EINVAL for a name that is no RAPL domain.
 */
int rapl_zone_name_parse(const char *name, enum rapl_domain *ret_domain, uint32_t *ret_package,
                         uint32_t *ret_die, bool *ret_has_package);
