/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup_cpu.h"
#include "cgroup_path.h"
#include "hashmap.h"
#include "slurm_watch.h"
#include "snapshot.h"

/*
 * The workloads the CPU split knows (one per container, pod-level process set, SLURM job
 * step, or SLURM job whose processes name no step), kept across scans with the workload cgroup's
 * CPU-time reader:
 *
 * - created when the first process of the workload is seen; its cgroup directory is found
 *   from that process's <procfs>/<pid>/cgroup (cgroup_workload_dir()) and opened under
 *   <sysfs>/fs/cgroup (cgroup_cpu_open()); the directory fd stays open;
 * - every scan reads the cgroup's cumulative usage once (cpu_groups_read()), before the
 *   process scan: a workload whose usage did not move has no process that ran, whose stat
 *   the scan may then leave unread (procfs_set_unchanged());
 * - dropped when no process of it is alive and its cgroup is gone (or never had one), so
 *   a container that only runs short-lived processes between scans keeps being read.
 *
 * Work per scan: one cgroup read per workload, plus one <pid>/cgroup read and one
 * directory open per new workload (or per new process while its workload has no cgroup).
 *
 * When the scan reads every process's CPU time (the task iterator) and every exit since
 * the last read is known (the exec watch), a cgroup adds only what exited processes used
 * after the last scan saw them: cpu_groups_select_reads() then has the next read leave out
 * the workloads with no exit (cpu_groups_mark_exit()), but for one in
 * CPU_GROUPS_FULL_READ_SCANS, staggered, in case an exit was missed. The next read of a
 * group takes off what its processes were seen to use in the windows it was left out of,
 * so its cgroup_delta_us is still what this window's processes used, and nothing that
 * exited unseen is lost, only given a few scans later.
 */
#define CPU_GROUPS_FULL_READ_SCANS 10

struct cpu_group {
    uint64_t key;
    struct snap_identity id; /* workload labels (no process name) */
    struct cgroup_cpu *cgroup;
    bool have_usage;
    bool usage_from_scan; /* last_usage_us came from cpu_groups_read(), not the baseline */
    uint64_t last_usage_us;
    /* Consecutive cpu_groups_read()s, up to the latest, that found the usage of the read
     * before them: the workload has not run for that many scans. */
    uint64_t unchanged_reads;
    uint32_t n_live; /* processes of the workload alive at the latest scan */

    /* This window. */
    uint64_t seen_us;
    uint64_t cgroup_delta_us;
    bool cgroup_valid;

    /* Reads left out (cpu_groups_select_reads()): a process of it exited since its last
     * read; this window's read was left out; seen_us of the windows left out since. */
    bool exited;
    bool read_skipped;
    uint64_t skipped_seen_us;

    /* SLURM job steps followed by the watch (cpu_groups_slurm.c). */
    bool watched;      /* its cgroup is a step directory the watch knows */
    bool ended;        /* its cgroup went away in this window: its last time is in */
    size_t watch_step; /* index in the steps taken for this read; SIZE_MAX: none */
    uint64_t tail_weight;
    bool tail_exact; /* ended with its whole final usage known: no share of the root's rest */
};

struct exec_exit;

struct cpu_groups {
    int proc_fd, sys_fd;     /* borrowed; -1: no cgroup reads */
    bool prepared;           /* cpu_groups_prepare() read the groups for this window */
    bool read_selected;      /* the next read leaves out groups with no exit */
    struct exec_exit *exits; /* room for the exits taken from the exec watch */
    uint64_t reads;          /* cpu_groups_read()s so far */
    struct hashmap index;    /* key -> index + 1 */
    struct cpu_group *v;
    size_t n, cap;

    /* The SLURM job watch (borrowed; NULL: none), the steps taken from it at this read,
     * and the slurm root's usage at the previous read. */
    struct slurm_watch *watch;
    struct slurm_watch_step *taken;
    size_t n_taken, taken_cap;
    bool root_have, root_prev_have;
    uint64_t root_usage_us, root_prev_us;
};

void cpu_groups_init(struct cpu_groups *g, int proc_fd, int sys_fd);
void cpu_groups_done(struct cpu_groups *g);

/* Follows SLURM job steps' cgroups through w (borrowed, may be NULL): groups for steps no scan
 * saw, their CPU time to the end (cpu_groups_slurm.c). */
void cpu_groups_set_watch(struct cpu_groups *g, struct slurm_watch *w);

/* Creates the group of key for identity w, without a cgroup. Returns 0 or -ENOMEM. */
int cpu_groups_add(struct cpu_groups *g, uint64_t key, const struct workload_identity *w,
                   size_t *ret_index);

