/* SPDX-License-Identifier: MIT */
/* Who the simulator's truth gives energy to (context-idle, slice overhead), per-process
 * sample phases and entries, and conservation to the nanojoule (docs/SCENARIOS.md). */
#include "test-sim-common.h"

#define MS 1000ull
#define SEC 1000000ull

static unsigned int power_mw(nvmlDevice_t d) {
    unsigned int mw = 0;
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    return mw;
}

static uint64_t truth_uj(uint32_t pid, uint64_t start_us, uint64_t *ret_context_uj) {
    size_t n = 0;
    ASSERT_OK(sim.joulestat_sim_process_count(&n));
    for (size_t i = 0; i < n; i++) {
        struct joulestat_sim_process_info info;
        ASSERT_OK(sim.joulestat_sim_process_info(i, &info));
        if (info.pid == pid && info.start_us == JOULESTAT_SIM_EPOCH_US + start_us) {
            *ret_context_uj = info.context_uj;
            return info.active_uj;
        }
    }
    fail_msg("no process %u", pid);
    return 0;
}

/* 50 W of context-idle while anyone holds a context, split evenly among the holders, idle or
 * not; the no-context idle is nobody's. The holder never computes: it leaves no samples. */
static void test_context_idle_goes_to_holders(void **state) {
    sim_start("scenario duration=20s sample-period=100ms\n"
              "gpu 0 uuid=GPU-ctx name=T idle=50W max=400W context-idle=50W\n"
              "process 1 gpu=0 name=holder sm=0 coef=100W stop=10s\n"
              "process 2 gpu=0 name=worker sm=50 coef=200W start=5s stop=15s\n");
    nvmlDevice_t d = sim_gpu(0);
    nvmlProcessUtilizationSample_t s[256];
    unsigned int n = 256;
    uint64_t ctx1, ctx2;

    sim_at(1 * SEC);
    assert_int_equal(power_mw(d), 100000);
    sim_at(7 * SEC);
    assert_int_equal(power_mw(d), 200000);
    sim_at(12 * SEC);
    assert_int_equal(power_mw(d), 200000);
    sim_at(16 * SEC);
    assert_int_equal(power_mw(d), 50000);
    sim_at(20 * SEC);
    /* holder: 50 W for 5 s, 25 W for 5 s; worker: 25 W for 5 s, 50 W for 5 s, 100 W for 10 s */
    assert_int_equal(truth_uj(1, 0, &ctx1), 375000000ull);
    assert_int_equal(ctx1, 375000000ull);
    assert_int_equal(truth_uj(2, 5 * SEC, &ctx2), 1375000000ull);
    assert_int_equal(ctx2, 375000000ull);
    struct joulestat_sim_gpu_truth g;
    ASSERT_OK(sim.joulestat_sim_gpu_truth(0, &g));
    assert_int_equal(g.context_uj, 750000000ull);
    assert_int_equal(g.idle_uj, 1000000000ull);
    assert_int_equal(g.total_uj, 2750000000ull);

    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0), NVML_SUCCESS);
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(s[i].pid, 2);
    sim_stop();
}

/* While two processes have work, 3 % of each one's SM time goes to context switches: the
 * samples show that much less, the board's power and the truth do not change. (Samples
 * as delivered, time-slice=0, so that the overhead is read exactly.) */
