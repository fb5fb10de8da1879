/* SPDX-License-Identifier: MIT */
/* Pure RAPL unit rules and the cpuinfo parser: which unit each domain counts in. */
#include "testutil.h"

#include <errno.h>

#include "counter.h"
#include "macro.h"
#include "cpuinfo.h"
#include "rapl_units.h"

#define SKX_POWER_UNIT UINT64_C(0x000A0E03)

static const struct cpu_id skx = {CPU_VENDOR_INTEL, 6, 85};
static const struct cpu_id spr = {CPU_VENDOR_INTEL, 6, 143};
static const struct cpu_id tgl = {CPU_VENDOR_INTEL, 6, 140};
static const struct cpu_id bdx_d = {CPU_VENDOR_INTEL, 6, 86};
static const struct cpu_id zen4 = {CPU_VENDOR_AMD, 0x19, 97};

static struct energy_unit unit_of(const struct cpu_id *id, enum rapl_domain d, uint64_t msr,
                                  enum rapl_dram_unit_rule rule) {
    struct energy_unit u = {0, 0};

    ASSERT_OK(rapl_msr_domain_unit(id, d, msr, rule, &u));
    return u;
}

static void test_power_unit_fields(void **state) {
    assert_int_equal(rapl_power_unit_esu(SKX_POWER_UNIT), 14);
    assert_int_equal(rapl_power_unit_esu(UINT64_C(0x000A1000)), 16); /* AMD Zen 4 */
    assert_int_equal(rapl_power_unit_esu(UINT64_C(0xFFFFFFFFFFFFE0FF)), 0);
}

/* The worked example: PKG delta 2 129 920 counts, DRAM delta 1 966 080 counts, 1 s. */
static void test_skylake_x_units_and_slurm_bug(void **state) {
    struct energy_unit pkg = unit_of(&skx, RAPL_DOMAIN_PACKAGE, SKX_POWER_UNIT, 0);
    struct energy_unit dram = unit_of(&skx, RAPL_DOMAIN_DRAM, SKX_POWER_UNIT, 0);
    uint64_t rem = 0, pkg_uj, dram_uj, slurm_dram_uj, slurm_total_uj;

    assert_int_equal(pkg.num, 1000000);
    assert_int_equal(pkg.den, 16384); /* 2^-14 J = 61.03515625 uJ */
    assert_int_equal(dram.num, 1000000);
    assert_int_equal(dram.den, 65536); /* 2^-16 J, not the ESU */

    pkg_uj = energy_convert(pkg, 2129920, &rem);
    assert_int_equal(rem, 0);
    dram_uj = energy_convert(dram, 1966080, &rem);
    assert_int_equal(rem, 0);
    assert_int_equal(pkg_uj, 130000000);
    assert_int_equal(dram_uj, 30000000);

    /* Slurm <= 24.11: sums raw package + DRAM counts and applies the 0x606 unit once. */
    slurm_dram_uj = energy_convert(pkg, 1966080, &rem);
    slurm_total_uj = energy_convert(pkg, 2129920 + 1966080, &rem);
    assert_int_equal(slurm_dram_uj, 120000000);
    assert_int_equal(slurm_dram_uj, 4 * dram_uj); /* exactly 4x too high */
    assert_int_equal(slurm_total_uj, 250000000);
    assert_int_not_equal(slurm_total_uj, pkg_uj + dram_uj); /* 250 J reported, 160 J real */
}

static void test_fixed_dram_model_list(void **state) {
    /* Exactly the kernel powercap / Slurm 25.05 list. */
    const uint32_t fixed[] = {63, 79, 85, 106, 108, 87, 133};
    unsigned n_fixed = 0;

    for (unsigned i = 0; i < ARRAY_SIZE(fixed); i++) {
        struct cpu_id id = {CPU_VENDOR_INTEL, 6, fixed[i]};

        assert_true(rapl_model_has_fixed_dram_unit(&id, RAPL_DRAM_UNIT_AUTO));
    }
    for (uint32_t model = 0; model < 256; model++) {
        struct cpu_id id = {CPU_VENDOR_INTEL, 6, model};

        n_fixed += rapl_model_has_fixed_dram_unit(&id, RAPL_DRAM_UNIT_AUTO);
    }
    assert_int_equal(n_fixed, ARRAY_SIZE(fixed));
    /* Same model numbers on another family or vendor are not the Xeons. */
    assert_false(rapl_model_has_fixed_dram_unit(&(struct cpu_id){CPU_VENDOR_INTEL, 15, 85}, 0));
    assert_false(rapl_model_has_fixed_dram_unit(&(struct cpu_id){CPU_VENDOR_AMD, 6, 85}, 0));
}

static void test_broadwell_d_is_a_choice(void **state) {
    struct energy_unit a = unit_of(&bdx_d, RAPL_DOMAIN_DRAM, SKX_POWER_UNIT, RAPL_DRAM_UNIT_AUTO);
    struct energy_unit f =
        unit_of(&bdx_d, RAPL_DOMAIN_DRAM, SKX_POWER_UNIT, RAPL_DRAM_UNIT_FIXED_BDX_D);

    assert_int_equal(a.den, 16384); /* powercap's view */
    assert_int_equal(f.den, 65536); /* perf's view */
    /* The rule only concerns model 86. */
    assert_int_equal(
        unit_of(&tgl, RAPL_DOMAIN_DRAM, SKX_POWER_UNIT, RAPL_DRAM_UNIT_FIXED_BDX_D).den, 16384);
}

