/* SPDX-License-Identifier: MIT */
#include "sampler.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "sampler_internal.h"

void sampler_kube_options(const struct config *cfg, struct kube_labels_options *ret) {
    *ret = (struct kube_labels_options){
        .enabled = cfg->kubernetes_enabled,
        .api_url = cfg->kubernetes_api_url,
        .token_file = cfg->kubernetes_token_file,
        .ca_file = cfg->kubernetes_ca_file,
        .node_name = cfg->node_name,
        .retention_ns = cfg->metric_retention_ns,
    };
}

int sampler_new(const struct config *cfg, struct snapshot_slot *slot, struct sampler **ret) {
    struct kube_labels_options ko;
    struct gpu_accounting_options go = {
        .idle_policy = cfg->gpu_idle_policy,
        .idle_power_watts = cfg->gpu_idle_power_watts,
        .sm_share_only = cfg->gpu_split_sm_share,
    };
    struct sampler *s = calloc(1, sizeof(*s));
    int r;

    if (!s)
        return -ENOMEM;
    s->cfg = cfg;
    s->slot = slot;
    s->sys_fd = s->dev_fd = s->proc_fd = s->state_lock_fd = -1;
    ledger_init(&s->ledger);
    stopper_init(&s->stopper);
    s->sys_fd = open_root(cfg->sysfs);
    s->dev_fd = open_root(cfg->devfs);
    s->proc_fd = open_root(cfg->procfs);
    /* The daemon's counters are its own: ps, top and replay, given the same flags, neither
     * read nor write them. */
    s->state_dir = cfg->command == COMMAND_SERVE ? cfg->state_dir : NULL;
    r = gpu_accounting_new(&go, &s->gpu_accounting);
    if (r >= 0 && s->state_dir)
        r = sampler_restore_state(s);
    if (r < 0) {
        sampler_free(s);
        return r;
    }

    /* Borrows proc_fd and sys_fd: done before they are closed. */
    cpu_groups_init(&s->cpu_groups, s->proc_fd, s->sys_fd);
    {
        long tck = sysconf(_SC_CLK_TCK);
        struct cpu_accounting_options co = {
            .policy = cfg->cpu_idle_policy,
            .process_metrics = cfg->cpu_process_metrics,
            .clk_tck = tck > 0 ? (unsigned long)tck : 100, /* USER_HZ is 100 everywhere */
        };

        r = cpu_accounting_new(&co, &s->cpu_accounting);
        if (r < 0) {
            sampler_free(s);
            return r;
        }
    }
    /* The scanner before any thread starts: loading the task iterator forks, which is
     * safe only while this is the one thread (the exec and SLURM watches and the NVML
     * library start threads of their own). */
    if (s->proc_fd < 0)
        log_warning_errno(s->proc_fd, "procfs: cannot open '%s': %m, continuing without it",
                          cfg->procfs);
    else {
        r = sampler_open_procfs(s, clock_monotonic_ns(), true);
        if (r < 0) {
            sampler_free(s);
            return r;
        }
        if (cfg->command == COMMAND_SERVE || cfg->command == COMMAND_RUN || cfg->exec_records) {
            sampler_start_exec_watch(s);
            s->resolver.watch = s->exec_watch;
        }
    }
    if (cfg->command == COMMAND_SERVE && cfg->slurm_watch && s->sys_fd >= 0) {
        r = slurm_watch_start(s->sys_fd, s->proc_fd, &s->slurm_watch);
        if (r < 0)
            (void)log_debug_errno(r, "slurm: no job cgroups to watch: %m");
        else
            cpu_groups_set_watch(&s->cpu_groups, s->slurm_watch);
    }
    if (cfg->gpu_enabled)
        sampler_open_gpu(s, clock_monotonic_ns());

    sampler_open_rapl(s, clock_monotonic_ns());
    sampler_kube_options(cfg, &ko);
    /* Names from the API server for the commands that run a while (serve, and top, which
     * shows them); a one-shot ps would have to wait for the first list. */
    if ((cfg->command == COMMAND_SERVE || cfg->command == COMMAND_TOP) &&
        kube_labels_new(&ko, &s->kube) < 0) {
        sampler_free(s);
        return -ENOMEM;
    }
    if (s->kube) /* names go on each label set when it is made */
        ledger_set_labeler(&s->ledger, kube_labels_labeler, s->kube);
    if ((cfg->command == COMMAND_SERVE || cfg->command == COMMAND_PS ||
         cfg->command == COMMAND_TOP) &&
        pod_allocations_new(cfg, &s->podres) < 0) { /* only -ENOMEM */
        sampler_free(s);
        return -ENOMEM;
    }
    *ret = s;
    return 0;
}

