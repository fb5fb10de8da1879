/* SPDX-License-Identifier: MIT */
/*
 * The NVML source against the simulated GPU node (sim/, libnvidia-ml.so.1) on its virtual
 * clock: devices, processes, utilisation samples and the energy counter come through, and a
 * scripted GPU loss is survived. First the way joulestat meets it (scenario file named by
 * JOULESTAT_SIM_SCENARIO, real clock), then driven through its control API.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpu.h"
#include "macro.h"
#include "sim_control.h"
#include "testutil.h"

#define SEC UINT64_C(1000000)

static const char scenario[] =
    "scenario name=nvml-source duration=60s driver=550.54.14\n"
    "gpu 0 uuid=GPU-sim-0 name=\"Sim GPU zero\" idle=60W max=700W time-slice=0\n"
    "gpu 1 uuid=GPU-sim-1 name=\"Sim GPU one\" idle=50W max=400W compute-mode=exclusive-process\n"
    "process 100 gpu=0 name=train sm=50 coef=300W memory=2GiB\n"
    "process 101 gpu=0 name=render sm=20 coef=100W memory=1GiB type=compute+graphics\n"
    "process 200 gpu=1 name=solo sm=80 coef=200W memory=4GiB\n"
    "fault gpu-lost gpu=1 at=10s until=20s\n";

struct sim {
    void *dl;
    char path[4096];
    joulestat_sim_advance_fn *advance;
    joulestat_sim_get_time_fn *get_time;
    joulestat_sim_gpu_truth_fn *gpu_truth;
};

static void *must_sym(void *dl, const char *name) {
    void *p = dlsym(dl, name);
    if (!p)
        fail_msg("simulator lacks %s", name);
    return p;
}

static void sim_open(struct sim *sim, const char *scn) {
    test_binary_path(sim->path, sizeof(sim->path), "sim/libnvidia-ml.so.1");
    sim->dl = dlopen(sim->path, RTLD_NOW | RTLD_LOCAL);
    if (!sim->dl)
        fail_msg("dlopen(%s): %s", sim->path, dlerror());
    sim->advance = (joulestat_sim_advance_fn *)must_sym(sim->dl, "joulestat_sim_advance");
    sim->get_time = (joulestat_sim_get_time_fn *)must_sym(sim->dl, "joulestat_sim_get_time");
    sim->gpu_truth = (joulestat_sim_gpu_truth_fn *)must_sym(sim->dl, "joulestat_sim_gpu_truth");

    joulestat_sim_use_virtual_clock_fn *virt =
        (joulestat_sim_use_virtual_clock_fn *)must_sym(sim->dl, "joulestat_sim_use_virtual_clock");
    ASSERT_OK(virt());

    joulestat_sim_load_string_fn *load =
        (joulestat_sim_load_string_fn *)must_sym(sim->dl, "joulestat_sim_load_string");
    int r = load(scn, "test-nvml-sim");
    if (r < 0) {
        char msg[512] = "";
        joulestat_sim_last_error_fn *err =
            (joulestat_sim_last_error_fn *)must_sym(sim->dl, "joulestat_sim_last_error");
        (void)err(msg, sizeof(msg));
        fail_msg("scenario load failed: %s", msg);
    }
}

static uint64_t sim_now(const struct sim *sim) {
    uint64_t now = 0;
    ASSERT_OK(sim->get_time(&now));
    return now;
}

static const struct gpu_device_reading *sample_at(struct gpu_source *src, const struct sim *sim,
                                                  size_t *ret_n) {
    const struct gpu_device_reading *devs = NULL;
    ASSERT_OK(gpu_source_sample(src, sim_now(sim), &devs, ret_n));
    return devs;
}

static const struct gpu_process *must_find_process(const struct gpu_device_reading *d,
                                                   uint32_t pid) {
    for (size_t i = 0; i < d->n_processes; i++)
        if (d->processes[i].pid == pid)
            return &d->processes[i];
    fail_msg("pid %u not in the process list", pid);
    abort(); /* not reached; tells the compiler so */
}

