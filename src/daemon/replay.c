/* SPDX-License-Identifier: MIT */
#include "replay.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "exposition.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "sampler.h"
#include "sim_control.h"
#include "strbuf.h"
#include "window_trace.h"

/* The simulator's control functions, resolved from the library loaded as NVML. */
struct sim_api {
    void *handle;
    joulestat_sim_load_fn *load;
    joulestat_sim_last_error_fn *last_error;
    joulestat_sim_use_virtual_clock_fn *use_virtual_clock;
    joulestat_sim_set_time_fn *set_time;
    joulestat_sim_get_span_fn *get_span;
    joulestat_sim_set_procfs_fn *set_procfs;
    joulestat_sim_gpu_truth_fn *gpu_truth;
    joulestat_sim_process_count_fn *process_count;
    joulestat_sim_process_info_fn *process_info;
};

#ifndef JOULESTAT_SIM_LIBRARY
#define JOULESTAT_SIM_LIBRARY "/usr/local/lib/joulestat/libnvidia-ml.so.1"
#endif

/* The simulator built beside this executable (<dir of joulestat>/sim/libnvidia-ml.so.1),
 * else the installed one (make install INSTALL_SIM=ON). */
static int default_sim_path(char *buf, size_t size) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (n < 0)
        return -errno;
    exe[n] = '\0';
    if ((size_t)snprintf(buf, size, "%s/sim/libnvidia-ml.so.1", dirname(exe)) >= size)
        return -ENAMETOOLONG;
    if (access(buf, F_OK) < 0 && (size_t)snprintf(buf, size, "%s", JOULESTAT_SIM_LIBRARY) >= size)
        return -ENAMETOOLONG;
    return 0;
}

static int sim_api_open(const char *path, struct sim_api *ret) {
    struct sim_api api = {0};

    api.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!api.handle)
        return log_error_errno(-ENOENT, "replay: cannot load the simulated GPU node '%s': %s", path,
                               dlerror());
#define RESOLVE(field, name)                                                                       \
    do {                                                                                           \
        api.field = (typeof(api.field))dlsym(api.handle, name);                                    \
        if (!api.field) {                                                                          \
            (void)dlclose(api.handle);                                                             \
            return log_error_errno(-ENOSYS, "replay: '%s' is not the simulated GPU node (no %s)",  \
                                   path, name);                                                    \
        }                                                                                          \
    } while (0)
    RESOLVE(load, "joulestat_sim_load");
    RESOLVE(last_error, "joulestat_sim_last_error");
    RESOLVE(use_virtual_clock, "joulestat_sim_use_virtual_clock");
    RESOLVE(set_time, "joulestat_sim_set_time");
    RESOLVE(get_span, "joulestat_sim_get_span");
    RESOLVE(set_procfs, "joulestat_sim_set_procfs");
    RESOLVE(gpu_truth, "joulestat_sim_gpu_truth");
    RESOLVE(process_count, "joulestat_sim_process_count");
    RESOLVE(process_info, "joulestat_sim_process_info");
#undef RESOLVE
    *ret = api;
    return 0;
}

/* Attributed energy of one process in the snapshot, matched by gpu, pid and start time; a
 * series whose start time was never read (the process was gone before its /proc entry was)
 * matches when the pid was used by only one process on that gpu. */
static const struct snap_gpu_process *find_process(const struct snapshot *snap,
                                                   const struct joulestat_sim_process_info *info,
                                                   bool pid_unique) {
    const struct snap_gpu_process *unknown_start = NULL;
    double start_seconds = (double)info->start_us / 1e6;

    for (size_t i = 0; i < snap->n_gpu_processes; i++) {
        const struct snap_gpu_process *p = &snap->gpu_processes[i];
        double d = p->start_time_seconds - start_seconds;

        if (p->gpu != info->gpu || p->pid != info->pid)
            continue;
        if (d < 0.02 && d > -0.02)
            return p;
        if (!(p->start_time_seconds > 0))
            unknown_start = p;
    }
    return pid_unique ? unknown_start : NULL;
}

