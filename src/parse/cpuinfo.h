/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Pure parser of <procfs>/cpuinfo: which CPU this is (vendor, family, model), as the RAPL
 * unit rules need it. Only the first processor block is read: RAPL quirks are per model
 * and a node does not mix models across sockets.
 */

enum cpu_vendor {
    CPU_VENDOR_UNKNOWN,
    CPU_VENDOR_INTEL, /* GenuineIntel */
    CPU_VENDOR_AMD,   /* AuthenticAMD */
    CPU_VENDOR_HYGON, /* HygonGenuine */
};

struct cpu_id {
    enum cpu_vendor vendor;
    uint32_t family; /* "cpu family", decimal */
    uint32_t model;  /* "model", decimal */
};

/* Vendor name as cpuinfo spells it, or "unknown". */
const char *cpu_vendor_to_string(enum cpu_vendor v);

/*
 * Parses `size` bytes of cpuinfo text (need not be NUL-terminated). Returns 0, -ENODATA
 * when vendor_id, cpu family or model is missing from the first block (e.g. non-x86), or
 * -EINVAL when a number is malformed. ret_id is written only on success.
 */
int cpuinfo_parse(const char *buf, size_t size, struct cpu_id *ret_id);
