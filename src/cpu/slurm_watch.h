/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"

/*
 * SLURM job steps' cgroups followed as they come and go, so a step's CPU time is read to
 * its end and a job shorter than the process scan is seen at all. A job's CPU time is its
 * steps' (slurmstepd itself is in none of them on v1; on v2 it is in its step's "slurm"
 * leaf), so a job is followed through its steps.
 *
 * A thread watches, with inotify:
 *   cgroup v2: <sysfs>/fs/cgroup/system.slice for "[<node>_]slurmstepd.scope", that scope
 *              for job directories ("job_<n>" or a SLUID), each job directory for its
 *              steps ("step_<s>"), and each step's cgroup.events: at "populated 0" (no
 *              process left in the step) the step's cpu.stat is read at once, before
 *              slurmstepd removes the directory;
 *   cgroup v1: the cpuacct mount for "slurm" / "slurm_<node>", that root for "uid_<n>",
 *              each uid directory for "job_<n>", each job for "step_<s>". v1 has no
 *              cgroup.events: each live step's cpuacct.usage is read every
 *              SLURM_WATCH_POLL_MS instead.
 * A directory is listed right after its watch is added (what was created before the
 * watch is found too). A step directory created while its parent was watched is "fresh":
 * its CPU time started at 0, so all of it is the step's. The slurm root's own usage (every
 * step's, removed ones included: the kernel charges CPU time to every ancestor) is read by
 * slurm_watch_take(), so the caller can book what the steps used after their last read.
 */

#define SLURM_WATCH_PATH_MAX 512
#define SLURM_WATCH_POLL_MS 100
#define SLURM_WATCH_ARRAY_TRIES 10

/* One job step's directory ("<job dir>/step_<s>"). */
struct slurm_watch_step {
    char path[SLURM_WATCH_PATH_MAX]; /* cgroup path, as in /proc/<pid>/cgroup */
    bool fresh;                      /* created while watched: usage started at 0 */
    bool have_usage;
    uint64_t usage_us; /* the latest read; the last one once the step ended */
    /* A weight for tails: the growth between the last two reads; once gone, that rate over
     * the time from the last read to the removal seen. */
    uint64_t rate_us;
    bool ended; /* populated 0 seen, or the directory is gone */
    bool gone;  /* the directory was removed (or cannot be read any more) */
    /* usage_us is the step's whole final usage, taken from its job directory when it was
     * removed (cgroup v1): none of its time is left for the caller's tails. */
    bool final_exact;
    /* An array job's element: from the environment of a task of the step, read while the
     * step is young (SLURM_WATCH_ARRAY_TRIES polls), so that a job no scan sees has it. */
    bool array_valid;
    uint32_t array_job_id, array_task_id;
    /* A job directory named by its SLUID (Slurm 26.05): the job's number, from the same
     * environment, so that a job no scan sees is still named as sacct and the epilog do. */
    bool job_id_valid;
    uint32_t job_id;
};

struct slurm_watch;

/*
 * Starts watching under the sysfs root sys_fd, reading tasks' environments under the procfs
 * root proc_fd (-1: none; both borrowed, they must stay open). Returns 0,
 * -ENOENT when no cgroup hierarchy to watch is there, or -errno (inotify, thread).
 * *ret only on success.
 */
int slurm_watch_start(int sys_fd, int proc_fd, struct slurm_watch **ret);
/* Stops the thread and frees everything; NULL is fine. Returns NULL. */
struct slurm_watch *slurm_watch_free(struct slurm_watch *w);

/*
 * The steps known now, copied into *buf (grown as needed; *cap its capacity), and the
 * slurm root's cumulative usage (ret_root_valid false when no root is readable). Steps
 * reported gone are dropped from the watch after this copy. Returns the number of steps,
 * or -ENOMEM.
 */
int slurm_watch_take(struct slurm_watch *w, struct slurm_watch_step **buf, size_t *cap,
                     bool *ret_root_valid, uint64_t *ret_root_usage_us);

/* Number of steps that ended since the last call (0 when none); for a scan on demand. */
unsigned slurm_watch_ended_since(struct slurm_watch *w);

/* How long a step emptied on cgroup v2 (populated 0) may keep its directory before it is
 * taken as removed (default SLURM_WATCH_LEFTOVER_NS): Slurm sometimes leaves one behind, and
 * its job would stay active for good. Tests shorten it. */
#define SLURM_WATCH_LEFTOVER_NS (30 * NSEC_PER_SEC)
void slurm_watch_set_leftover_ns(struct slurm_watch *w, uint64_t ns);