static void test_slice_overhead_lowers_samples_only(void **state) {
    sim_start("scenario duration=10s sample-period=100ms\n"
              "gpu 0 uuid=GPU-so name=T idle=50W max=400W slice-overhead=3% time-slice=0\n"
              "process 1 gpu=0 name=a sm=60 coef=200W\n"
              "process 2 gpu=0 name=b sm=40 coef=100W start=2s\n");
    nvmlDevice_t d = sim_gpu(0);
    nvmlProcessUtilizationSample_t s[8];
    unsigned int n = 8;
    uint64_t ctx;

    sim_at(1 * SEC);
    assert_int_equal(power_mw(d), 170000);
    assert_int_equal(
        sim.nvmlDeviceGetProcessUtilization(d, s, &n, JOULESTAT_SIM_EPOCH_US + 900 * MS),
        NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(s[0].smUtil, 60); /* alone: nothing lost */
    sim_at(4 * SEC);
    assert_int_equal(power_mw(d), 210000);
    n = 8;
    assert_int_equal(
        sim.nvmlDeviceGetProcessUtilization(d, s, &n, JOULESTAT_SIM_EPOCH_US + 3900 * MS),
        NVML_SUCCESS);
    assert_int_equal(n, 2);
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(s[i].smUtil, s[i].pid == 1 ? 58 : 39); /* 58.2 and 38.8 */
    /* the truth is their whole SM time's energy: 120 W for 4 s, 40 W for 2 s */
    assert_int_equal(truth_uj(1, 0, &ctx), 480000000ull);
    assert_int_equal(truth_uj(2, 2 * SEC, &ctx), 80000000ull);
    sim_stop();
}

/* MPS clients run side by side: no context-switch overhead comes off their samples. */
static void test_no_slice_overhead_under_mps(void **state) {
    sim_start("scenario duration=10s sample-period=100ms\n"
              "gpu 0 uuid=GPU-so name=T idle=50W max=400W slice-overhead=3% time-slice=0\n"
              "process 1 gpu=0 type=mps name=a sm=60 coef=200W\n"
              "process 2 gpu=0 type=mps name=b sm=40 coef=100W\n");
    nvmlDevice_t d = sim_gpu(0);
    nvmlProcessUtilizationSample_t s[8];
    unsigned int n = 8;

    sim_at(4 * SEC);
    assert_int_equal(
        sim.nvmlDeviceGetProcessUtilization(d, s, &n, JOULESTAT_SIM_EPOCH_US + 3900 * MS),
        NVML_SUCCESS);
    assert_int_equal(n, 2);
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(s[i].smUtil, s[i].pid == 1 ? 60 : 40);
    sim_stop();
}

/* The sum of a process's samples since the start (percent per period), and how many
 * periods left one. */
static unsigned slices_of(nvmlDevice_t d, unsigned pid, unsigned *ret_samples) {
    static nvmlProcessUtilizationSample_t s[1024];
    unsigned int n = 1024;
    unsigned total = 0, samples = 0;

    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0), NVML_SUCCESS);
    for (unsigned i = 0; i < n; i++)
        if (s[i].pid == pid) {
            total += s[i].smUtil;
            samples++;
        }
    *ret_samples = samples;
    return total;
}

/* Time-slicing hands out SM time in whole slices [Slicing]: a process at 1 % beside
 * another gets 1 ms of each 100 ms period, so it runs one 2 ms slice every other period:
 * its samples show 2 % in half of the periods and nothing in the rest, where with
 * time-slice=0 every period shows 1 %. The SM time over many periods is the same, and so
 * is the truth. A process alone is not sliced. */
static void test_time_slice_whole_slices(void **state) {
    static const char *const gpus[] = {"time-slice=2ms", "time-slice=0"};
    uint64_t truth[2], ctx;

    for (int k = 0; k < 2; k++) {
        char text[512];
        unsigned samples, total;

        snprintf(text, sizeof(text),
                 "scenario duration=30s sample-period=100ms\n"
                 "gpu 0 uuid=GPU-ts name=T idle=50W max=400W %s\n"
                 "process 1 gpu=0 name=a sm=60 coef=200W\n"
                 "process 2 gpu=0 name=b sm=1 coef=100W start=10s stop=20s\n",
                 gpus[k]);
        sim_start(text);
        nvmlDevice_t d = sim_gpu(0);

        sim_at(9900 * MS); /* a alone: 60 % in every period either way */
        total = slices_of(d, 1, &samples);
        assert_int_equal(samples, 99);
        assert_int_equal(total, 99 * 60);
        sim_at(21 * SEC);
        total = slices_of(d, 2, &samples);
        if (k == 0) {
            assert_int_equal(samples, 50); /* 10 s x 1 % = 100 ms = 50 slices */
            assert_int_equal(total, 100);  /* 2 % (2 ms of 100) each */
        } else {
            assert_int_equal(samples, 100);
            assert_int_equal(total, 100);
        }
        truth[k] = truth_uj(2, 10 * SEC, &ctx);
        /* its true SM time, whatever the samples showed: 1 % of 10 s */
        struct joulestat_sim_process_info info;
        ASSERT_OK(sim.joulestat_sim_process_info(1, &info));
        assert_int_equal(info.pid, 2);
        assert_int_equal(info.sm_us, 100000);
        sim_stop();
    }
    assert_int_equal(truth[0], truth[1]);
    assert_int_equal(truth[0], 10000000ull); /* 100 W x 1 % x 10 s */
}

