/* SPDX-License-Identifier: MIT */
/* RAPL through the MSR device: <dev>/cpu/N/msr, one CPU per package (or die). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "rapl_internal.h"

/* Intel (arch/x86/include/asm/msr-index.h) */
#define MSR_RAPL_POWER_UNIT 0x606U
#define MSR_PKG_ENERGY_STATUS 0x611U
#define MSR_DRAM_ENERGY_STATUS 0x619U
#define MSR_PP0_ENERGY_STATUS 0x639U
#define MSR_PP1_ENERGY_STATUS 0x641U
#define MSR_PLATFORM_ENERGY_STATUS 0x64DU
/* AMD family 17h/19h/1Ah, Hygon 18h. The per-core counter (0xC001029A) is not read: one
 * lead CPU would measure its own core only. AMD has no DRAM or psys domain. */
#define MSR_AMD_RAPL_POWER_UNIT 0xC0010299U
#define MSR_AMD_PKG_ENERGY_STATUS 0xC001029BU

#define MSR_MODULUS (UINT64_C(1) << 32)

struct msr_domain {
    enum rapl_domain domain;
    uint32_t reg;
};

static const struct msr_domain intel_domains[] = {
    {RAPL_DOMAIN_PACKAGE, MSR_PKG_ENERGY_STATUS},   {RAPL_DOMAIN_CORE, MSR_PP0_ENERGY_STATUS},
    {RAPL_DOMAIN_UNCORE, MSR_PP1_ENERGY_STATUS},    {RAPL_DOMAIN_DRAM, MSR_DRAM_ENERGY_STATUS},
    {RAPL_DOMAIN_PSYS, MSR_PLATFORM_ENERGY_STATUS},
};

static const struct msr_domain amd_domains[] = {
    {RAPL_DOMAIN_PACKAGE, MSR_AMD_PKG_ENERGY_STATUS},
};

struct msr_layout {
    uint32_t unit_reg;
    const struct msr_domain *domains;
    size_t n_domains;
};

static int layout_for(const struct cpu_id *id, struct msr_layout *ret) {
    switch (id->vendor) {
    case CPU_VENDOR_INTEL:
        if (rapl_model_has_inverted_units(id))
            return -EDOM; /* read as 2^-ESU J, its counts would be about 10^3 too high */
        *ret = (struct msr_layout){MSR_RAPL_POWER_UNIT, intel_domains, ARRAY_SIZE(intel_domains)};
        return 0;
    case CPU_VENDOR_AMD:
        if (id->family != 0x17 && id->family != 0x19 && id->family != 0x1A)
            return -EOPNOTSUPP;
        break;
    case CPU_VENDOR_HYGON:
        if (id->family != 0x18)
            return -EOPNOTSUPP;
        break;
    default:
        return -EOPNOTSUPP;
    }
    *ret = (struct msr_layout){MSR_AMD_RAPL_POWER_UNIT, amd_domains, ARRAY_SIZE(amd_domains)};
    return 0;
}

static int read_msr(int fd, uint32_t reg, uint64_t *ret) {
    ssize_t n;
    uint64_t v;

    do
        n = pread(fd, &v, sizeof(v), (off_t)reg);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if (n != (ssize_t)sizeof(v))
        return -EIO; /* the msr driver answers EIO for registers the CPU lacks */
    *ret = v;
    return 0;
}

