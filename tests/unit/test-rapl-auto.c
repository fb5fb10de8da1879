/* SPDX-License-Identifier: MIT */
/* rapl_open(auto): powercap, then perf, then msr; why each was or was not taken. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "fixture.h"
#include "macro.h"
#include "rapl.h"

struct env {
    char root[512];
    struct fixture_fds fds;
    int perf_error; /* what the fake perf_event_open answers */
    unsigned perf_calls;
    struct rapl *rapl;
    struct rapl_status status;
};

static int fake_perf_open(uint32_t type, uint64_t config, int cpu, void *userdata) {
    struct env *e = userdata;
    char path[700];
    int fd;

    e->perf_calls++;
    if (e->perf_error)
        return e->perf_error;
    (void)snprintf(path, sizeof(path), "%s/perf/%d-%llu", e->root, cpu, (unsigned long long)config);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* A node where all three interfaces exist: the Skylake-X MSR tree plus the powercap zones
 * and the perf PMU of the other Skylake-X trees. */
static void env_open(struct env *e) {
    static const char *const pmu = "sys/bus/event_source/devices/power/";

    ASSERT_OK(fixture_tree("rapl-skx-msr", e->root, sizeof(e->root)));
    for (unsigned z = 0; z < 2; z++) {
        char rel[128];

        (void)snprintf(rel, sizeof(rel), "sys/class/powercap/intel-rapl:%u/name", z);
        ASSERT_OK(test_write_file(e->root, rel, z ? "package-1\n" : "package-0\n"));
        (void)snprintf(rel, sizeof(rel), "sys/class/powercap/intel-rapl:%u/energy_uj", z);
        ASSERT_OK(test_write_file(e->root, rel, "1000\n"));
        (void)snprintf(rel, sizeof(rel), "sys/class/powercap/intel-rapl:%u/max_energy_range_uj", z);
        ASSERT_OK(test_write_file(e->root, rel, "262143328850\n"));
    }
    ASSERT_OK(test_write_file(e->root, strcat(strcpy((char[128]){0}, pmu), "type"), "21\n"));
    ASSERT_OK(test_write_file(e->root, strcat(strcpy((char[128]){0}, pmu), "cpumask"), "0,2\n"));
    ASSERT_OK(test_write_file(e->root, strcat(strcpy((char[128]){0}, pmu), "events/energy-pkg"),
                              "event=0x02\n"));
    ASSERT_OK(test_write_file(e->root,
                              strcat(strcpy((char[128]){0}, pmu), "events/energy-pkg.scale"),
                              "2.3283064365386962890625e-10\n"));
    ASSERT_OK(test_write_file(e->root, "proc/sys/kernel/perf_event_paranoid", "2\n"));
    ASSERT_OK(test_write_file(e->root, "perf/.keep", ""));
    ASSERT_OK(fixture_set_u64(e->root, "perf/0-2", 11));
    ASSERT_OK(fixture_set_u64(e->root, "perf/2-2", 22));
    ASSERT_OK(fixture_open(e->root, &e->fds));
}

static int env_rapl(struct env *e, enum rapl_mode mode) {
    struct rapl_options o = fixture_options(&e->fds, mode);

    o.perf_open = fake_perf_open;
    o.perf_userdata = e;
    e->rapl = rapl_free(e->rapl);
    return rapl_open(&o, &e->rapl, &e->status);
}

static void env_done(struct env *e) {
    e->rapl = rapl_free(e->rapl);
    fixture_close(&e->fds);
    fixture_done(e->root);
}

static void remove_path(struct env *e, const char *rel) {
    char path[700];

    (void)snprintf(path, sizeof(path), "%s/%s", e->root, rel);
    test_rm_rf(path);
}

static void test_auto_order(void **state) {
    struct env e = {0};

    env_open(&e);
    /* Everything works: powercap first, and perf is not even opened. */
    ASSERT_OK(env_rapl(&e, RAPL_MODE_AUTO));
    assert_int_equal(rapl_get_mode(e.rapl), RAPL_MODE_POWERCAP);
    assert_int_equal(e.status.chosen, RAPL_MODE_POWERCAP);
    assert_int_equal(e.perf_calls, 0);
    assert_true(strncmp(e.status.reason, "auto: powercap: 2 zones", 23) == 0);

    /* Each interface can still be asked for by name. */
    ASSERT_OK(env_rapl(&e, RAPL_MODE_MSR));
    assert_int_equal(rapl_get_mode(e.rapl), RAPL_MODE_MSR);
    ASSERT_OK(env_rapl(&e, RAPL_MODE_PERF));
    assert_int_equal(rapl_get_mode(e.rapl), RAPL_MODE_PERF);

    /* No powercap: perf, and the reason says why powercap was passed over. */
    remove_path(&e, "sys/class/powercap");
    ASSERT_OK(env_rapl(&e, RAPL_MODE_AUTO));
    assert_int_equal(e.status.chosen, RAPL_MODE_PERF);
    assert_non_null(strstr(e.status.reason, "auto: perf: power PMU type 21"));
    assert_non_null(strstr(e.status.reason, "not usable before it: powercap:"));

    /* perf refused: MSRs, with both earlier reasons. */
    e.perf_error = -EACCES;
    ASSERT_OK(env_rapl(&e, RAPL_MODE_AUTO));
    assert_int_equal(e.status.chosen, RAPL_MODE_MSR);
    assert_int_equal(e.status.error, 0);
    assert_non_null(strstr(e.status.reason, "auto: msr: GenuineIntel"));
    assert_non_null(strstr(e.status.reason, "CAP_PERFMON"));

    /* Nothing left: the permission problem is what gets reported, not the absences. */
    remove_path(&e, "dev/cpu");
    ASSERT_ERRNO(env_rapl(&e, RAPL_MODE_AUTO), EACCES);
    assert_null(e.rapl);
    assert_int_equal(e.status.chosen, RAPL_MODE_OFF);
    assert_int_equal(e.status.error, -EACCES);
    assert_non_null(strstr(e.status.reason, "auto: no RAPL interface: powercap:"));
    if (!strstr(e.status.reason, "modprobe msr"))
        fail_msg("reason: %s", e.status.reason);

    /* Nothing at all: absent. */
    e.perf_error = 0;
    remove_path(&e, "sys/bus");
    ASSERT_ERRNO(env_rapl(&e, RAPL_MODE_AUTO), ENODEV);
    assert_int_equal(e.status.error, -ENODEV);
    env_done(&e);
}

static void test_off_and_bad_mode(void **state) {
    struct env e = {0};

    env_open(&e);
    ASSERT_ERRNO(env_rapl(&e, RAPL_MODE_OFF), ENODEV);
    assert_null(e.rapl);
    assert_string_equal(e.status.reason, "off: disabled by configuration");
    ASSERT_ERRNO(env_rapl(&e, _RAPL_MODE_MAX), EINVAL);
    env_done(&e);
}

static void test_mode_names(void **state) {
    const char *names[] = {"auto", "powercap", "perf", "msr", "off"};

    for (int m = 0; m < _RAPL_MODE_MAX; m++) {
        assert_string_equal(rapl_mode_to_string(m), names[m]);
        assert_int_equal(rapl_mode_from_string(names[m]), m);
    }
    assert_null(rapl_mode_to_string(_RAPL_MODE_MAX));
    ASSERT_ERRNO(rapl_mode_from_string("sysfs"), EINVAL);
    assert_null(rapl_free(NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_order),
        cmocka_unit_test(test_off_and_bad_mode),
        cmocka_unit_test(test_mode_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
