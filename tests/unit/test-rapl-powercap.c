/* SPDX-License-Identifier: MIT */
/* RAPL through a fake powercap tree: zones, names, duplicates, wrap, errors. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "counter.h"
#include "fixture.h"
#include "rapl.h"
#include "rapl_internal.h"

static void zone_write(struct fixture_rapl *e, const char *zone, const char *file,
                       const char *value) {
    char rel[256];

    (void)snprintf(rel, sizeof(rel), "sys/class/powercap/%s/%s", zone, file);
    ASSERT_OK(test_write_file(e->root, rel, value));
}

static void zone_remove(struct fixture_rapl *e, const char *zone) {
    char path[700];

    (void)snprintf(path, sizeof(path), "%s/sys/class/powercap/%s", e->root, zone);
    test_rm_rf(path);
}

/* The facts' worked example as powercap shows it: the kernel's truncated uJ values. */
static void test_skylake_x_wrap(void **state) {
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    struct energy_counter pkg, dram;
    uint64_t d;
    size_t n;

    fixture_rapl_open(&e, "rapl-powercap-skx");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_POWERCAP));
    assert_int_equal(e.status.chosen, RAPL_MODE_POWERCAP);
    assert_non_null(strstr(e.status.reason, "4 zones"));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4);
    assert_int_equal(n, 4);
    assert_int_equal(rd[0].package, 0);
    assert_int_equal(rd[0].domain, RAPL_DOMAIN_PACKAGE);
    assert_int_equal(rd[0].raw, UINT64_C(262079329075));
    assert_int_equal(rd[0].modulus, UINT64_C(262143328851)); /* max_energy_range_uj + 1 */
    assert_int_equal(rd[0].unit.num, 1);
    assert_int_equal(rd[0].unit.den, 1);
    assert_int_equal(rd[1].package, 0);
    assert_int_equal(rd[1].domain, RAPL_DOMAIN_DRAM); /* sub-zone: package from parent */
    assert_int_equal(rd[1].modulus, UINT64_C(65712999614));
    assert_int_equal(rd[2].package, 1);
    assert_int_equal(rd[2].domain, RAPL_DOMAIN_PACKAGE);
    assert_int_equal(rd[3].package, 1);
    assert_int_equal(rd[3].domain, RAPL_DOMAIN_DRAM);

    ASSERT_OK(energy_counter_init(&pkg, rd[0].modulus, rd[0].unit, 0));
    ASSERT_OK(energy_counter_init(&dram, rd[1].modulus, rd[1].unit, 0));
    assert_int_equal(energy_counter_update(&pkg, rd[0].raw, &d), COUNTER_FIRST);
    assert_int_equal(energy_counter_update(&dram, rd[1].raw, &d), COUNTER_FIRST);

    zone_write(&e, "intel-rapl:0", "energy_uj", "65999831\n");
    zone_write(&e, "intel-rapl:0:0", "energy_uj", "4703005432\n");
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4);
    assert_int_equal(energy_counter_update(&pkg, rd[0].raw, &d), COUNTER_WRAPPED);
    /* (max - before) + after + 1: the kernel's 129 999 606 uJ plus the modulus' extra uJ
     * (the true modulus is max + one 61 uJ unit: 129 999 667 uJ; 60 uJ per wrap lost). */
    assert_int_equal(d, 129999607);
    assert_int_equal(energy_counter_update(&dram, rd[1].raw, &d), COUNTER_ADVANCED);
    assert_int_equal(d, 30081024); /* the kernel's 15.3 uJ DRAM unit: 0.27 % above 30 J */
    fixture_rapl_done(&e);
}

static void test_client_psys_and_mmio_duplicate(void **state) {
    const enum rapl_domain want[] = {RAPL_DOMAIN_PACKAGE, RAPL_DOMAIN_CORE, RAPL_DOMAIN_UNCORE,
                                     RAPL_DOMAIN_DRAM, RAPL_DOMAIN_PSYS};
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    size_t n;

    fixture_rapl_open(&e, "rapl-powercap-client");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_POWERCAP));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 5);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rd[i].domain, want[i]);
        assert_int_equal(rd[i].package, 0);
    }
    /* The MSR zone (1000000) is kept, not the mmio mirror (999999). */
    assert_int_equal(rd[0].raw, 1000000);
    assert_non_null(strstr(e.status.reason, "duplicate"));
    assert_null(strstr(e.status.reason, "mmio"));
    e.rapl = rapl_free(e.rapl);

    /* Without the MSR package zone, the mmio one is the package. */
    zone_remove(&e, "intel-rapl:0");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_POWERCAP));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 2);
    assert_int_equal(rd[0].domain, RAPL_DOMAIN_PSYS);
    assert_int_equal(rd[1].domain, RAPL_DOMAIN_PACKAGE);
    assert_int_equal(rd[1].raw, 999999);
    fixture_rapl_done(&e);
}

