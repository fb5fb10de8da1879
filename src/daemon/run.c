/* SPDX-License-Identifier: MIT */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fileio.h"
#include "json_out.h"
#include "log.h"
#include "macro.h"
#include "proc_cpu_stat.h"
#include "rapl_domain.h"
#include "run_cgroup.h"
#include "run_spawn.h"
#include "run_tree.h"
#include "sampler.h"
#include "snapshot.h"
#include "store.h"

/* Parents followed up from a GPU process to the command, at most. */
#define RUN_PARENT_HOPS 16

/* One link up from a program that started at child_start: pid's exec record, if kept, must
 * be its parent's (started no later, not a later holder's of the pid: the process alive at
 * pid at the last scan, or a member seen there, started when it did). Returns 1 with the
 * record, 0 without one, -1 when the record is another process's. */
static int parent_record(struct sampler *sampler, const struct run_tree *t, uint32_t pid,
                         uint64_t child_start, uint32_t *ret_ppid, uint64_t *ret_start) {
    uint64_t start, alive = run_tree_alive_start(t, pid), seen = run_tree_member_start(t, pid);
    uint32_t ppid;

    if (sampler_exec_parent(sampler, pid, -1, &ppid, &start) < 0)
        return 0;
    if (start > child_start || (alive && alive != start) || (seen && seen != start))
        return -1;
    *ret_ppid = ppid;
    *ret_start = start;
    return 1;
}

/* A GPU process that started and ended between two scans (a CUDA test of a few hundred
 * milliseconds) was never seen in the tree: the kernel's exec events say who started it,
 * and who started that one, while they were as short-lived, each link checked by start
 * time. */
static void adopt_gpu_processes(struct sampler *sampler, struct run_tree *t,
                                const struct snapshot *s) {
    for (size_t i = 0; i < s->n_gpu_processes; i++) {
        const struct snap_gpu_process *p = &s->gpu_processes[i];
        uint64_t own_start, child_start;
        uint32_t parent;

        if (run_tree_has(t, p->pid) ||
            sampler_exec_parent(sampler, p->pid, p->start_time_seconds, &parent, &own_start) < 0)
            continue;
        child_start = own_start;
        for (unsigned hop = 0; hop < RUN_PARENT_HOPS && parent > 1; hop++) {
            uint32_t pid = parent;
            int r = parent_record(sampler, t, pid, child_start, &parent, &child_start);

            if (r < 0)
                break; /* the pid's record is another process's */
            if (run_tree_has(t, pid)) {
                /* Without a record (its exec came before the watch): by the start it was
                 * seen with. */
                if ((r > 0 || run_tree_member_start(t, pid) <= child_start) &&
                    run_tree_adopt(t, p->pid, own_start) >= 0)
                    log_debug("run: GPU process %u, gone before a scan saw it, was started by "
                              "the command (exec events)",
                              p->pid);
                break;
            }
            if (r == 0)
                break; /* nothing kept says who started it */
        }
    }
}

/* What the command used, summed from the snapshot over its processes. */
struct usage {
    uint64_t gpu_measured_uj[LEDGER_MAX_GPUS], gpu_estimated_uj[LEDGER_MAX_GPUS];
    bool gpu_used[LEDGER_MAX_GPUS];
    uint64_t cpu_uj[SNAP_CPU_DOMAINS];
    bool by_cgroup; /* its processes were those of its cgroup, not only its tree's */
};

/* The series' start_time_seconds for a start (field 22), by the sampler's conversion. */
static double series_start_seconds(uint64_t starttime, void *userdata) {
    return sampler_start_time_seconds(userdata, starttime);
}

