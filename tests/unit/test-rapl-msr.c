/* SPDX-License-Identifier: MIT */
/* RAPL through fake MSR devices: units per model, 32-bit wrap, errors. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "counter.h"
#include "fixture.h"
#include "rapl.h"
#include "rapl_internal.h"

static const struct rapl_reading *find(const struct rapl_reading *r, size_t n, uint32_t package,
                                       enum rapl_domain d) {
    for (size_t i = 0; i < n; i++)
        if (r[i].package == package && r[i].domain == d)
            return &r[i];
    fail_msg("no reading for package %u domain %s", package, rapl_domain_to_string(d));
    return NULL;
}

static void counter_for(struct energy_counter *c, const struct rapl_reading *r) {
    ASSERT_OK(energy_counter_init(c, r->modulus, r->unit, 0));
}

/* The worked example of the facts: Skylake-X / Cascade Lake (model 85), ESU 14, 1 s. */
static void test_skylake_x_interval(void **state) {
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    struct energy_counter pkg, dram;
    uint64_t d_pkg, d_dram, raw_pkg0, raw_dram0;
    size_t n;
    char moved[600], path[600];

    fixture_rapl_open(&e, "rapl-skx-msr");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_MSR));
    assert_int_equal(e.status.chosen, RAPL_MODE_MSR);
    assert_int_equal(e.status.error, 0);
    assert_non_null(strstr(e.status.reason, "GenuineIntel family 6 model 85"));
    assert_non_null(strstr(e.status.reason, "2 packages"));
    assert_non_null(strstr(e.status.reason, "DRAM fixed at 2^-16 J"));

    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4);
    assert_int_equal(n, 4); /* package + dram on each of two sockets */
    counter_for(&pkg, find(rd, n, 0, RAPL_DOMAIN_PACKAGE));
    counter_for(&dram, find(rd, n, 0, RAPL_DOMAIN_DRAM));
    assert_int_equal(pkg.modulus, UINT64_C(1) << 32);
    assert_int_equal(pkg.unit.den, 16384);
    assert_int_equal(dram.unit.den, 65536);
    raw_pkg0 = find(rd, n, 0, RAPL_DOMAIN_PACKAGE)->raw;
    raw_dram0 = find(rd, n, 0, RAPL_DOMAIN_DRAM)->raw;
    assert_int_equal(raw_pkg0, 0xFFF00000);
    assert_int_equal(raw_dram0, 0x12345678);
    assert_int_equal(find(rd, n, 1, RAPL_DOMAIN_PACKAGE)->raw, 0x1000);
    assert_int_equal(energy_counter_update(&pkg, raw_pkg0, &d_pkg), COUNTER_FIRST);
    assert_int_equal(energy_counter_update(&dram, raw_dram0, &d_dram), COUNTER_FIRST);

    /* The source keeps its fds: move the device away and it still reads the same file. */
    (void)snprintf(path, sizeof(path), "%s/dev/cpu/0/msr", e.root);
    (void)snprintf(moved, sizeof(moved), "%s/dev/cpu/0/msr.moved", e.root);
    assert_int_equal(rename(path, moved), 0);
    {
        int fd = open(moved, O_WRONLY | O_CLOEXEC);
        uint64_t after_pkg = 0x00108000, after_dram = 0x12525678;

        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, &after_pkg, 8, 0x611), 8);
        assert_int_equal(pwrite(fd, &after_dram, 8, 0x619), 8);
        close(fd);
    }
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4);
    /* The package counter wrapped during the interval. */
    assert_int_equal(energy_counter_update(&pkg, find(rd, n, 0, RAPL_DOMAIN_PACKAGE)->raw, &d_pkg),
                     COUNTER_WRAPPED);
    assert_int_equal(energy_counter_update(&dram, find(rd, n, 0, RAPL_DOMAIN_DRAM)->raw, &d_dram),
                     COUNTER_ADVANCED);
    assert_int_equal(d_pkg, 130000000); /* 130.000000 J */
    assert_int_equal(d_dram, 30000000); /* 30.000000 J */
    assert_int_equal(pkg.remainder, 0);
    assert_int_equal(dram.remainder, 0);

    /* What Slurm <= 24.11 computes from the same counts: one unit (0x606) for the sum. */
    {
        uint64_t raw_dpkg = (uint32_t)(find(rd, n, 0, RAPL_DOMAIN_PACKAGE)->raw - raw_pkg0);
        uint64_t raw_ddram = find(rd, n, 0, RAPL_DOMAIN_DRAM)->raw - raw_dram0, rem = 0;
        struct energy_unit slurm_unit = pkg.unit;
        uint64_t slurm_dram = energy_convert(slurm_unit, raw_ddram, &rem);
        uint64_t slurm_total = energy_convert(slurm_unit, raw_dpkg + raw_ddram, &rem);

        assert_int_equal(raw_dpkg, 2129920);
        assert_int_equal(raw_ddram, 1966080);
        assert_int_equal(slurm_dram, 4 * d_dram); /* 120 J instead of 30 J */
        assert_int_equal(slurm_total, 250000000);
        assert_int_equal(slurm_total - (d_pkg + d_dram), 90000000); /* +56.25 % */
    }
    fixture_rapl_done(&e);
}

