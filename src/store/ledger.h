/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"
#include "labels.h"
#include "snapshot.h"

/*
 * The ledger owns every cumulative energy counter joulestat exports: per process and GPU,
 * per workload (container, pod, SLURM job), per GPU and per RAPL domain. Counters only
 * grow. Entries that stop being seen are kept, inactive, for the retention time and then
 * dropped; a workload's retention starts when its last process is gone, so a job's energy
 * survives the processes that made it.
 *
 * Every entry holds its labels as a shared, immutable set (labels.h) that snapshots
 * reference instead of copying. A set is made once, when the entry is created (with the
 * names the labeler attaches, see ledger_set_labeler()) or when its names change.
 *
 * Single-threaded: owned by the sampler thread. Readers get snapshots (snapshot.h).
 */

#define LEDGER_NO_INSTANCE UINT32_MAX
#define LEDGER_MIG_PROFILE_MAX 32

struct ledger_process {
    uint64_t key;
    unsigned gpu;
    uint32_t pid;
    uint64_t start_ticks;           /* field 22 of /proc/<pid>/stat; 0 when unknown */
    uint64_t earlier_key;           /* the entry before it on its (gpu, pid), pid reuse (0: none) */
    const struct snap_identity *id; /* shared labels (labels.h) */
    double start_time_seconds;
    uint64_t measured_uj;
    uint64_t estimated_uj;
    bool util_valid;
    double sm_util_ratio;
    double mem_util_ratio;
    bool memory_valid;
    uint64_t memory_used_bytes;
    bool active;
    uint64_t last_seen_ns;
    /* The container, pod and job entries this process books to (NULL: none), resolved
     * once: valid while wl_gen equals the ledger's workload_gen (bumped when workloads are
     * dropped; entries never move). id's ids are checked against them on every use. */
    struct ledger_workload *wl[_WORKLOAD_KIND_MAX];
    uint64_t wl_gen;
    /* The wl entries were refreshed from id as it is now; whoever replaces id (the
     * Kubernetes name fill) clears it, so the next booking copies names again. */
    bool wl_fresh;
    /* Kept by the GPU accounting from one window to the next. */
    uint64_t last_sample_us; /* its last utilisation sample counted (0: none yet) */
    uint32_t last_sm_util;   /* that sample's SM utilisation, percent */
    uint64_t ahead;          /* activity credited before its sample came, percent-us */
    int64_t carry;           /* sub-microjoule remainder it is owed, 2^-32 uJ */
    uint64_t class_key;      /* whose learned intensity it shares (0: not derived yet) */
    uint64_t family_key;     /* its command's, derived with class_key (0: none) */
    bool intensity_valid;    /* its class's intensity is learned */
    double intensity_watts;  /* W per 100 % SM */
    /* Its MIG instance (fixed for its life), LEDGER_NO_INSTANCE without MIG. */
    uint32_t gpu_instance;
    uint32_t compute_instance;
    char mig_profile[LEDGER_MIG_PROFILE_MAX];
};

struct ledger_workload {
    uint64_t key;
    enum workload_kind kind;
    const struct snap_identity *id; /* shared labels: the kind's fields only */
    uint64_t gpu_uj;
    uint64_t cpu_uj;
    bool cpu_unseen_valid;
    uint64_t cpu_unseen_uj[SNAP_CPU_DOMAINS];
    bool active;
    uint64_t last_seen_ns;
    uint64_t cpu_seen_ns; /* last CPU scan that touched it; 0: never */
    bool ended;           /* its cgroup is gone and its last CPU time booked: not active */
};

/* CPU energy of one process series: key = (pid, labels), see snapshot.h. */
struct ledger_cpu_process {
    uint64_t key;
    uint32_t pid;
    uint64_t start_ticks;           /* of the latest process behind the series */
    const struct snap_identity *id; /* shared labels */
    uint64_t energy_uj[SNAP_CPU_DOMAINS];
    bool active; /* until the scan that reports the process exited */
    uint64_t last_seen_ns;
};

