/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The RAPL energy domains, named as powercap zones and perf events name them. Every layer
 * that carries CPU energy by domain (the RAPL source, the CPU split, the ledger and the
 * exposition) indexes by this enum. Pure.
 */
enum rapl_domain {
    RAPL_DOMAIN_PACKAGE, /* whole package (on Intel includes core and uncore) */
    RAPL_DOMAIN_CORE,    /* PP0: the cores */
    RAPL_DOMAIN_UNCORE,  /* PP1: client integrated graphics */
    RAPL_DOMAIN_DRAM,    /* memory attached to the package */
    RAPL_DOMAIN_PSYS,    /* platform; overlaps everything above */
    _RAPL_DOMAIN_MAX,
};

/* "package", "core", "uncore", "dram", "psys"; NULL when out of range. */
const char *rapl_domain_to_string(enum rapl_domain d);
/* Returns the domain (>= 0) or -EINVAL. */
int rapl_domain_from_string(const char *s);
