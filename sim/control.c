/* SPDX-License-Identifier: MIT */
/* The joulestat_sim_* control API (sim_control.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"
#include "sim_control.h"

#define TICK_US (1000000u / SIM_CLK_TCK)

#define CHECK_CONTROL(sym)                                                                         \
    _Static_assert(__builtin_types_compatible_p(__typeof__(sym), sym##_fn), #sym)

static int install_parsed(struct sim_state *st, int r, struct sim_scenario *sc) {
    if (r < 0)
        return r;
    st->error[0] = '\0';
    return sim_install(st, sc);
}

int joulestat_sim_load(const char *path) {
    struct sim_scenario *sc = NULL;
    SIM_LOCKED;
    if (!path)
        return -EINVAL;
    int r = sim_scenario_load(path, &sc, st->error, sizeof st->error);
    return install_parsed(st, r, sc);
}
CHECK_CONTROL(joulestat_sim_load);

int joulestat_sim_load_string(const char *text, const char *origin) {
    struct sim_scenario *sc = NULL;
    SIM_LOCKED;
    if (!text)
        return -EINVAL;
    int r = sim_scenario_parse(text, origin, &sc, st->error, sizeof st->error);
    return install_parsed(st, r, sc);
}
CHECK_CONTROL(joulestat_sim_load_string);

int joulestat_sim_last_error(char *buf, size_t size) {
    SIM_LOCKED;
    if (!buf || size == 0)
        return -EINVAL;
    (void)snprintf(buf, size, "%s", st->error);
    return 0;
}
CHECK_CONTROL(joulestat_sim_last_error);

int joulestat_sim_use_virtual_clock(void) {
    SIM_LOCKED;
    return sim_use_virtual_clock(st);
}
CHECK_CONTROL(joulestat_sim_use_virtual_clock);

int joulestat_sim_set_time(uint64_t now_us) {
    SIM_LOCKED;
    if (!st->virtual_clock)
        return -EPERM;
    if (now_us < st->virtual_now_us)
        return -EINVAL;
    st->virtual_now_us = now_us;
    if (st->sc)
        sim_sync_all(st);
    return 0;
}
CHECK_CONTROL(joulestat_sim_set_time);

int joulestat_sim_advance(uint64_t delta_us) {
    SIM_LOCKED;
    if (!st->virtual_clock)
        return -EPERM;
    if (delta_us > UINT64_MAX - st->virtual_now_us)
        return -ERANGE;
    st->virtual_now_us += delta_us;
    if (st->sc)
        sim_sync_all(st);
    return 0;
}
CHECK_CONTROL(joulestat_sim_advance);

int joulestat_sim_get_time(uint64_t *ret_now_us) {
    SIM_LOCKED;
    if (!ret_now_us)
        return -EINVAL;
    if (st->virtual_clock) {
        *ret_now_us = st->virtual_now_us;
        return 0;
    }
    if (!st->started)
        return -ENODATA;
    *ret_now_us = st->t0_us + sim_now(st);
    return 0;
}
CHECK_CONTROL(joulestat_sim_get_time);

int joulestat_sim_get_span(uint64_t *ret_start_us, uint64_t *ret_duration_us) {
    SIM_LOCKED;
    if (!ret_start_us || !ret_duration_us)
        return -EINVAL;
    if (!st->sc)
        return -ENOENT;
    if (!st->started)
        return -ENODATA;
    *ret_start_us = st->t0_us;
    *ret_duration_us = st->sc->duration_us;
    return 0;
}
CHECK_CONTROL(joulestat_sim_get_span);

int joulestat_sim_set_procfs(const char *dir) {
    SIM_LOCKED;
    return sim_set_procfs(st, dir);
}
CHECK_CONTROL(joulestat_sim_set_procfs);

/* Ground truth needs a running scenario brought up to now. */
static int truth_ready(struct sim_state *st) {
    if (!st->sc)
        return -ENOENT;
    if (!st->started)
        return -ENODATA;
    sim_sync_all(st);
    return 0;
}

int joulestat_sim_gpu_truth(unsigned gpu, struct joulestat_sim_gpu_truth *ret) {
    SIM_LOCKED;
    if (!ret)
        return -EINVAL;
    int r = truth_ready(st);
    if (r < 0)
        return r;
    if (gpu >= st->sc->n_gpus)
        return -ENOENT;
    const struct sim_gpu_model *g = &st->model->gpus[gpu];
    *ret = (struct joulestat_sim_gpu_truth){
        .time_us = st->t0_us + g->t,
        .idle_uj = g->idle_nj / 1000,
        .active_uj = g->active_nj / 1000,
        .total_uj = sim_model_total_nj(g) / 1000,
        .context_uj = g->context_nj / 1000,
        .drift_uj = g->drift_nj / 1000,
        .idle_nj = g->idle_nj,
        .active_nj = g->active_nj,
        .total_nj = sim_model_total_nj(g),
    };
    return 0;
}
CHECK_CONTROL(joulestat_sim_gpu_truth);

int joulestat_sim_process_truth(unsigned gpu, uint32_t pid, uint64_t start_us,
                                uint64_t *ret_active_uj) {
    SIM_LOCKED;
    if (!ret_active_uj)
        return -EINVAL;
    int r = truth_ready(st);
    if (r < 0)
        return r;
    for (size_t i = 0; i < st->sc->n_procs; i++) {
        const struct sim_process *p = &st->sc->procs[i];
        uint64_t abs = st->t0_us + p->start_us;
        uint64_t diff = abs > start_us ? abs - start_us : start_us - abs;
        if (p->gpu == gpu && p->pid == pid && diff <= TICK_US) {
            *ret_active_uj = st->model->procs[i].active_nj / 1000;
            return 0;
        }
    }
    return -ENOENT;
}
CHECK_CONTROL(joulestat_sim_process_truth);

int joulestat_sim_process_count(size_t *ret_n) {
    SIM_LOCKED;
    if (!ret_n)
        return -EINVAL;
    if (!st->sc)
        return -ENOENT;
    *ret_n = st->sc->n_procs;
    return 0;
}
CHECK_CONTROL(joulestat_sim_process_count);

int joulestat_sim_process_info(size_t index, struct joulestat_sim_process_info *ret) {
    SIM_LOCKED;
    if (!ret)
        return -EINVAL;
    int r = truth_ready(st);
    if (r < 0)
        return r;
    if (index >= st->sc->n_procs)
        return -ENOENT;
    const struct sim_process *p = &st->sc->procs[index];
    struct joulestat_sim_process_info info = {
        .pid = p->pid,
        .gpu = p->gpu,
        .start_us = st->t0_us + p->start_us,
        .stop_us = p->stop_us == SIM_TIME_NEVER ? UINT64_MAX : st->t0_us + p->stop_us,
        .start_ticks = sim_procfs_start_ticks(st->sc, st->t0_us, p),
        .active_uj = st->model->procs[index].active_nj / 1000,
        .context_uj = st->model->procs[index].context_nj / 1000,
        .active_nj = st->model->procs[index].active_nj,
        .sm_us = st->model->procs[index].delivered / 100,
    };
    memcpy(info.comm, p->comm, sizeof info.comm);
    *ret = info;
    return 0;
}
CHECK_CONTROL(joulestat_sim_process_info);