struct ledger_gpu {
    bool present;
    unsigned index;
    char uuid[SNAP_LABEL_MAX];
    char model[SNAP_LABEL_MAX];
    bool up;
    bool energy_estimated;
    uint64_t energy_uj;
    uint64_t unattributed_uj[_UNATTR_MAX];
    uint64_t allocated_uj; /* given to the pods that hold it (idle policy allocation) */
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

/* Dies per package whose counters survive a restart (more have never been built). */
#define LEDGER_RAPL_MAX_DIES 8

struct ledger_rapl {
    unsigned package;
    char domain[16];
    uint64_t energy_uj;
    uint64_t unattributed_uj[_UNATTR_MAX];
    /* The raw counter of each die when last read (a package of several dies has a counter
     * per die), kept across a restart by --state-dir: a bit per die in raw_valid, and in
     * restored while the value came from the state file and was not read again yet. */
    uint32_t raw_valid, restored;
    uint64_t raw[LEDGER_RAPL_MAX_DIES], modulus, unit_num, unit_den;
    /* When each die's raw counter was read, in this run's monotonic clock: a restored one
     * was read before this run, and may lie before the clock's zero. The longer ago, the
     * more often the counter may have wrapped since. */
    int64_t raw_read_ns[LEDGER_RAPL_MAX_DIES];
    /* Dies whose reading was saved before a reboot, or before a time unknown: it counts
     * from nothing now, and is never bridged (kept so until the die is read again). */
    uint32_t raw_stale;
    /* Dies whose counter was opened again while joulestat ran (of restored, not from the
     * state file): what it moved meanwhile is no data, not downtime. */
    uint32_t reopened;
    /* Time joulestat was down while the counter could have wrapped more than once: its
     * energy is unknown, and said so rather than guessed. */
    uint64_t downtime_unknown_us;
    /* The instant of the last addition to it, and how much it added then: the dies of a
     * package that say so at one instant add the time once. */
    uint64_t unknown_at_ns, unknown_at_us;
};

#define LEDGER_MAX_GPUS 64

/* A pod's hold on a GPU (pod-resources) and the energy charged for it. */
struct ledger_allocation {
    uint64_t key; /* (gpu, namespace, pod, pod_uid) */
    unsigned gpu;
    char namespace_[SNAP_LABEL_MAX];
    char pod[SNAP_LABEL_MAX];
    char pod_uid[SNAP_ID_MAX];
    unsigned replicas;
    uint64_t energy_uj;
    bool active;
    uint64_t last_seen_ns;
};

/* Fills in what it knows of id's empty names (pod, namespace, container). */
typedef void (*ledger_labeler_fn)(void *userdata, struct snap_identity *id);

struct ledger {
    struct hashmap processes;     /* key -> struct ledger_process */
    struct hashmap gpu_latest;    /* (gpu, pid) -> key of its newest process entry */
    struct hashmap workloads;     /* key -> struct ledger_workload */
    struct hashmap cpu_processes; /* key -> struct ledger_cpu_process */
    struct hashmap cpu_latest;    /* pid + 1 -> key of the series that pid books to now */
    uint64_t cpu_scan_ns;         /* the latest CPU scan: workloads it touched stay active */
    struct ledger_gpu gpus[LEDGER_MAX_GPUS];
    size_t n_rapl;
    size_t rapl_cap;
    struct ledger_rapl *rapl;
    uint64_t *sweep_keys; /* scratch for sweeping */
    size_t sweep_cap;
    struct hashmap allocations;    /* key -> struct ledger_allocation (ledger_alloc.c) */
    struct hashmap past_workloads; /* key -> workloads retention dropped (ledger_past.c) */
    uint64_t workload_gen;         /* >= 1; bumped whenever workload entries are freed */
    uint64_t process_gen;          /* >= 1; bumped whenever GPU process entries are freed */
    ledger_labeler_fn labeler;     /* attaches names to new entries' labels; NULL: none */
    void *labeler_userdata;
};

void ledger_init(struct ledger *l);
void ledger_done(struct ledger *l);

/* The labeler every new label set goes through once (the Kubernetes API's names). */
void ledger_set_labeler(struct ledger *l, ledger_labeler_fn fn, void *userdata);

/* A new label set from id, through the labeler. NULL on ENOMEM. */
const struct snap_identity *ledger_labels_new(const struct ledger *l,
                                              const struct snap_identity *id);

/* Replaces *slot (an entry's labels) by a new set with id's values: 0, or -ENOMEM with
 * *slot unchanged. Used when names arrive for an existing entry. */
int ledger_labels_replace(const struct snap_identity **slot, const struct snap_identity *id);

/* The ledger key of a process on a GPU: (gpu, pid, start time) so a reused pid is new. */
uint64_t ledger_process_key(unsigned gpu, uint32_t pid, uint64_t start_ticks);

/* Finds or creates the entry; a new entry starts with zero energy and the labels id (an
 * existing one keeps its own). Returns 1 when it was created, 0 when it existed, or
 * -ENOMEM. */
int ledger_process_get(struct ledger *l, unsigned gpu, uint32_t pid, uint64_t start_ticks,
                       const struct snap_identity *id, struct ledger_process **ret);

/* A workload of kind with the ids in id and the given counters, inactive as of now_ns
 * (restored from a saved state, ledger_state.h). Returns 0, -EINVAL (id names no workload
 * of that kind) or -ENOMEM. cpu_unseen_uj: SNAP_CPU_DOMAINS values, or NULL. */
int ledger_workload_restore(struct ledger *l, enum workload_kind kind,
                            const struct snap_identity *id, uint64_t gpu_uj, uint64_t cpu_uj,
                            const uint64_t *cpu_unseen_uj, uint64_t now_ns);

/* Adds GPU energy to a process and to its container, pod and job. Returns 0/-ENOMEM. */
int ledger_add_gpu_energy(struct ledger *l, struct ledger_process *p, uint64_t uj, bool estimated,
                          uint64_t now_ns);

/* Adds CPU energy to the workloads of an identity (container, pod, job). */
int ledger_add_cpu_energy(struct ledger *l, const struct snap_identity *id, uint64_t uj,
                          uint64_t now_ns);

/*
 * CPU (ledger_cpu.c). ledger_cpu_scan() marks the start of a process scan: workloads
 * touched by it stay active until the next scan, though other ticks sweep in between.
 * ledger_add_cpu_process_energy() adds one domain's energy (domain < SNAP_CPU_DOMAINS) to
 * the series (pid, id) and marks it active; ledger_cpu_process_exited() marks it inactive
 * (retention starts) unless a newer process with other start_ticks took the series over;
 * when (pid, id) names no series of that process (it exec'd or left its workload since it
 * last booked), the one the pid booked to last ends.
 * ledger_add_cpu_unseen() adds the unseen energy uj[d] of each domain d in the bit mask
 * `domains` to the workload id names most specifically (container, else pod, else job); it
 * does not touch cpu_uj (add that with ledger_add_cpu_energy). Return 0, -EINVAL (a domain
 * out of range, no workload) or -ENOMEM.
 */
void ledger_cpu_scan(struct ledger *l, uint64_t now_ns);
/* Frees one struct ledger_cpu_process and its labels' reference. */
void ledger_cpu_process_free(void *value);
/* Part of ledger_sweep(): drops CPU process series inactive for longer than retention. */
void ledger_sweep_cpu_processes(struct ledger *l, uint64_t now_ns, uint64_t retention_ns);
int ledger_add_cpu_process_energy(struct ledger *l, uint32_t pid, uint64_t start_ticks,
                                  const struct snap_identity *id, unsigned domain, uint64_t uj,
                                  uint64_t now_ns);
void ledger_cpu_process_exited(struct ledger *l, uint32_t pid, uint64_t start_ticks,
                               const struct snap_identity *id, uint64_t now_ns);
int ledger_add_cpu_unseen(struct ledger *l, const struct snap_identity *id, const uint64_t *uj,
                          unsigned domains, uint64_t now_ns);
/* The workload of kind k that id names ended (its cgroup is gone, its last CPU time
 * booked): it shows as not active from the next snapshot on, until booked again. */
void ledger_cpu_workload_ended(struct ledger *l, enum workload_kind k,
                               const struct snap_identity *id);

/* The GPU slot for an index (< LEDGER_MAX_GPUS), or NULL. */
struct ledger_gpu *ledger_gpu(struct ledger *l, unsigned index);

/* Finds or creates a RAPL domain accumulator. */
int ledger_rapl_get(struct ledger *l, unsigned package, const char *domain,
                    struct ledger_rapl **ret);

/*
 * End of a tick: processes not seen since `tick_start_ns` become inactive (their counters
 * stay); inactive processes and workloads older than retention are dropped. Workloads with
 * an active process stay active.
 */
void ledger_sweep(struct ledger *l, uint64_t tick_start_ns, uint64_t now_ns, uint64_t retention_ns);

/*
 * GPU allocations (ledger_alloc.c). ledger_add_allocation_energy() charges uj (may be 0: the
 * hold is still recorded) to a pod holding a GPU, and to the pod's workload GPU energy
 * when pod_uid is known. Strings longer than the label size are cut. 0 or -ENOMEM.
 */
int ledger_add_allocation_energy(struct ledger *l, unsigned gpu, const char *namespace_,
                                 const char *pod, const char *pod_uid, unsigned replicas,
                                 uint64_t uj, uint64_t now_ns);
/* An allocation saved before a restart (ledger_state.c): restored inactive as of now_ns,
 * with its energy; its pod's workload has its own saved counters, so nothing is added
 * there. Charged again, it continues from there. 0 or -ENOMEM. */
int ledger_allocation_restore(struct ledger *l, unsigned gpu, const char *namespace_,
                              const char *pod, const char *pod_uid, unsigned replicas, uint64_t uj,
                              uint64_t now_ns);
/* Adds GPU energy to the workloads of an identity (for energy not tied to a process). */
int ledger_add_workload_gpu_energy(struct ledger *l, const struct snap_identity *id, uint64_t uj,
                                   uint64_t now_ns);
/* Part of ledger_sweep()/ledger_snapshot() for allocations. */
void ledger_sweep_allocations(struct ledger *l, uint64_t tick_start_ns, uint64_t now_ns,
                              uint64_t retention_ns);
int ledger_snapshot_allocations(const struct ledger *l, struct snapshot *s);

/* Builds an immutable snapshot of the ledger (the caller fills self-metrics), in the
 * arrays of `recycled` when given (snapshot_slot_take_spare(); taken over either way).
 * NULL on ENOMEM. */
struct snapshot *ledger_snapshot(const struct ledger *l, struct snapshot *recycled);
