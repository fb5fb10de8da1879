/* SPDX-License-Identifier: MIT */
/* The simulated node's MIG physics (instances never time-slice with each other) and GPM. */
#include <math.h>
#include <string.h>

#include "test-sim-common.h"

#define MS 1000ull
#define SEC 1000000ull

static const char three_instances[] =
    "scenario duration=20s sample-period=100ms\n"
    "gpu 0 uuid=GPU-m0 name=\"NVIDIA H100 80GB HBM3\" idle=70W max=700W mig=on\n"
    "    power-average=0 power-sensor-duty=100% energy-step=0\n"
    "mig gpu=0 gi=1 ci=0 uuid=MIG-m1 name=\"NVIDIA H100 80GB HBM3 MIG 3g.40gb\"\n"
    "mig gpu=0 gi=2 ci=0 uuid=MIG-m2 name=\"NVIDIA H100 80GB HBM3 MIG 2g.20gb\"\n"
    "process 11 gpu=0 gi=1 ci=0 name=a sm=100 coef=100W\n"
    "process 12 gpu=0 gi=2 ci=0 name=b sm=60 coef=300W\n"
    "process 13 gpu=0 gi=2 ci=0 name=c sm=duty level=80 period=2s on=1s coef=200W\n";

/* Instance 1 alone at 100 %; in instance 2, 60 + 80 % time-slice while c is on (b gets
 * 60/140, c 80/140) and b has its SMs alone while c is off. Instance 1 never shares. */
static void test_instances_do_not_time_slice(void **state) {
    (void)state;
    sim_start(three_instances);
    nvmlDevice_t d = sim_gpu(0);
    unsigned mw = 0;
    uint64_t ea, eb, ec;

    sim_at(500 * MS); /* c on: 70 + 100 + 300 * 60/140 + 200 * 80/140 */
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    assert_int_equal(mw, 70000 + 100000 + 128571 + 114285);
    sim_at(1500 * MS); /* c off: b has its instance to itself */
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    assert_int_equal(mw, 70000 + 100000 + 180000);

    sim_at(10 * SEC);
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 11, JOULESTAT_SIM_EPOCH_US, &ea));
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 12, JOULESTAT_SIM_EPOCH_US, &eb));
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 13, JOULESTAT_SIM_EPOCH_US, &ec));
    /* a: 100 W for 10 s whatever instance 2 does */
    assert_int_equal(ea, 1000000000ull);
    /* b: 5 s at 300 * 60/140 W and 5 s at 180 W; c: 5 s at 200 * 80/140 W (nJ, ±1) */
    assert_true(llabs((long long)eb - (long long)(5 * 128571428ull + 900000000ull)) <= 5);
    assert_true(llabs((long long)ec - 571428571ll) <= 5);
    sim_stop();
}

/* One GPM sample: of GPU instance gi, or of the whole GPU (gi < 0). */
static void gpm_sample(nvmlDevice_t d, int gi, nvmlGpmSample_t s) {
    if (gi < 0)
        assert_int_equal(sim.nvmlGpmSampleGet(d, s), NVML_SUCCESS);
    else
        assert_int_equal(sim.nvmlGpmMigSampleGet(d, (unsigned)gi, s), NVML_SUCCESS);
}