static void sum_usage(struct sampler *sampler, const struct snapshot *s, const struct run_tree *t,
                      struct usage *u) {
    *u = (struct usage){.by_cgroup = t->followed_cgroup};
    for (size_t i = 0; i < s->n_gpu_processes; i++) {
        const struct snap_gpu_process *p = &s->gpu_processes[i];

        if (p->gpu >= LEDGER_MAX_GPUS ||
            !run_tree_owns(t, p->pid, p->start_time_seconds, series_start_seconds, sampler))
            continue;
        u->gpu_used[p->gpu] = true;
        u->gpu_measured_uj[p->gpu] += p->energy_measured_uj;
        u->gpu_estimated_uj[p->gpu] += p->energy_estimated_uj;
    }
}

/*
 * The command's CPU energy, by the attribution rule for one consumer: each window's RAPL
 * energy per domain x the command's CPU time / all CPUs' time (busy and idle) in the window.
 * Its processes need not belong to any workload (a command on a login node does not).
 */
struct cpu_meter {
    bool primed;
    uint64_t rapl_uj[SNAP_CPU_DOMAINS];
    double cmd_s, all_s; /* CPU seconds: the command's, all CPUs' (busy and idle) */
    double uj[SNAP_CPU_DOMAINS];
};

static void meter_update(struct cpu_meter *m, const struct snapshot *s, double cmd_s,
                         double all_s) {
    uint64_t rapl[SNAP_CPU_DOMAINS] = {0};

    for (size_t i = 0; i < s->n_rapl; i++) {
        int d = rapl_domain_from_string(s->rapl[i].domain);

        if (d >= 0 && d < SNAP_CPU_DOMAINS)
            rapl[d] += s->rapl[i].energy_uj;
    }
    if (m->primed && all_s > m->all_s) {
        double share = cmd_s > m->cmd_s ? (cmd_s - m->cmd_s) / (all_s - m->all_s) : 0;

        for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++)
            if (rapl[d] >= m->rapl_uj[d])
                m->uj[d] += (double)(rapl[d] - m->rapl_uj[d]) * MIN(share, 1.0);
    }
    memcpy(m->rapl_uj, rapl, sizeof(rapl));
    /* The tree's ticks fall when a member left that none of them waited for (an orphan):
     * only the rise of each window counts. */
    m->cmd_s = cmd_s;
    m->all_s = all_s;
    m->primed = true;
}

static double clock_ticks_per_s(void) {
    long hz = sysconf(_SC_CLK_TCK);

    return hz > 0 ? (double)hz : 100;
}

/* All CPUs' time, busy and idle, from <procfs>/stat (a line per CPU and per interrupt:
 * over 16 KiB on a large node); 0 when unreadable. */
static double all_cpu_seconds(int proc_fd) {
    _cleanup_(freep) char *buf = NULL;
    struct cpu_times ct;
    size_t len;

    if (read_virtual_file_at(proc_fd, "stat", 16U << 20, &buf, &len) < 0 ||
        proc_cpu_stat_parse(buf, len, &ct) < 0)
        return 0;
    return (double)(cpu_times_active(&ct) + cpu_times_idle(&ct)) / clock_ticks_per_s();
}

/* The command's CPU time so far: its tree's as of the last scan, plus extra_s (the root's,
 * once reaped); or its cgroup's, which counts every process that was ever in it, when more.
 * The tree's is more only when processes left the cgroup (su -, systemd-run --scope): they
 * are still in the tree. */
static double command_cpu_seconds(const struct run_tree *t, double extra_s) {
    double tree_s = (double)t->cpu_ticks / clock_ticks_per_s() + extra_s;
    uint64_t us;

    if (t->cg && run_cgroup_usage_us(t->cg, &us) == 0)
        return MAX((double)us / 1e6, tree_s);
    return tree_s;
}

/* Ticks the sampler and the CPU meter once. */
static void run_tick(struct sampler *sampler, struct snapshot_slot *slot, struct run_tree *t,
                     struct cpu_meter *m, double extra_s) {
    struct tick_time now = sampler_now();
    struct snapshot *snap;

    (void)sampler_tick(sampler, &now);
    snap = snapshot_slot_get(slot);
    if (snap) {
        adopt_gpu_processes(sampler, t, snap);
        meter_update(m, snap, command_cpu_seconds(t, extra_s), all_cpu_seconds(t->proc_fd));
    }
    (void)snapshot_unref(snap);
}

