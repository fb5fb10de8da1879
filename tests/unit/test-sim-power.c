/* SPDX-License-Identifier: MIT */
/* What NVML serves of the board's power: averaging, the sensor's duty, the stepped energy
 * counter, noise, the idle drift and coefficient phases (docs/SCENARIOS.md). */
#include "test-sim-common.h"

#define MS 1000ull
#define SEC 1000000ull

static unsigned int power_mw(nvmlDevice_t d) {
    unsigned int mw = 0;
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    return mw;
}

/* A 200 W step at 2 s: the instant reading jumps, the 1 s average climbs in 100 ms updates
 * and holds between them; an H100 averages by default. The counters agree: the physics is
 * the same. */
static void test_power_average_lags_a_step(void **state) {
    sim_start("scenario duration=10s\n"
              "gpu 0 uuid=GPU-avg name=T idle=50W max=400W power-average=1s driver-phase=0\n"
              "gpu 1 uuid=GPU-ins name=T idle=50W max=400W power-average=0 driver-phase=0\n"
              "gpu 2 uuid=GPU-h100 name=\"NVIDIA H100 80GB HBM3\" idle=50W max=700W "
              "driver-phase=0 energy-step=0\n"
              "process 1 gpu=0 name=a start=2s sm=100 coef=200W\n"
              "process 2 gpu=1 name=b start=2s sm=100 coef=200W\n"
              "process 3 gpu=2 name=c start=2s sm=100 coef=200W\n");
    nvmlDevice_t avg = sim_gpu(0), ins = sim_gpu(1), h100 = sim_gpu(2);

    sim_at(1950 * MS);
    assert_int_equal(power_mw(avg), 50000);
    assert_int_equal(power_mw(ins), 50000);
    sim_at(2 * SEC);
    assert_int_equal(power_mw(avg), 50000);
    assert_int_equal(power_mw(ins), 250000);
    sim_at(2100 * MS);
    assert_int_equal(power_mw(avg), 70000); /* one busy period of ten */
    sim_at(2500 * MS);
    assert_int_equal(power_mw(avg), 150000);
    assert_int_equal(power_mw(h100), 150000);
    sim_at(2599 * MS);
    assert_int_equal(power_mw(avg), 150000); /* held until the next update */
    sim_at(3 * SEC);
    assert_int_equal(power_mw(avg), 250000);
    assert_int_equal(power_mw(h100), 250000);
    assert_int_equal(sim_energy_mj(avg), sim_energy_mj(ins));
    sim_stop();
}

/* The power-average default follows the family a board's name says: the A10G (GA102) and
 * the H800 (Hopper) average over 1 s, the A800 (GA100) reads instantaneous power. */
static void test_power_average_by_name(void **state) {
    sim_start("scenario duration=10s\n"
              "gpu 0 uuid=GPU-a10g name=\"NVIDIA A10G\" idle=50W max=300W driver-phase=0\n"
              "gpu 1 uuid=GPU-h800 name=\"NVIDIA H800\" idle=50W max=700W driver-phase=0\n"
              "gpu 2 uuid=GPU-a800 name=\"NVIDIA A800-SXM4-80GB\" idle=50W max=400W "
              "driver-phase=0 power-sensor-duty=100%\n"
              "process 1 gpu=0 name=a start=2s sm=100 coef=200W\n"
              "process 2 gpu=1 name=b start=2s sm=100 coef=200W\n"
              "process 3 gpu=2 name=c start=2s sm=100 coef=200W\n");
    sim_at(2500 * MS);
    assert_int_equal(power_mw(sim_gpu(0)), 150000); /* half the last second at 250 W */
    assert_int_equal(power_mw(sim_gpu(1)), 150000);
    assert_int_equal(power_mw(sim_gpu(2)), 250000);
    sim_stop();
}

/* The board idled before t = 0: a 1 s average read before the first update (at 40 ms) is
 * the idle; the first update's period began at -60 ms and holds 60 ms of idle and 40 ms of
 * the 250 W load; from 1040 ms on the average holds only the load. */
static void test_readings_begin_from_the_idle_board(void **state) {
    sim_start("scenario duration=10s\n"
              "gpu 0 uuid=GPU-pre name=T idle=50W max=400W power-average=1s driver-phase=40ms\n"
              "process 1 gpu=0 name=a sm=100 coef=200W\n");
    nvmlDevice_t d = sim_gpu(0);

    sim_at(10 * MS);
    assert_int_equal(power_mw(d), 50000);
    sim_at(40 * MS); /* (9 * 5 J + 3 J + 10 J) / 1 s */
    assert_int_equal(power_mw(d), 58000);
    sim_at(940 * MS); /* (13 J + 9 * 25 J) / 1 s */
    assert_int_equal(power_mw(d), 238000);
    sim_at(1040 * MS);
    assert_int_equal(power_mw(d), 250000);
    sim_stop();
}

