/* SPDX-License-Identifier: MIT */
/* The 8-GPU, 512-process node stays cheap to sample at 10 Hz: what one sampler tick asks of
 * NVML on every GPU costs well under a millisecond of CPU. */
#include <time.h>

#include "test-sim-common.h"

#define TICKS 600 /* one minute at 10 Hz */

static uint64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_node_8gpu_at_10hz(void **state) {
    static nvmlProcessInfo_t procs[256];
    static nvmlProcessUtilizationSample_t samples[2048];
    unsigned long long last_seen[8] = {0}, e_first[8], e;
    char path[1024];
    uint64_t listed = 0, sampled = 0;

    ASSERT_OK(sim.joulestat_sim_use_virtual_clock());
    ASSERT_OK(sim.joulestat_sim_load(
        test_source_path(path, sizeof path, "scenarios/node-8gpu-64proc.scn")));
    assert_int_equal(sim.nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t dev[8];
    for (unsigned g = 0; g < 8; g++) {
        dev[g] = sim_gpu(g);
        e_first[g] = sim_energy_mj(dev[g]);
    }

    uint64_t t0 = cpu_ns();
    for (unsigned tick = 1; tick <= TICKS; tick++) {
        ASSERT_OK(sim.joulestat_sim_advance(100000));
        for (unsigned g = 0; g < 8; g++) {
            unsigned int mw, n = 0;
            assert_int_equal(sim.nvmlDeviceGetTotalEnergyConsumption(dev[g], &e), NVML_SUCCESS);
            assert_int_equal(sim.nvmlDeviceGetPowerUsage(dev[g], &mw), NVML_SUCCESS);
            nvmlReturn_t rc = sim.nvmlDeviceGetComputeRunningProcesses_v3(dev[g], &n, NULL);
            assert_true(rc == NVML_ERROR_INSUFFICIENT_SIZE || rc == NVML_SUCCESS);
            n = 256;
            assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(dev[g], &n, procs),
                             NVML_SUCCESS);
            listed += n;
            n = 2048;
            rc = sim.nvmlDeviceGetProcessUtilization(dev[g], samples, &n, last_seen[g]);
            if (rc == NVML_SUCCESS) {
                sampled += n;
                last_seen[g] = samples[n - 1].timeStamp;
            } else {
                assert_int_equal(rc, NVML_ERROR_NOT_FOUND);
            }
        }
    }
    uint64_t per_tick = (cpu_ns() - t0) / TICKS;
    print_message("8 GPUs x 64 processes: %llu us CPU per 10 Hz tick\n",
                  (unsigned long long)(per_tick / 1000));

    /* the work was real: most processes listed every tick, samples flowing, energy grew */
    assert_true(listed > (uint64_t)TICKS * 8 * 48);
    assert_true(sampled > (uint64_t)TICKS * 8 * 20);
    for (unsigned g = 0; g < 8; g++)
        assert_true(sim_energy_mj(dev[g]) > e_first[g] + 60ull * 70 * 1000);
    /* 1 ms per 100 ms tick would be 1 % of a core; sanitizer builds get 10x */
    const char *san = getenv("JOULESTAT_SIM_COST_FACTOR");
    uint64_t factor = san ? strtoull(san, NULL, 10) : 1;
    assert_true(per_tick < 1000000ull * (factor ? factor : 1));
    sim_stop();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_8gpu_at_10hz),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}