static const struct snap_source *source(const struct snapshot *s, const char *name) {
    for (size_t i = 0; i < s->n_sources; i++)
        if (strcmp(s->sources[i].name, name) == 0)
            return &s->sources[i];
    return NULL;
}

/* The total of the CPU domains that do not count each other: package (it contains the
 * cores and the integrated GPU) plus DRAM; psys when that is all there is. */
static uint64_t cpu_total(const struct usage *u) {
    uint64_t sum = u->cpu_uj[RAPL_DOMAIN_PACKAGE] + u->cpu_uj[RAPL_DOMAIN_DRAM];

    return sum ? sum : u->cpu_uj[RAPL_DOMAIN_PSYS];
}

static void print_table(const struct config *cfg, char **argv, const struct snapshot *s,
                        const struct usage *u, double seconds, int status) {
    const struct snap_source *nvml = source(s, "nvml"), *rapl = source(s, "rapl");
    uint64_t total = cpu_total(u);

    fprintf(stderr, "\n Energy of '");
    for (char **a = argv; *a; a++)
        fprintf(stderr, "%s%s", a == argv ? "" : " ", *a);
    fprintf(stderr, "' (joulestat run):\n\n");
    for (size_t i = 0; i < s->n_gpus; i++) {
        const struct snap_gpu *g = &s->gpus[i];
        uint64_t uj = g->index < LEDGER_MAX_GPUS
                          ? u->gpu_measured_uj[g->index] + u->gpu_estimated_uj[g->index]
                          : 0;

        if (g->index >= LEDGER_MAX_GPUS || !u->gpu_used[g->index])
            continue;
        total += uj;
        fprintf(stderr, "  %14.3f J  GPU %u %s (%s)\n", (double)uj / 1e6, g->index, g->model,
                u->gpu_estimated_uj[g->index] ? "estimated: the GPU was shared"
                                              : "measured: the GPU to itself");
    }
    for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++)
        if (u->cpu_uj[d])
            fprintf(stderr, "  %14.3f J  CPU %s\n", (double)u->cpu_uj[d] / 1e6,
                    rapl_domain_to_string(d));
    if (!nvml && cfg->gpu_enabled)
        fprintf(stderr, "  %16s  GPU: not measured (no NVML)\n", "-");
    else if (nvml && !nvml->up)
        fprintf(stderr, "  %16s  GPU: not measured (NVML failed; see joulestat check)\n", "-");
    if (rapl && !rapl->up)
        fprintf(stderr, "  %16s  CPU: not measured (no RAPL; see joulestat check)\n", "-");
    fprintf(stderr, "\n  %14.3f J  total, %.3f s elapsed, %.3f W mean; exit status %d\n",
            (double)total / 1e6, seconds, seconds > 0 ? (double)total / 1e6 / seconds : 0, status);
    fprintf(stderr, "  %s\n\n",
            u->by_cgroup ? "Followed: its own cgroup, where every process it started was"
                         : "Followed: its process tree, scanned at each tick (no cgroup could be "
                           "made: a process that leaves the tree in between is missed)");
}

