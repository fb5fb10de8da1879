/* SPDX-License-Identifier: MIT */
/* Opening the sampler's sources (NVML, the process table, exec events, RAPL, the saved
 * state) and saying how each is doing. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>

#include "fileio.h"
#include "sampler_internal.h"
#include "state_file.h"

const char *const sampler_source_names[_SOURCE_MAX] = {
    [SOURCE_NVML] = "nvml",
    [SOURCE_RAPL] = "rapl",
    [SOURCE_STATE] = "state",
};

void sampler_source_failed(struct sampler *s, enum source_id id, int err, uint64_t now_ns,
                           const char *what) {
    struct source_health *h = &s->health[id];

    h->up = false;
    h->errors++;
    if (complain_should_log(&h->complaint, now_ns))
        log_warning_errno(err, "%s: %s: %m, continuing without it", sampler_source_names[id], what);
}

void sampler_source_ok(struct sampler *s, enum source_id id) {
    struct source_health *h = &s->health[id];

    h->up = true;
    if (complain_release(&h->complaint))
        log_info("%s: working again", sampler_source_names[id]);
}

void sampler_open_gpu(struct sampler *s, uint64_t now_ns) {
    struct gpu_source_options o = {.library_path = s->cfg->nvml_library,
                                   .dcgm_library = s->cfg->dcgm_library,
                                   .dcgm_address = s->cfg->dcgm_address};
    const char *reason = NULL;
    int r;

    s->gpu_next_open_ns = now_ns + GPU_REOPEN_INTERVAL_NS;
    r = gpu_source_open(&o, &s->gpu, &reason);
    if (r < 0) {
        s->gpu = NULL;
        sampler_source_failed(s, SOURCE_NVML, r, now_ns, reason ? reason : "cannot open NVML");
        return;
    }
    sampler_source_ok(s, SOURCE_NVML);
}

void sampler_log_scan_method(struct sampler *s) {
    const char *reason;
    int error;

    s->procfs_bpf = procfs_uses_bpf(s->procfs, &reason, &error);
    if (s->procfs_bpf)
        log_info("process scan: eBPF task iterator (one read for every process, walking %s)",
                 procfs_walks_processes(s->procfs) ? "the process list" : "every task");
    else if (error == 0)
        log_info("process scan: listing '%s' (eBPF task iterator: %s)", s->cfg->procfs,
                 reason ? reason : "not tried");
    else
        log_info_errno(error, "process scan: listing '%s'; eBPF task iterator not used: %s (%m)",
                       s->cfg->procfs, reason ? reason : "failed");
}

int sampler_open_procfs(struct sampler *s, uint64_t now_ns, bool at_start) {
    struct procfs_options opts = {0}; /* auto: the scanner's default */
    int r;

    if (s->procfs || s->proc_fd < 0)
        return 0;
    if (s->cfg->procfs_keep_fds == PROCFS_KEEP_FDS_ON)
        opts.max_kept_fds = PROCFS_KEEP_FDS_ANYWHERE;
    else if (s->cfg->procfs_keep_fds == PROCFS_KEEP_FDS_OFF)
        opts.max_kept_fds = PROCFS_KEEP_NO_FDS;
    /* The iterator outlives the sampler's start only in serve, which loads it before
     * dropping its capabilities, at the start alone: loading it forks, safe only while the
     * sampler is the one thread, and refused once locked down. The one-shot commands, and a
     * scanner opened at a later tick, list /proc. */
    opts.try_bpf = !s->cfg->process_bpf_off && s->cfg->command == COMMAND_SERVE && at_start;
    r = procfs_scanner_new(s->proc_fd, &opts, &s->procfs);
    if (r == -ENOMEM)
        return r;
    if (r < 0) {
        s->procfs = NULL;
        /* A tree filled once its source starts (the simulated node's, at its first NVML
         * call) is there by the first tick: said if it is not by then. */
        if (at_start)
            log_debug_errno(r, "procfs: cannot use '%s' yet: %m; tried again at the first tick",
                            s->cfg->procfs);
        else if (complain_should_log(&s->procfs_complaint, now_ns))
            log_warning_errno(r,
                              "procfs: cannot use '%s': %m; processes get no identity until "
                              "it works, retrying",
                              s->cfg->procfs);
        return 0;
    }
    if (complain_release(&s->procfs_complaint))
        log_info("procfs: '%s' works now", s->cfg->procfs);
    s->resolver = (struct identity_resolver){.scanner = s->procfs, .watch = s->exec_watch};
    sampler_set_resolver(s, identity_resolve_watched, &s->resolver);
    procfs_set_unchanged(s->procfs, cpu_groups_unchanged_fn, &s->cpu_groups);
    sampler_log_scan_method(s);
    return 0;
}

