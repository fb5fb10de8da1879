/* SPDX-License-Identifier: MIT */
/* The fake procfs follows the scenario: pid directories appear and disappear, start times
 * agree with btime and with the ground-truth API. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "parse_num.h"
#include "test-sim-common.h"

#define SEC 1000000ull

static char root[256];

static bool exists(const char *rel) {
    char p[512];
    struct stat st;
    (void)snprintf(p, sizeof p, "%s/%s", root, rel);
    return stat(p, &st) == 0;
}

static char *slurp(const char *rel) {
    char *text = NULL;
    int fd = open_root(root);
    ASSERT_OK(fd);
    ASSERT_OK(read_virtual_file_at(fd, rel, 65536, &text, NULL));
    close(fd);
    return text;
}

/* Field n (1-based) of a /proc/<pid>/stat line, counted after the comm's closing paren. */
static uint64_t stat_field(const char *stat, int n, int *ret_fields) {
    const char *p = strrchr(stat, ')');
    assert_non_null(p);
    int field = 2;
    uint64_t v = 0;
    char tok[32];
    p++;
    while (*p && *p != '\n') {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " \n");
        field++;
        if (field == n) {
            assert_true(len < sizeof tok);
            memcpy(tok, p, len);
            tok[len] = '\0';
            ASSERT_OK(safe_atou64(tok, &v));
        }
        p += len;
    }
    *ret_fields = field;
    return v;
}

static uint64_t btime(void) {
    char *s = slurp("stat");
    const char *b = strstr(s, "\nbtime ");
    assert_non_null(b);
    uint64_t v;
    char num[32];
    size_t len = strcspn(b + 7, "\n");
    memcpy(num, b + 7, len);
    num[len] = '\0';
    ASSERT_OK(safe_atou64(num, &v));
    free(s);
    return v;
}