static void print_json(char **argv, const struct snapshot *s, const struct usage *u, double seconds,
                       int status) {
    uint64_t total = cpu_total(u);
    bool first = true;

    /* On a line of its own, whatever the command left unfinished on stderr (a progress bar). */
    fprintf(stderr, "\n{\"command\": [");
    for (char **a = argv; *a; a++) {
        fputs(a == argv ? "" : ", ", stderr);
        json_put_string(stderr, *a);
    }
    fprintf(stderr, "], \"exit_status\": %d, \"elapsed_seconds\": %.6f, \"gpus\": [", status,
            seconds);
    for (size_t i = 0; i < s->n_gpus; i++) {
        unsigned g = s->gpus[i].index;

        if (g >= LEDGER_MAX_GPUS || !u->gpu_used[g])
            continue;
        total += u->gpu_measured_uj[g] + u->gpu_estimated_uj[g];
        fprintf(stderr, "%s{\"gpu\": %u, \"measured_joules\": %.6f, \"estimated_joules\": %.6f}",
                first ? "" : ", ", g, (double)u->gpu_measured_uj[g] / 1e6,
                (double)u->gpu_estimated_uj[g] / 1e6);
        first = false;
    }
    fprintf(stderr, "], \"cpu_joules\": {");
    first = true;
    for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++)
        if (u->cpu_uj[d]) {
            fprintf(stderr, "%s\"%s\": %.6f", first ? "" : ", ", rapl_domain_to_string(d),
                    (double)u->cpu_uj[d] / 1e6);
            first = false;
        }
    fprintf(stderr, "}, \"total_joules\": %.6f, \"followed\": \"%s\"}\n", (double)total / 1e6,
            u->by_cgroup ? "cgroup" : "process_tree");
}

static void sleep_ns(uint64_t ns) {
    struct timespec ts = {.tv_sec = (time_t)(ns / NSEC_PER_SEC),
                          .tv_nsec = (long)(ns % NSEC_PER_SEC)};

    (void)nanosleep(&ts, NULL);
}

/* Waits up to ns, or until the command exits when its pidfd is open, or a signal comes
 * (a SIGTERM to pass on is passed at once). */
static void wait_exit(int pidfd, uint64_t ns) {
    struct pollfd p = {.fd = pidfd, .events = POLLIN};

    if (pidfd >= 0 && (poll(&p, 1, (int)(ns / NSEC_PER_MSEC)) >= 0 || errno == EINTR))
        return;
    sleep_ns(ns);
}

/* Ticks the sampler until the command exits; then the last window, with the command's
 * own CPU time and its reaped children's from wait4(). *ret_ended_ns: when its exit was
 * seen (a pidfd wakes at once; without one, within a poll). Returns 0 or -errno. */
