/* SPDX-License-Identifier: MIT */
/* CPU time of a cgroup: v2 cpu.stat, the hybrid unified mount, v1 cpuacct.usage. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cgroup_cpu.h"
#include "fixture.h"

#define POD_CGROUP                                                                                 \
    "/kubepods.slice/kubepods-burstable.slice/"                                                    \
    "kubepods-burstable-pod3f2a9c1e_6d1b_4f0a_9e2c_1b2c3d4e5f60.slice/"                            \
    "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope"

struct env {
    char root[512];
    struct fixture_fds fds;
};

static void env_open(struct env *e, const char *tree) {
    ASSERT_OK(fixture_tree(tree, e->root, sizeof(e->root)));
    ASSERT_OK(fixture_open(e->root, &e->fds));
}

static void env_done(struct env *e) {
    fixture_close(&e->fds);
    fixture_done(e->root);
}

static uint64_t usage_of(struct env *e, const char *path, enum cgroup_cpu_kind kind) {
    struct cgroup_cpu *c = NULL;
    uint64_t v = 0;

    ASSERT_OK(cgroup_cpu_open(e->fds.sys, path, &c));
    assert_int_equal(cgroup_cpu_get_kind(c), kind);
    ASSERT_OK(cgroup_cpu_read(c, &v));
    assert_null(cgroup_cpu_free(c));
    return v;
}

static void test_v2(void **state) {
    struct env e = {0};
    struct cgroup_cpu *c = NULL;
    char from[1024], to[1024];
    uint64_t v = 0;

    env_open(&e, "cpu-cgroup-v2");
    assert_int_equal(usage_of(&e, POD_CGROUP, CGROUP_CPU_V2), 5250000);
    assert_int_equal(usage_of(&e, "/system.slice", CGROUP_CPU_V2), 1200000);
    assert_int_equal(usage_of(&e, "system.slice/", CGROUP_CPU_V2), 1200000);
    assert_int_equal(usage_of(&e, "/", CGROUP_CPU_V2), 987654321);
    /* Read in the DaemonSet's own cgroup namespace, a pod's path climbs out of it to an
     * ancestor (kubepods.slice, from a best-effort pod's container), then down: the slice
     * names where it is. */
    assert_int_equal(usage_of(&e,
                              "/../../../kubepods-burstable.slice/"
                              "kubepods-burstable-pod3f2a9c1e_6d1b_4f0a_9e2c_1b2c3d4e5f60.slice/"
                              "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef"
                              "0123456789abcdef.scope",
                              CGROUP_CPU_V2),
                     5250000);
    assert_int_equal(usage_of(&e, "/../../system.slice", CGROUP_CPU_V2), 1200000);

    /* The directory stays open: a renamed cgroup is still read, with fresh values. */
    ASSERT_OK(cgroup_cpu_open(e.fds.sys, "/system.slice", &c));
    (void)snprintf(from, sizeof(from), "%s/sys/fs/cgroup/system.slice", e.root);
    (void)snprintf(to, sizeof(to), "%s/sys/fs/cgroup/moved.slice", e.root);
    assert_int_equal(rename(from, to), 0);
    ASSERT_OK(test_write_file(e.root, "sys/fs/cgroup/moved.slice/cpu.stat",
                              "usage_usec 1300000\nuser_usec 1\n"));
    ASSERT_OK(cgroup_cpu_read(c, &v));
    assert_int_equal(v, 1300000);

    /* So does the file after its first read: rewritten in place, or replaced by rename
     * (which a fixture writer may do, never the kernel), the new value is read. */
    ASSERT_OK(
        test_write_file(e.root, "sys/fs/cgroup/moved.slice/cpu.stat", "usage_usec 1400000\n"));
    ASSERT_OK(cgroup_cpu_read(c, &v));
    assert_int_equal(v, 1400000);
    ASSERT_OK(
        test_write_file(e.root, "sys/fs/cgroup/moved.slice/cpu.stat.new", "usage_usec 1500000\n"));
    (void)snprintf(from, sizeof(from), "%s/sys/fs/cgroup/moved.slice/cpu.stat.new", e.root);
    (void)snprintf(to, sizeof(to), "%s/sys/fs/cgroup/moved.slice/cpu.stat", e.root);
    assert_int_equal(rename(from, to), 0);
    ASSERT_OK(cgroup_cpu_read(c, &v));
    assert_int_equal(v, 1500000);
    (void)snprintf(to, sizeof(to), "%s/sys/fs/cgroup/moved.slice", e.root);

    /* Removed cgroup. */
    test_rm_rf(to);
    v = 42;
    ASSERT_ERRNO(cgroup_cpu_read(c, &v), ENOENT);
    assert_int_equal(v, 42);
    c = cgroup_cpu_free(c);
    env_done(&e);
}