#define DESYNC(extra)                                                                              \
    "scenario duration=60s sample-period=167ms seed=3 util-entries=per-process " extra "\n"        \
    "gpu 0 uuid=GPU-ds name=T idle=50W max=400W time-slice=0\n"                                    \
    "process 1 gpu=0 name=a sm=60 coef=200W\n"                                                     \
    "process 2 gpu=0 name=b sm=30 coef=100W\n"                                                     \
    "process 3 gpu=0 name=c sm=duty level=100 period=20s on=1s coef=100W\n"

/* Reads the per-process entries of both utilisation calls after last_seen; checks they agree
 * and returns the legacy call's. */
static unsigned util_entries(nvmlDevice_t d, unsigned long long last_seen,
                             nvmlProcessUtilizationSample_t *s, unsigned cap) {
    nvmlProcessUtilizationInfo_v1_t v[16];
    nvmlProcessesUtilizationInfo_t info = {
        .version = nvmlProcessesUtilizationInfo_v1,
        .processSamplesCount = 16,
        .lastSeenTimeStamp = last_seen,
        .procUtilArray = v,
    };
    unsigned int n = cap;
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, last_seen), NVML_SUCCESS);
    assert_int_equal(sim.nvmlDeviceGetProcessesUtilizationInfo(d, &info), NVML_SUCCESS);
    assert_int_equal(info.processSamplesCount, n);
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(v[i].pid, s[i].pid);
        assert_int_equal(v[i].timeStamp, s[i].timeStamp);
        assert_int_equal(v[i].smUtil, s[i].smUtil);
        assert_int_equal(v[i].memUtil, s[i].memUtil);
    }
    return n;
}

/* Each process is sampled at its own phase of the period; a call gives one entry per process
 * with samples since lastSeen (their average, stamped with the newest), none for the others. */
static void test_samples_per_process(void **state) {
    nvmlProcessUtilizationSample_t s[16], again[16];
    sim_start(DESYNC("sample-phase=spread"));
    nvmlDevice_t d = sim_gpu(0);

    sim_at(5 * SEC);
    unsigned n = util_entries(d, 0, s, 16);
    assert_int_equal(n, 3);
    unsigned long long newest = 0;
    for (unsigned i = 0; i < n; i++) {
        assert_true(s[i].timeStamp <= JOULESTAT_SIM_EPOCH_US + 5 * SEC);
        assert_true(i == 0 || s[i].timeStamp > s[i - 1].timeStamp); /* phases differ */
        if (s[i].pid == 3)
            assert_true(s[i].timeStamp <= JOULESTAT_SIM_EPOCH_US + 1167 * MS);
        newest = s[i].timeStamp;
    }
    /* 5 s later: only the two that computed since, at their exact levels */
    sim_at(10 * SEC);
    n = util_entries(d, newest, s, 16);
    assert_int_equal(n, 2);
    for (unsigned i = 0; i < n; i++) {
        assert_true(s[i].pid == 1 || s[i].pid == 2);
        assert_int_equal(s[i].smUtil, s[i].pid == 1 ? 60 : 30);
        assert_true(s[i].timeStamp > JOULESTAT_SIM_EPOCH_US + 10 * SEC - 167 * MS);
        newest = s[i].timeStamp > newest ? s[i].timeStamp : newest;
    }
    unsigned int none = 16;
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &none, newest),
                     NVML_ERROR_NOT_FOUND);
    sim_stop();

    /* the same seed gives the same phases; aligned sampling stamps everyone alike */
    sim_start(DESYNC("sample-phase=spread"));
    d = sim_gpu(0);
    sim_at(10 * SEC);
    assert_int_equal(util_entries(d, JOULESTAT_SIM_EPOCH_US + 5 * SEC, again, 16), 2);
    for (unsigned i = 0; i < 2; i++)
        assert_int_equal(again[i].timeStamp, s[i].timeStamp);
    sim_stop();
    sim_start(DESYNC("sample-phase=aligned"));
    d = sim_gpu(0);
    sim_at(10 * SEC);
    assert_int_equal(util_entries(d, JOULESTAT_SIM_EPOCH_US + 5 * SEC, again, 16), 2);
    assert_int_equal(again[0].timeStamp, again[1].timeStamp);
    sim_stop();
}

/* A bursty process's entry is its utilisation since lastSeen: 100 % for 1 s of the 4 s
 * since, on its own grid of whole sample periods. */