/* Checks the sample stream of one pid in (after, until]: present, in order, equal SM%. */
static size_t check_samples(const struct gpu_device_reading *d, uint32_t pid, uint64_t after,
                            uint64_t until, uint32_t sm) {
    size_t n = 0;
    for (size_t i = 0; i < d->n_utils; i++) {
        const struct gpu_util_sample *u = &d->utils[i];
        assert_true(u->timestamp_us > after);
        assert_true(u->timestamp_us <= until);
        assert_true(u->sm_util <= 100);
        if (u->pid != pid)
            continue;
        assert_int_equal(u->sm_util, sm);
        n++;
    }
    return n;
}

static void test_scenario_through_source(void **state) {
    struct sim sim;
    struct gpu_source *src = NULL;
    const char *reason = NULL;
    size_t n = 0;

    sim_open(&sim, scenario);
    struct gpu_source_options opts = {.library_path = sim.path};
    ASSERT_OK(gpu_source_open(&opts, &src, &reason));

    ASSERT_OK(sim.advance(2 * SEC));
    const struct gpu_device_reading *d = sample_at(src, &sim, &n);
    assert_int_equal(n, 2);
    assert_string_equal(d[0].uuid, "GPU-sim-0");
    assert_string_equal(d[0].name, "Sim GPU zero");
    assert_string_equal(d[1].uuid, "GPU-sim-1");
    assert_true(d[0].up);
    assert_true(d[1].up);
    assert_true(d[0].energy_valid);
    assert_true(d[0].power_valid);
    assert_int_equal(d[0].compute_mode, 0);
    assert_int_equal(d[1].compute_mode, 3);
    assert_false(d[0].mig_enabled);

    assert_int_equal(d[0].n_processes, 2);
    const struct gpu_process *train = must_find_process(&d[0], 100);
    const struct gpu_process *render = must_find_process(&d[0], 101);
    assert_int_equal(train->kinds, GPU_PROCESS_COMPUTE);
    assert_int_equal(render->kinds, GPU_PROCESS_COMPUTE | GPU_PROCESS_GRAPHICS);
    assert_true(train->memory_valid);
    assert_int_equal(train->used_memory_bytes, UINT64_C(2) << 30);
    assert_int_equal(d[1].n_processes, 1);
    assert_int_equal(d[1].processes[0].pid, 200);

    /* Utilisation: both processes of GPU 0 have samples, stamped in the sim clock. */
    assert_true(d[0].utils_supported);
    uint64_t t_prev = sim_now(&sim);
    assert_true(check_samples(&d[0], 100, JOULESTAT_SIM_EPOCH_US, t_prev, 50) > 0);
    assert_true(check_samples(&d[0], 101, JOULESTAT_SIM_EPOCH_US, t_prev, 20) > 0);

    /* The next tick returns only newer samples, and the counter moved like the truth. */
    uint64_t e_prev = d[0].energy_mj;
    struct joulestat_sim_gpu_truth truth_prev, truth;
    ASSERT_OK(sim.gpu_truth(0, &truth_prev));
    ASSERT_OK(sim.advance(3 * SEC));
    d = sample_at(src, &sim, &n);
    ASSERT_OK(sim.gpu_truth(0, &truth));
    assert_true(check_samples(&d[0], 100, t_prev, sim_now(&sim), 50) > 0);
    uint64_t de_mj = d[0].energy_mj - e_prev;
    uint64_t truth_mj = (truth.total_uj - truth_prev.total_uj) / 1000;
    assert_true(de_mj + 1 >= truth_mj && de_mj <= truth_mj + 1);
    assert_true(de_mj > 3 * 60000); /* at least idle power for 3 s */

    /* GPU 1 is lost from 10 s to 20 s: down meanwhile, GPU 0 unaffected, back afterwards. */
    ASSERT_OK(sim.advance(6 * SEC)); /* t = 11 s */
    d = sample_at(src, &sim, &n);
    assert_false(d[1].up);
    assert_int_equal(d[1].error, -ENODEV);
    assert_true(d[0].up);
    bool back = false;
    for (int i = 0; i < 30 && !back; i++) {
        ASSERT_OK(sim.advance(SEC));
        d = sample_at(src, &sim, &n);
        assert_true(d[0].up);
        back = d[1].up;
    }
    assert_true(back);
    assert_true(sim_now(&sim) >= JOULESTAT_SIM_EPOCH_US + 20 * SEC);
    assert_int_equal(d[1].n_processes, 1);

    gpu_source_close(src);
    dlclose(sim.dl);
}