struct sampler *sampler_free(struct sampler *s) {
    if (!s)
        return NULL;
    sampler_stop(s);
    if (s->state_dir && s->ticks > 0)
        sampler_save_state(s, clock_monotonic_ns());
    if (s->state_lock_fd >= 0) /* after the last save */
        (void)close(s->state_lock_fd);
    s->gpu = gpu_source_close(s->gpu);
    s->gpu_accounting = gpu_accounting_free(s->gpu_accounting);
    s->rapl = rapl_free(s->rapl);
    s->cpu_accounting = cpu_accounting_free(s->cpu_accounting);
    s->slurm_watch = slurm_watch_free(s->slurm_watch);
    cpu_groups_done(&s->cpu_groups);
    s->kube = kube_labels_free(s->kube);
    s->podres = pod_allocations_free(s->podres);
    free(s->stat_buf);
    s->exec_watch = exec_watch_stop(s->exec_watch);
    s->procfs = procfs_scanner_free(s->procfs);
    ledger_done(&s->ledger);
    if (s->sys_fd >= 0)
        (void)close(s->sys_fd);
    if (s->dev_fd >= 0)
        (void)close(s->dev_fd);
    if (s->proc_fd >= 0)
        (void)close(s->proc_fd);
    stopper_done(&s->stopper);
    free(s);
    return NULL;
}

void sampler_set_window_observer(struct sampler *s, gpu_window_observer_fn fn, void *userdata) {
    gpu_accounting_set_observer(s->gpu_accounting, fn, userdata);
}

void sampler_set_resolver(struct sampler *s, process_resolve_fn fn, void *userdata) {
    s->resolve = fn;
    s->resolve_userdata = userdata;
}

/* A MIG GPU's activity source is said once it held this many windows: the first windows
 * of a GPM or DCGM reading have no samples yet. */
#define MIG_ACTIVITY_SETTLED 5

/* Says once, and again when it changes, how each MIG GPU's instances are split: by their
 * measured activity, or by their size alone when nothing measures it. */
static void say_mig_activity(struct sampler *s) {
    for (unsigned i = 0; i < LEDGER_MAX_GPUS; i++) {
        const struct ledger_gpu *g = &s->ledger.gpus[i];
        uint8_t now = (uint8_t)(1 + g->mig_activity);

        if (!g->present || !g->up || g->sharing != SHARING_MIG || s->mig_activity_said[i] == now) {
            s->mig_activity_next[i] = 0;
            continue;
        }
        if (s->mig_activity_next[i] != now) {
            s->mig_activity_next[i] = now;
            s->mig_activity_windows[i] = 0;
        }
        if (++s->mig_activity_windows[i] < MIG_ACTIVITY_SETTLED)
            continue;
        s->mig_activity_said[i] = now;
        s->mig_activity_next[i] = 0;
        if (g->mig_activity == MIG_ACTIVITY_SIZE)
            log_info("nvml: GPU %u: MIG instances split by their size: nothing measures their "
                     "activity (`joulestat check` says why)",
                     g->index);
        else
            log_info("nvml: GPU %u: MIG instances split by their activity, from %s", g->index,
                     g->mig_activity == MIG_ACTIVITY_DCGM ? "DCGM's nv-hostengine" : "GPM");
    }
}

