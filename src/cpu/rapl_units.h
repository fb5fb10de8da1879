/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cpuinfo.h"
#include "energy_unit.h"
#include "rapl_domain.h"

/*
 * Which energy unit each RAPL domain counts in, per CPU model. Pure rules, no I/O.
 *
 * MSR_RAPL_POWER_UNIT (Intel 0x606, AMD 0xC0010299) gives the energy status unit (ESU,
 * bits 12:8): one count = 2^-ESU J. Two kinds of models break that rule:
 *   - Haswell-EP/EX, Broadwell-EP/EX, Skylake-SP/Cascade Lake/Cooper Lake, Ice Lake-SP/-D,
 *     Knights Landing/Mill (family 6 models 63, 79, 85, 106, 108, 87, 133) count DRAM in
 *     2^-16 J whatever ESU says (ESU is 14 there: reading DRAM with it is 4x too high,
 *     which is the Slurm < 25.05 bug);
 *   - Sapphire Rapids / Emerald Rapids (143, 207) count psys in 1 J; their DRAM uses ESU.
 * Broadwell-DE (86) is disputed (powercap: ESU; perf: 2^-16 J), so it is a choice.
 */

/* How to treat the DRAM unit of Broadwell-DE (model 86), where sources disagree. */
enum rapl_dram_unit_rule {
    RAPL_DRAM_UNIT_AUTO,        /* the kernel powercap list: 86 uses ESU */
    RAPL_DRAM_UNIT_FIXED_BDX_D, /* also treat 86 as fixed 2^-16 J (perf, LIKWID) */
};

/* Energy status unit field (bits 12:8) of MSR_RAPL_POWER_UNIT. */
unsigned rapl_power_unit_esu(uint64_t power_unit_msr);

/* True for Intel family 6 models whose DRAM counts in 2^-16 J. */
bool rapl_model_has_fixed_dram_unit(const struct cpu_id *id, enum rapl_dram_unit_rule rule);
/* True for the Atoms whose unit register is encoded the other way (2^ESU uJ): the MSR
 * source does not decode them (powercap does, in the kernel). */
bool rapl_model_has_inverted_units(const struct cpu_id *id);
/* True for Intel models whose psys counts in 1 J. */
bool rapl_model_has_fixed_psys_unit(const struct cpu_id *id);

/*
 * The unit of one MSR domain counter on this CPU, from the power-unit MSR of the same
 * package. Returns 0, or -EINVAL for a domain out of range or an ESU of 0 with no fixed
 * unit (a register that is not implemented reads as zero). ret_unit only on success.
 */
int rapl_msr_domain_unit(const struct cpu_id *id, enum rapl_domain domain, uint64_t power_unit_msr,
                         enum rapl_dram_unit_rule rule, struct energy_unit *ret_unit);