/* The sensor sees the first 25 ms of every 100 ms: a load on during [50, 100) ms of every
 * period is never seen, one on during [0, 50) is seen all the time; the counter has both
 * at their true 150 W average. */
static void test_sensor_duty_misses_a_phase(void **state) {
    sim_start("scenario duration=10s\n"
              "gpu 0 uuid=GPU-late name=T idle=50W max=400W power-sensor-duty=25% "
              "driver-phase=0\n"
              "gpu 1 uuid=GPU-early name=T idle=50W max=400W power-sensor-duty=25% "
              "driver-phase=0\n"
              "process 1 gpu=0 name=late sm=duty level=100 period=100ms on=50ms phase=50ms "
              "coef=200W\n"
              "process 2 gpu=1 name=early sm=duty level=100 period=100ms on=50ms coef=200W\n");
    nvmlDevice_t late = sim_gpu(0), early = sim_gpu(1);

    for (uint64_t t = 100 * MS; t <= 10 * SEC; t += 37 * MS) {
        sim_at(t);
        assert_int_equal(power_mw(late), 50000);
        assert_int_equal(power_mw(early), 250000);
    }
    sim_at(10 * SEC);
    assert_int_equal(sim_energy_mj(late), 1500000);
    assert_int_equal(sim_energy_mj(early), 1500000);
    sim_stop();
}

/* The counter moves only at its 100 ms steps (here at 30 ms + k * 100 ms), and at each step
 * it is the exact total of that instant plus the idle the board drew from the step before
 * t = 0 (at -70 ms) to t = 0: 50 W * 70 ms. */
static void test_energy_counter_steps(void **state) {
    sim_start("scenario duration=10s\n"
              "gpu 0 uuid=GPU-step name=T idle=50W max=400W energy-step=100ms driver-phase=30ms\n"
              "process 1 gpu=0 name=a sm=duty level=100 period=70ms on=30ms coef=200W\n");
    nvmlDevice_t d = sim_gpu(0);
    unsigned long long last = sim_energy_mj(d);
    unsigned steps = 0;

    assert_int_equal(last, 0);
    for (uint64_t t = 1 * MS; t <= 1 * SEC; t += MS) {
        sim_at(t);
        unsigned long long e = sim_energy_mj(d);
        if (t % (100 * MS) == 30 * MS) {
            struct joulestat_sim_gpu_truth g;
            ASSERT_OK(sim.joulestat_sim_gpu_truth(0, &g));
            assert_int_equal(e, (g.total_nj + 50000ull * 70000) / 1000000);
            assert_true(e > last);
            steps++;
        } else {
            assert_int_equal(e, last);
        }
        last = e;
    }
    assert_int_equal(steps, 10);
    sim_stop();
}

/* Records power readings every 100 ms for 100 s. */
static void record_power(const char *text, unsigned int *mw, size_t n,
                         unsigned long long *ret_energy_mj) {
    sim_start(text);
    nvmlDevice_t d = sim_gpu(0);
    for (size_t i = 0; i < n; i++) {
        sim_at((i + 1) * 100 * MS);
        mw[i] = power_mw(d);
    }
    *ret_energy_mj = sim_energy_mj(d);
    sim_stop();
}

#define NOISY(seed, noise)                                                                         \
    "scenario duration=100s seed=" seed "\n"                                                       \
    "gpu 0 uuid=GPU-n name=T idle=50W max=400W power-noise=" noise "\n"                            \
    "process 1 gpu=0 name=a sm=100 coef=200W\n"

/* Noise on the readings: seeded (the same seed gives the same readings, another seed others),
 * zero mean, 1 % standard deviation, bounded; the energy counter does not see it. */
static void test_power_noise_is_seeded(void **state) {
    static unsigned int a[1000], b[1000], c[1000], quiet[1000];
    unsigned long long ea, eb, ec, eq;
    double sum = 0, sq = 0;

    record_power(NOISY("7", "1%"), a, 1000, &ea);
    record_power(NOISY("7", "1%"), b, 1000, &eb);
    record_power(NOISY("8", "1%"), c, 1000, &ec);
    record_power(NOISY("7", "0"), quiet, 1000, &eq);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    assert_int_equal(ea, eq);
    assert_int_equal(ec, eq);
    assert_int_equal(eq, 25000000);
    for (size_t i = 0; i < 1000; i++) {
        double rel = (double)a[i] / 250000.0 - 1.0;
        assert_true(quiet[i] == 250000);
        assert_true(rel > -0.0175 && rel < 0.0175); /* uniform: within sqrt(3) sigma */
        sum += rel;
        sq += rel * rel;
    }
    double mean = sum / 1000, var = sq / 1000 - mean * mean;
    assert_true(mean > -0.002 && mean < 0.002);
    assert_true(var > 0.008 * 0.008 && var < 0.012 * 0.012); /* sigma 0.8 .. 1.2 % */
}