/* The SLURM part of cpu_groups_read(): before the reads, takes the watch's steps and makes
 * groups for new ones; cpu_groups_slurm_final() books a step whose cgroup is gone from the
 * watch's last read; after the reads, cpu_groups_slurm_tails() gives the slurm root's
 * growth that no group's read explains to the steps that ended in this window. */
void cpu_groups_slurm_take(struct cpu_groups *g);
void cpu_groups_slurm_final(struct cpu_groups *g, struct cpu_group *grp);
void cpu_groups_slurm_tails(struct cpu_groups *g);

/* The group of key (ret_index), created for process pid with identity w when missing. A
 * group without a cgroup retries finding it with this pid when retry is set (a new
 * process). Returns 1 when created, 0 when it existed, or -ENOMEM; cgroup problems only
 * leave the group without one. */
int cpu_groups_get(struct cpu_groups *g, uint64_t key, uint32_t pid,
                   const struct workload_identity *w, bool retry, size_t *ret_index);

/* Index of key, or SIZE_MAX. */
size_t cpu_groups_find(const struct cpu_groups *g, uint64_t key);

/* Start of a window: clears seen_us / cgroup_valid. */
void cpu_groups_begin(struct cpu_groups *g);

/* Reads every group's cgroup usage, once per scan: sets cgroup_delta_us/cgroup_valid when
 * the previous read was good too, and unchanged_reads; a cgroup that is gone (or fails)
 * is closed. */
void cpu_groups_read(struct cpu_groups *g);

/* The next cpu_groups_read() reads only the groups marked by cpu_groups_mark_exit(), new
 * ones, SLURM steps, and those due for their periodic read: every exit since the last read
 * is known, and every process's CPU time comes from the scan. */
void cpu_groups_select_reads(struct cpu_groups *g);

/* A process of the workload of key exited: its cgroup is read at the next read. */
void cpu_groups_mark_exit(struct cpu_groups *g, uint64_t key);

/* Before cpu_groups_prepare(): when scanner reads the task iterator and watch (borrowed)
 * knows every exit since its last call, marks the workloads of those exits and selects the
 * reads (cpu_groups_exits.c). Else every cgroup is read, as always. Returns 0 or -ENOMEM. */
struct exec_watch;
struct procfs_scanner;
int cpu_groups_select_by_exits(struct cpu_groups *g, struct procfs_scanner *scanner,
                               struct exec_watch *watch);

/* The workload group key of pid (0: a workload without a cgroup of its own); false when
 * the sources know nothing of pid. */
typedef bool (*cpu_groups_lookup_fn)(void *userdata, uint32_t pid, uint64_t *ret_key);

/* The choices of cpu_groups_select_by_exits(): marks the workload of each exit, placed by
 * the process itself, else by its parent, and selects the reads. Returns false, selecting
 * nothing (every cgroup is read), when an exit is placed by neither. */
struct exec_exit;
bool cpu_groups_place_exits(struct cpu_groups *g, const struct exec_exit *exits, size_t n,
                            cpu_groups_lookup_fn lookup, void *userdata);

/* The growth of grp's cgroup usage from its last read to usage (not below it), less what
 * its processes were seen to use in the windows whose reads were left out. */
uint64_t cpu_group_delta_since_read(const struct cpu_group *grp, uint64_t usage);

/* True when the workload of key has a cgroup whose usage stayed the same through the last
 * reads + 1 cpu_groups_read()s. */
bool cpu_groups_unchanged(const struct cpu_groups *g, uint64_t key, uint64_t reads);

/* Drops groups with no live process and no cgroup. */
void cpu_groups_prune(struct cpu_groups *g);

/*
 * One process scan, in this order:
 *   cpu_groups_prepare()  before the scan: a new window (cpu_groups_begin()) and every
 *                         cgroup's usage (cpu_groups_read()), so the scan can leave out
 *                         the stat of processes whose workload did not run
 *                         (cpu_groups_unchanged_fn());
 *   cpu_groups_track()    after it: a group for each workload that has a new or running
 *                         process (its cgroup found and opened), live processes counted,
 *                         exited ones uncounted; prepares first if that was not done;
 *   ... the CPU split (cpu_accounting_tick()) reads the groups ...
 *   cpu_groups_finish()   the window is over: prunes groups nobody needs any more.
 * cpu_groups_track() returns 0 or -ENOMEM.
 */
struct procfs_process;
void cpu_groups_prepare(struct cpu_groups *g);
int cpu_groups_track(struct cpu_groups *g, const struct procfs_process *rows, size_t n);
void cpu_groups_finish(struct cpu_groups *g);

/* A procfs_unchanged_fn (userdata: the groups): true when identity's workload used no CPU
 * through the last scans_ago + 1 prepared reads. */
bool cpu_groups_unchanged_fn(void *userdata, const struct workload_identity *identity,
                             uint64_t scans_ago);
