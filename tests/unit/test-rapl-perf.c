/* SPDX-License-Identifier: MIT */
/* RAPL through a fake perf "power" PMU: discovery, units, and the counts a fake
 * perf_event_open hands out (regular files holding the 8-byte count). */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "counter.h"
#include "fixture.h"
#include "macro.h"
#include "rapl.h"

struct fake_perf {
    const char *root;
    int fail;       /* -errno to return instead of an fd, 0 for none */
    unsigned calls; /* perf_event_open calls */
    uint32_t type;  /* last type seen */
};

/* Opens <root>/perf/<cpu>-<config>: the count the kernel would return. */
static int fake_perf_open(uint32_t type, uint64_t config, int cpu, void *userdata) {
    struct fake_perf *f = userdata;
    char path[700];
    int fd;

    f->calls++;
    f->type = type;
    if (f->fail)
        return f->fail;
    (void)snprintf(path, sizeof(path), "%s/perf/%d-%llu", f->root, cpu, (unsigned long long)config);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

struct env {
    char root[512];
    struct fixture_fds fds;
    struct fake_perf fake;
    struct rapl *rapl;
    struct rapl_status status;
};

static void env_open(struct env *e) {
    ASSERT_OK(fixture_tree("rapl-perf-skx", e->root, sizeof(e->root)));
    ASSERT_OK(fixture_open(e->root, &e->fds));
    e->fake.root = e->root;
    /* energy-pkg (config 2) and energy-ram (config 3) on the lead CPUs 0 and 2. */
    ASSERT_OK(test_write_file(e->root, "perf/.keep", ""));
    ASSERT_OK(fixture_set_u64(e->root, "perf/0-2", UINT64_C(1) << 40));
    ASSERT_OK(fixture_set_u64(e->root, "perf/0-3", UINT64_C(1) << 36));
    ASSERT_OK(fixture_set_u64(e->root, "perf/2-2", 5));
    ASSERT_OK(fixture_set_u64(e->root, "perf/2-3", 6));
}

static int env_rapl(struct env *e) {
    struct rapl_options o = fixture_options(&e->fds, RAPL_MODE_PERF);

    o.perf_open = fake_perf_open;
    o.perf_userdata = &e->fake;
    return rapl_open(&o, &e->rapl, &e->status);
}

static void env_done(struct env *e) {
    e->rapl = rapl_free(e->rapl);
    fixture_close(&e->fds);
    fixture_done(e->root);
}

static void test_perf_counts_in_2_pow_minus_32_joules(void **state) {
    struct env e = {0};
    const struct rapl_reading *rd;
    struct energy_counter pkg, ram;
    uint64_t d;
    size_t n;

    env_open(&e);
    ASSERT_OK(env_rapl(&e));
    assert_int_equal(e.status.chosen, RAPL_MODE_PERF);
    assert_non_null(strstr(e.status.reason, "power PMU type 21, 4 counters on 2 CPUs"));
    assert_int_equal(e.fake.type, 21);
    assert_int_equal(e.fake.calls, 4);
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4);
    /* Event order: energy-pkg on each package, then energy-ram. */
    assert_int_equal(rd[0].domain, RAPL_DOMAIN_PACKAGE);
    assert_int_equal(rd[0].package, 0);
    assert_int_equal(rd[1].domain, RAPL_DOMAIN_PACKAGE);
    assert_int_equal(rd[1].package, 1);
    assert_int_equal(rd[1].raw, 5);
    assert_int_equal(rd[2].domain, RAPL_DOMAIN_DRAM);
    assert_int_equal(rd[3].raw, 6);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rd[i].modulus, 0); /* 64-bit, extended in the kernel */
        assert_int_equal(rd[i].unit.num, 1000000);
        assert_int_equal(rd[i].unit.den, UINT64_C(1) << 32);
    }

    /* The worked example in perf's view: 130 J and 30 J. */
    ASSERT_OK(energy_counter_init(&pkg, rd[0].modulus, rd[0].unit, 0));
    ASSERT_OK(energy_counter_init(&ram, rd[2].modulus, rd[2].unit, 0));
    assert_int_equal(energy_counter_update(&pkg, rd[0].raw, &d), COUNTER_FIRST);
    assert_int_equal(energy_counter_update(&ram, rd[2].raw, &d), COUNTER_FIRST);
    ASSERT_OK(fixture_set_u64(e.root, "perf/0-2", (UINT64_C(1) << 40) + UINT64_C(558345748480)));
    ASSERT_OK(fixture_set_u64(e.root, "perf/0-3", (UINT64_C(1) << 36) + UINT64_C(128849018880)));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4);
    assert_int_equal(energy_counter_update(&pkg, rd[0].raw, &d), COUNTER_ADVANCED);
    assert_int_equal(d, 130000000);
    assert_int_equal(energy_counter_update(&ram, rd[2].raw, &d), COUNTER_ADVANCED);
    assert_int_equal(d, 30000000);
    assert_int_equal(e.fake.calls, 4); /* sampling reuses the fds */
    env_done(&e);
}