/* Whether no other process of the scenario used this pid on this gpu. */
static bool pid_unique(const struct joulestat_sim_process_info *all, size_t n, size_t i) {
    for (size_t k = 0; k < n; k++)
        if (k != i && all[k].gpu == all[i].gpu && all[k].pid == all[i].pid)
            return false;
    return true;
}

/* Comment lines after the exposition: what each process got against the model's truth. */
static void print_truth(const struct sim_api *api, const struct snapshot *snap) {
    _cleanup_(freep) struct joulestat_sim_process_info *all = NULL;
    size_t n = 0;

    if (api->process_count(&n) < 0)
        return;
    all = calloc(MAX(n, (size_t)1), sizeof(*all));
    if (!all)
        return;
    printf("# replay ground truth (active energy under the scenario's model; attributed\n"
           "# energy also carries each process's share of idle energy per --gpu-idle-policy,\n"
           "# so error_j is exact only with --gpu-idle-policy=unattributed and a known idle\n"
           "# power)\n");
    for (size_t i = 0; i < snap->n_gpus; i++) {
        struct joulestat_sim_gpu_truth t;

        if (api->gpu_truth(snap->gpus[i].index, &t) < 0)
            continue;
        printf("# gpu=%u truth_total_j=%.6f truth_idle_j=%.6f truth_active_j=%.6f "
               "measured_j=%.6f truth_context_j=%.6f truth_drift_j=%.6f\n",
               snap->gpus[i].index, (double)t.total_uj / 1e6, (double)t.idle_uj / 1e6,
               (double)t.active_uj / 1e6, (double)snap->gpus[i].energy_uj / 1e6,
               (double)t.context_uj / 1e6, (double)t.drift_uj / 1e6);
    }
    for (size_t i = 0; i < n; i++)
        if (api->process_info(i, &all[i]) < 0)
            all[i].pid = 0; /* pid 0 is never a scenario process */
    for (size_t i = 0; i < n; i++) {
        const struct joulestat_sim_process_info *info = &all[i];
        const struct snap_gpu_process *p;

        if (info->pid == 0)
            continue;
        p = find_process(snap, info, pid_unique(all, n, i));
        printf("# gpu=%u pid=%u comm=%s truth_active_j=%.6f attributed_j=%s", info->gpu, info->pid,
               info->comm, (double)info->active_uj / 1e6, p ? "" : "none");
        if (p) {
            double got = (double)(p->energy_measured_uj + p->energy_estimated_uj) / 1e6;
            double truth = (double)info->active_uj / 1e6;

            printf("%.6f measured_j=%.6f estimated_j=%.6f error_j=%+.6f error_pct=%+.2f", got,
                   (double)p->energy_measured_uj / 1e6, (double)p->energy_estimated_uj / 1e6,
                   got - truth, truth > 0 ? 100.0 * (got - truth) / truth : 0.0);
        }
        printf(" start_us=%" PRIu64 " truth_sm_s=%.6f\n", info->start_us,
               (double)info->sm_us / 1e6);
    }
}