static int count_entries(void) {
    DIR *d = opendir(root);
    struct dirent *de;
    int n = 0;
    assert_non_null(d);
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void test_tree_follows_scenario(void **state) {
    char path[1024];
    int fields;
    ASSERT_OK(test_mkdtemp(root, sizeof root));
    ASSERT_OK(sim.joulestat_sim_use_virtual_clock());
    ASSERT_OK(
        sim.joulestat_sim_load(test_source_path(path, sizeof path, "scenarios/pid-reuse.scn")));
    ASSERT_OK(sim.joulestat_sim_set_procfs(root));

    /* t = 0: 4242 (trainer) and 5000 */
    assert_true(exists("4242/stat") && exists("4242/cgroup") && exists("5000/comm"));
    /* stat, uptime, .exec, 4242, 5000: nothing half-made */
    assert_int_equal(count_entries(), 5);
    assert_true(exists(".exec/4242/stat") && exists(".exec/5000/cgroup"));
    char *s = slurp("uptime");
    assert_string_equal(s, "86400.00 172800.00\n");
    free(s);
    uint64_t bt = btime();
    assert_int_equal(bt, (JOULESTAT_SIM_EPOCH_US / SEC) - 86400);
    s = slurp("4242/comm");
    assert_string_equal(s, "trainer\n");
    free(s);
    s = slurp("4242/cgroup");
    assert_true(!strncmp(s, "0::/kubepods.slice/kubepods-burstable.slice/", 44));
    assert_non_null(strstr(s, ".scope\n"));
    free(s);
    s = slurp("4242/stat");
    assert_true(!strncmp(s, "4242 (trainer) S 1 ", 19));
    uint64_t ticks1 = stat_field(s, 22, &fields);
    assert_int_equal(fields, 52);
    free(s);
    /* btime + starttime is the process start, to the tick */
    assert_int_equal(bt * 100 + ticks1, JOULESTAT_SIM_EPOCH_US / 10000);

    /* 22 s: the trainer exited */
    ASSERT_OK(sim.joulestat_sim_set_time(JOULESTAT_SIM_EPOCH_US + 22 * SEC));
    assert_false(exists("4242"));
    assert_true(exists("5000/stat"));
    s = slurp("uptime");
    assert_string_equal(s, "86422.00 172844.00\n");
    free(s);

    /* 30 s: the pid is back as another process with a later start time */
    ASSERT_OK(sim.joulestat_sim_set_time(JOULESTAT_SIM_EPOCH_US + 30 * SEC));
    s = slurp("4242/comm");
    assert_string_equal(s, "notebook\n");
    free(s);
    s = slurp("4242/stat");
    assert_int_equal(stat_field(s, 22, &fields), ticks1 + 2500);
    free(s);
    struct joulestat_sim_process_info info;
    ASSERT_OK(sim.joulestat_sim_process_info(2, &info));
    assert_int_equal(info.start_ticks, ticks1 + 2500);
    assert_int_equal(count_entries(), 5);
    /* its exec record is the new program's */
    s = slurp(".exec/4242/comm");
    assert_string_equal(s, "notebook\n");
    free(s);

    /* loading another scenario clears the old processes */
    ASSERT_OK(sim.joulestat_sim_load(
        test_source_path(path, sizeof path, "scenarios/two-process-80-20.scn")));
    assert_false(exists("4242"));
    assert_false(exists("5000"));
    assert_false(exists(".exec/4242"));
    assert_true(exists("2001/stat") && exists("2002/stat") && exists(".exec/2001/stat"));
    s = slurp("2001/cgroup");
    assert_string_equal(s, "0::/user.slice/user-1000.slice/session-1.scope\n");
    free(s);

    /* stopping: the tree is left as it is and no longer changes */
    ASSERT_OK(sim.joulestat_sim_set_procfs(NULL));
    ASSERT_OK(sim.joulestat_sim_set_time(JOULESTAT_SIM_EPOCH_US + 20 * SEC));
    assert_true(exists("2001/stat"));
    test_rm_rf(root);
}

/* First in this process (nothing loaded yet): nvmlInit loads the scenario and the procfs
 * directory from the environment. Processes that came and went between two looks never
 * appear among the pids, but their exec records do. */
static void test_env_and_short_lived(void **state) {
    char path[1024];
    ASSERT_OK(test_mkdtemp(root, sizeof root));
    setenv("JOULESTAT_SIM_PROCFS", root, 1);
    setenv("JOULESTAT_SIM_SCENARIO",
           test_source_path(path, sizeof path, "scenarios/short-lived-processes.scn"), 1);
    ASSERT_OK(sim.joulestat_sim_use_virtual_clock());
    assert_false(exists("3000"));
    assert_int_equal(sim.nvmlInit_v2(), NVML_SUCCESS);
    assert_true(exists("3000/stat"));
    ASSERT_OK(sim.joulestat_sim_set_time(JOULESTAT_SIM_EPOCH_US + 1020000));
    assert_true(exists("3100/stat"));
    ASSERT_OK(sim.joulestat_sim_set_time(JOULESTAT_SIM_EPOCH_US + 5 * SEC));
    assert_false(exists("3100"));
    assert_false(exists("3101"));         /* ran 2.700-2.777 s, between two looks */
    assert_int_equal(count_entries(), 4); /* stat, uptime, .exec, 3000 */
    /* what an exec watcher read of both, kept after they exited */
    assert_true(exists(".exec/3100/stat") && exists(".exec/3101/stat"));
    char *cg = slurp(".exec/3101/cgroup");
    assert_non_null(strstr(cg, "job_4201"));
    free(cg);
    sim_stop();
    ASSERT_OK(sim.joulestat_sim_set_procfs(NULL));
    unsetenv("JOULESTAT_SIM_PROCFS");
    unsetenv("JOULESTAT_SIM_SCENARIO");
    test_rm_rf(root);
}

static void test_procfs_errors(void **state) {
    ASSERT_ERRNO(sim.joulestat_sim_set_procfs("/proc/self/does/not/exist"), ENOENT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_and_short_lived), /* first: needs nothing loaded */
        cmocka_unit_test(test_tree_follows_scenario),
        cmocka_unit_test(test_procfs_errors),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}