/* The scenario file named by the environment is played from the first nvmlInit. */
static void test_scenario_from_environment(void **state) {
    char dir[256], path[512];
    struct gpu_source *src = NULL;
    const struct gpu_device_reading *d = NULL;
    const char *reason = NULL;
    size_t n = 0;

    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    ASSERT_OK(test_write_file(dir, "node.scenario", scenario));
    (void)snprintf(path, sizeof(path), "%s/node.scenario", dir);
    assert_int_equal(setenv("JOULESTAT_SIM_SCENARIO", path, 1), 0);

    char lib[4096];
    struct gpu_source_options opts = {
        .library_path = test_binary_path(lib, sizeof(lib), "sim/libnvidia-ml.so.1")};
    ASSERT_OK(gpu_source_open(&opts, &src, &reason));
    ASSERT_OK(gpu_source_sample(src, UINT64_C(1000000) * (uint64_t)time(NULL), &d, &n));
    assert_int_equal(n, 2);
    assert_string_equal(d[0].uuid, "GPU-sim-0");
    assert_string_equal(d[1].name, "Sim GPU one");
    assert_true(d[0].up);
    assert_true(d[0].energy_valid);
    assert_int_equal(d[0].n_processes, 2);
    assert_int_equal(d[0].processes[0].pid, 100);
    assert_int_equal(d[0].processes[1].pid, 101);
    assert_int_equal(d[1].n_processes, 1);

    gpu_source_close(src);
    assert_int_equal(unsetenv("JOULESTAT_SIM_SCENARIO"), 0);
    test_rm_rf(dir);
}

/* Accounting mode: a job that started 30 ms before a reading and has no sample yet is
 * reported with its utilisation so far, once; a process running since before is not; at
 * the next reading the job is reported finished instead. */
static const char accounting_scenario[] =
    "scenario name=nvml-unsampled duration=10s sample-period=167ms\n"
    "gpu 0 uuid=GPU-sim-0 name=\"Sim GPU zero\" idle=60W max=700W accounting=on\n"
    "process 100 gpu=0 name=train sm=40 coef=300W memory=2GiB\n"
    "process 300 gpu=0 name=job sm=50 coef=100W start=2970ms stop=3100ms\n";

static void test_unsampled_through_source(void **state) {
    struct sim sim;
    struct gpu_source *src = NULL;
    const struct gpu_device_reading *d;
    const char *reason = NULL;
    size_t n = 0;

    (void)state;
    sim_open(&sim, accounting_scenario);
    struct gpu_source_options opts = {.library_path = sim.path};
    ASSERT_OK(gpu_source_open(&opts, &src, &reason));
    for (int s = 1; s <= 2; s++) { /* the first reading only learns what runs */
        ASSERT_OK(sim.advance(SEC));
        d = sample_at(src, &sim, &n);
        assert_true(d[0].accounting);
        assert_int_equal(d[0].n_unsampled, 0);
    }
    ASSERT_OK(sim.advance(SEC));
    d = sample_at(src, &sim, &n);
    assert_int_equal(d[0].n_processes, 2);
    assert_int_equal(check_samples(&d[0], 300, 2 * SEC, sim_now(&sim), 50), 0);
    assert_int_equal(d[0].n_unsampled, 1);
    assert_int_equal(d[0].unsampled[0].pid, 300);
    assert_int_equal(d[0].unsampled[0].start_us, JOULESTAT_SIM_EPOCH_US + 2970000);
    assert_true(d[0].unsampled[0].gpu_util > 0 && d[0].unsampled[0].gpu_util <= 50);
    assert_int_equal(d[0].n_finished, 0);

    ASSERT_OK(sim.advance(SEC));
    d = sample_at(src, &sim, &n);
    assert_int_equal(d[0].n_unsampled, 0);
    assert_int_equal(d[0].n_finished, 1);
    assert_int_equal(d[0].finished[0].pid, 300);

    gpu_source_close(src);
    dlclose(sim.dl);
}

