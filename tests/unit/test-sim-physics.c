/* SPDX-License-Identifier: MIT */
/* The simulated GPU's physics: energy = integral of power, ground truth, samples, slicing. */
#include "test-sim-common.h"

#define MS 1000ull
#define SEC 1000000ull

static const char constant_scn[] = "scenario name=constant duration=10s\n"
                                   "gpu 0 uuid=GPU-c0 name=\"NVIDIA A100-SXM4-40GB\" idle=50W "
                                   "max=400W energy-start=1000 energy-step=0\n"
                                   "process 100 gpu=0 name=burn sm=100 coef=200W\n";

/* 250 W for 10 s is 2 500 000 mJ on top of the counter's start value, at every instant. */
static void test_constant_power_energy_exact(void **state) {
    sim_start(constant_scn);
    nvmlDevice_t d = sim_gpu(0);
    unsigned int mw = 0;

    assert_int_equal(sim_energy_mj(d), 1000);
    sim_at(3500 * MS);
    assert_int_equal(sim_energy_mj(d), 1000 + 875000);
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    assert_int_equal(mw, 250000);
    sim_at(10 * SEC);
    assert_int_equal(sim_energy_mj(d), 1000 + 2500000);

    struct joulestat_sim_gpu_truth t;
    ASSERT_OK(sim.joulestat_sim_gpu_truth(0, &t));
    assert_int_equal(t.time_us, JOULESTAT_SIM_EPOCH_US + 10 * SEC);
    assert_int_equal(t.idle_uj, 500000000ull);
    assert_int_equal(t.active_uj, 2000000000ull);
    assert_int_equal(t.total_uj, 2500000000ull);
    uint64_t uj = 0;
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 100, JOULESTAT_SIM_EPOCH_US, &uj));
    assert_int_equal(uj, 2000000000ull);
    sim_stop();
}

/* Two duty-cycled processes (no slicing): summing power read every 1 ms gives exactly the
 * counter's increase. */
static void test_energy_is_integral_of_power(void **state) {
    sim_start("scenario duration=5s\n"
              "gpu 0 uuid=GPU-i0 name=T idle=40W max=400W\n"
              "process 1 gpu=0 name=a sm=duty level=60 period=300ms on=40% coef=200W\n"
              "process 2 gpu=0 name=b sm=duty level=30 period=70ms on=20ms phase=10ms "
              "coef=150W start=123ms stop=4s\n");
    nvmlDevice_t d = sim_gpu(0);
    unsigned long long e0 = sim_energy_mj(d), sum_uj = 0;
    for (uint64_t t = 0; t < 5 * SEC; t += MS) {
        unsigned int mw;
        sim_at(t);
        assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
        sum_uj += mw; /* mW for 1 ms = µJ */
    }
    sim_at(5 * SEC);
    assert_int_equal(sum_uj % 1000, 0);
    assert_int_equal(sim_energy_mj(d) - e0, sum_uj / 1000);
    sim_stop();
}

/* A ramp 0 -> 100 % over 10 s is a staircase of 1 ms steps at floor(k / 100) percent. */
static void test_ramp_staircase(void **state) {
    sim_start("scenario duration=20s\n"
              "gpu 0 uuid=GPU-r0 name=T idle=0W max=400W\n"
              "process 7 gpu=0 name=ramp sm=ramp from=0 to=100 over=10s coef=100W\n");
    nvmlDevice_t d = sim_gpu(0);
    unsigned long long expect_mj = 0;
    for (unsigned k = 0; k < 10000; k++)
        expect_mj += k / 100; /* 100 W * (k/100 %) * 1 ms = (k/100) mJ */
    sim_at(10 * SEC);
    assert_int_equal(sim_energy_mj(d), expect_mj);
    sim_at(12 * SEC);
    assert_int_equal(sim_energy_mj(d), expect_mj + 200000);
    sim_stop();
}