static void test_entry_averages_since_last_seen(void **state) {
    nvmlProcessUtilizationSample_t s[4];
    sim_start("scenario duration=20s sample-period=100ms util-entries=per-process\n"
              "gpu 0 uuid=GPU-b name=T idle=50W max=400W\n"
              "process 1 gpu=0 name=a sm=duty level=100 period=4s on=1s coef=100W\n");
    nvmlDevice_t d = sim_gpu(0);
    sim_at(8 * SEC);
    assert_int_equal(util_entries(d, JOULESTAT_SIM_EPOCH_US + 4 * SEC, s, 4), 1);
    assert_int_equal(s[0].timeStamp, JOULESTAT_SIM_EPOCH_US + 5 * SEC);
    assert_int_equal(s[0].smUtil, 100); /* its periods in (4 s, 5 s] */
    sim_at(9 * SEC);
    assert_int_equal(util_entries(d, JOULESTAT_SIM_EPOCH_US + 2 * SEC, s, 4), 1);
    assert_int_equal(s[0].timeStamp, JOULESTAT_SIM_EPOCH_US + 9 * SEC);
    assert_int_equal(s[0].smUtil, 29); /* 2 s busy of the 7 s up to its newest sample */
    sim_stop();
}

#define BUSY_SCN                                                                                   \
    "scenario duration=30s sample-period=167ms sample-phase=spread seed=11\n"                      \
    "gpu 0 uuid=GPU-cv name=T idle=53.7W max=700W context-idle=41.3W idle-drift=7W/20s "           \
    "slice-overhead=3%\n"                                                                          \
    "process 1 gpu=0 name=a sm=duty level=97 low=13 period=1700ms on=61% coef=433.3W,117W@9s\n"    \
    "process 2 gpu=0 name=b sm=71 coef=211.1W start=1234ms stop=25s\n"                             \
    "process 3 gpu=0 name=c sm=ramp from=5 to=90 over=7s coef=37.7W start=3s\n"                    \
    "process 4 gpu=0 name=d sm=0 coef=99W start=2s stop=19s\n"                                     \
    "process 5 gpu=0 name=e sm=duty level=33 period=310ms on=40% coef=301.9W start=11s\n"

/* Steps the busy scenario to 30 s (every `step` µs, then to 30 s) and returns each process's
 * truth and the GPU's, in nJ. */
static void run_busy(uint64_t step, uint64_t *procs_nj, struct joulestat_sim_gpu_truth *g) {
    sim_start(BUSY_SCN);
    for (uint64_t t = step;; t += step) {
        if (t > 30 * SEC)
            t = 30 * SEC;
        sim_at(t);
        ASSERT_OK(sim.joulestat_sim_gpu_truth(0, g));
        uint64_t sum = 0;
        for (size_t i = 0; i < 5; i++) {
            struct joulestat_sim_process_info info;
            ASSERT_OK(sim.joulestat_sim_process_info(i, &info));
            procs_nj[i] = info.active_nj;
            sum += info.active_nj;
        }
        /* every nanojoule is someone's or idle */
        assert_int_equal(sum, g->active_nj);
        assert_int_equal(g->idle_nj + g->active_nj, g->total_nj);
        if (t == 30 * SEC)
            break;
    }
    sim_stop();
}

/* Conservation to the nanojoule at every instant, and the truth does not depend on when it
 * is asked: stepping in 1 ms, 333 ms or one 30 s jump gives the same nanojoules. */
static void test_truth_conserved_and_independent_of_queries(void **state) {
    uint64_t fine[5], mid[5], one[5];
    struct joulestat_sim_gpu_truth gf, gm, go;

    run_busy(1 * MS, fine, &gf);
    run_busy(333 * MS + 1, mid, &gm);
    run_busy(30 * SEC, one, &go);
    assert_memory_equal(fine, one, sizeof fine);
    assert_memory_equal(mid, one, sizeof mid);
    assert_int_equal(gf.total_nj, go.total_nj);
    assert_int_equal(gm.total_nj, go.total_nj);
    assert_int_equal(gf.drift_uj, go.drift_uj);
    assert_true(go.context_uj > 0 && go.drift_uj > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_idle_goes_to_holders),
        cmocka_unit_test(test_slice_overhead_lowers_samples_only),
        cmocka_unit_test(test_no_slice_overhead_under_mps),
        cmocka_unit_test(test_time_slice_whole_slices),
        cmocka_unit_test(test_samples_per_process),
        cmocka_unit_test(test_entry_averages_since_last_seen),
        cmocka_unit_test(test_truth_conserved_and_independent_of_queries),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}