/* The noise holds for one of the driver's update periods, on its own grid (driver-phase +
 * k x 100 ms), not on whole tenths of a second from t = 0: two readings at 90 and 110 ms
 * with the grid at 50 ms are one period's, and one at 160 ms is the next's. */
static void test_power_noise_holds_for_a_driver_period(void **state) {
    sim_start("scenario duration=10s seed=7\n"
              "gpu 0 uuid=GPU-n name=T idle=50W max=400W power-noise=5% power-average=0 "
              "driver-phase=50ms\n"
              "process 1 gpu=0 name=a sm=100 coef=200W\n");
    nvmlDevice_t d = sim_gpu(0);
    unsigned int at90, at110, at160;

    sim_at(90 * MS);
    at90 = power_mw(d);
    sim_at(110 * MS);
    at110 = power_mw(d);
    sim_at(160 * MS);
    at160 = power_mw(d);
    assert_int_equal(at90, at110);
    assert_int_not_equal(at110, at160);
    sim_stop();
}

/* Idle drifts up by 6 W with a 300 s time constant while anything computes and back down
 * with it after: 6 * (1 - 1/e) after 300 s of load, that times 1/e after 300 s more. The
 * drift is idle energy: the process's truth is its coef energy alone. */
static void test_idle_drift_time_constant(void **state) {
    sim_start("scenario duration=600s\n"
              "gpu 0 uuid=GPU-d name=T idle=50W max=400W idle-drift=6W/300s driver-phase=0\n"
              "process 1 gpu=0 name=a sm=100 coef=100W stop=300s\n");
    nvmlDevice_t d = sim_gpu(0);
    struct joulestat_sim_gpu_truth g;
    uint64_t uj = 0;

    sim_at(300 * SEC);
    unsigned int up = power_mw(d) - 50000;
    assert_true(up >= 3790 && up <= 3795); /* 6 W * (1 - e^-1) = 3.793 W */
    ASSERT_OK(sim.joulestat_sim_gpu_truth(0, &g));
    /* integral of 6 W * (1 - e^(-t/300 s)) over 300 s = 662.2 J, less one 100 ms lag */
    assert_true(g.drift_uj > 661000000ull && g.drift_uj < 662300000ull);
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 1, JOULESTAT_SIM_EPOCH_US, &uj));
    assert_int_equal(uj, 30000000000ull);
    assert_int_equal(g.idle_uj, 50ull * 300 * 1000000 + g.drift_uj);

    sim_at(600 * SEC);
    unsigned int down = power_mw(d) - 50000;
    assert_true(down >= 1393 && down <= 1397); /* 3.793 W * e^-1 = 1.395 W */
    sim_stop();
}

/* coef=300W,120W@2s,250W@4s on a process started at 1 s: the power changes at 3 s and 5 s. */
static void test_coef_list_changes_power(void **state) {
    sim_start("scenario duration=10s\n"
              "gpu 0 uuid=GPU-c name=T idle=50W max=400W\n"
              "process 1 gpu=0 name=a start=1s sm=50 coef=300W,120W@2s,250W@4s\n");
    nvmlDevice_t d = sim_gpu(0);
    uint64_t uj = 0;

    sim_at(2 * SEC);
    assert_int_equal(power_mw(d), 200000);
    sim_at(2999 * MS);
    assert_int_equal(power_mw(d), 200000);
    sim_at(3 * SEC);
    assert_int_equal(power_mw(d), 110000);
    sim_at(5 * SEC);
    assert_int_equal(power_mw(d), 175000);
    sim_at(10 * SEC);
    assert_int_equal(power_mw(d), 175000);
    /* 150 W for 2 s, 60 W for 2 s, 125 W for 5 s */
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 1, JOULESTAT_SIM_EPOCH_US + SEC, &uj));
    assert_int_equal(uj, 1045000000ull);
    assert_int_equal(sim_energy_mj(d), 500000 + 1045000);
    sim_stop();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_average_lags_a_step),
        cmocka_unit_test(test_power_average_by_name),
        cmocka_unit_test(test_readings_begin_from_the_idle_board),
        cmocka_unit_test(test_sensor_duty_misses_a_phase),
        cmocka_unit_test(test_energy_counter_steps),
        cmocka_unit_test(test_power_noise_is_seeded),
        cmocka_unit_test(test_power_noise_holds_for_a_driver_period),
        cmocka_unit_test(test_idle_drift_time_constant),
        cmocka_unit_test(test_coef_list_changes_power),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}