static void test_amd_core_zone_skipped(void **state) {
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    size_t n;

    fixture_rapl_open(&e, "rapl-powercap-amd");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_POWERCAP));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 1);
    assert_int_equal(rd[0].domain, RAPL_DOMAIN_PACKAGE);
    assert_int_equal(rd[0].modulus, UINT64_C(65532610988));
    e.rapl = rapl_free(e.rapl);

    /* Opened again with the CPU the first open read and cpuinfo unreadable now (EMFILE at a
     * retry): still AMD's layout, the core zone still skipped. */
    {
        struct rapl_options o = fixture_options(&e.fds, RAPL_MODE_POWERCAP);
        struct rapl_status again;

        assert_int_equal(e.status.cpu.vendor, CPU_VENDOR_AMD);
        o.cpu = e.status.cpu;
        o.proc_fd = -1;
        ASSERT_OK(rapl_open(&o, &e.rapl, &again));
        assert_int_equal(rapl_sample(e.rapl, &rd, &n), 1);
        assert_int_equal(again.cpu.vendor, CPU_VENDOR_AMD);
        e.rapl = rapl_free(e.rapl);
    }

    /* On Intel the same layout keeps the core zone. */
    ASSERT_OK(test_write_file(e.root, "proc/cpuinfo",
                              "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t: 140\n"));
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_POWERCAP));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 2);
    assert_int_equal(rd[1].domain, RAPL_DOMAIN_CORE);
    fixture_rapl_done(&e);
}

/* A package's zones registered anew (its CPUs back online), under the lowest free numbers:
 * the files held open read nothing more. Only the counters that did not read are opened
 * again, each from the zone that now counts its package and domain, wherever the kernel
 * numbered it; one whose zone is gone stays as it is. */
static void test_reopen_unread(void **state) {
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    char from[700], to[720];
    size_t n;

    fixture_rapl_open(&e, "rapl-powercap-skx");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_POWERCAP));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4);
    assert_int_equal(rapl_reopen_unread(e.rapl, e.fds.sys), 0); /* all read: nothing to do */
    /* What the descriptors held open read now. */
    zone_write(&e, "intel-rapl:1", "energy_uj", "junk\n");
    zone_write(&e, "intel-rapl:1:0", "energy_uj", "junk\n");
    zone_write(&e, "intel-rapl:0:0", "energy_uj", "junk\n");
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 1);
    /* Package 1 comes back as intel-rapl:5 (its files new); package 0's dram is gone. */
    for (int i = 0; i < 2; i++) {
        (void)snprintf(from, sizeof(from), "%s/sys/class/powercap/intel-rapl:1%s", e.root,
                       i ? ":0" : "");
        (void)snprintf(to, sizeof(to), "%s/sys/class/powercap/intel-rapl:5%s", e.root,
                       i ? ":0" : "");
        assert_int_equal(rename(from, to), 0);
        (void)snprintf(to, sizeof(to), "%s/sys/class/powercap/intel-rapl:5%s/energy_uj", e.root,
                       i ? ":0" : "");
        assert_int_equal(remove(to), 0);
    }
    zone_write(&e, "intel-rapl:5", "energy_uj", "888\n");
    zone_write(&e, "intel-rapl:5:0", "energy_uj", "777\n");
    zone_remove(&e, "intel-rapl:0:0");
    assert_int_equal(rapl_reopen_unread(e.rapl, e.fds.sys), 2);
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 3);
    assert_true(rd[2].valid && rd[2].package == 1 && rd[2].domain == RAPL_DOMAIN_PACKAGE);
    assert_int_equal(rd[2].raw, 888);
    assert_true(rd[3].valid && rd[3].package == 1 && rd[3].domain == RAPL_DOMAIN_DRAM);
    assert_int_equal(rd[3].raw, 777);
    assert_false(rd[1].valid);
    fixture_rapl_done(&e);
}

static void test_dies_and_hex_indices(void **state) {
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    size_t n;

    fixture_rapl_open(&e, "rapl-powercap-die");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_POWERCAP));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4); /* "weird-zone" is not RAPL */
    assert_int_equal(rd[0].raw, 100);
    assert_int_equal(rd[1].raw, 200);
    assert_int_equal(rd[1].package, 0);
    assert_int_equal(rd[1].die, 1);
    assert_int_equal(rd[2].raw, 300); /* intel-rapl:1:0 dram of package 0 die 1 */
    assert_int_equal(rd[2].die, 1);
    assert_int_equal(rd[2].domain, RAPL_DOMAIN_DRAM);
    assert_int_equal(rd[3].raw, 400); /* intel-rapl:a sorts as 10, after 1 */
    assert_int_equal(rd[3].package, 1);
    fixture_rapl_done(&e);
}