/* The documented example: 70 W for 10 s shared 80/20 -> 560 J and 140 J of ground truth. */
static void test_two_process_80_20(void **state) {
    char path[1024];
    ASSERT_OK(sim.joulestat_sim_use_virtual_clock());
    ASSERT_OK(sim.joulestat_sim_load(
        test_source_path(path, sizeof path, "scenarios/two-process-80-20.scn")));
    assert_int_equal(sim.nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t d = sim_gpu(0);
    unsigned long long e0 = sim_energy_mj(d);
    uint64_t start = 0, dur = 0, a = 0, b = 0;
    ASSERT_OK(sim.joulestat_sim_get_span(&start, &dur));
    assert_int_equal(start, JOULESTAT_SIM_EPOCH_US);
    assert_int_equal(dur, 10 * SEC);
    ASSERT_OK(sim.joulestat_sim_set_time(start + dur));
    /* 70 W for 10 s, as the A100's counter last stepped (at most 100 ms before) */
    struct joulestat_sim_gpu_truth t;
    ASSERT_OK(sim.joulestat_sim_gpu_truth(0, &t));
    assert_int_equal(t.total_uj, 700000000ull);
    assert_true(sim_energy_mj(d) - e0 <= 700000 && sim_energy_mj(d) - e0 >= 700000 - 7000);
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 2001, start, &a));
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 2002, start, &b));
    assert_int_equal(a, 560000000ull);
    assert_int_equal(b, 140000000ull);
    sim_stop();
}

/* Demands of 100 + 60 + 40 % on one GPU: delivered 50 / 30 / 20 %, power and energy follow. */
static void test_time_slicing_scales_down(void **state) {
    sim_start("scenario duration=10s sample-period=100ms\n"
              "gpu 0 uuid=GPU-s0 name=T idle=50W max=400W\n"
              "process 11 gpu=0 name=big sm=100 coef=100W\n"
              "process 12 gpu=0 name=mid sm=60 coef=300W\n"
              "process 13 gpu=0 name=low sm=40 coef=200W\n");
    nvmlDevice_t d = sim_gpu(0);
    unsigned int mw = 0, n = 8;
    nvmlProcessUtilizationSample_t s[8];

    sim_at(10 * SEC);
    /* 50 + 100 * 0.5 + 300 * 0.3 + 200 * 0.2 = 230 W */
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    assert_int_equal(mw, 230000);
    assert_int_equal(sim_energy_mj(d), 2300000);
    assert_int_equal(
        sim.nvmlDeviceGetProcessUtilization(d, s, &n, JOULESTAT_SIM_EPOCH_US + 10 * SEC - 100 * MS),
        NVML_SUCCESS);
    assert_int_equal(n, 3);
    for (unsigned i = 0; i < n; i++) {
        unsigned want = s[i].pid == 11 ? 50 : s[i].pid == 12 ? 30 : 20;
        assert_int_equal(s[i].smUtil, want);
        assert_int_equal(s[i].memUtil, want * 40 / 100);
        assert_int_equal(s[i].timeStamp, JOULESTAT_SIM_EPOCH_US + 10 * SEC);
    }
    uint64_t e11, e12, e13;
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 11, JOULESTAT_SIM_EPOCH_US, &e11));
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 12, JOULESTAT_SIM_EPOCH_US, &e12));
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 13, JOULESTAT_SIM_EPOCH_US, &e13));
    assert_int_equal(e11, 500000000ull);
    assert_int_equal(e12, 900000000ull);
    assert_int_equal(e13, 400000000ull);
    sim_stop();
}

/* Duty cycle 80 % for 500 ms of every 1 s, sampled every 167 ms: exact window averages. */
static void test_duty_cycle_samples(void **state) {
    sim_start("scenario duration=60s sample-period=167ms\n"
              "gpu 0 uuid=GPU-d0 name=T idle=50W max=400W\n"
              "process 21 gpu=0 name=duty sm=duty level=80 period=1s on=50% coef=100W "
              "mem-util=50%\n");
    nvmlDevice_t d = sim_gpu(0);
    nvmlProcessUtilizationSample_t s[400];
    unsigned int n = 400;

    sim_at(60 * SEC);
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0), NVML_SUCCESS);
    /* window (334, 501] ms: on for 166 ms -> 80 * 166 / 167 = 79.5 -> 80; (835, 1002]: on
     * for 2 ms -> 0.96 -> 1; (501, 668] and (668, 835] are idle: no sample */
    assert_int_equal(s[2].timeStamp, JOULESTAT_SIM_EPOCH_US + 501 * MS);
    assert_int_equal(s[2].smUtil, 80);
    assert_int_equal(s[2].memUtil, 40);
    assert_int_equal(s[3].timeStamp, JOULESTAT_SIM_EPOCH_US + 1002 * MS);
    assert_int_equal(s[3].smUtil, 1);

    /* over the run, the samples average to level * duty = 40 % (each rounds by <= 0.5) */
    uint64_t sum = 0, last = 0;
    for (unsigned i = 0; i < n; i++) {
        assert_true(s[i].timeStamp > last);
        last = s[i].timeStamp;
        sum += s[i].smUtil;
    }
    uint64_t covered_us = (last - JOULESTAT_SIM_EPOCH_US);
    double avg = (double)sum * 167000.0 / (double)covered_us;
    assert_true(avg > 39.5 && avg < 40.5);
    sim_stop();
}

