/* SPDX-License-Identifier: MIT */
#include "sim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "parse_num.h"
#include "sim_control.h"

/* Handles are addresses in these tables; their contents are never read. */
struct nvmlDevice_st {
    unsigned char unused;
};
static struct nvmlDevice_st gpu_handles[SIM_MAX_GPUS];
static struct nvmlDevice_st mig_handles[SIM_MAX_GPUS * SIM_MAX_MIG];

static struct sim_state state = {.lock = PTHREAD_MUTEX_INITIALIZER, .cpu_fd = -1};

#define CPU_FILE_REFRESH_NS 100000000u
#define START_TIME_MAX_AGE_S (7 * 86400u)

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What one reading of the thread CPU clock costs (it is a system call), back to back. */
static uint64_t clock_read_cost_ns(void) {
    uint64_t first = thread_cpu_ns(), last = first;

    for (int i = 0; i < 64; i++)
        last = thread_cpu_ns();
    return (last - first) / 64;
}

/* Called with the lock held: the call that took it starts being measured. */
static void cpu_meter_enter(struct sim_state *st) {
    if (!st->cpu_meter_checked) {
        const char *path = getenv(SIM_ENV_CPU_FILE);
        st->cpu_meter_checked = true;
        if (path && *path) {
            st->cpu_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            st->cpu_read_cost_ns = clock_read_cost_ns();
        }
    }
    if (st->cpu_fd >= 0)
        st->cpu_enter_ns = thread_cpu_ns();
}

/* Called before the lock is released. A fixed-width rewrite at offset 0: a reader never
 * sees a shorter file or a torn number. The meter's own two clock readings per call fall
 * about one reading outside the interval they measure (the entry into the first, the
 * return from the second); that reading's back-to-back cost is added per call, so the
 * caller is not charged for the meter. Cold, a reading costs more: the added part is a
 * lower bound. */
static void cpu_meter_leave(struct sim_state *st) {
    char buf[32];
    uint64_t now;

    if (st->cpu_fd < 0)
        return;
    now = clock_monotonic_ns();
    if (now - st->cpu_written_at_ns >= CPU_FILE_REFRESH_NS) {
        int n = snprintf(buf, sizeof buf, "%20llu\n",
                         (unsigned long long)(st->cpu_total_ns + thread_cpu_ns() -
                                              st->cpu_enter_ns + st->cpu_read_cost_ns));
        (void)!pwrite(st->cpu_fd, buf, (size_t)n, 0);
        st->cpu_written_at_ns = now;
    }
    st->cpu_total_ns += thread_cpu_ns() - st->cpu_enter_ns + st->cpu_read_cost_ns;
}

struct sim_state *sim_lock(void) {
    (void)pthread_mutex_lock(&state.lock);
    cpu_meter_enter(&state);
    return &state;
}

void sim_unlockp(struct sim_state **st) {
    if (!*st)
        return;
    cpu_meter_leave(*st);
    (void)pthread_mutex_unlock(&(*st)->lock);
}

/* The scenario outlives nvmlShutdown (a replay may shut down and init again); it goes when
 * the library is unloaded. */
__attribute__((destructor)) static void sim_unload(void) {
    state.model = sim_model_free(state.model);
    state.sc = sim_scenario_free(state.sc);
    state.procfs = sim_procfs_free(state.procfs);
    if (state.cpu_fd >= 0)
        (void)close(state.cpu_fd);
    state.cpu_fd = -1;
}

static uint64_t realtime_us(void) {
    return clock_realtime_ns() / 1000;
}

/* t = 0 of a scenario on the real clock: now, or JOULESTAT_SIM_START_TIME (Unix seconds)
 * when set, so that a restarted exporter finds the scenario where it was. */
static uint64_t real_origin_us(void) {
    const char *v = secure_getenv(SIM_ENV_START_TIME);
    uint64_t seconds, now = realtime_us();

    if (!v || !*v)
        return now;
    /* The model runs from t = 0 to now at the first call: a week back at most (seconds
     * of work), and not ahead of now. */
    if (safe_atou64(v, &seconds) >= 0 && seconds <= now / 1000000 &&
        now / 1000000 - seconds <= START_TIME_MAX_AGE_S)
        return seconds * 1000000;
    fprintf(stderr,
            "joulestat-sim: %s=%s is not Unix seconds within the last week and not ahead; "
            "t = 0 is now\n",
            SIM_ENV_START_TIME, v);
    return now;
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
        st->t0_us = real_origin_us();
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
    st->t0_us = real_origin_us();
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
