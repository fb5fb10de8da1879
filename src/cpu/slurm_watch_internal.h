/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by the SLURM watch's files (slurm_watch.c: the inotify tree and the thread;
 * slurm_watch_steps.c: the steps' CPU time; slurm_watch_names.c: which directories are
 * followed) and not for other callers: they use slurm_watch.h. */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup_cpu.h"
#include "slurm_watch.h"

/* What a watched directory is, from the mount down. */
enum slurm_level {
    LEVEL_TOP,  /* v1: the cpuacct mount; v2: system.slice */
    LEVEL_ROOT, /* v1: slurm[_<node>]; v2: [<node>_]slurmstepd.scope */
    LEVEL_UID,  /* v1 only: uid_<n> */
    LEVEL_JOB,  /* job_<n> (or a SLUID on v2): watched for its steps */
    LEVEL_STEP, /* step_<s>: v2: the step's cgroup.events; v1 steps are not watched */
};

struct watch_dir {
    int wd;
    uint64_t ino; /* the directory's, or the step's cgroup.events': one made again differs */
    enum slurm_level level;
    bool fresh; /* created while its parent was watched */
    char path[SLURM_WATCH_PATH_MAX];
    /* v1 job directories: their usage, and the final usages of their removed steps. While
     * exact (created while watched, every removed step's final known), a step removed
     * now used the job's usage less its siblings' (step_final()). */
    struct cgroup_cpu *cg;
    uint64_t removed_us;
    bool exact;
};

struct step {
    struct slurm_watch_step pub;
    struct cgroup_cpu *cg;
    unsigned array_tries;          /* left; 0: known, or not an array job, or given up */
    uint64_t array_next_ns;        /* no try before (a poll interval after the last) */
    uint64_t read_ns, interval_ns; /* the last read, and the time since the one before */
    bool finalized;                /* step_final() ran */
    uint64_t emptied_ns;           /* v2: when populated 0 was read; 0: populated */
};

struct slurm_watch {
    int sys_fd, proc_fd;
    bool v2;
    const char *mount; /* relative to sys_fd: "fs/cgroup" or "fs/cgroup/cpuacct" */
    int ino_fd, stop_fd;
    pthread_t thread;
    bool started;
    atomic_uint ended;

    pthread_mutex_t lock; /* the fields below */
    struct watch_dir *dirs;
    size_t n_dirs, cap_dirs;
    struct step *steps;
    size_t n_steps, cap_steps;
    struct cgroup_cpu *root;
    char root_path[SLURM_WATCH_PATH_MAX];
    bool resyncing;       /* listing again after lost events (resync()) */
    uint64_t leftover_ns; /* slurm_watch_set_leftover_ns() */
};

/* The level a child named name of a directory at level parent has, or -1: not followed
 * (v2: a unified hierarchy). */
int slurm_watch_child_level(bool v2, enum slurm_level parent, const char *name);

/* The step watched at path, or NULL. */
struct step *slurm_watch_step_by_path(struct slurm_watch *w, const char *path);
/* Reads a step's usage; one that cannot be read any more is gone (its last read kept). */
void slurm_watch_step_read(struct step *j);
/* A step ended (populated 0, or gone): counted once for slurm_watch_ended_since(); a gone
 * one gets its tail weight and, where it can be known, its exact final usage. */
void slurm_watch_step_ended(struct slurm_watch *w, struct step *j);
/* One more try at the step's array while it is young (slurm_step_array.c). */
void slurm_watch_step_array(struct slurm_watch *w, struct step *s);
