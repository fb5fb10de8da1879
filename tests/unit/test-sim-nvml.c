/* SPDX-License-Identifier: MIT */
/* The simulated library behaves like NVML: init, identity, lists, two-call protocols. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "test-sim-common.h"

#define SEC 1000000ull

static const char node_scn[] =
    "scenario name=node duration=60s sample-period=100ms driver=550.54.14\n"
    "gpu 0 uuid=GPU-aaaa-0000 name=\"NVIDIA A100-SXM4-80GB\" idle=60W max=400W "
    "memory=80GiB minor=3 pci-bus=0x17 driver-phase=0\n"
    "gpu 1 uuid=GPU-bbbb-1111 name=\"NVIDIA A100-SXM4-80GB\" idle=60W max=400W "
    "compute-mode=exclusive-process driver-phase=0\n"
    "process 500 gpu=0 name=trainer sm=70 coef=200W memory=10GiB\n"
    "process 501 gpu=0 name=viz sm=10 coef=50W memory=1GiB type=compute+graphics start=1s\n"
    "process 502 gpu=0 name=mps-client sm=10 coef=50W memory=1GiB type=mps start=2s stop=4s\n"
    "process 600 gpu=1 name=solo sm=50 coef=100W\n";

/* No scenario anywhere: like a node without a driver. */
static void test_init_without_scenario(void **state) {
    unsigned int n;
    unsetenv("JOULESTAT_SIM_SCENARIO");
    assert_int_equal(sim.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(sim.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(sim.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
    assert_string_equal(sim.nvmlErrorString(NVML_ERROR_DRIVER_NOT_LOADED), "Driver Not Loaded");
    assert_string_equal(sim.nvmlErrorString((nvmlReturn_t)12345), "Unknown Error");
    uint64_t a, b;
    size_t n_procs;
    struct joulestat_sim_gpu_truth truth;
    char buf[80];
    ASSERT_ERRNO(sim.joulestat_sim_get_span(&a, &b), ENOENT);
    ASSERT_ERRNO(sim.joulestat_sim_process_count(&n_procs), ENOENT);
    ASSERT_ERRNO(sim.joulestat_sim_gpu_truth(0, &truth), ENOENT);
    assert_int_equal(sim.nvmlSystemGetDriverVersion(buf, sizeof buf), NVML_ERROR_UNINITIALIZED);
}

/* Default clock: t = 0 at nvmlInit, timestamps in host real time. */
static void test_real_clock_from_env(void **state) {
    char dir[256], path[512];
    ASSERT_OK(test_mkdtemp(dir, sizeof dir));
    ASSERT_OK(test_write_file(dir, "node.scn", node_scn));
    (void)snprintf(path, sizeof path, "%s/node.scn", dir);
    setenv("JOULESTAT_SIM_SCENARIO", path, 1);

    uint64_t before = (uint64_t)time(NULL) * SEC, start = 0, dur = 0, now = 0;
    struct joulestat_sim_gpu_truth truth;
    /* loaded but not started: t = 0 is the coming nvmlInit */
    ASSERT_OK(sim.joulestat_sim_load(path));
    ASSERT_ERRNO(sim.joulestat_sim_get_span(&start, &dur), ENODATA);
    ASSERT_ERRNO(sim.joulestat_sim_get_time(&now), ENODATA);
    ASSERT_ERRNO(sim.joulestat_sim_gpu_truth(0, &truth), ENODATA);
    assert_int_equal(sim.nvmlInit_v2(), NVML_SUCCESS);
    ASSERT_OK(sim.joulestat_sim_get_span(&start, &dur));
    assert_true(start >= before && start < before + 5 * SEC);
    assert_int_equal(dur, 60 * SEC);
    ASSERT_ERRNO(sim.joulestat_sim_set_time(start + SEC), EPERM);

    nvmlDevice_t d = sim_gpu(0);
    unsigned long long e0 = sim_energy_mj(d);
    usleep(350000);
    unsigned long long e1 = sim_energy_mj(d);
    /* 200 W for at least 350 ms, seen in the A100 counter's 100 ms steps: at least 250 ms
     * between the step e0 shows and the one e1 shows */
    assert_true(e1 - e0 >= 50000);
    nvmlProcessUtilizationSample_t s[100];
    unsigned int n = 100;
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0), NVML_SUCCESS);
    ASSERT_OK(sim.joulestat_sim_get_time(&now));
    assert_true(n >= 2);
    assert_int_equal(s[0].pid, 500);
    assert_int_equal(s[0].smUtil, 70);
    assert_int_equal(s[0].timeStamp, start + 100000);
    assert_true(s[n - 1].timeStamp <= now);
    sim_stop();
    unsetenv("JOULESTAT_SIM_SCENARIO");
    test_rm_rf(dir);
}

static void test_init_is_reference_counted(void **state) {
    unsigned int n = 0;
    sim_start(node_scn);
    assert_int_equal(sim.nvmlInitWithFlags(NVML_INIT_FLAG_NO_GPUS), NVML_SUCCESS);
    assert_int_equal(sim.nvmlInitWithFlags(0x80), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sim.nvmlShutdown(), NVML_SUCCESS);
    assert_int_equal(sim.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(sim.nvmlShutdown(), NVML_SUCCESS);
    assert_int_equal(sim.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
    /* "No error is reported if nvmlShutdown() is called more times than nvmlInit()" */
    assert_int_equal(sim.nvmlShutdown(), NVML_SUCCESS);
}

static void test_identity(void **state) {
    char buf[96];
    unsigned int v = 0, cur = 9, pend = 9;
    nvmlDevice_t d = NULL, by_uuid = NULL;
    nvmlComputeMode_t mode = 9;
    nvmlPciInfo_t pci;
    sim_start(node_scn);

    assert_int_equal(sim.nvmlDeviceGetHandleByIndex_v2(2, &d), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sim.nvmlDeviceGetHandleByIndex_v2(0, NULL), NVML_ERROR_INVALID_ARGUMENT);
    d = sim_gpu(1);
    assert_int_equal(sim.nvmlDeviceGetUUID(d, buf, sizeof buf), NVML_SUCCESS);
    assert_string_equal(buf, "GPU-bbbb-1111");
    assert_int_equal(sim.nvmlDeviceGetUUID(d, buf, 13), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(sim.nvmlDeviceGetUUID(d, buf, 14), NVML_SUCCESS);
    assert_int_equal(sim.nvmlDeviceGetHandleByUUID("GPU-bbbb-1111", &by_uuid), NVML_SUCCESS);
    assert_ptr_equal(by_uuid, d);
    assert_int_equal(sim.nvmlDeviceGetHandleByUUID("GPU-nope", &by_uuid), NVML_ERROR_NOT_FOUND);
    assert_int_equal(sim.nvmlDeviceGetIndex(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 1);
    assert_int_equal(sim.nvmlDeviceGetComputeMode(d, &mode), NVML_SUCCESS);
    assert_int_equal(mode, NVML_COMPUTEMODE_EXCLUSIVE_PROCESS);

    d = sim_gpu(0);
    assert_int_equal(sim.nvmlDeviceGetName(d, buf, sizeof buf), NVML_SUCCESS);
    assert_string_equal(buf, "NVIDIA A100-SXM4-80GB");
    assert_int_equal(sim.nvmlDeviceGetMinorNumber(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 3);
    assert_int_equal(sim.nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
    assert_string_equal(pci.busId, "00000000:17:00.0");
    assert_int_equal(sim.nvmlDeviceGetMigMode(d, &cur, &pend), NVML_SUCCESS);
    assert_int_equal(cur, NVML_DEVICE_MIG_DISABLE);
    assert_int_equal(sim.nvmlSystemGetDriverVersion(buf, sizeof buf), NVML_SUCCESS);
    assert_string_equal(buf, "550.54.14");
    assert_int_equal(sim.nvmlSystemGetNVMLVersion(buf, sizeof buf), NVML_SUCCESS);
    assert_string_equal(buf, "12.550.54.14");

    /* a pointer that is no handle of ours */
    assert_int_equal(sim.nvmlDeviceGetIndex((nvmlDevice_t)buf, &v), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sim.nvmlDeviceGetPowerUsage(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    sim_stop();
}

static void test_process_lists(void **state) {
    nvmlProcessInfo_t p[4];
    unsigned int n;
    nvmlMemory_t mem;
    nvmlMemory_v2_t mem2 = {.version = nvmlMemory_v2};
    sim_start(node_scn);
    nvmlDevice_t d = sim_gpu(0);

    sim_at(2500000); /* 500, 501 and 502 run */
    n = 0;
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 2);
    n = 1;
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 2);
    n = 4;
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL),
                     NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].pid, 500);
    assert_int_equal(p[0].usedGpuMemory, 10ull << 30);
    assert_int_equal(p[0].gpuInstanceId, 0xFFFFFFFFu);
    assert_int_equal(p[1].pid, 501);
    n = 4;
    assert_int_equal(sim.nvmlDeviceGetGraphicsRunningProcesses_v3(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].pid, 501);
    n = 4;
    assert_int_equal(sim.nvmlDeviceGetMPSComputeRunningProcesses_v3(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].pid, 502);
    assert_int_equal(sim.nvmlDeviceGetMemoryInfo(d, &mem), NVML_SUCCESS);
    assert_int_equal(mem.used, 12ull << 30);
    assert_int_equal(mem.total, 80ull << 30);
    assert_int_equal(mem.free, 68ull << 30);
    assert_int_equal(sim.nvmlDeviceGetMemoryInfo_v2(d, &mem2), NVML_SUCCESS);
    assert_int_equal(mem2.used, 12ull << 30);
    mem2.version = 2;
    assert_int_equal(sim.nvmlDeviceGetMemoryInfo_v2(d, &mem2),
                     NVML_ERROR_ARGUMENT_VERSION_MISMATCH);

    sim_at(4 * SEC); /* 502 has exited */
    n = 0;
    assert_int_equal(sim.nvmlDeviceGetMPSComputeRunningProcesses_v3(d, &n, NULL), NVML_SUCCESS);
    assert_int_equal(n, 0);
    sim_stop();
}

/* Legacy call: the size query answers 7 with a fixed capacity; NOT_FOUND when no new sample. */
static void test_utilization_count_query(void **state) {
    nvmlProcessUtilizationSample_t s[100];
    unsigned int n = 0;
    sim_start(node_scn);
    nvmlDevice_t d = sim_gpu(1);

    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, NULL, &n, 0),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 100); /* even with no sample at all yet */
    n = 100;
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0), NVML_ERROR_NOT_FOUND);
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, NULL, 0),
                     NVML_ERROR_INVALID_ARGUMENT);

    sim_at(SEC); /* 10 samples of pid 600 */
    n = 0;
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, NULL, &n, 0),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 100);
    n = 4;
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 10);
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0), NVML_SUCCESS);
    assert_int_equal(n, 10);
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(s[i].pid, 600);
        assert_int_equal(s[i].smUtil, 50);
        assert_int_equal(s[i].timeStamp, JOULESTAT_SIM_EPOCH_US + (i + 1) * 100000ull);
    }
    /* only what is newer than lastSeen */
    n = 100;
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, s[7].timeStamp), NVML_SUCCESS);
    assert_int_equal(n, 2);
    n = 100;
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, s[1].timeStamp),
                     NVML_ERROR_NOT_FOUND);
    sim_stop();
}