static int follow(struct sampler *sampler, struct snapshot_slot *slot, const struct config *cfg,
                  struct run_tree *t, struct cpu_meter *m, int *ret_wstatus,
                  uint64_t *ret_ended_ns) {
    uint64_t poll_ns = sampler_poll_interval_ns(cfg), next_tick = clock_monotonic_ns();
    _cleanup_(closep) int pidfd = (int)syscall(SYS_pidfd_open, t->root, 0);

    for (;;) {
        struct tick_time now = sampler_now();
        struct rusage ru;
        pid_t w = wait4(t->root, ret_wstatus, WNOHANG, &ru);

        if (w < 0 && errno != EINTR)
            return -errno;
        /* Not once wait4() has reaped the root: its pid may be another process's now. */
        if (w != t->root) {
            int sig = run_signals_pending();

            if (sig)
                (void)kill(t->root, sig);
        }
        if (w == t->root) {
            *ret_ended_ns = clock_monotonic_ns();
            /* The root is gone from /proc: its time (and its reaped children's) is here. */
            double root_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                            (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;

            run_tree_scan(t);
            run_tick(sampler, slot, t, m, root_s);
            return 0;
        }
        if (now.mono_ns >= next_tick) {
            run_tree_scan(t);
            run_tick(sampler, slot, t, m, 0);
            next_tick += cfg->sample_interval_ns;
        } else
            sampler_poll(sampler, &now);
        wait_exit(pidfd, poll_ns);
    }
}

int run_command(const struct config *given, int *ret_status, int *ret_signal) {
    struct config c = *given;
    struct snapshot_slot *slot = snapshot_slot_new();
    struct sampler *sampler = NULL;
    struct snapshot *snap = NULL;
    _cleanup_(closep) int proc_fd = -1;
    struct run_tree t;
    struct cpu_meter meter = {0};
    struct run_signals old_signals;
    bool signals_taken = false, in_cgroup = false;
    struct usage u;
    uint64_t started, ended = 0;
    int r, wstatus = 0, status;
    pid_t root;

    run_tree_init(&t, -1);
    if (!slot)
        return -ENOMEM;
    /* Short windows for a command that may last a second, and RAPL read at every tick: the
     * last one, when the exit is seen, may come sooner than a scan interval after the one
     * before, and without a reading the command's last CPU time had no energy (a command
     * under 100 ms had none at all). */
    c.sample_interval_ns = MIN(c.sample_interval_ns, 200 * NSEC_PER_MSEC);
    c.process_scan_interval_ns = 0;
    /* The report sums the processes of the last snapshot: one that finished early must
     * still be in it, however long the rest ran. */
    c.metric_retention_ns = UINT64_MAX;
    proc_fd = open(c.procfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    t.proc_fd = proc_fd;
    if (proc_fd < 0) {
        r = log_error_errno(-errno, "run: cannot open --path.procfs '%s': %m", c.procfs);
        goto finish;
    }
    r = sampler_new(&c, slot, &sampler);
    if (r < 0) {
        log_error_errno(r, "run: cannot open the sources: %m");
        goto finish;
    }
    run_tick(sampler, slot, &t, &meter, 0); /* the baseline of every counter */
    r = run_signals_take(&old_signals);
    if (r < 0) {
        log_error_errno(r, "run: cannot set up signal handling: %m");
        goto finish;
    }
    signals_taken = true;
    r = run_cgroup_create(t.proc_fd, &t.cg);
    if (r < 0)
        log_debug_errno(r, "run: no cgroup of its own for the command (%m): following its "
                           "process tree");
    started = clock_monotonic_ns();
    r = run_spawn(c.run_argv, &old_signals, t.cg, &root, &in_cgroup);
    if (r < 0) {
        log_error_errno(r, "run: cannot start '%s': %m", c.run_argv[0]);
        *ret_status = r == -EACCES || r == -EPERM ? 126 : 127; /* a shell's */
        goto finish;
    }
    if (!in_cgroup)
        t.cg = run_cgroup_free(t.cg);
    run_tree_set_root(&t, root);
    r = follow(sampler, slot, &c, &t, &meter, &wstatus, &ended);
    /* Before anything can end joulestat (a signal given back, a closed stderr): what the
     * command left running goes back out, and its cgroup away. */
    t.followed_cgroup = t.cg != NULL;
    t.cg = run_cgroup_free(t.cg);
    sampler_stop_exec_watch(sampler); /* its thread's complaints stay out of the report */
    run_signals_give_back(&old_signals);
    signals_taken = false;
    /* A reader of the report that went away ends nothing: the command's status comes back. */
    (void)signal(SIGPIPE, SIG_IGN);
    if (r < 0) {
        log_error_errno(r, "run: cannot wait for the command: %m");
        goto finish;
    }
    status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    *ret_signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    *ret_status = status;
    r = 0;
    snap = snapshot_slot_get(slot);
    if (!snap) {
        log_error("run: no reading was made: no energy to report");
        goto finish;
    }
    sum_usage(sampler, snap, &t, &u);
    for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++)
        u.cpu_uj[d] = (uint64_t)meter.uj[d];
    if (c.json)
        print_json(c.run_argv, snap, &u, (double)(ended - started) / 1e9, status);
    else
        print_table(&c, c.run_argv, snap, &u, (double)(ended - started) / 1e9, status);

finish:
    if (signals_taken)
        run_signals_give_back(&old_signals);
    (void)snapshot_unref(snap);
    (void)run_cgroup_free(t.cg);
    sampler_free(sampler);
    snapshot_slot_free(slot);
    run_tree_done(&t);
    return r;
}