static int tick_gpu(struct sampler *s, const struct tick_time *t) {
    const struct gpu_device_reading *devices;
    struct gpu_tick_stats stats;
    size_t n;
    int r;

    /* The kubelet's answers are taken (and their failures said) whether or not a GPU
     * answers now: its source's health is its own. */
    pod_allocations_apply(s->podres, s->gpu_accounting, s->kube, t->mono_ns);
    if (!s->gpu) {
        if (s->cfg->gpu_enabled && t->mono_ns >= s->gpu_next_open_ns)
            sampler_open_gpu(s, t->mono_ns);
        if (!s->gpu)
            return 0;
    }
    r = gpu_source_sample(s->gpu, t->sample_us, &devices, &n);
    if (r < 0) {
        sampler_source_failed(s, SOURCE_NVML, r, t->mono_ns, "sampling failed");
        return r == -ENOMEM ? r : 0;
    }
    r = gpu_accounting_tick(s->gpu_accounting, devices, n, t->sample_us, t->mono_ns, s->resolve,
                            s->resolve_userdata, &s->ledger, &stats);
    pod_allocations_after_tick(s->podres, &stats);
    if (stats.devices_down > 0)
        sampler_source_failed(s, SOURCE_NVML, -ENODEV, t->mono_ns, "a GPU is lost or failing");
    else
        sampler_source_ok(s, SOURCE_NVML);
    say_mig_activity(s);
    if (stats.counter_resets > 0)
        log_info("nvml: a GPU energy counter went back (driver reload); counting from there");
    if (stats.counter_glitches > 0 && complain_should_log(&s->glitch_complaint, t->mono_ns))
        log_warning("nvml: implausible GPU energy counter jump ignored");
    else if (stats.counter_glitches == 0)
        (void)complain_release(&s->glitch_complaint);
    if (stats.clock_steps > 0 && complain_should_log(&s->clock_complaint, t->mono_ns))
        log_warning("nvml: the wall clock stepped (NTP, a resumed VM): that window's GPU "
                    "energy is unattributed no_data");
    else if (stats.clock_steps == 0)
        (void)complain_release(&s->clock_complaint);
    if (stats.swapped_gpus > 0)
        log_warning("nvml: another GPU is at an index that was read before (replaced, or the "
                    "driver enumerated the boards anew): its energy is counted from its first "
                    "reading, under its own UUID");
    if (stats.replaced_gpus > 0)
        log_warning("nvml: a GPU is not the one the state file saved at its index (replaced?): "
                    "its saved counter reading and idle power are not used");
    return r;
}

/* Reads <procfs>/stat into the reusable buffer, growing it when the file does not fit. */
static int read_proc_stat(struct sampler *s, size_t *ret_len) {
    for (;;) {
        int r;

        if (s->stat_cap == 0) {
            r = grow_array(&s->stat_buf, &s->stat_cap, 16384, 1);
            if (r < 0)
                return r;
        }
        r = read_file_into_at(s->proc_fd, "stat", s->stat_buf, s->stat_cap);
        if (r >= 0) {
            *ret_len = (size_t)r;
            return 0;
        }
        if (r != -EFBIG || s->stat_cap >= 16 * 1024 * 1024)
            return r;
        r = grow_array(&s->stat_buf, &s->stat_cap, s->stat_cap * 2, 1);
        if (r < 0)
            return r;
    }
}

/* Some counters read and some not (a zone gone with its package's CPUs, a reading refused):
 * the source is up, and this says which are missing. Their energy is counted when they read
 * again (as unknown time after a gap longer than they can count: rapl_gap_unknown()). */
static void log_unreadable_counters(struct sampler *s, const struct cpu_node_reading *node,
                                    size_t n_valid, uint64_t now_ns) {
    const struct rapl_reading *first = NULL;

    for (size_t i = 0; i < node->n_rapl && !first; i++)
        if (!node->rapl[i].valid)
            first = &node->rapl[i];
    if (first && complain_should_log(&s->rapl_partial_complaint, now_ns))
        log_warning("rapl: %zu of %zu energy counters cannot be read (the first: package %u, "
                    "die %u, %s); their energy is counted when they read again",
                    node->n_rapl - n_valid, node->n_rapl, first->package, first->die,
                    rapl_domain_to_string(first->domain));
}

/* The node's CPU time (/proc/stat) and the RAPL counters, read back to back (a counter
 * that did not read is marked so in node). */
static void read_node_energy(struct sampler *s, const struct tick_time *t,
                             struct cpu_node_reading *node) {
    size_t stat_len = 0;
    int r;

    node->stat_ns = clock_monotonic_ns();
    if (s->proc_fd >= 0 && read_proc_stat(s, &stat_len) >= 0) {
        node->stat_text = s->stat_buf;
        node->stat_len = stat_len;
    }
    r = rapl_sample(s->rapl, &node->rapl, &node->n_rapl);
    if (r < 0) {
        sampler_source_failed(s, SOURCE_RAPL, r, t->mono_ns, "cannot read the energy counters");
        if (s->rapl_failing_since_ns == 0)
            s->rapl_failing_since_ns = t->mono_ns;
        return;
    }
    s->rapl_failing_since_ns = 0;
    s->rapl_retry_ns = RAPL_RETRY_FIRST_NS;
    (void)complain_release(&s->rapl_reopen_complaint); /* "working again" says it */
    sampler_source_ok(s, SOURCE_RAPL);
    if ((size_t)r < node->n_rapl) {
        log_unreadable_counters(s, node, (size_t)r, t->mono_ns);
        if (s->rapl_unread_since_ns == 0)
            s->rapl_unread_since_ns = t->mono_ns;
        return;
    }
    s->rapl_unread_since_ns = 0;
    s->rapl_unread_retry_ns = RAPL_RETRY_FIRST_NS;
    if (complain_release(&s->rapl_partial_complaint))
        log_info("rapl: every energy counter reads again");
}