static void test_zone_name_parse(void **state) {
    static const struct {
        const char *name;
        int domain;
        uint32_t package, die;
        bool has_package;
    } ok[] = {
        {"package-0", RAPL_DOMAIN_PACKAGE, 0, 0, true},
        {"package-3", RAPL_DOMAIN_PACKAGE, 3, 0, true},
        {"package-1-die-2", RAPL_DOMAIN_PACKAGE, 1, 2, true},
        {"psys", RAPL_DOMAIN_PSYS, 0, 0, true},
        {"psys-1", RAPL_DOMAIN_PSYS, 1, 0, true},
        {"core", RAPL_DOMAIN_CORE, 0, 0, false},
        {"uncore", RAPL_DOMAIN_UNCORE, 0, 0, false},
        {"dram", RAPL_DOMAIN_DRAM, 0, 0, false},
    };
    static const char *const bad[] = {"package-",  "package-x", "package-1-die-", "psysx",
                                      "psys-",     "gpu",       "package",        "",
                                      "Package-0", "psys-1x"};
    enum rapl_domain d = _RAPL_DOMAIN_MAX;
    uint32_t p = 77, die = 77;
    bool has = false;

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ASSERT_OK(rapl_zone_name_parse(ok[i].name, &d, &p, &die, &has));
        assert_int_equal(d, ok[i].domain);
        assert_int_equal(p, ok[i].package);
        assert_int_equal(die, ok[i].die);
        assert_int_equal(has, ok[i].has_package);
    }
    p = 77;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (rapl_zone_name_parse(bad[i], &d, &p, &die, &has) != -EINVAL)
            fail_msg("zone name '%s' accepted", bad[i]);
    }
    assert_int_equal(p, 77);
}

static void test_broken_zones(void **state) {
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    size_t n;

    fixture_rapl_open(&e, "rapl-powercap-skx");
    /* One zone without max_energy_range_uj, one unparsable, one above its range. */
    zone_write(&e, "intel-rapl:1", "max_energy_range_uj", "lots\n");
    zone_write(&e, "intel-rapl:1:0", "energy_uj", "12 34\n");
    zone_write(&e, "intel-rapl:0:0", "energy_uj", "65712999614\n");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_POWERCAP));
    assert_non_null(strstr(e.status.reason, "1 zone ("));
    assert_non_null(strstr(e.status.reason, "some zones unreadable"));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 1);
    assert_int_equal(rd[0].domain, RAPL_DOMAIN_PACKAGE);

    /* A counter that turns unreadable or out of range is invalid for that sample only. */
    zone_write(&e, "intel-rapl:0", "energy_uj", "garbage\n");
    ASSERT_ERRNO(rapl_sample(e.rapl, &rd, &n), EIO);
    assert_false(rd[0].valid);
    assert_int_equal(rd[0].raw, UINT64_C(262079329075)); /* last good value kept */
    zone_write(&e, "intel-rapl:0", "energy_uj", "262143328851\n");
    ASSERT_ERRNO(rapl_sample(e.rapl, &rd, &n), EIO);
    zone_write(&e, "intel-rapl:0", "energy_uj", "5\n");
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 1);
    assert_true(rd[0].valid);
    assert_int_equal(rd[0].raw, 5);
    fixture_rapl_done(&e);
}

static void test_no_zone_readable(void **state) {
    struct fixture_rapl e = {0};
    char path[700];

    /* energy_uj that cannot be read (a directory here; EACCES is run by
     * tests/rapl/permission.sh as an unprivileged user). */
    fixture_rapl_open(&e, "rapl-powercap-amd");
    zone_remove(&e, "intel-rapl:0:0");
    (void)snprintf(path, sizeof(path), "%s/sys/class/powercap/intel-rapl:0/energy_uj", e.root);
    assert_int_equal(remove(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
    ASSERT_ERRNO(fixture_rapl_start(&e, RAPL_MODE_POWERCAP), EISDIR);
    assert_null(e.rapl);
    assert_int_equal(e.status.error, -EISDIR);
    assert_int_equal(e.status.chosen, RAPL_MODE_OFF);
    assert_non_null(strstr(e.status.reason, "intel-rapl:0/energy_uj"));
    fixture_rapl_done(&e);

    /* Nothing under class/powercap, or no such directory at all. */
    fixture_rapl_open(&e, "rapl-skx-msr");
    ASSERT_ERRNO(fixture_rapl_start(&e, RAPL_MODE_POWERCAP), ENODEV);
    assert_non_null(strstr(e.status.reason, "modprobe intel_rapl_msr"));
    ASSERT_OK(test_write_file(e.root, "sys/class/powercap/dtpm/enabled", "0\n"));
    ASSERT_ERRNO(fixture_rapl_start(&e, RAPL_MODE_POWERCAP), ENODEV);
    /* A zone whose name is no RAPL domain does not count. */
    ASSERT_OK(test_write_file(e.root, "sys/class/powercap/intel-rapl:0/name", "gpu\n"));
    ASSERT_ERRNO(fixture_rapl_start(&e, RAPL_MODE_POWERCAP), ENODEV);
    fixture_rapl_done(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skylake_x_wrap),
        cmocka_unit_test(test_client_psys_and_mmio_duplicate),
        cmocka_unit_test(test_amd_core_zone_skipped),
        cmocka_unit_test(test_reopen_unread),
        cmocka_unit_test(test_dies_and_hex_indices),
        cmocka_unit_test(test_zone_name_parse),
        cmocka_unit_test(test_broken_zones),
        cmocka_unit_test(test_no_zone_readable),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