/* New call: versioned struct, exact count on INSUFFICIENT_SIZE, NOT_FOUND. */
static void test_utilization_info(void **state) {
    nvmlProcessUtilizationInfo_v1_t a[16];
    nvmlProcessesUtilizationInfo_t info = {.version = nvmlProcessesUtilizationInfo_v1};
    sim_start(node_scn);
    nvmlDevice_t d = sim_gpu(1);

    assert_int_equal(sim.nvmlDeviceGetProcessesUtilizationInfo(d, NULL),
                     NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sim.nvmlDeviceGetProcessesUtilizationInfo(d, &info), NVML_ERROR_NOT_FOUND);
    sim_at(500000);
    info.version = 0x01000010;
    assert_int_equal(sim.nvmlDeviceGetProcessesUtilizationInfo(d, &info),
                     NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    info.version = nvmlProcessesUtilizationInfo_v1;
    assert_int_equal(sim.nvmlDeviceGetProcessesUtilizationInfo(d, &info),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(info.processSamplesCount, 5);
    info.procUtilArray = a;
    info.processSamplesCount = 16;
    info.lastSeenTimeStamp = JOULESTAT_SIM_EPOCH_US + 200000;
    assert_int_equal(sim.nvmlDeviceGetProcessesUtilizationInfo(d, &info), NVML_SUCCESS);
    assert_int_equal(info.processSamplesCount, 3);
    assert_int_equal(a[0].timeStamp, JOULESTAT_SIM_EPOCH_US + 300000);
    assert_int_equal(a[0].pid, 600);
    assert_int_equal(a[0].smUtil, 50);
    assert_int_equal(a[0].memUtil, 20);
    sim_stop();
}

static const char mig_scn[] =
    "scenario name=mig duration=10s\n"
    "gpu 0 uuid=GPU-m0 name=\"NVIDIA A100-SXM4-40GB\" idle=50W max=400W mig=on\n"
    "mig gpu=0 gi=1 ci=0 uuid=MIG-aaaa name=\"NVIDIA A100-SXM4-40GB MIG 3g.20gb\"\n"
    "mig gpu=0 gi=2 ci=0 uuid=MIG-bbbb\n"
    "process 71 gpu=0 name=a sm=50 coef=100W gi=1 ci=0 memory=1GiB\n"
    "process 72 gpu=0 name=b sm=50 coef=100W gi=2 ci=0 memory=2GiB\n";

static void test_mig(void **state) {
    nvmlProcessUtilizationSample_t s[4];
    nvmlProcessesUtilizationInfo_t info = {.version = nvmlProcessesUtilizationInfo_v1};
    nvmlProcessInfo_t p[4];
    unsigned int n = 4, v = 0, cur = 0, pend = 0;
    unsigned long long e;
    nvmlDevice_t mig = NULL, m2 = NULL;
    char buf[96];
    sim_start(mig_scn);
    nvmlDevice_t d = sim_gpu(0);
    sim_at(SEC);

    assert_int_equal(sim.nvmlDeviceGetMigMode(d, &cur, &pend), NVML_SUCCESS);
    assert_int_equal(cur, NVML_DEVICE_MIG_ENABLE);
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(sim.nvmlDeviceGetProcessesUtilizationInfo(d, &info), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(sim.nvmlDeviceGetMaxMigDeviceCount(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 7);
    assert_int_equal(sim.nvmlDeviceGetMigDeviceHandleByIndex(d, 2, &mig), NVML_ERROR_NOT_FOUND);
    assert_int_equal(sim.nvmlDeviceGetMigDeviceHandleByIndex(d, 1, &mig), NVML_SUCCESS);
    assert_int_equal(sim.nvmlDeviceIsMigDeviceHandle(mig, &v), NVML_SUCCESS);
    assert_int_equal(v, 1);
    assert_int_equal(sim.nvmlDeviceGetGpuInstanceId(mig, &v), NVML_SUCCESS);
    assert_int_equal(v, 2);
    assert_int_equal(sim.nvmlDeviceGetUUID(mig, buf, sizeof buf), NVML_SUCCESS);
    assert_string_equal(buf, "MIG-bbbb");
    assert_int_equal(sim.nvmlDeviceGetHandleByUUID("MIG-bbbb", &m2), NVML_SUCCESS);
    assert_ptr_equal(m2, mig);
    assert_int_equal(sim.nvmlDeviceGetTotalEnergyConsumption(mig, &e), NVML_ERROR_NOT_SUPPORTED);
    n = 4;
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(mig, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].pid, 72);
    assert_int_equal(p[0].gpuInstanceId, 2);
    assert_int_equal(p[0].computeInstanceId, 0);
    n = 4;
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(sim.nvmlDeviceGetGpuInstanceId(d, &v), NVML_ERROR_NOT_SUPPORTED);
    sim_stop();
}

/* Drivers 535.43-535.86 wrote 32-byte entries from the _v3 lists; _v2 stayed 24 bytes. */
static void test_driver_535_wide_entries(void **state) {
    nvmlProcessDetail_v1_t wide[2];
    nvmlProcessInfo_t narrow[2];
    unsigned int n = 2;
    sim_start("scenario duration=10s driver=535.54.03\n"
              "gpu 0 uuid=GPU-w0 name=T idle=50W max=400W\n"
              "process 81 gpu=0 name=a sm=10 coef=10W memory=1GiB\n"
              "process 82 gpu=0 name=b sm=10 coef=10W memory=2GiB\n");
    nvmlDevice_t d = sim_gpu(0);
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, (nvmlProcessInfo_t *)wide),
                     NVML_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(wide[1].pid, 82);
    assert_int_equal(wide[1].usedGpuMemory, 2ull << 30);
    n = 2;
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v2(d, &n, narrow), NVML_SUCCESS);
    assert_int_equal(narrow[1].pid, 82);
    sim_stop();
}

static void test_control_errors(void **state) {
    struct joulestat_sim_gpu_truth truth;
    struct joulestat_sim_process_info info;
    uint64_t v = 0;
    sim_start(node_scn);
    sim_at(SEC);
    ASSERT_ERRNO(sim.joulestat_sim_set_time(JOULESTAT_SIM_EPOCH_US), EINVAL);
    ASSERT_ERRNO(sim.joulestat_sim_advance(UINT64_MAX), ERANGE);
    ASSERT_OK(sim.joulestat_sim_get_time(&v));
    assert_int_equal(v, JOULESTAT_SIM_EPOCH_US + SEC);
    ASSERT_ERRNO(sim.joulestat_sim_get_time(NULL), EINVAL);
    ASSERT_ERRNO(sim.joulestat_sim_get_span(NULL, &v), EINVAL);
    ASSERT_ERRNO(sim.joulestat_sim_gpu_truth(2, &truth), ENOENT);
    ASSERT_ERRNO(sim.joulestat_sim_gpu_truth(0, NULL), EINVAL);
    ASSERT_ERRNO(sim.joulestat_sim_process_info(4, &info), ENOENT);
    ASSERT_ERRNO(sim.joulestat_sim_process_info(0, NULL), EINVAL);
    ASSERT_ERRNO(sim.joulestat_sim_process_truth(0, 600, JOULESTAT_SIM_EPOCH_US, &v), ENOENT);
    ASSERT_ERRNO(sim.joulestat_sim_process_truth(0, 500, JOULESTAT_SIM_EPOCH_US + 10001, &v),
                 ENOENT);
    ASSERT_OK(sim.joulestat_sim_process_truth(0, 500, JOULESTAT_SIM_EPOCH_US + 10000, &v));
    ASSERT_ERRNO(sim.joulestat_sim_process_truth(0, 500, 0, NULL), EINVAL);
    ASSERT_ERRNO(sim.joulestat_sim_process_count(NULL), EINVAL);
    ASSERT_ERRNO(sim.joulestat_sim_load_string(NULL, "x"), EINVAL);

    /* NVML argument errors on a GPU without MIG */
    nvmlDevice_t d = sim_gpu(0), m = NULL;
    unsigned int n = 9;
    assert_int_equal(sim.nvmlDeviceGetHandleByUUID(NULL, &m), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sim.nvmlDeviceGetMaxMigDeviceCount(d, &n), NVML_SUCCESS);
    assert_int_equal(n, 0);
    assert_int_equal(sim.nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &m), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(sim.nvmlDeviceGetMigDeviceHandleByIndex(d, 7, &m),
                     NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sim.nvmlDeviceGetComputeRunningProcesses_v3(d, NULL, NULL),
                     NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(sim.nvmlDeviceGetUUID(d, NULL, 96), NVML_ERROR_INVALID_ARGUMENT);
    sim_stop();
}

/* Readers on two threads while a third moves the clock: every reader sees its counter
 * only grow, and the final value is the same as a fresh single-threaded read. */
static void *reader(void *arg) {
    nvmlDevice_t d = arg;
    unsigned long long last = 0;
    for (int i = 0; i < 3000; i++) {
        unsigned long long e = 0;
        unsigned int n = 0, mw = 0;
        if (sim.nvmlDeviceGetTotalEnergyConsumption(d, &e) != NVML_SUCCESS || e < last)
            return (void *)1;
        last = e;
        if (sim.nvmlDeviceGetPowerUsage(d, &mw) != NVML_SUCCESS)
            return (void *)1;
        (void)sim.nvmlDeviceGetProcessUtilization(d, NULL, &n, 0);
    }
    return NULL;
}

static void test_threads(void **state) {
    pthread_t a, b;
    void *ra, *rb;
    sim_start(node_scn);
    nvmlDevice_t d = sim_gpu(0);
    assert_int_equal(pthread_create(&a, NULL, reader, d), 0);
    assert_int_equal(pthread_create(&b, NULL, reader, d), 0);
    for (int i = 0; i < 1000; i++)
        ASSERT_OK(sim.joulestat_sim_advance(1000));
    assert_int_equal(pthread_join(a, &ra), 0);
    assert_int_equal(pthread_join(b, &rb), 0);
    assert_null(ra);
    assert_null(rb);
    /* 1 s at 60 + 200 * 0.7 = 200 W; 501 starts exactly at 1 s */
    assert_int_equal(sim_energy_mj(d), 200000);
    sim_stop();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        /* these two first: the virtual clock, once chosen, stays */
        cmocka_unit_test(test_init_without_scenario),
        cmocka_unit_test(test_real_clock_from_env),
        cmocka_unit_test(test_init_is_reference_counted),
        cmocka_unit_test(test_identity),
        cmocka_unit_test(test_process_lists),
        cmocka_unit_test(test_utilization_count_query),
        cmocka_unit_test(test_utilization_info),
        cmocka_unit_test(test_mig),
        cmocka_unit_test(test_driver_535_wide_entries),
        cmocka_unit_test(test_control_errors),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}