/* Some counters have not read for RAPL_RETRY_FIRST_NS while the others do (their zone was
 * registered anew when its package's CPUs came back): their files are opened again, at the
 * same intervals as a closed RAPL. */
static void rapl_reopen_unread_counters(struct sampler *s, uint64_t now_ns) {
    int n;

    if (s->rapl_unread_since_ns == 0 || now_ns - s->rapl_unread_since_ns < RAPL_RETRY_FIRST_NS ||
        now_ns < s->rapl_unread_next_ns || rapl_get_mode(s->rapl) != RAPL_MODE_POWERCAP)
        return;
    if (s->rapl_unread_retry_ns == 0)
        s->rapl_unread_retry_ns = RAPL_RETRY_FIRST_NS;
    s->rapl_unread_next_ns = now_ns + s->rapl_unread_retry_ns;
    s->rapl_unread_retry_ns = MIN(2 * s->rapl_unread_retry_ns, RAPL_RETRY_MAX_NS);
    n = rapl_reopen_unread(s->rapl, s->sys_fd);
    if (n > 0)
        log_debug("rapl: %d energy counter(s) that did not read opened again", n);
}

/* RAPL that could not be opened (energy_uj readable by root only, no zones until the
 * module loads) is tried again (RAPL_RETRY_FIRST_NS), and so are powercap counters of
 * which none has read for that long (the driver reloaded: the files held open read nothing
 * more), so that a fix on the node is taken up without a restart. */
static void rapl_keep_open(struct sampler *s, uint64_t now_ns) {
    enum rapl_mode mode = (enum rapl_mode)rapl_mode_from_string(s->cfg->rapl_source);

    if (mode != RAPL_MODE_AUTO && mode != RAPL_MODE_POWERCAP)
        return; /* perf and the MSRs need what joulestat gives up after its start */
    if (s->rapl && s->rapl_failing_since_ns == 0) {
        rapl_reopen_unread_counters(s, now_ns);
        return;
    }
    if (now_ns < s->rapl_next_open_ns)
        return;
    if (s->rapl) {
        if (s->rapl_failing_since_ns == 0 || rapl_get_mode(s->rapl) != RAPL_MODE_POWERCAP ||
            now_ns - s->rapl_failing_since_ns < RAPL_RETRY_FIRST_NS)
            return;
        if (complain_should_log(&s->rapl_reopen_complaint, now_ns))
            log_info("rapl: no energy counter has read for %llu s: opening them again",
                     (unsigned long long)((now_ns - s->rapl_failing_since_ns) / NSEC_PER_SEC));
    }
    sampler_open_rapl(s, now_ns);
}

/* The process scan: CPU time per process, RAPL, and the CPU energy split. */
static int tick_cpu(struct sampler *s, const struct tick_time *t) {
    const struct procfs_process *rows = NULL;
    struct cpu_node_reading node = {0};
    int n_rows = 0, r;

    if (s->procfs && s->exec_watch &&
        cpu_groups_select_by_exits(&s->cpu_groups, s->procfs, s->exec_watch) == -ENOMEM)
        return -ENOMEM;
    /* The workloads' cgroups, then at once the node's CPU time and energy: a cgroup's CPU
     * time and the energy it is weighed against cover the same window, however long the
     * process scan between takes on a loaded node (a short job's whole life may be one
     * window). */
    cpu_groups_prepare(&s->cpu_groups);
    rapl_keep_open(s, t->mono_ns);
    /* Open but unread (every counter failed), the scan is still accounted, with no energy:
     * the steps the SLURM watch reported ended here are booked and said ended (it reports
     * an end once), and the CPU-time window moves on; what the counters moved meanwhile is
     * no data at their next reading. */
    if (s->rapl)
        read_node_energy(s, t, &node);
    if (s->procfs) {
        n_rows = procfs_scan(s->procfs, &rows);
        if (n_rows == -ENOMEM)
            return n_rows;
        if (s->procfs_bpf && !procfs_uses_bpf(s->procfs, NULL, NULL))
            sampler_log_scan_method(s); /* the iterator failed: /proc from now on, said once */
        if (n_rows < 0) {
            if (complain_should_log(&s->procfs_complaint, t->mono_ns))
                log_warning_errno(n_rows, "procfs: scan failed: %m, retrying at the next scan");
            n_rows = 0;
            rows = NULL;
        } else if (complain_release(&s->procfs_complaint))
            log_info("procfs: scanning works again");
    }
    /* The groups follow their processes and SLURM steps with or without energy to split,
     * so that those which ended are let go (without RAPL, every job step's stayed). */
    r = cpu_groups_track(&s->cpu_groups, rows, (size_t)n_rows);
    if (r >= 0 && s->rapl)
        r = cpu_accounting_tick(s->cpu_accounting, &s->cpu_groups, rows, (size_t)n_rows, &node,
                                t->mono_ns, &s->ledger);
    else if (r >= 0 && s->cpu_accounting)
        cpu_accounting_exits(s->cpu_accounting, rows, (size_t)n_rows, t->mono_ns, &s->ledger);
    cpu_groups_finish(&s->cpu_groups);
    return r;
}

