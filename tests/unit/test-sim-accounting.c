/* SPDX-License-Identifier: MIT */
/* The simulated driver's accounting mode: off by default and under MIG, a circular buffer of
 * the processes that ran, their lifetime statistics, the latest process of a reused pid. */
#include <string.h>

#include "test-sim-common.h"

#define MS 1000ull
#define SEC 1000000ull

static const char buffer_scn[] =
    "scenario duration=20s sample-period=100ms\n"
    "gpu 0 uuid=GPU-c0 name=T idle=20W max=300W accounting=on accounting-buffer=3\n"
    "process 11 gpu=0 name=a sm=50 coef=100W memory=1GiB stop=2s\n"
    "process 12 gpu=0 name=b sm=100 coef=100W memory=2GiB start=1s stop=1500ms\n"
    "process 13 gpu=0 name=c sm=20 coef=100W start=3s\n"
    "process 11 gpu=0 name=a2 sm=10 coef=100W memory=3GiB start=4s stop=5s\n";

static void test_accounting_buffer_and_stats(void **state) {
    (void)state;
    sim_start(buffer_scn);
    nvmlDevice_t d = sim_gpu(0);
    nvmlEnableState_t mode = 0;
    nvmlAccountingStats_t st;
    unsigned pids[8], n = 0, size = 0;

    assert_int_equal(sim.nvmlDeviceGetAccountingMode(d, &mode), NVML_SUCCESS);
    assert_int_equal(mode, NVML_FEATURE_ENABLED);
    assert_int_equal(sim.nvmlDeviceGetAccountingBufferSize(d, &size), NVML_SUCCESS);
    assert_int_equal(size, 3);

    sim_at(1200 * MS); /* a and b run: a shares the SMs with b (50 + 100) */
    assert_int_equal(sim.nvmlDeviceGetAccountingPids(d, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 2);
    assert_int_equal(sim.nvmlDeviceGetAccountingStats(d, 12, &st), NVML_SUCCESS);
    assert_true(st.isRunning);
    assert_int_equal(st.time, 0); /* set at termination */
    assert_int_equal(st.startTime, JOULESTAT_SIM_EPOCH_US + 1 * SEC);
    assert_int_equal(st.gpuUtilization, 67); /* over its life so far, as the driver reports */

    sim_at(2500 * MS);
    assert_int_equal(sim.nvmlDeviceGetAccountingStats(d, 12, &st), NVML_SUCCESS);
    assert_false(st.isRunning);
    assert_int_equal(st.time, 500);
    assert_int_equal(st.gpuUtilization, 67); /* 100 of 150 demanded */
    assert_int_equal(st.maxMemoryUsage, 2ull << 30);
    /* a: 1 s alone at 50 %, 0.5 s at 50/150, 0.5 s alone again: 45.8 % of 2 s */
    assert_int_equal(sim.nvmlDeviceGetAccountingStats(d, 11, &st), NVML_SUCCESS);
    assert_int_equal(st.gpuUtilization, 46);
    assert_int_equal(st.time, 2000);

    sim_at(6 * SEC); /* four started, the buffer keeps the latest three */
    n = 8;
    assert_int_equal(sim.nvmlDeviceGetAccountingPids(d, &n, pids), NVML_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(pids[0], 12);
    assert_int_equal(pids[1], 13);
    assert_int_equal(pids[2], 11);
    /* pid 11 answers for its latest process */
    assert_int_equal(sim.nvmlDeviceGetAccountingStats(d, 11, &st), NVML_SUCCESS);
    assert_int_equal(st.startTime, JOULESTAT_SIM_EPOCH_US + 4 * SEC);
    assert_int_equal(st.maxMemoryUsage, 3ull << 30);
    assert_int_equal(st.gpuUtilization, 10);
    assert_int_equal(sim.nvmlDeviceGetAccountingStats(d, 99, &st), NVML_ERROR_NOT_FOUND);
    sim_stop();
}

static void test_accounting_off(void **state) {
    static const char *const texts[] = {
        "scenario duration=5s\n"
        "gpu 0 uuid=GPU-c0 name=T idle=20W max=300W\n"
        "process 11 gpu=0 name=a sm=50 coef=100W\n",
        /* MIG forces accounting off whatever the file says */
        "scenario duration=5s\n"
        "gpu 0 uuid=GPU-c0 name=\"NVIDIA A100-SXM4-40GB\" idle=20W max=300W mig=on accounting=on\n"
        "mig gpu=0 gi=1 ci=0 uuid=MIG-c1\n"
        "process 11 gpu=0 gi=1 ci=0 name=a sm=50 coef=100W\n",
    };
    (void)state;
    for (size_t k = 0; k < 2; k++) {
        nvmlEnableState_t mode = 1;
        nvmlAccountingStats_t st;
        unsigned n = 0;

        sim_start(texts[k]);
        sim_at(1 * SEC);
        assert_int_equal(sim.nvmlDeviceGetAccountingMode(sim_gpu(0), &mode), NVML_SUCCESS);
        assert_int_equal(mode, NVML_FEATURE_DISABLED);
        assert_int_equal(sim.nvmlDeviceGetAccountingPids(sim_gpu(0), &n, NULL),
                         NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(sim.nvmlDeviceGetAccountingStats(sim_gpu(0), 11, &st),
                         NVML_ERROR_NOT_SUPPORTED);
        sim_stop();
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accounting_buffer_and_stats),
        cmocka_unit_test(test_accounting_off),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}