static void test_sapphire_rapids(void **state) {
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd, *psys;
    struct energy_counter c;
    uint64_t d;
    size_t n;

    fixture_rapl_open(&e, "rapl-spr-msr");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_MSR));
    assert_non_null(strstr(e.status.reason, "psys fixed at 1 J"));
    assert_null(strstr(e.status.reason, "DRAM fixed"));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 3);
    assert_int_equal(find(rd, n, 0, RAPL_DOMAIN_DRAM)->unit.den, 16384);
    psys = find(rd, n, 0, RAPL_DOMAIN_PSYS);
    assert_int_equal(psys->unit.num, 1000000);
    assert_int_equal(psys->unit.den, 1);
    counter_for(&c, psys);
    assert_int_equal(energy_counter_update(&c, psys->raw, &d), COUNTER_FIRST);
    ASSERT_OK(fixture_set_msr(e.root, 0, 0x64D, 0x100 + 450)); /* 450 counts of 1 J */
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 3);
    assert_int_equal(energy_counter_update(&c, find(rd, n, 0, RAPL_DOMAIN_PSYS)->raw, &d),
                     COUNTER_ADVANCED);
    assert_int_equal(d, 450000000); /* 450 J, not 450 x 61 uJ */
    fixture_rapl_done(&e);
}

static void test_amd_package_only(void **state) {
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    size_t n;

    fixture_rapl_open(&e, "rapl-amd-msr");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_MSR));
    assert_non_null(strstr(e.status.reason, "AuthenticAMD family 25"));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 1);
    assert_int_equal(n, 1); /* no DRAM, and the per-core counter is not read */
    assert_int_equal(rd[0].domain, RAPL_DOMAIN_PACKAGE);
    assert_int_equal(rd[0].raw, 0x00100000); /* from 0xC001029B, not Intel's 0x611 */
    assert_int_equal(rd[0].unit.den, 65536); /* ESU 16 from 0xC0010299 */
    assert_int_equal(rd[0].modulus, UINT64_C(1) << 32);
    fixture_rapl_done(&e);
}

/* A Zen 4 EPYC on Linux 6.10 or later: each CCD is a die of its own in sysfs, but the
 * package counter is one per package. Read once per die, the package would count four
 * times over. */
static void test_amd_ccds_are_one_package(void **state) {
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    size_t n;

    fixture_rapl_open(&e, "rapl-amd-ccd-msr");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_MSR));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 1);
    assert_int_equal(n, 1);
    assert_int_equal(rd[0].package, 0);
    assert_int_equal(rd[0].die, 0);
    assert_int_equal(rd[0].domain, RAPL_DOMAIN_PACKAGE);
    fixture_rapl_done(&e);
}

static void test_client_all_domains(void **state) {
    const enum rapl_domain want[] = {RAPL_DOMAIN_PACKAGE, RAPL_DOMAIN_CORE, RAPL_DOMAIN_UNCORE,
                                     RAPL_DOMAIN_DRAM, RAPL_DOMAIN_PSYS};
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    size_t n;

    fixture_rapl_open(&e, "rapl-client-msr");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_MSR));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 5);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rd[i].domain, want[i]);
        assert_int_equal(rd[i].unit.den, 16384); /* DRAM too: the package unit */
    }
    /* Bits 63:32 are reserved and masked off. */
    ASSERT_OK(fixture_set_msr(e.root, 0, 0x611, UINT64_C(0xDEAD000000004321)));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 5);
    assert_int_equal(rd[0].raw, 0x4321);
    fixture_rapl_done(&e);
}

static void test_read_failure_marks_invalid(void **state) {
    struct fixture_rapl e = {0};
    const struct rapl_reading *rd;
    char path[600];
    size_t n;

    fixture_rapl_open(&e, "rapl-client-msr");
    ASSERT_OK(fixture_rapl_start(&e, RAPL_MODE_MSR));
    /* Shorten the fake device so the psys register (0x64D) is past its end. */
    (void)snprintf(path, sizeof(path), "%s/dev/cpu/0/msr", e.root);
    assert_int_equal(truncate(path, 0x64D), 0);
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4);
    assert_false(rd[4].valid);
    assert_true(rd[0].valid);
    assert_int_equal(truncate(path, 0), 0);
    ASSERT_ERRNO(rapl_sample(e.rapl, &rd, &n), EIO);
    assert_int_equal(n, 5);
    fixture_rapl_done(&e);
}

