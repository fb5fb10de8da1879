/* SPDX-License-Identifier: MIT */
#include "sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "sim_control.h"

/* Handles are addresses in these tables; their contents are never read. */
struct nvmlDevice_st {
    unsigned char unused;
};
static struct nvmlDevice_st gpu_handles[SIM_MAX_GPUS];
static struct nvmlDevice_st mig_handles[SIM_MAX_GPUS * SIM_MAX_MIG];

static struct sim_state state = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct sim_state *sim_lock(void) {
    (void)pthread_mutex_lock(&state.lock);
    return &state;
}

void sim_unlockp(struct sim_state **st) {
    if (*st)
        (void)pthread_mutex_unlock(&(*st)->lock);
}

/* The scenario outlives nvmlShutdown (a replay may shut down and init again); it goes when
 * the library is unloaded. */
__attribute__((destructor)) static void sim_unload(void) {
    state.model = sim_model_free(state.model);
    state.sc = sim_scenario_free(state.sc);
    state.procfs = sim_procfs_free(state.procfs);
}

static uint64_t realtime_us(void) {
    return clock_realtime_ns() / 1000;
}

/* Puts the procfs tree at t = 0 of the current scenario (when both exist and the clock runs). */
static int procfs_restart(struct sim_state *st) {
    if (!st->procfs || !st->sc || !st->started)
        return 0;
    int r = sim_procfs_reset(st->procfs, st->sc, st->t0_us);
    if (r < 0)
        return r;
    return sim_procfs_sync(st->procfs, st->last_t);
}

/* Starts the scenario over at t = 0 with the current clock mode. */
static int restart(struct sim_state *st) {
    struct sim_model *m = NULL;
    int r = sim_model_new(st->sc, &m);
    if (r < 0)
        return r;
    sim_model_free(st->model);
    st->model = m;
    st->last_t = 0;
    if (st->virtual_clock) {
        st->t0_us = st->virtual_now_us = JOULESTAT_SIM_EPOCH_US;
        st->started = true;
    } else if (st->init_count > 0) {
        st->t0_us = realtime_us();
        st->started = true;
    } else {
        st->started = false; /* t = 0 will be the next nvmlInit */
    }
    return procfs_restart(st);
}

int sim_install(struct sim_state *st, struct sim_scenario *sc) {
    struct sim_scenario *old_sc = st->sc;
    struct sim_model *old_model = st->model;

    st->sc = sc;
    st->model = NULL;
    int r = restart(st);
    if (r < 0 && !st->model) {
        /* keep the previous scenario running */
        st->sc = old_sc;
        st->model = old_model;
        sim_scenario_free(sc);
        return r;
    }
    sim_model_free(old_model);
    sim_scenario_free(old_sc);
    return r;
}

int sim_set_procfs(struct sim_state *st, const char *dir) {
    struct sim_procfs *fs = NULL;
    if (dir) {
        int r = sim_procfs_open(dir, &fs);
        if (r < 0)
            return r;
    }
    sim_procfs_free(st->procfs);
    st->procfs = fs;
    return procfs_restart(st);
}

int sim_load_from_env(struct sim_state *st) {
    struct sim_scenario *sc = NULL;
    if (st->sc)
        return 0;
    const char *path = secure_getenv(SIM_ENV_SCENARIO);
    if (!path || !*path) {
        strcpy(st->error, SIM_ENV_SCENARIO " is not set");
        return -ENOENT;
    }
    int r = sim_scenario_load(path, &sc, st->error, sizeof st->error);
    if (r < 0)
        return r;
    r = sim_install(st, sc);
    if (r < 0)
        return r;
    const char *dir = secure_getenv(SIM_ENV_PROCFS);
    if (dir && *dir && !st->procfs)
        return sim_set_procfs(st, dir);
    return 0;
}

int sim_start_clock(struct sim_state *st) {
    if (st->started || !st->sc)
        return 0;
    st->t0_us = realtime_us();
    st->last_t = 0;
    st->started = true;
    return procfs_restart(st);
}

int sim_use_virtual_clock(struct sim_state *st) {
    st->virtual_clock = true;
    st->virtual_now_us = JOULESTAT_SIM_EPOCH_US;
    if (!st->sc)
        return 0;
    return restart(st);
}

uint64_t sim_now(struct sim_state *st) {
    uint64_t abs = st->virtual_clock ? st->virtual_now_us : realtime_us();
    uint64_t t = abs > st->t0_us ? abs - st->t0_us : 0;
    if (t > st->last_t)
        st->last_t = t;
    return st->last_t;
}

static void sync_procfs(struct sim_state *st, uint64_t t) {
    if (st->procfs)
        (void)sim_procfs_sync(st->procfs, t); /* a failed write shows up as a missing pid */
}

void sim_sync_gpu(struct sim_state *st, unsigned gpu) {
    uint64_t t = sim_now(st);
    sim_model_advance_gpu(st->model, gpu, t);
    sync_procfs(st, t);
}

void sim_sync_all(struct sim_state *st) {
    uint64_t t = sim_now(st);
    sim_model_advance(st->model, t);
    sync_procfs(st, t);
}

nvmlDevice_t sim_gpu_handle(unsigned gpu) {
    return &gpu_handles[gpu];
}

nvmlDevice_t sim_mig_handle(unsigned gpu, unsigned slot) {
    return &mig_handles[gpu * SIM_MAX_MIG + slot];
}

nvmlReturn_t sim_device_any(struct sim_state *st, nvmlDevice_t device, struct sim_dev *ret) {
    uintptr_t p = (uintptr_t)device;
    uintptr_t g0 = (uintptr_t)gpu_handles, m0 = (uintptr_t)mig_handles;
    unsigned gpu;
    int mig = -1;

    if (st->init_count == 0 || !st->sc)
        return NVML_ERROR_UNINITIALIZED;
    if (p >= g0 && p < g0 + sizeof gpu_handles) {
        gpu = (unsigned)(p - g0);
    } else if (p >= m0 && p < m0 + sizeof mig_handles) {
        size_t k = p - m0;
        gpu = (unsigned)(k / SIM_MAX_MIG);
        mig = (int)(k % SIM_MAX_MIG);
    } else {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (gpu >= st->sc->n_gpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    const struct sim_gpu *sg = &st->sc->gpus[gpu];
    if (mig >= 0 && (!sg->mig || (size_t)mig >= sg->n_mig))
        return NVML_ERROR_INVALID_ARGUMENT; /* stale MIG handle */
    sim_sync_gpu(st, gpu);
    *ret = (struct sim_dev){
        .gpu = gpu,
        .mig = mig,
        .sg = sg,
        .g = &st->model->gpus[gpu],
        .t = st->last_t,
    };
    return NVML_SUCCESS;
}

nvmlReturn_t sim_device(struct sim_state *st, nvmlDevice_t device, struct sim_dev *ret) {
    struct sim_dev d;
    nvmlReturn_t rc = sim_device_any(st, device, &d);
    if (rc != NVML_SUCCESS)
        return rc;
    if (sim_gpu_lost_at(d.sg, d.t))
        return NVML_ERROR_GPU_IS_LOST;
    *ret = d;
    return NVML_SUCCESS;
}

nvmlReturn_t sim_copy_out(char *buf, unsigned int length, const char *s) {
    size_t n = strlen(s);
    if (!buf)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (n + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, s, n + 1);
    return NVML_SUCCESS;
}