/* SM activity of a GPU instance (the whole GPU: gi < 0) between two GPM samples. */
static double gpm_activity(nvmlDevice_t d, int gi, uint64_t t0, uint64_t t1) {
    nvmlGpmSample_t a = NULL, b = NULL;
    static nvmlGpmMetricsGet_t m;

    assert_int_equal(sim.nvmlGpmSampleAlloc(&a), NVML_SUCCESS);
    assert_int_equal(sim.nvmlGpmSampleAlloc(&b), NVML_SUCCESS);
    sim_at(t0);
    gpm_sample(d, gi, a);
    sim_at(t1);
    gpm_sample(d, gi, b);
    memset(&m, 0, sizeof(m));
    m.version = NVML_GPM_METRICS_GET_VERSION;
    m.numMetrics = 2;
    m.sample1 = a;
    m.sample2 = b;
    m.metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
    m.metrics[1].metricId = 1000; /* not a metric the simulator knows */
    assert_int_equal(sim.nvmlGpmMetricsGet(&m), NVML_SUCCESS);
    assert_int_equal(m.metrics[0].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(m.metrics[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(sim.nvmlGpmSampleFree(a), NVML_SUCCESS);
    assert_int_equal(sim.nvmlGpmSampleFree(b), NVML_SUCCESS);
    return m.metrics[0].value;
}

static void test_gpm_instance_activity(void **state) {
    (void)state;
    sim_start(three_instances);
    nvmlDevice_t d = sim_gpu(0);
    nvmlGpmSupport_t support = {.version = NVML_GPM_SUPPORT_VERSION};
    nvmlGpmSample_t s = NULL;

    assert_int_equal(sim.nvmlGpmQueryDeviceSupport(d, &support), NVML_SUCCESS);
    assert_int_equal(support.isSupportedDevice, 1);
    /* instance 1 busy all the time; instance 2 full while c is on (140 % demanded), 60 %
     * while it is off: 80 % over a whole period */
    assert_true(fabs(gpm_activity(d, 1, 1 * SEC, 2 * SEC) - 100.0) < 1e-9);
    assert_true(fabs(gpm_activity(d, 2, 2 * SEC, 3 * SEC) - 100.0) < 1e-9);
    assert_true(fabs(gpm_activity(d, 2, 3 * SEC, 4 * SEC) - 60.0) < 1e-9);
    assert_true(fabs(gpm_activity(d, 2, 6 * SEC, 10 * SEC) - 80.0) < 1e-9);

    assert_int_equal(sim.nvmlGpmSampleAlloc(&s), NVML_SUCCESS);
    assert_int_equal(sim.nvmlGpmMigSampleGet(d, 9, s), NVML_ERROR_NOT_FOUND);
    assert_int_equal(sim.nvmlGpmSampleFree(s), NVML_SUCCESS);
    support.version = 2;
    assert_int_equal(sim.nvmlGpmQueryDeviceSupport(d, &support),
                     NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    sim_stop();
}

/* The whole GPU's activity weighs each GPU instance once by its slices, whatever number of
 * compute instances it has: a 3g instance of two compute instances ("1c.3g") and a 4g one,
 * all busy, are a GPU 100 % busy, not 3 + 3 + 4 sevenths. A profile read from the name's
 * "Ng" part, not from "40gb". */
static void test_gpm_whole_gpu_by_gpu_instance(void **state) {
    (void)state;
    sim_start("scenario duration=20s sample-period=100ms\n"
              "gpu 0 uuid=GPU-m0 name=\"NVIDIA H100 80GB HBM3\" idle=70W max=700W mig=on\n"
              "mig gpu=0 gi=1 ci=0 uuid=MIG-a name=\"NVIDIA H100 80GB HBM3 MIG 1c.3g.40gb\"\n"
              "mig gpu=0 gi=1 ci=1 uuid=MIG-b name=\"NVIDIA H100 80GB HBM3 MIG 1c.3g.40gb\"\n"
              "mig gpu=0 gi=2 ci=0 uuid=MIG-c name=\"NVIDIA H100 80GB HBM3 MIG 4g.40gb\"\n"
              "process 11 gpu=0 gi=1 ci=0 name=a sm=100 coef=100W\n"
              "process 12 gpu=0 gi=1 ci=1 name=b sm=100 coef=100W\n"
              "process 13 gpu=0 gi=2 ci=0 name=c sm=100 coef=100W\n");
    assert_true(fabs(gpm_activity(sim_gpu(0), -1, 1 * SEC, 2 * SEC) - 100.0) < 1e-9);
    sim_stop();
    /* Only the 3g instance busy: 3 of 7 slices. */
    sim_start("scenario duration=20s sample-period=100ms\n"
              "gpu 0 uuid=GPU-m0 name=\"NVIDIA H100 80GB HBM3\" idle=70W max=700W mig=on\n"
              "mig gpu=0 gi=1 ci=0 uuid=MIG-a name=\"NVIDIA H100 80GB HBM3 MIG 3g.40gb\"\n"
              "mig gpu=0 gi=2 ci=0 uuid=MIG-c name=\"NVIDIA H100 80GB HBM3 MIG 4g.40gb\"\n"
              "process 11 gpu=0 gi=1 ci=0 name=a sm=100 coef=100W\n");
    assert_true(fabs(gpm_activity(sim_gpu(0), -1, 1 * SEC, 2 * SEC) - 300.0 / 7) < 1e-6);
    sim_stop();
}

/* GPM is Hopper and later: an A100 has none unless the scenario says gpm=on. */
static void test_gpm_by_family(void **state) {
    static const char *const texts[] = {
        "scenario duration=5s\n"
        "gpu 0 uuid=GPU-a0 name=\"NVIDIA A100-SXM4-40GB\" idle=50W max=400W mig=on\n"
        "mig gpu=0 gi=1 ci=0 uuid=MIG-a1 name=\"NVIDIA A100-SXM4-40GB MIG 3g.20gb\"\n",
        "scenario duration=5s\n"
        "gpu 0 uuid=GPU-a0 name=\"NVIDIA A100-SXM4-40GB\" idle=50W max=400W mig=on gpm=on\n"
        "mig gpu=0 gi=1 ci=0 uuid=MIG-a1 name=\"NVIDIA A100-SXM4-40GB MIG 3g.20gb\"\n",
    };
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        nvmlGpmSupport_t support = {.version = NVML_GPM_SUPPORT_VERSION};
        nvmlGpmSample_t s = NULL;

        sim_start(texts[k]);
        assert_int_equal(sim.nvmlGpmQueryDeviceSupport(sim_gpu(0), &support), NVML_SUCCESS);
        assert_int_equal(support.isSupportedDevice, k);
        assert_int_equal(sim.nvmlGpmSampleAlloc(&s), NVML_SUCCESS);
        assert_int_equal(sim.nvmlGpmMigSampleGet(sim_gpu(0), 1, s),
                         k ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(sim.nvmlGpmSampleFree(s), NVML_SUCCESS);
        sim_stop();
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instances_do_not_time_slice),
        cmocka_unit_test(test_gpm_instance_activity),
        cmocka_unit_test(test_gpm_by_family),
        cmocka_unit_test(test_gpm_whole_gpu_by_gpu_instance),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}