/* A pid reused by a short job after an earlier one finished: the buffer lists it twice, and
 * the second job is reported too (with its own start), not taken for the first. */
static const char reused_accounting_scenario[] =
    "scenario name=nvml-reused-accounting duration=10s sample-period=167ms\n"
    "gpu 0 uuid=GPU-sim-0 name=\"Sim GPU zero\" idle=60W max=700W accounting=on\n"
    "process 100 gpu=0 name=train sm=40 coef=300W memory=2GiB\n"
    "process 300 gpu=0 name=first sm=50 coef=100W start=2200ms stop=2400ms\n"
    "process 300 gpu=0 name=second sm=50 coef=100W start=4200ms stop=4400ms\n";

static void test_reused_pid_reported_again(void **state) {
    struct sim sim;
    struct gpu_source *src = NULL;
    const struct gpu_device_reading *d;
    const char *reason = NULL;
    size_t n = 0, reported = 0;
    uint64_t starts[2] = {0};

    (void)state;
    sim_open(&sim, reused_accounting_scenario);
    struct gpu_source_options opts = {.library_path = sim.path};
    ASSERT_OK(gpu_source_open(&opts, &src, &reason));
    for (int s = 1; s <= 6; s++) {
        ASSERT_OK(sim.advance(SEC));
        d = sample_at(src, &sim, &n);
        for (size_t i = 0; i < d[0].n_finished; i++) {
            assert_int_equal(d[0].finished[i].pid, 300);
            assert_true(reported < 2);
            starts[reported++] = d[0].finished[i].start_us;
        }
    }
    assert_int_equal(reported, 2);
    assert_int_equal(starts[0], JOULESTAT_SIM_EPOCH_US + 2200000);
    assert_int_equal(starts[1], JOULESTAT_SIM_EPOCH_US + 4200000);
    gpu_source_close(src);
    dlclose(sim.dl);
}

/* A GPU lost from 3 s to 5 s: its handle is closed and reopened, and the first reading
 * after it only learns again what runs and what finished (a reset GPU's buffer is not the
 * one read before). Job 300 ran only while the GPU was lost: not reported. Job 600 starts
 * and ends after that first reading: reported; job 500, not sampled yet at 8 s: credited
 * its activity so far. */
static const char lost_accounting_scenario[] =
    "scenario name=nvml-lost-accounting duration=12s sample-period=167ms\n"
    "gpu 0 uuid=GPU-sim-0 name=\"Sim GPU zero\" idle=60W max=700W accounting=on\n"
    "process 100 gpu=0 name=train sm=40 coef=300W memory=2GiB\n"
    "process 300 gpu=0 name=job sm=50 coef=100W start=3200ms stop=3600ms\n"
    "process 500 gpu=0 name=late sm=50 coef=100W start=7970ms\n"
    "process 600 gpu=0 name=quick sm=50 coef=100W start=7100ms stop=7500ms\n"
    "fault gpu-lost gpu=0 at=3s until=5s\n";

