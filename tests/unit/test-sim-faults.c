/* SPDX-License-Identifier: MIT */
/* Each fault scenario in scenarios/ does what it says. */
#include "test-sim-common.h"

#define MS 1000ull
#define SEC 1000000ull

static void start_file(const char *name) {
    char path[1024], rel[256], err[512];
    (void)snprintf(rel, sizeof rel, "scenarios/%s", name);
    ASSERT_OK(sim.joulestat_sim_use_virtual_clock());
    if (sim.joulestat_sim_load(test_source_path(path, sizeof path, rel)) < 0) {
        sim.joulestat_sim_last_error(err, sizeof err);
        fail_msg("%s", err);
    }
    assert_int_equal(sim.nvmlInit_v2(), NVML_SUCCESS);
}

/* Lists `kind` of the compute list into pids; returns the count. */
static unsigned compute_pids(nvmlDevice_t d, unsigned *pids, unsigned cap) {
    nvmlProcessInfo_t p[256];
    unsigned int n = 256;
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p), NVML_SUCCESS);
    for (unsigned i = 0; i < n && i < cap; i++)
        pids[i] = p[i].pid;
    return n;
}

static void test_gpu_lost(void **state) {
    start_file("fault-gpu-lost.scn");
    nvmlDevice_t g0 = sim_gpu(0), g1 = sim_gpu(1), h = NULL;
    unsigned long long e;
    unsigned int mw, n = 0;
    char buf[96];

    sim_at(19900 * MS);
    unsigned long long before = sim_energy_mj(g1);
    sim_at(20 * SEC);
    assert_int_equal(sim.nvmlDeviceGetTotalEnergyConsumption(g1, &e), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(g1, &mw), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(sim.nvmlDeviceGetUUID(g1, buf, sizeof buf), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(g1, &n, NULL),
                     NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(g1, NULL, &n, 0), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(sim.nvmlDeviceGetHandleByIndex_v2(1, &h), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(g0, &mw), NVML_SUCCESS); /* the other is fine */
    sim_at(39999 * MS);
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(g1, &mw), NVML_ERROR_GPU_IS_LOST);
    sim_at(40 * SEC);
    /* back, and the counter kept counting: 55 + 250 * 0.8 = 255 W for 20.1 s */
    assert_int_equal(sim_energy_mj(g1) - before, 5125500);
    sim_stop();
}

static void test_counter_reset(void **state) {
    start_file("fault-counter-reset.scn");
    nvmlDevice_t d = sim_gpu(0);
    /* 55 + 220 * 0.75 = 220 W; an A100's counter moves every 100 ms: it shows the energy
     * of at most 100 ms before (22 J) */
    sim_at(29999 * MS);
    unsigned long long e = sim_energy_mj(d) - 9876543210ull;
    assert_true(e <= 29999ull * 220 && e >= 29899ull * 220);
    sim_at(30 * SEC);
    assert_int_equal(sim_energy_mj(d), 0);
    sim_at(31 * SEC);
    e = sim_energy_mj(d);
    assert_true(e <= 220000 && e >= 220000 - 22000);
    /* ground truth does not see the reset */
    struct joulestat_sim_gpu_truth t;
    ASSERT_OK(sim.joulestat_sim_gpu_truth(0, &t));
    assert_int_equal(t.total_uj, 31ull * 220 * 1000000);
    sim_stop();
}

static void test_no_energy_counter(void **state) {
    start_file("fault-no-energy-counter.scn");
    nvmlDevice_t d = sim_gpu(0);
    unsigned long long e;
    unsigned int mw = 0;
    sim_at(SEC);
    assert_int_equal(sim.nvmlDeviceGetTotalEnergyConsumption(d, &e), NVML_ERROR_NOT_SUPPORTED);
    /* at 1 s: train on (90 % of 180 W), eval off (its on part starts at 3 s) */
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    assert_int_equal(mw, 30000 + 162000);
    sim_at(3500 * MS); /* train off (on 0-3 s of every 4), eval on 40 % of 120 W */
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    assert_int_equal(mw, 30000 + 48000);
    sim_stop();
}

static void test_list_grows_once(void **state) {
    nvmlProcessInfo_t p[4];
    unsigned int n = 0;
    start_file("fault-list-grows.scn");
    nvmlDevice_t d = sim_gpu(0);
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 2);
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 3);
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 2);
    n = 2;
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p), NVML_SUCCESS);
    sim_stop();
}