static void put_source(struct snapshot *snap, const char *name, bool up, uint64_t errors) {
    struct snap_source *src = &snap->sources[snap->n_sources++];

    src->up = up;
    src->errors = errors;
    (void)snprintf(src->name, sizeof(src->name), "%s", name);
}

/* A source switched off by a flag has no series at all, as node_exporter leaves out the
 * collectors it was told not to run: source_up 0 would mean "broken" and fire alerts. */
static bool source_enabled(const struct sampler *s, enum source_id id) {
    switch (id) {
    case SOURCE_NVML:
        return s->cfg->gpu_enabled;
    case SOURCE_RAPL:
        return rapl_mode_from_string(s->cfg->rapl_source) != RAPL_MODE_OFF;
    case SOURCE_STATE:
        return s->state_dir != NULL;
    default:
        return true;
    }
}

static int publish(struct sampler *s, const struct tick_time *t, double duration) {
    struct snapshot *snap;

    kube_labels_apply(s->kube, &s->ledger);
    snap = ledger_snapshot(&s->ledger, snapshot_slot_take_spare(s->slot));

    if (!snap)
        return -ENOMEM;
    if (grow_array(&snap->sources, &snap->cap_sources, _SOURCE_MAX + 2, sizeof(*snap->sources)) <
        0) {
        (void)snapshot_unref(snap);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < _SOURCE_MAX; i++)
        if (source_enabled(s, i))
            put_source(snap, sampler_source_names[i], s->health[i].up, s->health[i].errors);
    /* The Kubernetes sources have series only where they are configured. */
    if (s->kube) {
        uint64_t errors = 0;
        bool up = kube_labels_health(s->kube, &errors);

        put_source(snap, "kubernetes_api", up, errors);
    }
    if (s->podres) {
        uint64_t errors = 0;
        bool up = pod_allocations_health(s->podres, &errors);

        put_source(snap, "pod_resources", up, errors);
    }
    snap->generation = ++s->generation;
    snap->timestamp_seconds = t->wall_seconds;
    snap->metric_prefix = s->cfg->metric_prefix;
    snap->last_sample_duration_seconds = duration;
    snap->samples_total = s->ticks;
    snapshot_slot_publish(s->slot, snap);
    return 0;
}

/* The background thread publishes at most this often between process scans: at 10 Hz
 * sampling, building a snapshot every tick cost more than the GPU attribution itself
 * (docs/PERFORMANCE.md), and scrapers do not look that often. */
#define PUBLISH_INTERVAL_NS NSEC_PER_SEC

