/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Shared by the tests/unit/test-sim*.c tests: dlopen()s the simulated NVML library named by
 * $JOULESTAT_SIM_LIBRARY and resolves its NVML and control symbols, as joulestat would.
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "nvml_abi.h"
#include "sim_control.h"
#include "testutil.h"

#define SIM_SYMBOLS(X)                                                                             \
    X(nvmlInit_v2)                                                                                 \
    X(nvmlInitWithFlags)                                                                           \
    X(nvmlShutdown)                                                                                \
    X(nvmlErrorString)                                                                             \
    X(nvmlSystemGetDriverVersion)                                                                  \
    X(nvmlSystemGetNVMLVersion)                                                                    \
    X(nvmlDeviceGetCount_v2)                                                                       \
    X(nvmlDeviceGetHandleByIndex_v2)                                                               \
    X(nvmlDeviceGetHandleByUUID)                                                                   \
    X(nvmlDeviceGetUUID)                                                                           \
    X(nvmlDeviceGetName)                                                                           \
    X(nvmlDeviceGetIndex)                                                                          \
    X(nvmlDeviceGetMinorNumber)                                                                    \
    X(nvmlDeviceGetPciInfo_v3)                                                                     \
    X(nvmlDeviceGetTotalEnergyConsumption)                                                         \
    X(nvmlDeviceGetPowerUsage)                                                                     \
    X(nvmlDeviceGetMemoryInfo)                                                                     \
    X(nvmlDeviceGetMemoryInfo_v2)                                                                  \
    X(nvmlDeviceGetComputeMode)                                                                    \
    X(nvmlDeviceGetMigMode)                                                                        \
    X(nvmlDeviceGetMaxMigDeviceCount)                                                              \
    X(nvmlDeviceGetMigDeviceHandleByIndex)                                                         \
    X(nvmlDeviceIsMigDeviceHandle)                                                                 \
    X(nvmlDeviceGetGpuInstanceId)                                                                  \
    X(nvmlDeviceGetComputeInstanceId)                                                              \
    X(nvmlDeviceGetAccountingMode)                                                                 \
    X(nvmlDeviceGetAccountingPids)                                                                 \
    X(nvmlDeviceGetAccountingStats)                                                                \
    X(nvmlDeviceGetAccountingBufferSize)                                                           \
    X(nvmlGpmQueryDeviceSupport)                                                                   \
    X(nvmlGpmSampleAlloc)                                                                          \
    X(nvmlGpmSampleFree)                                                                           \
    X(nvmlGpmSampleGet)                                                                            \
    X(nvmlGpmMigSampleGet)                                                                         \
    X(nvmlGpmMetricsGet)                                                                           \
    X(nvmlDeviceGetComputeRunningProcesses_v3)                                                     \
    X(nvmlDeviceGetGraphicsRunningProcesses_v3)                                                    \
    X(nvmlDeviceGetMPSComputeRunningProcesses_v3)                                                  \
    X(nvmlDeviceGetComputeRunningProcesses_v2)                                                     \
    X(nvmlDeviceGetProcessUtilization)                                                             \
    X(nvmlDeviceGetProcessesUtilizationInfo)                                                       \
    X(joulestat_sim_load)                                                                          \
    X(joulestat_sim_load_string)                                                                   \
    X(joulestat_sim_last_error)                                                                    \
    X(joulestat_sim_use_virtual_clock)                                                             \
    X(joulestat_sim_set_time)                                                                      \
    X(joulestat_sim_advance)                                                                       \
    X(joulestat_sim_get_time)                                                                      \
    X(joulestat_sim_get_span)                                                                      \
    X(joulestat_sim_set_procfs)                                                                    \
    X(joulestat_sim_gpu_truth)                                                                     \
    X(joulestat_sim_process_truth)                                                                 \
    X(joulestat_sim_process_count)                                                                 \
    X(joulestat_sim_process_info)

struct sim_lib {
    void *dl;
#define SIM_FIELD(sym) sym##_fn *sym;
    SIM_SYMBOLS(SIM_FIELD)
#undef SIM_FIELD
};

static struct sim_lib sim;

/* cmocka group setup: load the library once for the whole file. */
static inline int sim_lib_open(void **state) {
    (void)state;
    const char *path = getenv("JOULESTAT_SIM_LIBRARY");
    if (!path) {
        fprintf(stderr, "JOULESTAT_SIM_LIBRARY is not set\n");
        return -1;
    }
    sim.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!sim.dl) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return -1;
    }
#define SIM_RESOLVE(sym)                                                                           \
    sim.sym = (sym##_fn *)dlsym(sim.dl, #sym);                                                     \
    if (!sim.sym) {                                                                                \
        fprintf(stderr, "missing symbol %s\n", #sym);                                              \
        return -1;                                                                                 \
    }
    SIM_SYMBOLS(SIM_RESOLVE)
#undef SIM_RESOLVE
    return 0;
}

static inline int sim_lib_close(void **state) {
    (void)state;
    if (sim.dl)
        dlclose(sim.dl);
    sim.dl = NULL;
    return 0;
}

/* Loads scenario text on the virtual clock (t = 0 at JOULESTAT_SIM_EPOCH_US), inits NVML. */
static inline void sim_start(const char *text) {
    char err[512];
    ASSERT_OK(sim.joulestat_sim_use_virtual_clock());
    int r = sim.joulestat_sim_load_string(text, "test.scn");
    if (r < 0) {
        sim.joulestat_sim_last_error(err, sizeof err);
        fail_msg("scenario did not load: %s", err);
    }
    assert_int_equal(sim.nvmlInit_v2(), NVML_SUCCESS);
}

/* Balances sim_start()'s init. */
static inline void sim_stop(void) {
    assert_int_equal(sim.nvmlShutdown(), NVML_SUCCESS);
}

/* Sets the virtual clock to scenario time t (µs after t = 0). */
static inline void sim_at(uint64_t t_us) {
    ASSERT_OK(sim.joulestat_sim_set_time(JOULESTAT_SIM_EPOCH_US + t_us));
}

static inline nvmlDevice_t sim_gpu(unsigned index) {
    nvmlDevice_t d = NULL;
    assert_int_equal(sim.nvmlDeviceGetHandleByIndex_v2(index, &d), NVML_SUCCESS);
    return d;
}

static inline unsigned long long sim_energy_mj(nvmlDevice_t d) {
    unsigned long long e = 0;
    assert_int_equal(sim.nvmlDeviceGetTotalEnergyConsumption(d, &e), NVML_SUCCESS);
    return e;
}