static void test_lost_gpu_primes_again(void **state) {
    static const uint64_t at_ms[] = {1000, 2000, 3500, 4600, 7000, 8000, 9000};
    struct sim sim;
    struct gpu_source *src = NULL;
    const struct gpu_device_reading *d = NULL;
    const char *reason = NULL;
    uint64_t t_ms = 0;
    size_t n = 0;

    (void)state;
    sim_open(&sim, lost_accounting_scenario);
    struct gpu_source_options opts = {.library_path = sim.path};
    ASSERT_OK(gpu_source_open(&opts, &src, &reason));
    for (size_t k = 0; k < ARRAY_SIZE(at_ms); k++) {
        ASSERT_OK(sim.advance((at_ms[k] - t_ms) * (SEC / 1000)));
        t_ms = at_ms[k];
        d = sample_at(src, &sim, &n);
        switch (t_ms) {
        case 3500: /* lost; 4 600: still lost, retried after its backoff */
        case 4600:
            assert_false(d[0].up);
            break;
        case 7000: /* back: relearning */
            assert_true(d[0].up && d[0].accounting);
            assert_int_equal(d[0].n_finished, 0);
            assert_int_equal(d[0].n_unsampled, 0);
            break;
        case 8000:
            assert_true(d[0].up);
            assert_int_equal(d[0].n_finished, 1);
            assert_int_equal(d[0].finished[0].pid, 600);
            assert_int_equal(d[0].n_unsampled, 1);
            assert_int_equal(d[0].unsampled[0].pid, 500);
            break;
        default:
            assert_true(d[0].up);
            assert_int_equal(d[0].n_finished, 0);
            assert_int_equal(d[0].n_unsampled, 0);
        }
    }
    gpu_source_close(src);
    dlclose(sim.dl);
}

/* A power read that fails for a while beside a good energy counter: the GPU stays up and
 * its energy is read, only the power gauge is missing; without a counter the GPU fails.
 * A GPU whose handle is refused is said so by its error. */
static const char power_error_scenario[] =
    "scenario name=nvml-power-error duration=10s sample-period=167ms\n"
    "gpu 0 uuid=GPU-sim-0 name=\"NVIDIA H100 80GB HBM3\" idle=60W max=700W\n"
    "gpu 1 uuid=GPU-sim-1 name=\"Tesla P100-PCIE-16GB\" idle=30W max=250W\n"
    "process 100 gpu=0 name=train sm=40 coef=300W memory=2GiB\n"
    "fault power-error gpu=0 at=2s until=4s\n"
    "fault power-error gpu=1 at=2s until=4s\n"
    "fault no-energy-counter gpu=1\n"
    "gpu 2 uuid=GPU-sim-2 name=\"NVIDIA H100 80GB HBM3\" idle=60W max=700W\n"
    "fault no-permission gpu=2\n";

static void test_power_error_keeps_energy(void **state) {
    static const uint64_t at_ms[] = {1000, 3000, 5000};
    struct sim sim;
    struct gpu_source *src = NULL;
    const struct gpu_device_reading *d = NULL;
    const char *reason = NULL;
    uint64_t t_ms = 0, energy_mj = 0;
    size_t n = 0;

    (void)state;
    sim_open(&sim, power_error_scenario);
    struct gpu_source_options opts = {.library_path = sim.path};
    ASSERT_OK(gpu_source_open(&opts, &src, &reason));
    for (size_t k = 0; k < ARRAY_SIZE(at_ms); k++) {
        ASSERT_OK(sim.advance((at_ms[k] - t_ms) * (SEC / 1000)));
        t_ms = at_ms[k];
        d = sample_at(src, &sim, &n);
        assert_int_equal(n, 3);
        assert_true(d[0].up && d[0].energy_valid);
        assert_true(d[0].energy_mj > energy_mj);
        energy_mj = d[0].energy_mj;
        assert_int_equal(d[0].power_valid, t_ms != 3000);
        /* No energy counter: the power is all there is, and its failure fails the GPU. */
        assert_int_equal(d[1].up, t_ms != 3000);
        /* Its handle refused (a device cgroup): down as not ours. */
        assert_false(d[2].up);
        assert_int_equal(d[2].error, -EACCES);
    }
    gpu_source_close(src);
    dlclose(sim.dl);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_error_keeps_energy),
        cmocka_unit_test(test_scenario_from_environment),
        cmocka_unit_test(test_scenario_through_source),
        cmocka_unit_test(test_unsampled_through_source),
        cmocka_unit_test(test_lost_gpu_primes_again),
        cmocka_unit_test(test_reused_pid_reported_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