/* Adds the domains of one package read on `cpu`. Returns the number added or -errno. */
static int add_package(struct rapl *rapl, const struct rapl_options *o, const struct cpu_id *id,
                       const struct msr_layout *layout, const struct rapl_cpu *cpu,
                       unsigned *ret_esu, char *detail, size_t size) {
    _cleanup_(closep) int fd = -1;
    char path[48];
    uint64_t unit_msr = 0; /* -O3 cannot see read_msr() set it */
    int added = 0, r;

    (void)snprintf(path, sizeof(path), "cpu/%u/msr", cpu->cpu);
    (void)snprintf(detail, size, "/dev/%s", path);
    fd = openat(o->dev_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    /* Units are per package: read them on the same CPU as the counters. */
    r = read_msr(fd, layout->unit_reg, &unit_msr);
    if (r < 0)
        return r;
    *ret_esu = rapl_power_unit_esu(unit_msr);

    for (size_t i = 0; i < layout->n_domains; i++) {
        const struct msr_domain *d = &layout->domains[i];
        struct rapl_reading tmpl = {
            .package = cpu->package,
            .die = cpu->die,
            .domain = d->domain,
            .modulus = MSR_MODULUS,
        };
        uint64_t v = 0;
        int dup_fd;

        /* psys is one counter for the platform: read it once per package, not per die. */
        if (d->domain == RAPL_DOMAIN_PSYS && cpu->die != 0)
            continue;
        /* Like the kernel, a domain exists only if its counter reads non-zero. */
        if (read_msr(fd, d->reg, &v) < 0 || (v & UINT32_MAX) == 0)
            continue;
        if (rapl_msr_domain_unit(id, d->domain, unit_msr, o->dram_unit_rule, &tmpl.unit) < 0)
            continue;
        dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0)
            return -errno;
        r = rapl_add_counter(rapl, dup_fd, RAPL_SLOT_MSR32, d->reg, &tmpl);
        if (r == -ENOMEM)
            return r;
        if (r >= 0)
            added++;
    }
    return added;
}

int rapl_msr_open(const struct rapl_options *o, struct rapl **ret, char *reason, size_t size) {
    _cleanup_(freep) struct rapl_cpu *cpus = NULL;
    struct rapl *rapl;
    struct msr_layout layout;
    struct cpu_id id;
    char detail[64] = "/proc/cpuinfo";
    size_t n = 0;
    unsigned esu = 0;
    int r;

    r = rapl_cpu_of(o, &id);
    if (r >= 0)
        r = layout_for(&id, &layout);
    if (r < 0) {
        rapl_explain_error(RAPL_MODE_MSR, r, detail, reason, size);
        return r == -ENOENT || r == -ENODATA ? -ENODEV : r;
    }
    r = rapl_lead_cpus(o->sys_fd, &cpus, &n);
    if (r < 0) {
        rapl_explain_error(RAPL_MODE_MSR, r, "/sys/devices/system/cpu/cpu*/topology", reason, size);
        return r == -ENOENT ? -ENODEV : r;
    }

    rapl = rapl_new(RAPL_MODE_MSR);
    if (!rapl)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        unsigned package_esu = 0;

        r = add_package(rapl, o, &id, &layout, &cpus[i], &package_esu, detail, sizeof(detail));
        if (r < 0) {
            rapl_free(rapl);
            rapl_explain_error(RAPL_MODE_MSR, r, detail, reason, size);
            /* No MSR device at all: RAPL through MSRs is absent, not broken. */
            return r == -ENOENT || r == -ENXIO ? -ENODEV : r;
        }
        if (i == 0)
            esu = package_esu;
    }
    if (rapl->n == 0) {
        rapl_free(rapl);
        rapl_explain_error(RAPL_MODE_MSR, -EIO, "energy status registers", reason, size);
        return -ENODEV;
    }
    (void)snprintf(
        reason, size,
        "msr: %s family %u model %u, %zu package%s, %zu counters, energy unit "
        "2^-%u J%s%s",
        cpu_vendor_to_string(id.vendor), id.family, id.model, n, n == 1 ? "" : "s", rapl->n, esu,
        rapl_model_has_fixed_dram_unit(&id, o->dram_unit_rule) ? ", DRAM fixed at 2^-16 J" : "",
        rapl_model_has_fixed_psys_unit(&id) ? ", psys fixed at 1 J" : "");
    *ret = rapl;
    return 0;
}
