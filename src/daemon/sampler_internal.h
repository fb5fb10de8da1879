/* SPDX-License-Identifier: MIT */
#pragma once

/* The sampler's state, shared by sampler.c (the tick) and sampler_sources.c (opening the
 * sources). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "accounting.h"
#include "clock.h"
#include "cpu.h"
#include "gpu.h"
#include "kube.h"
#include "log.h"
#include "pod_allocations.h"
#include "proc.h"
#include "sampler.h"
#include "stopper.h"
#include "store.h"

enum source_id { SOURCE_NVML, SOURCE_RAPL, SOURCE_STATE, _SOURCE_MAX };

extern const char *const sampler_source_names[_SOURCE_MAX];

/* --state-dir: the counters are saved, then published, this often (and at each process
 * scan and at exit). */
#define STATE_SAVE_INTERVAL_NS (5 * NSEC_PER_SEC)
/* ... and at most this often, however often scans are asked for. */
#define STATE_SAVE_MIN_NS NSEC_PER_SEC

struct source_health {
    bool up;
    uint64_t errors;
    struct complaint complaint;
};

#define GPU_REOPEN_INTERVAL_NS (60 * NSEC_PER_SEC)
/* RAPL closed or not reading is opened again after 5 s, then at doubling intervals up to
 * a minute: a fix made soon after the start (a udev rule, the module loaded) is taken up at
 * once, and a node without RAPL pays one look at sysfs a minute. */
#define RAPL_RETRY_FIRST_NS (5 * NSEC_PER_SEC)
#define RAPL_RETRY_MAX_NS (60 * NSEC_PER_SEC)

struct sampler {
    const struct config *cfg;
    struct snapshot_slot *slot;
    struct ledger ledger;

    struct gpu_source *gpu;
    struct gpu_accounting *gpu_accounting;
    uint64_t gpu_next_open_ns;
    /* Per GPU, where its MIG instances' activity came from when it was last said, and a
     * new source seen since, for how many windows: 1 + enum mig_activity, 0 none
     * (say_mig_activity()). */
    uint8_t mig_activity_said[LEDGER_MAX_GPUS];
    uint8_t mig_activity_next[LEDGER_MAX_GPUS];
    uint8_t mig_activity_windows[LEDGER_MAX_GPUS];
    process_resolve_fn resolve;
    void *resolve_userdata;

    int sys_fd, dev_fd, proc_fd;
    struct procfs_scanner *procfs;
    struct exec_watch *exec_watch; /* who short-lived processes were; NULL when off */
    struct identity_resolver resolver;
    struct complaint procfs_complaint;
    /* Events a tick may see each time (a counter glitching on and on, the clock stepping,
     * a tick failing): said at the complaints' doubling intervals, not at every tick. */
    struct complaint glitch_complaint, clock_complaint, tick_complaint;
    bool procfs_bpf; /* the scanner reads the task iterator (until it fails) */
    struct rapl *rapl;
    struct complaint rapl_partial_complaint; /* some counters unreadable, others not */
    uint64_t rapl_next_open_ns; /* when it may be tried again (closed, or not reading) ... */
    uint64_t rapl_retry_ns;     /* ... and how long it waits after that; 0: never tried */
    int rapl_open_error;        /* the last failure to open it that was said; 0 none */
    struct complaint rapl_reopen_complaint; /* opened again because none read */
    uint64_t rapl_failing_since_ns;         /* no counter read since this scan; 0: they read */
    struct cpu_id rapl_cpu;        /* as its first open read it (vendor unknown: not yet) */
    uint64_t rapl_unread_since_ns; /* some counters unread since this scan; 0: all read */
    uint64_t rapl_unread_next_ns;  /* when those are opened again (powercap) ... */
    uint64_t rapl_unread_retry_ns; /* ... and how long it waits after that */
    struct cpu_accounting *cpu_accounting;
    struct cpu_groups cpu_groups;    /* the workloads' cgroup CPU time, for the CPU split */
    struct slurm_watch *slurm_watch; /* SLURM job cgroups as they come and go; NULL: none */
    struct kube_labels *kube;        /* pod names from the API server; NULL when off */
    struct pod_allocations *podres;  /* kubelet pod-resources; NULL when off */
    char *stat_buf;
    size_t stat_cap;
    uint64_t next_scan_ns;

    struct source_health health[_SOURCE_MAX];
    uint64_t generation;
    uint64_t published_mono_ns;      /* tick time of the last published snapshot */
    bool publish_pending;            /* a scan's results wait for the next save */
    const char *state_dir;           /* --state-dir, for serve only (NULL: no state kept) */
    char boot_id[STATE_BOOT_ID_MAX]; /* this boot's, for the state file; "" unknown */
    int state_lock_fd;               /* holds --state-dir's lock; -1 */
    bool state_locked_out;           /* another joulestat holds it: nothing read or saved */
    uint64_t ticks;
    _Atomic uint64_t last_tick_mono_ns;

    pthread_t thread;
    bool thread_started;
    struct stopper stopper;
};

/* sampler_sources.c: opening the sources and saying how each is doing. */

/* Logs a source failure once, then at growing intervals; says so when it recovers. */
void sampler_source_failed(struct sampler *s, enum source_id id, int err, uint64_t now_ns,
                           const char *what);
void sampler_source_ok(struct sampler *s, enum source_id id);
/* NVML; retried every GPU_REOPEN_INTERVAL_NS while it fails. */
void sampler_open_gpu(struct sampler *s, uint64_t now_ns);
/* One line on how processes are read: at start, and when the iterator stops working. */
void sampler_log_scan_method(struct sampler *s);
/* The process table; retried at every scan while it fails (a fake procfs filled later, a
 * /proc mounted late), said from the first tick on (at_start: the try in sampler_new()).
 * Only -ENOMEM is returned. */
int sampler_open_procfs(struct sampler *s, uint64_t now_ns, bool at_start);
/* The kernel's exec and exit events, so that a process gone before the next scan is still
 * known (exec_watch.h). Not for a test tree of /proc (its pids are not the kernel's). */
void sampler_start_exec_watch(struct sampler *s);
/* RAPL; a failure is said once, and said again only when it changes. */
void sampler_open_rapl(struct sampler *s, uint64_t now_ns);
/* --state-dir: the counters of the last run, and where each GPU's counter was. */
int sampler_restore_state(struct sampler *s);
void sampler_save_state(struct sampler *s, uint64_t mono_ns);
