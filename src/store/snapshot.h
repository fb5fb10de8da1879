/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "split_method.h" /* IWYU pragma: export */

#include "workload_kind.h"

/*
 * An immutable picture of everything exported, built by the sampler after each tick and
 * published with a reference count. The HTTP side renders from it and never samples.
 * Energies are integer microjoules (rendered as joules with six decimals). Each process
 * and workload entry holds a reference to the ledger's label set (labels.h): the labels
 * are shared, not copied, and are released with the snapshot.
 */

struct snap_gpu_process {
    uint32_t pid;
    unsigned gpu;
    const struct snap_identity *id; /* a reference (labels.h) */
    uint64_t energy_measured_uj;    /* exclusive windows */
    uint64_t energy_estimated_uj;   /* shared windows */
    bool util_valid;
    double sm_util_ratio;
    double mem_util_ratio;
    bool memory_valid;
    uint64_t memory_used_bytes;
    double start_time_seconds; /* unix time */
    bool active;
    bool intensity_valid;   /* its workload's power intensity is learned */
    double intensity_watts; /* W per 100 % SM */
    bool mig;               /* on a MIG instance: the three below are its labels */
    uint32_t gpu_instance;
    uint32_t compute_instance;
    char mig_profile[32];
};

/* CPU energy per process (--cpu-process-metrics), one counter per RAPL domain (indexed by
 * enum rapl_domain, summed over packages). One series per (pid, labels): a pid reused by a
 * process with the same labels continues the same counter. */
#define SNAP_CPU_DOMAINS 5

struct snap_cpu_process {
    uint32_t pid;
    const struct snap_identity *id; /* a reference (labels.h) */
    uint64_t energy_uj[SNAP_CPU_DOMAINS];
    bool active;
};

enum unattributed_reason {
    UNATTR_IDLE,        /* idle energy kept at device level by policy */
    UNATTR_NO_CONSUMER, /* device busy or idle with no process on it */
    UNATTR_NO_DATA,     /* windows without a usable reading (GPU lost, counter glitch) */
    UNATTR_SYSTEM,      /* CPU time of processes that belong to no workload, and the kernel */
    UNATTR_DOWNTIME,    /* what a GPU's counter moved while joulestat was not running */
    _UNATTR_MAX,
};

const char *unattributed_reason_to_string(enum unattributed_reason r);

struct snap_gpu {
    unsigned index;
    char uuid[SNAP_LABEL_MAX];
    char model[SNAP_LABEL_MAX];
    bool up;
    bool energy_estimated; /* no energy counter: integrated from power */
    uint64_t energy_uj;    /* measured since joulestat started */
    uint64_t unattributed_uj[_UNATTR_MAX];
    uint64_t allocated_uj; /* given to the pods that hold it, not to processes */
    bool power_valid;
    double power_watts;
    bool idle_power_valid;
    double idle_power_watts;
    unsigned process_count;
    bool split_valid;        /* per-process utilisation: a split method applies */
    enum split_method split; /* the last window's */
    uint64_t split_windows[_SPLIT_METHOD_MAX];
    enum gpu_sharing sharing;       /* the last window's */
    enum mig_activity mig_activity; /* the last window's, when sharing is SHARING_MIG */
};

struct snap_rapl {
    unsigned package;
    char domain[16];
    uint64_t energy_uj;
    uint64_t unattributed_uj[_UNATTR_MAX];
    uint64_t downtime_unknown_us; /* time down with its energy unknown (rapl_resume.h) */
};

/* Energy per workload (a kind of workload_kind.h), by component. */
struct snap_workload {
    enum workload_kind kind;
    const struct snap_identity *id; /* a reference (labels.h): the kind's fields */
    uint64_t gpu_energy_uj;
    uint64_t cpu_energy_uj;
    /* CPU energy of the workload's cgroup CPU time that no process scan saw (processes
     * that lived between two scans), per RAPL domain; only for workloads that are CPU
     * groups (the container, or the job): cpu_unseen_valid. */
    bool cpu_unseen_valid;
    uint64_t cpu_unseen_uj[SNAP_CPU_DOMAINS];
    bool active;
};

/* Energy charged to a pod for holding a GPU (kubelet pod-resources, idle policy
 * `allocation`): the GPU's idle energy, and all of it in windows without processes. */
struct snap_gpu_allocation {
    unsigned gpu;
    char namespace_[SNAP_LABEL_MAX];
    char pod[SNAP_LABEL_MAX];
    char pod_uid[SNAP_ID_MAX]; /* empty until the Kubernetes API names the pod */
    unsigned replicas;         /* device ids (time-slicing replicas) the pod holds */
    uint64_t energy_uj;
    bool active; /* the pod held the GPU in the last window */
};

struct snap_source {
    char name[32];
    bool up;
    uint64_t errors;
};

struct snapshot {
    atomic_uint refs;
    uint64_t generation;
    double timestamp_seconds;
    const char *metric_prefix; /* owned by config, outlives snapshots */

    size_t n_gpu_processes;
    struct snap_gpu_process *gpu_processes;
    size_t n_gpus;
    struct snap_gpu *gpus;
    size_t n_rapl;
    struct snap_rapl *rapl;
    size_t n_workloads;
    struct snap_workload *workloads;
    size_t n_cpu_processes;
    struct snap_cpu_process *cpu_processes;
    size_t n_sources;
    struct snap_source *sources;
    size_t n_gpu_allocations;
    struct snap_gpu_allocation *gpu_allocations;

    double last_sample_duration_seconds;
    uint64_t samples_total;

    /* Allocated lengths of the arrays above, for a recycled snapshot (snapshot_recycle). */
    size_t cap_gpu_processes, cap_rapl, cap_workloads, cap_cpu_processes, cap_sources,
        cap_gpu_allocations;
};

/* The RAPL domains the snapshot measures: bit d set for enum rapl_domain d (d <
 * SNAP_CPU_DOMAINS) when some package has it. Per-domain CPU series cover these only. */
unsigned snapshot_rapl_domains(const struct snapshot *s);

/* Allocates an empty snapshot with one reference. NULL on ENOMEM. */
struct snapshot *snapshot_new(void);
struct snapshot *snapshot_ref(struct snapshot *s);
/* Drops a reference; frees on the last. Accepts NULL; returns NULL. */
struct snapshot *snapshot_unref(struct snapshot *s);

/* Makes s (the only reference) empty again with its arrays kept, for the next build. */
void snapshot_recycle(struct snapshot *s);

/* The published pointer: the sampler swaps, readers take a reference. Thread-safe. */
struct snapshot_slot;
struct snapshot_slot *snapshot_slot_new(void);
struct snapshot_slot *snapshot_slot_free(struct snapshot_slot *slot);
/* Publishes s (takes ownership of the caller's reference). The snapshot it replaces, when
 * no reader holds it, is kept as the slot's spare instead of being freed. */
void snapshot_slot_publish(struct snapshot_slot *slot, struct snapshot *s);
/* The spare (recycled, one reference) or NULL; for the thread that publishes: building
 * the next snapshot in the last one's memory spares the page faults of fresh memory. */
struct snapshot *snapshot_slot_take_spare(struct snapshot_slot *slot);
/* Returns a new reference to the latest snapshot, or NULL if none yet. */
struct snapshot *snapshot_slot_get(struct snapshot_slot *slot);