static int tick(struct sampler *s, const struct tick_time *t, bool always_publish) {
    uint64_t started = clock_monotonic_ns();
    double duration;
    bool scanned = false, publish_now;
    int r, ret = 0;

    s->ticks++;
    if (!s->procfs) {
        r = sampler_open_procfs(s, t->mono_ns, false);
        if (r < 0)
            ret = r;
    }
    r = tick_gpu(s, t);
    if (r < 0)
        ret = r;
    /* A job ended: scan now, so its last CPU time is booked while its epilog asks. */
    if (s->slurm_watch && slurm_watch_ended_since(s->slurm_watch) > 0)
        s->next_scan_ns = t->mono_ns;
    if (t->mono_ns >= s->next_scan_ns) {
        s->next_scan_ns = t->mono_ns + s->cfg->process_scan_interval_ns;
        scanned = true;
        r = tick_cpu(s, t);
        if (r < 0 && ret == 0)
            ret = r;
    }
    publish_now = always_publish || scanned || s->publish_pending || s->generation == 0 ||
                  t->mono_ns - s->published_mono_ns >=
                      (s->state_dir ? STATE_SAVE_INTERVAL_NS : PUBLISH_INTERVAL_NS);
    /* Each publish is saved first: scans asked for by many short SLURM jobs ending would
     * rewrite the file at every tick. A second apart at most; what a scan found waits. */
    if (publish_now && s->state_dir && !always_publish && s->generation > 0 &&
        t->mono_ns - s->published_mono_ns < STATE_SAVE_MIN_NS) {
        s->publish_pending = true;
        publish_now = false;
    }
    /* Activity flags and retention are only seen through a snapshot: sweeping every entry
     * at every 10 Hz tick would recompute them nine times for nobody. */
    if (publish_now)
        ledger_sweep(&s->ledger, t->mono_ns, t->mono_ns, s->cfg->metric_retention_ns);
    duration = (double)(clock_monotonic_ns() - started) / (double)NSEC_PER_SEC;
    atomic_store(&s->last_tick_mono_ns, clock_monotonic_ns());
    if (!publish_now)
        return ret;
    /* Nothing is published that is not saved: restarted after a crash (an OOM kill, a
     * SIGKILL after the grace period), the counters go on from the last save, which no
     * scrape got ahead of, and what was drawn since is booked once, as downtime. */
    if (s->state_dir)
        sampler_save_state(s, t->mono_ns);
    s->published_mono_ns = t->mono_ns;
    s->publish_pending = false;
    r = publish(s, t, duration);
    if (r < 0 && ret == 0)
        ret = r;
    return ret;
}

int sampler_tick(struct sampler *s, const struct tick_time *t) {
    return tick(s, t, true);
}

#define POLL_INTERVAL_NS (100 * NSEC_PER_MSEC)

uint64_t sampler_poll_interval_ns(const struct config *cfg) {
    return MIN(cfg->sample_interval_ns, POLL_INTERVAL_NS);
}

void sampler_poll(struct sampler *s, const struct tick_time *t) {
    const struct gpu_poll_reading *polls;
    size_t n;

    if (!s->gpu)
        return;
    gpu_source_poll(s->gpu, t->sample_us, &polls, &n);
    gpu_accounting_poll(s->gpu_accounting, polls, n, t->mono_ns);
}

struct tick_time sampler_now(void) {
    return (struct tick_time){
        .mono_ns = clock_monotonic_ns(),
        .sample_us = clock_realtime_ns() / NSEC_PER_USEC,
        .wall_seconds = (double)clock_realtime_ns() / (double)NSEC_PER_SEC,
    };
}

static void *sampler_thread(void *userdata) {
    struct sampler *s = userdata;
    uint64_t poll = sampler_poll_interval_ns(s->cfg);
    uint64_t next = clock_monotonic_ns(), next_poll = next;

    for (;;) {
        struct tick_time t = sampler_now();
        int r;

        if (t.mono_ns >= next) {
            r = tick(s, &t, false);
            if (r < 0 && complain_should_log(&s->tick_complaint, t.mono_ns))
                log_error_errno(r, "sampler: tick failed: %m, retrying at the next tick");
            else if (r >= 0)
                (void)complain_release(&s->tick_complaint);
            next = schedule_next(next, s->cfg->sample_interval_ns);
        } else
            sampler_poll(s, &t);
        next_poll = schedule_next(next_poll, poll);
        if (stopper_sleep_until(&s->stopper, MIN(next, next_poll)))
            return NULL;
    }
}

int sampler_start(struct sampler *s) {
    int r = pthread_create(&s->thread, NULL, sampler_thread, s);

    if (r != 0)
        return -r;
    (void)pthread_setname_np(s->thread, "js-sampler"); /* its CPU time apart in top, bench */
    s->thread_started = true;
    return 0;
}

void sampler_stop(struct sampler *s) {
    if (!s->thread_started)
        return;
    stopper_stop(&s->stopper);
    (void)pthread_join(s->thread, NULL);
    s->thread_started = false;
}

bool sampler_uses_bpf(const struct sampler *s) {
    return s->procfs_bpf;
}

bool sampler_healthy(struct sampler *s) {
    uint64_t last = atomic_load(&s->last_tick_mono_ns);

    /* Healthy while ticks keep coming: allow three missed intervals. */
    return last != 0 && clock_monotonic_ns() - last < 3 * s->cfg->sample_interval_ns + NSEC_PER_SEC;
}