static void test_msr_errors(void **state) {
    struct fixture_rapl e = {0};

    /* No /dev/cpu at all: the msr module is not loaded. */
    fixture_rapl_open(&e, "rapl-powercap-skx");
    ASSERT_ERRNO(fixture_rapl_start(&e, RAPL_MODE_MSR), ENODEV);
    assert_null(e.rapl);
    assert_int_equal(e.status.chosen, RAPL_MODE_OFF);
    assert_int_equal(e.status.error, -ENODEV);
    assert_non_null(strstr(e.status.reason, "modprobe msr"));
    fixture_rapl_done(&e);

    /* A CPU family without RAPL MSRs. */
    fixture_rapl_open(&e, "rapl-amd-msr");
    ASSERT_OK(test_write_file(e.root, "proc/cpuinfo",
                              "vendor_id\t: AuthenticAMD\ncpu family\t: 21\nmodel\t: 2\n"));
    ASSERT_ERRNO(fixture_rapl_start(&e, RAPL_MODE_MSR), EOPNOTSUPP);
    assert_non_null(strstr(e.status.reason, "no known RAPL MSRs"));
    fixture_rapl_done(&e);

    /* No topology: cannot tell which CPU belongs to which package. */
    fixture_rapl_open(&e, "rapl-amd-msr");
    test_rm_rf(strcat(strcpy((char[600]){0}, e.root), "/sys/devices"));
    ASSERT_ERRNO(fixture_rapl_start(&e, RAPL_MODE_MSR), ENODEV);
    assert_non_null(strstr(e.status.reason, "topology"));
    fixture_rapl_done(&e);

    /* All energy registers read zero: no domain is implemented. */
    fixture_rapl_open(&e, "rapl-amd-msr");
    ASSERT_OK(fixture_set_msr(e.root, 0, 0xC001029B, 0));
    ASSERT_ERRNO(fixture_rapl_start(&e, RAPL_MODE_MSR), ENODEV);
    fixture_rapl_done(&e);
}

static void test_permission_messages(void **state) {
    char buf[RAPL_REASON_MAX];

    rapl_explain_error(RAPL_MODE_MSR, -EACCES, "/dev/cpu/0/msr", buf, sizeof(buf));
    assert_non_null(strstr(buf, "CAP_SYS_RAWIO"));
    assert_non_null(strstr(buf, "/dev/cpu/0/msr"));
    rapl_explain_error(RAPL_MODE_MSR, -EPERM, "/dev/cpu/0/msr", buf, sizeof(buf));
    assert_non_null(strstr(buf, "CAP_SYS_RAWIO"));
    rapl_explain_error(RAPL_MODE_POWERCAP, -EACCES, "intel-rapl:0/energy_uj", buf, sizeof(buf));
    assert_non_null(strstr(buf, "udev rule"));
    assert_non_null(strstr(buf, "chmod"));
    assert_non_null(strstr(buf, "Permission denied"));
    rapl_explain_error(RAPL_MODE_PERF, -EACCES, "energy-pkg", buf, sizeof(buf));
    assert_non_null(strstr(buf, "CAP_PERFMON"));
    assert_non_null(strstr(buf, "perf_event_paranoid"));
    rapl_explain_error(RAPL_MODE_POWERCAP, -ENOENT, "class/powercap", buf, sizeof(buf));
    assert_non_null(strstr(buf, "intel_rapl_msr"));
    rapl_explain_error(RAPL_MODE_PERF, -ENODEV, "power", buf, sizeof(buf));
    assert_non_null(strstr(buf, "no usable perf 'power' PMU"));
    /* A short buffer is cut, never overrun. */
    rapl_explain_error(RAPL_MODE_MSR, -EACCES, "/dev/cpu/0/msr", buf, 8);
    assert_string_equal(buf, "msr: /d");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skylake_x_interval),
        cmocka_unit_test(test_sapphire_rapids),
        cmocka_unit_test(test_amd_package_only),
        cmocka_unit_test(test_amd_ccds_are_one_package),
        cmocka_unit_test(test_client_all_domains),
        cmocka_unit_test(test_read_failure_marks_invalid),
        cmocka_unit_test(test_msr_errors),
        cmocka_unit_test(test_permission_messages),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