static int replay_loop(const struct config *cfg, const struct sim_api *api,
                       struct snapshot_slot *slot) {
    _cleanup_(fclosep) FILE *trace = NULL;
    struct sampler *sampler = NULL;
    uint64_t start_us, duration_us, end_us, step_us, next_tick;
    int r;

    r = api->get_span(&start_us, &duration_us);
    if (r < 0)
        return log_error_errno(r, "replay: the scenario has no time span: %m");
    if (cfg->replay_duration_ns)
        duration_us = cfg->replay_duration_ns / NSEC_PER_USEC;
    end_us = start_us + duration_us;

    r = sampler_new(cfg, slot, &sampler);
    if (r < 0)
        return log_error_errno(r, "replay: cannot create the sampler: %m");
    if (cfg->trace_file) {
        r = window_trace_attach(sampler, cfg->trace_file, &trace);
        if (r < 0) {
            sampler_free(sampler);
            return r;
        }
    }
    /* Ticks at --sample-interval, polls in between as the sampler thread does. */
    step_us = sampler_poll_interval_ns(cfg) / NSEC_PER_USEC;
    next_tick = start_us;

    for (uint64_t now = start_us;; now += step_us) {
        struct tick_time t;

        if (now > end_us)
            now = end_us;
        r = api->set_time(now);
        if (r < 0) {
            log_error_errno(r, "replay: cannot set the virtual clock: %m");
            break;
        }
        /* Monotonic time starts at 1 s so that "never" (0) stays distinguishable. */
        t = (struct tick_time){
            .mono_ns = (now - start_us + USEC_PER_SEC) * NSEC_PER_USEC,
            .sample_us = now,
            .wall_seconds = (double)now / 1e6,
        };
        if (now < next_tick && now != end_us) {
            sampler_poll(sampler, &t);
            continue;
        }
        next_tick += cfg->sample_interval_ns / NSEC_PER_USEC;
        r = sampler_tick(sampler, &t);
        if (r < 0) {
            log_error_errno(r, "replay: tick failed: %m");
            break;
        }
        if (now == end_us)
            break;
    }
    sampler_free(sampler);
    return r;
}

int replay_run(const struct config *cfg) {
    char lib[PATH_MAX], procfs[] = "/tmp/joulestat-replay-XXXXXX", records[PATH_MAX];
    struct config c = *cfg;
    struct sim_api api = {0};
    struct snapshot_slot *slot = NULL;
    struct snapshot *snap = NULL;
    struct strbuf out;
    bool made_procfs = false;
    int r;

    if (cfg->nvml_library)
        (void)snprintf(lib, sizeof(lib), "%s", cfg->nvml_library);
    else {
        r = default_sim_path(lib, sizeof(lib));
        if (r < 0)
            return log_error_errno(r, "replay: cannot find the simulated GPU node: %m");
    }
    r = sim_api_open(lib, &api);
    if (r < 0)
        return r;

    r = api.use_virtual_clock();
    if (r >= 0)
        r = api.load(cfg->scenario);
    if (r < 0) {
        char err[512] = "";

        (void)api.last_error(err, sizeof(err));
        log_error_errno(r, "replay: %s", err[0] ? err : "cannot load the scenario");
        goto finish;
    }
    if (!mkdtemp(procfs)) {
        r = log_error_errno(-errno, "replay: cannot create a fake procfs: %m");
        goto finish;
    }
    made_procfs = true;
    r = api.set_procfs(procfs);
    if (r < 0) {
        log_error_errno(r, "replay: cannot populate the fake procfs: %m");
        goto finish;
    }

    c.nvml_library = lib;
    if (!c.dcgm_library) /* the simulated node's library also plays nv-hostengine's client */
        c.dcgm_library = lib;
    c.procfs = procfs;
    /* what an exec watcher would have read of each program */
    if (snprintf(records, sizeof(records), "%s/" JOULESTAT_SIM_EXEC_RECORDS, procfs) <
        (int)sizeof(records))
        c.exec_records = records;
    c.rapl_source = "off";
    slot = snapshot_slot_new();
    if (!slot) {
        r = -ENOMEM;
        goto finish;
    }
    r = replay_loop(&c, &api, slot);
    if (r < 0)
        goto finish;

    snap = snapshot_slot_get(slot);
    if (!snap) {
        r = log_error_errno(-ENODATA, "replay: no snapshot was produced");
        goto finish;
    }
    strbuf_init(&out);
    r = exposition_render(snap, &(struct exposition_options){.metric_prefix = c.metric_prefix},
                          &out);
    if (r >= 0) {
        fwrite(out.buf, 1, out.len, stdout);
        print_truth(&api, snap);
        r = 0;
    }
    strbuf_done(&out);

finish:
    (void)snapshot_unref(snap);
    slot = snapshot_slot_free(slot);
    if (made_procfs) {
        (void)api.set_procfs(NULL);
        (void)remove_tree(procfs);
    }
    (void)dlclose(api.handle);
    return r;
}