static void test_more_than_100_processes(void **state) {
    static nvmlProcessUtilizationSample_t s[512];
    unsigned pids[256];
    unsigned int n = 0;
    start_file("stress-120-processes.scn");
    nvmlDevice_t d = sim_gpu(0);
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 120);
    assert_int_equal(compute_pids(d, pids, 256), 120);
    /* by 1 s every one has run a whole time-slice and left samples: far more than 100 */
    sim_at(1 * SEC);
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, NULL, &n, 0),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    unsigned need = n;
    assert_true(need > 120);
    assert_true(need <= 512);
    n = 100;
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, need);
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0), NVML_SUCCESS);
    sim_stop();
}

/* pid 3100 runs 1.000-1.040 s: never in a list read at 0.9 s or 1.1 s, yet it has a sample
 * and ground truth (50 W * 90/150 delivered * 40 ms = 1.2 J, sliced with the trainer). */
static void test_short_lived_between_samples(void **state) {
    nvmlProcessUtilizationSample_t s[64];
    unsigned pids[8];
    unsigned int n = 64;
    start_file("short-lived-processes.scn");
    nvmlDevice_t d = sim_gpu(0);
    sim_at(900 * MS);
    assert_int_equal(compute_pids(d, pids, 8), 1);
    sim_at(1100 * MS);
    assert_int_equal(compute_pids(d, pids, 8), 1);
    assert_int_equal(pids[0], 3000);
    sim_at(2 * SEC);
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, JOULESTAT_SIM_EPOCH_US + SEC),
                     NVML_SUCCESS);
    unsigned seen = 0;
    for (unsigned i = 0; i < n; i++)
        if (s[i].pid == 3100) {
            /* (0.835, 1.002]: 2 ms at 60 % is 1.2 ms, less than a 2 ms slice: no sample;
             * (1.002, 1.169]: 38 ms at 60 % and the 1.2 ms carried, 24 ms -> 14 % */
            assert_int_equal(s[i].timeStamp, JOULESTAT_SIM_EPOCH_US + 1169 * MS);
            assert_int_equal(s[i].smUtil, 14);
            seen++;
        }
    assert_int_equal(seen, 1);
    uint64_t uj = 0;
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 3100, JOULESTAT_SIM_EPOCH_US + SEC, &uj));
    assert_int_equal(uj, 1200000);
    sim_stop();
}

static void test_pid_reuse(void **state) {
    unsigned pids[8];
    size_t np = 0;
    start_file("pid-reuse.scn");
    nvmlDevice_t d = sim_gpu(0);
    sim_at(10 * SEC);
    assert_int_equal(compute_pids(d, pids, 8), 2);
    assert_int_equal(pids[0], 4242);
    sim_at(22 * SEC);
    assert_int_equal(compute_pids(d, pids, 8), 1);
    assert_int_equal(pids[0], 5000);
    sim_at(30 * SEC);
    assert_int_equal(compute_pids(d, pids, 8), 2);

    /* two processes, told apart by start time */
    uint64_t first = 0, second = 0;
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 4242, JOULESTAT_SIM_EPOCH_US, &first));
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 4242, JOULESTAT_SIM_EPOCH_US + 25 * SEC, &second));
    assert_int_equal(first, 100ull * 80 / 100 * 20 * 1000000); /* 80 W for 20 s */
    /* 25-30 s: on 25-26, 27-28, 29-30 at 50 % of 60 W */
    assert_int_equal(second, 3ull * 30 * 1000000);
    ASSERT_ERRNO(
        sim.joulestat_sim_process_truth(0, 4242, JOULESTAT_SIM_EPOCH_US + 12 * SEC, &first),
        ENOENT);
    ASSERT_OK(sim.joulestat_sim_process_count(&np));
    assert_int_equal(np, 3);
    struct joulestat_sim_process_info a, b;
    ASSERT_OK(sim.joulestat_sim_process_info(0, &a));
    ASSERT_OK(sim.joulestat_sim_process_info(2, &b));
    assert_int_equal(a.pid, 4242);
    assert_int_equal(b.pid, 4242);
    assert_string_equal(b.comm, "notebook");
    assert_int_equal(b.start_ticks - a.start_ticks, 2500);
    sim_stop();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_lost),
        cmocka_unit_test(test_counter_reset),
        cmocka_unit_test(test_no_energy_counter),
        cmocka_unit_test(test_list_grows_once),
        cmocka_unit_test(test_more_than_100_processes),
        cmocka_unit_test(test_short_lived_between_samples),
        cmocka_unit_test(test_pid_reuse),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}