/* Ground truth adds up: sum(process active) + idle = GPU total within rounding, and the
 * counter's increase is that total as of its last 100 ms step (an A100's; the board draws
 * at most 305 W) plus the idle (55 W) from the step before t = 0 to t = 0, at random
 * instants of the DCGM scenario. */
static void test_ground_truth_sums(void **state) {
    char path[1024];
    uint64_t rng = 42, t = 0;
    ASSERT_OK(sim.joulestat_sim_use_virtual_clock());
    ASSERT_OK(sim.joulestat_sim_load(
        test_source_path(path, sizeof path, "scenarios/dcgm-three-pods.scn")));
    assert_int_equal(sim.nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t d = sim_gpu(0);
    unsigned long long e0 = sim_energy_mj(d);
    size_t np = 0;
    ASSERT_OK(sim.joulestat_sim_process_count(&np));
    assert_int_equal(np, 3);

    for (int round = 0; round < 50; round++) {
        t += 1 + test_rand_below(&rng, 3 * SEC);
        sim_at(t);
        struct joulestat_sim_gpu_truth g;
        ASSERT_OK(sim.joulestat_sim_gpu_truth(0, &g));
        uint64_t sum = 0;
        for (size_t i = 0; i < np; i++) {
            struct joulestat_sim_process_info info;
            ASSERT_OK(sim.joulestat_sim_process_info(i, &info));
            sum += info.active_uj;
        }
        assert_true(sum <= g.active_uj && g.active_uj - sum <= np);
        assert_true(g.idle_uj + g.active_uj <= g.total_uj &&
                    g.total_uj - g.idle_uj - g.active_uj <= 1);
        unsigned long long de = sim_energy_mj(d) - e0;
        assert_true(de * 1000 <= g.total_uj + 55ull * 100000);
        assert_true(de * 1000 + 1000 + 305ull * 100000 > g.total_uj);
    }
    sim_stop();
}

/* Records everything observable while stepping a scenario on the virtual clock. */
static void run_recording(uint64_t *out, size_t n) {
    unsigned long long first = 0;
    char path[1024];
    ASSERT_OK(sim.joulestat_sim_use_virtual_clock());
    ASSERT_OK(sim.joulestat_sim_load(
        test_source_path(path, sizeof path, "scenarios/dcgm-three-pods.scn")));
    assert_int_equal(sim.nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t d = sim_gpu(0);
    unsigned long long last_seen = 0;
    size_t k = 0;
    for (uint64_t t = 0; k + 8 < n; t += 333 * MS) {
        nvmlProcessUtilizationSample_t s[16];
        unsigned int cnt = 16, mw = 0;
        sim_at(t);
        out[k++] = sim_energy_mj(d);
        if (t == 0)
            first = out[0];
        assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
        out[k++] = mw;
        nvmlReturn_t rc = sim.nvmlDeviceGetProcessUtilization(d, s, &cnt, last_seen);
        if (rc == NVML_SUCCESS)
            for (unsigned i = 0; i < cnt && k + 8 < n; i++) {
                out[k++] = s[i].timeStamp ^ ((uint64_t)s[i].pid << 32) ^ s[i].smUtil;
                last_seen = s[i].timeStamp;
            }
        else
            assert_int_equal(rc, NVML_ERROR_NOT_FOUND);
    }
    /* something happened: energy grew and samples came back */
    assert_true(sim_energy_mj(d) > first + 1000000);
    assert_true(last_seen > JOULESTAT_SIM_EPOCH_US);
    sim_stop();
}

static void test_virtual_clock_deterministic(void **state) {
    static uint64_t a[4096], b[4096];
    run_recording(a, 4096);
    run_recording(b, 4096);
    assert_memory_equal(a, b, sizeof a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant_power_energy_exact),
        cmocka_unit_test(test_energy_is_integral_of_power),
        cmocka_unit_test(test_ramp_staircase),
        cmocka_unit_test(test_two_process_80_20),
        cmocka_unit_test(test_time_slicing_scales_down),
        cmocka_unit_test(test_duty_cycle_samples),
        cmocka_unit_test(test_ground_truth_sums),
        cmocka_unit_test(test_virtual_clock_deterministic),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}