static void test_v1_and_hybrid(void **state) {
    struct env e = {0};

    env_open(&e, "cpu-cgroup-v1");
    /* cpuacct.usage is in ns: 123 456 789 012 ns = 123 456 789 us. */
    assert_int_equal(usage_of(&e, "/slurm/uid_1000/job_42", CGROUP_CPU_V1), 123456789);
    assert_int_equal(usage_of(&e, "/slurm/uid_1000/job_42/step_0", CGROUP_CPU_V1), 100000000);
    assert_int_equal(usage_of(&e, "/", CGROUP_CPU_V1), 999999999999);
    assert_int_equal(usage_of(&e, "/user.slice", CGROUP_CPU_V2_HYBRID), 777);
    env_done(&e);
}

static void test_errors(void **state) {
    struct env e = {0};
    struct cgroup_cpu *c = NULL, *sentinel = (struct cgroup_cpu *)&e;
    uint64_t v = 42;
    char *long_path;

    env_open(&e, "cpu-cgroup-v2");
    c = sentinel;
    ASSERT_ERRNO(cgroup_cpu_open(e.fds.sys, "/nope.slice", &c), ENOENT);
    ASSERT_ERRNO(cgroup_cpu_open(e.fds.sys, "/no-cpu-stat.slice", &c), ENOENT);
    /* a climb out of a cgroup namespace is resolved below the mount, never above it */
    ASSERT_ERRNO(cgroup_cpu_open(e.fds.sys, "/../../etc", &c), ENOENT);
    ASSERT_ERRNO(cgroup_cpu_open(e.fds.sys, "/../..", &c), EINVAL);
    ASSERT_ERRNO(cgroup_cpu_open(e.fds.sys, "system.slice/..", &c), EINVAL);
    ASSERT_ERRNO(cgroup_cpu_open(e.fds.sys, "..", &c), EINVAL);
    ASSERT_ERRNO(cgroup_cpu_open(e.fds.sys, "/a..b/..c", &c), ENOENT); /* not ".." parts */
    /* A file where a directory should be. */
    ASSERT_ERRNO(cgroup_cpu_open(e.fds.sys, "/system.slice/cpu.stat", &c), ENOENT);
    long_path = malloc(5000);
    assert_non_null(long_path);
    memset(long_path, 'a', 4999);
    long_path[4999] = '\0';
    ASSERT_ERRNO(cgroup_cpu_open(e.fds.sys, long_path, &c), ENAMETOOLONG);
    free(long_path);
    assert_ptr_equal(c, sentinel); /* untouched on failure */

    ASSERT_OK(cgroup_cpu_open(e.fds.sys, "/broken.slice", &c));
    ASSERT_ERRNO(cgroup_cpu_read(c, &v), ENODATA);
    c = cgroup_cpu_free(c);
    ASSERT_OK(cgroup_cpu_open(e.fds.sys, "/garbage.slice", &c));
    ASSERT_ERRNO(cgroup_cpu_read(c, &v), EINVAL);
    c = cgroup_cpu_free(c);
    assert_int_equal(v, 42);
    env_done(&e);

    env_open(&e, "cpu-cgroup-v1");
    ASSERT_OK(test_write_file(e.root, "sys/fs/cgroup/cpu,cpuacct/slurm/cpuacct.usage", "1e9\n"));
    ASSERT_OK(cgroup_cpu_open(e.fds.sys, "/slurm", &c));
    ASSERT_ERRNO(cgroup_cpu_read(c, &v), EINVAL);
    c = cgroup_cpu_free(c);
    env_done(&e);
    assert_null(cgroup_cpu_free(NULL));
}

static void test_parse_usage(void **state) {
    uint64_t v = 42;

    ASSERT_OK(cgroup_cpu_stat_parse_usage("usage_usec 5\n", &v));
    assert_int_equal(v, 5);
    ASSERT_OK(cgroup_cpu_stat_parse_usage("user_usec 1\nusage_usec 18446744073709551615", &v));
    assert_int_equal(v, UINT64_MAX);
    v = 42;
    ASSERT_ERRNO(cgroup_cpu_stat_parse_usage("usage_usec \n", &v), ENODATA);
    ASSERT_ERRNO(cgroup_cpu_stat_parse_usage("xusage_usec 5\n", &v), ENODATA);
    ASSERT_ERRNO(cgroup_cpu_stat_parse_usage("usage_usecs 5\n", &v), ENODATA);
    ASSERT_ERRNO(cgroup_cpu_stat_parse_usage("", &v), ENODATA);
    ASSERT_ERRNO(cgroup_cpu_stat_parse_usage("usage_usec 5 6\n", &v), EINVAL);
    ASSERT_ERRNO(cgroup_cpu_stat_parse_usage("usage_usec 18446744073709551616\n", &v), EINVAL);
    ASSERT_ERRNO(
        cgroup_cpu_stat_parse_usage("usage_usec 1234567890123456789012345678901234567\n", &v),
        EINVAL);
    assert_int_equal(v, 42);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v2),
        cmocka_unit_test(test_v1_and_hybrid),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_parse_usage),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