static void test_sapphire_rapids_psys(void **state) {
    struct energy_unit psys = unit_of(&spr, RAPL_DOMAIN_PSYS, SKX_POWER_UNIT, 0);
    struct energy_unit dram = unit_of(&spr, RAPL_DOMAIN_DRAM, SKX_POWER_UNIT, 0);

    assert_int_equal(psys.num, 1000000); /* 1 J per count */
    assert_int_equal(psys.den, 1);
    assert_int_equal(dram.den, 16384); /* SPR DRAM uses the ESU (fixed in 2022 kernels) */
    assert_true(rapl_model_has_fixed_psys_unit(&(struct cpu_id){CPU_VENDOR_INTEL, 6, 207}));
    assert_false(rapl_model_has_fixed_psys_unit(&tgl));
    assert_int_equal(unit_of(&tgl, RAPL_DOMAIN_PSYS, SKX_POWER_UNIT, 0).den, 16384);
}

/* The Atoms whose unit register counts 2^ESU uJ are known, and no server part is one. */
static void test_inverted_atoms(void **state) {
    assert_true(rapl_model_has_inverted_units(&(struct cpu_id){CPU_VENDOR_INTEL, 6, 76}));
    assert_true(rapl_model_has_inverted_units(&(struct cpu_id){CPU_VENDOR_INTEL, 6, 55}));
    assert_false(rapl_model_has_inverted_units(&(struct cpu_id){CPU_VENDOR_INTEL, 6, 77}));
    assert_false(rapl_model_has_inverted_units(&(struct cpu_id){CPU_VENDOR_INTEL, 6, 85}));
    assert_false(rapl_model_has_inverted_units(&spr));
    assert_false(rapl_model_has_inverted_units(&zen4));
}

static void test_client_and_amd_use_esu(void **state) {
    for (enum rapl_domain d = 0; d < _RAPL_DOMAIN_MAX; d++)
        assert_int_equal(unit_of(&tgl, d, SKX_POWER_UNIT, 0).den, 16384);
    assert_int_equal(unit_of(&zen4, RAPL_DOMAIN_PACKAGE, 0x000A1000, 0).den, 65536);
}

static void test_unit_errors(void **state) {
    struct energy_unit u = {7, 7};

    /* A zero power-unit register (unreadable) has no unit, except for fixed domains. */
    ASSERT_ERRNO(rapl_msr_domain_unit(&tgl, RAPL_DOMAIN_PACKAGE, 0, 0, &u), EINVAL);
    ASSERT_ERRNO(rapl_msr_domain_unit(&tgl, _RAPL_DOMAIN_MAX, SKX_POWER_UNIT, 0, &u), EINVAL);
    assert_int_equal(u.num, 7); /* untouched on failure */
    ASSERT_OK(rapl_msr_domain_unit(&skx, RAPL_DOMAIN_DRAM, 0, 0, &u));
    assert_int_equal(u.den, 65536);
}

static void test_domain_names(void **state) {
    const char *names[] = {"package", "core", "uncore", "dram", "psys"};

    for (int d = 0; d < _RAPL_DOMAIN_MAX; d++) {
        assert_string_equal(rapl_domain_to_string(d), names[d]);
        assert_int_equal(rapl_domain_from_string(names[d]), d);
    }
    assert_null(rapl_domain_to_string(_RAPL_DOMAIN_MAX));
    ASSERT_ERRNO(rapl_domain_from_string("gpu"), EINVAL);
}

static void test_cpuinfo_parse(void **state) {
    const char intel[] = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
                         "model\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6248\n\n"
                         "processor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
                         "model\t\t: 1\n";
    const char hygon[] = "vendor_id : HygonGenuine\r\ncpu family : 24\r\nmodel : 1\r\n";
    const char arm[] = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n";
    const char bad[] = "vendor_id\t: GenuineIntel\ncpu family\t: six\nmodel\t: 85\n";
    const char no_model[] = "vendor_id\t: GenuineIntel\ncpu family\t: 6\n\nmodel\t: 85\n";
    struct cpu_id id = {CPU_VENDOR_UNKNOWN, 99, 99};

    ASSERT_OK(cpuinfo_parse(intel, sizeof(intel) - 1, &id));
    assert_int_equal(id.vendor, CPU_VENDOR_INTEL);
    assert_int_equal(id.family, 6);
    assert_int_equal(id.model, 85); /* not confused by "model name" */
    ASSERT_OK(cpuinfo_parse(hygon, sizeof(hygon) - 1, &id));
    assert_int_equal(id.vendor, CPU_VENDOR_HYGON);
    assert_int_equal(id.family, 24);
    assert_string_equal(cpu_vendor_to_string(id.vendor), "HygonGenuine");
    /* Only the length given is read: cut before "model". */
    ASSERT_ERRNO(cpuinfo_parse(intel, 50, &id), ENODATA);
    ASSERT_ERRNO(cpuinfo_parse(arm, sizeof(arm) - 1, &id), ENODATA);
    ASSERT_ERRNO(cpuinfo_parse(bad, sizeof(bad) - 1, &id), EINVAL);
    ASSERT_ERRNO(cpuinfo_parse(no_model, sizeof(no_model) - 1, &id), ENODATA);
    ASSERT_ERRNO(cpuinfo_parse("", 0, &id), ENODATA);
    assert_int_equal(id.vendor, CPU_VENDOR_HYGON); /* untouched on failure */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_unit_fields),
        cmocka_unit_test(test_inverted_atoms),
        cmocka_unit_test(test_skylake_x_units_and_slurm_bug),
        cmocka_unit_test(test_fixed_dram_model_list),
        cmocka_unit_test(test_broadwell_d_is_a_choice),
        cmocka_unit_test(test_sapphire_rapids_psys),
        cmocka_unit_test(test_client_and_amd_use_esu),
        cmocka_unit_test(test_unit_errors),
        cmocka_unit_test(test_domain_names),
        cmocka_unit_test(test_cpuinfo_parse),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