static void test_perf_cpumask_ranges(void **state) {
    struct env e = {0};
    const struct rapl_reading *rd;
    size_t n;

    env_open(&e);
    /* A range covering all CPUs: still one event per package (CPUs 0 and 2). */
    ASSERT_OK(test_write_file(e.root, "sys/bus/event_source/devices/power/cpumask", "0-3\n"));
    ASSERT_OK(env_rapl(&e));
    assert_int_equal(e.fake.calls, 4);
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4);
    e.rapl = rapl_free(e.rapl);

    static const char *const bad[] = {"", "x", "3-1", "0,,1", "1-", "0;1"};
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        ASSERT_OK(test_write_file(e.root, "sys/bus/event_source/devices/power/cpumask", bad[i]));
        if (env_rapl(&e) != -EINVAL)
            fail_msg("cpumask '%s' accepted", bad[i]);
        assert_null(e.rapl);
    }
    env_done(&e);
}

static void test_perf_scale_and_events(void **state) {
    struct env e = {0};
    const struct rapl_reading *rd;
    size_t n;

    env_open(&e);
    /* A scale that is no exact power of two: that event is dropped, not approximated. */
    ASSERT_OK(test_write_file(e.root, "sys/bus/event_source/devices/power/events/energy-ram.scale",
                              "0.3\n"));
    ASSERT_OK(env_rapl(&e));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 2);
    assert_int_equal(rd[0].domain, RAPL_DOMAIN_PACKAGE);
    e.rapl = rapl_free(e.rapl);

    /* 2^-16 J is accepted too. */
    ASSERT_OK(test_write_file(e.root, "sys/bus/event_source/devices/power/events/energy-ram.scale",
                              "1.52587890625e-05\n"));
    ASSERT_OK(env_rapl(&e));
    assert_int_equal(rapl_sample(e.rapl, &rd, &n), 4);
    assert_int_equal(rd[2].unit.den, 65536);
    e.rapl = rapl_free(e.rapl);

    /* Negative, > 1 J, and an event file without event=. */
    ASSERT_OK(test_write_file(e.root, "sys/bus/event_source/devices/power/events/energy-ram.scale",
                              "-2.3283064365386962890625e-10\n"));
    ASSERT_OK(test_write_file(e.root, "sys/bus/event_source/devices/power/events/energy-pkg.scale",
                              "2\n"));
    ASSERT_ERRNO(env_rapl(&e), ENODEV);
    assert_non_null(strstr(e.status.reason, "events/energy-*"));
    ASSERT_OK(test_write_file(e.root, "sys/bus/event_source/devices/power/events/energy-pkg.scale",
                              "1\n"));
    ASSERT_OK(test_write_file(e.root, "sys/bus/event_source/devices/power/events/energy-pkg",
                              "umask=0x02\n"));
    ASSERT_ERRNO(env_rapl(&e), ENODEV);
    env_done(&e);
}

static void test_perf_refused(void **state) {
    struct env e = {0};

    env_open(&e);
    e.fake.fail = -EACCES;
    ASSERT_ERRNO(env_rapl(&e), EACCES);
    assert_null(e.rapl);
    assert_int_equal(e.status.error, -EACCES);
    assert_non_null(strstr(e.status.reason, "CAP_PERFMON"));
    assert_non_null(strstr(e.status.reason, "perf_event_paranoid is 2"));
    assert_non_null(strstr(e.status.reason, "energy-pkg, cpu 0"));

    /* The kernel does not know the PMU type: absent, not broken. */
    e.fake.fail = -ENOENT;
    ASSERT_ERRNO(env_rapl(&e), ENODEV);
    e.fake.fail = 0;

    /* No power PMU directory. */
    test_rm_rf(strcat(strcpy((char[700]){0}, e.root), "/sys/bus"));
    ASSERT_ERRNO(env_rapl(&e), ENODEV);
    assert_non_null(strstr(e.status.reason, "devices/power"));
    env_done(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perf_counts_in_2_pow_minus_32_joules),
        cmocka_unit_test(test_perf_cpumask_ranges),
        cmocka_unit_test(test_perf_scale_and_events),
        cmocka_unit_test(test_perf_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
