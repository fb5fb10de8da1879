/* SPDX-License-Identifier: MIT */
#include "rapl_units.h"

#include <errno.h>

#include "macro.h"

/* Family 6 models with the fixed DRAM unit; the same list in every kernel version read
 * (v5.x to 2026) and in Slurm 25.05's _is_dram_model(). */
static const uint32_t fixed_dram_models[] = {
    63,  /* HASWELL_X */
    79,  /* BROADWELL_X */
    85,  /* SKYLAKE_X: Skylake-SP, Cascade Lake, Cooper Lake */
    106, /* ICELAKE_X */
    108, /* ICELAKE_D */
    87,  /* XEON_PHI_KNL */
    133, /* XEON_PHI_KNM */
};
#define MODEL_BROADWELL_D 86U

static const uint32_t fixed_psys_models[] = {
    143, /* SAPPHIRERAPIDS_X */
    207, /* EMERALDRAPIDS_X */
};

/* Atoms whose power-unit register counts energy in 2^ESU uJ, not 2^-ESU J (the kernel's
 * rapl_defaults_byt/tng/ann/cht, decoded by its rapl_check_unit_atom()). */
static const uint32_t inverted_unit_models[] = {
    55, /* ATOM_SILVERMONT: Bay Trail */
    74, /* ATOM_SILVERMONT_MID: Merrifield */
    76, /* ATOM_AIRMONT: Cherry Trail */
    90, /* ATOM_AIRMONT_MID: Moorefield */
};

/* Exact 2^-16 J (what perf and Slurm use; powercap rounds it to 15.3 uJ). */
#define DRAM_FIXED_ESU 16U

unsigned rapl_power_unit_esu(uint64_t power_unit_msr) {
    return (unsigned)((power_unit_msr >> 8) & 0x1fU);
}

/* Whether id is an Intel family 6 CPU of one of the n models. */
static bool intel_model_in(const struct cpu_id *id, const uint32_t *models, size_t n) {
    if (id->vendor != CPU_VENDOR_INTEL || id->family != 6)
        return false;
    for (size_t i = 0; i < n; i++)
        if (id->model == models[i])
            return true;
    return false;
}

bool rapl_model_has_fixed_dram_unit(const struct cpu_id *id, enum rapl_dram_unit_rule rule) {
    return intel_model_in(id, fixed_dram_models, ARRAY_SIZE(fixed_dram_models)) ||
           (rule == RAPL_DRAM_UNIT_FIXED_BDX_D &&
            intel_model_in(id, (const uint32_t[]){MODEL_BROADWELL_D}, 1));
}

bool rapl_model_has_inverted_units(const struct cpu_id *id) {
    return intel_model_in(id, inverted_unit_models, ARRAY_SIZE(inverted_unit_models));
}

bool rapl_model_has_fixed_psys_unit(const struct cpu_id *id) {
    return intel_model_in(id, fixed_psys_models, ARRAY_SIZE(fixed_psys_models));
}

int rapl_msr_domain_unit(const struct cpu_id *id, enum rapl_domain domain, uint64_t power_unit_msr,
                         enum rapl_dram_unit_rule rule, struct energy_unit *ret_unit) {
    unsigned esu = rapl_power_unit_esu(power_unit_msr);

    if ((unsigned)domain >= _RAPL_DOMAIN_MAX)
        return -EINVAL;
    if (domain == RAPL_DOMAIN_DRAM && rapl_model_has_fixed_dram_unit(id, rule)) {
        *ret_unit = energy_unit_from_esu(DRAM_FIXED_ESU);
        return 0;
    }
    if (domain == RAPL_DOMAIN_PSYS && rapl_model_has_fixed_psys_unit(id)) {
        *ret_unit = energy_unit_from_esu(0); /* 1 J */
        return 0;
    }
    /* ESU 0 would mean 1 J per count: in practice an unreadable or zero register. */
    if (esu == 0)
        return -EINVAL;
    *ret_unit = energy_unit_from_esu(esu);
    return 0;
}