void sampler_start_exec_watch(struct sampler *s) {
    int r;

    if (s->cfg->exec_records) {
        /* the simulated node: its programs' records, kept as files at their exec */
        _cleanup_(closep) int fd = open(s->cfg->exec_records, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        r = fd < 0 ? -errno : exec_watch_open_records(fd, &s->exec_watch);
        if (r >= 0)
            fd = -1; /* the watch has it */
        else
            log_warning_errno(r, "exec events: cannot read the records in '%s': %m",
                              s->cfg->exec_records);
        return;
    }
    r = exec_watch_start(s->proc_fd, &s->exec_watch);

    if (r == -EXDEV)
        log_debug("exec events: '%s' is not the kernel's procfs, not watched", s->cfg->procfs);
    else if (r < 0 && s->cfg->command == COMMAND_RUN)
        log_debug_errno(r, "exec events: not available (%m); a GPU process that ends between "
                           "two scans is not followed");
    else if (r < 0)
        log_info_errno(r, "exec events: the process connector is not available (%m); processes "
                          "that exit between two scans are identified by what they left");
    else
        log_info("exec events: each new program's identity is read at its exec (process "
                 "connector)");
}

int sampler_exec_parent(struct sampler *s, uint32_t pid, double start_time_seconds,
                        uint32_t *ret_ppid, uint64_t *ret_starttime) {
    struct exec_record rec;
    int r;

    if (!s->exec_watch)
        return -ENODEV;
    r = exec_watch_lookup(s->exec_watch, pid, &rec);
    if (r < 0)
        return r == -ENOMEM ? -ESRCH : r;
    /* The same conversion as the process's own series: equal for the same program. */
    if (start_time_seconds >= 0 &&
        (!s->procfs ||
         fabs(procfs_start_time_seconds(s->procfs, rec.starttime) - start_time_seconds) > 1e-3))
        return -ESRCH; /* the pid's newer program, another process */
    *ret_ppid = rec.ppid;
    *ret_starttime = rec.starttime;
    return 0;
}

double sampler_start_time_seconds(const struct sampler *s, uint64_t starttime) {
    return s->procfs ? procfs_start_time_seconds(s->procfs, starttime) : -1;
}

void sampler_stop_exec_watch(struct sampler *s) {
    s->resolver.watch = NULL;
    s->exec_watch = exec_watch_stop(s->exec_watch);
}

void sampler_open_rapl(struct sampler *s, uint64_t now_ns) {
    struct rapl_status status;
    struct rapl_options o = {
        .sys_fd = s->sys_fd,
        .dev_fd = s->dev_fd,
        .proc_fd = s->proc_fd,
        .mode = (enum rapl_mode)rapl_mode_from_string(s->cfg->rapl_source),
        .cpu = s->rapl_cpu,
    };
    struct rapl *fresh = NULL;
    int r;

    /* powercap and perf need only sysfs; the MSR interface needs --path.dev too and says so. */
    if (o.mode == RAPL_MODE_OFF || s->sys_fd < 0)
        return;
    /* Tried again while running: powercap alone, the one way left once the capabilities
     * that perf and the MSRs need are dropped and the system-call filter is in. */
    if (s->rapl_retry_ns != 0) {
        if (o.mode != RAPL_MODE_AUTO && o.mode != RAPL_MODE_POWERCAP)
            return;
        o.mode = RAPL_MODE_POWERCAP;
    } else
        s->rapl_retry_ns = RAPL_RETRY_FIRST_NS;
    r = rapl_open(&o, &fresh, &status);
    s->rapl_next_open_ns = now_ns + s->rapl_retry_ns;
    s->rapl_retry_ns = MIN(2 * s->rapl_retry_ns, RAPL_RETRY_MAX_NS); /* a good reading resets it */
    if (r < 0) {
        /* A handle whose counters stopped reading is kept: they may read again. */
        s->health[SOURCE_RAPL].up = false;
        /* Said already; or, tried again, still nothing there. */
        if (r == s->rapl_open_error || (r == -ENODEV && s->rapl_open_error != 0)) {
            log_debug("rapl: still cannot be opened: %s", status.reason);
            return;
        }
        s->rapl_open_error = r;
        if (r == -ENODEV)
            log_info("rapl: not available: %s", status.reason);
        else
            log_warning_errno(r, "rapl: %s", status.reason);
        return;
    }
    if (!s->rapl) { /* opened at last: at the start, or at a retry after it failed there */
        log_info("rapl: using %s: %s", rapl_mode_to_string(status.chosen), status.reason);
        s->health[SOURCE_RAPL].up = true;
    } else {
        /* Opened again after none of its counters read: up, and "working again", with the
         * first reading. */
        size_t had = rapl_count(s->rapl), has = rapl_count(fresh);

        if (has < had)
            log_warning("rapl: opened again with %zu of the %zu energy counters it had (%s); "
                        "the others are read again after a restart",
                        has, had, status.reason);
        else
            log_debug("rapl: opened again: %s", status.reason);
        s->rapl = rapl_free(s->rapl);
        /* What the zones moved meanwhile is counted from each one's last reading. */
        cpu_accounting_rapl_reopened(s->cpu_accounting, &s->ledger);
    }
    s->rapl = fresh;
    /* A new handle: its counters' own reopens start afresh. */
    s->rapl_unread_since_ns = s->rapl_unread_next_ns = s->rapl_unread_retry_ns = 0;
    if (status.cpu.vendor != CPU_VENDOR_UNKNOWN)
        s->rapl_cpu = status.cpu;
    s->rapl_open_error = 0;
    s->rapl_failing_since_ns = 0;
}

/* The clocks now, and the boot they count in (read once: it is the boot's). */
static void state_clock_now(struct sampler *s, struct state_clock *ret) {
    *ret = (struct state_clock){
        .boot_us = clock_boottime_ns() / NSEC_PER_USEC,
        .wall_us = clock_realtime_ns() / NSEC_PER_USEC,
        .mono_ns = clock_monotonic_ns(),
    };
    memcpy(ret->boot_id, s->boot_id, sizeof(ret->boot_id));
}

/* This boot's id, from the procfs joulestat reads (the host's, in a container). */
static void read_boot_id(struct sampler *s) {
    char buf[STATE_BOOT_ID_MAX + 8];
    int n = s->proc_fd >= 0
                ? read_file_into_at(s->proc_fd, "sys/kernel/random/boot_id", buf, sizeof(buf))
                : -EBADF;

    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    if (n <= 0 || (size_t)n >= sizeof(s->boot_id)) {
        log_info("state: this boot's id is unknown (%s/sys/kernel/random/boot_id): a reboot "
                 "is told from the wall clock",
                 s->cfg->procfs);
        return;
    }
    memcpy(s->boot_id, buf, (size_t)n + 1);
}

int sampler_restore_state(struct sampler *s) {
    struct gpu_baseline baselines[LEDGER_MAX_GPUS] = {0};
    struct state_clock now;
    int r;

    r = state_file_lock(s->state_dir, &s->state_lock_fd);
    if (r == -EWOULDBLOCK) {
        log_error("state: --state-dir %s is in use by another joulestat (it holds the "
                  "directory's lock); this one neither reads nor writes it, and counts from "
                  "zero: stop the other, or give each its own directory",
                  s->state_dir);
        s->state_locked_out = true;
        s->health[SOURCE_STATE].up = false; /* said once, here */
        s->health[SOURCE_STATE].errors++;
        return 0;
    }
    read_boot_id(s);
    state_clock_now(s, &now);
    r = state_file_load(s->state_dir, &s->ledger, &now, baselines);
    if (r < 0)
        return r;
    gpu_accounting_restore_baselines(s->gpu_accounting, baselines);
    sampler_source_ok(s, SOURCE_STATE);
    return 0;
}

void sampler_save_state(struct sampler *s, uint64_t mono_ns) {
    struct gpu_baseline baselines[LEDGER_MAX_GPUS];
    struct state_clock now;
    int r;

    if (s->state_locked_out) {
        /* The other one gone (its last save done), the counters published since are this
         * one's: saved over its file, or a restart would go back to the other's. */
        if (state_file_lock(s->state_dir, &s->state_lock_fd) < 0)
            return; /* still the other joulestat's: said at start */
        s->state_locked_out = false;
        log_info("state: --state-dir %s is free now; this joulestat's counters are saved "
                 "there from now on",
                 s->state_dir);
    }
    gpu_accounting_baselines(s->gpu_accounting, baselines);
    state_clock_now(s, &now);
    r = state_file_save(s->state_dir, &s->ledger, baselines, &now);
    if (r < 0)
        sampler_source_failed(s, SOURCE_STATE, r, mono_ns,
                              "cannot save the counters to --state-dir (a last saved file "
                              "that this one did not replace is removed: a restart counts "
                              "from zero, not from counters behind those published)");
    else
        sampler_source_ok(s, SOURCE_STATE);
}
