/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hashmap.h"
#include "run_cgroup.h"

/* A member whose pid went to another process: its GPU series is still the command's. */
struct run_former_member {
    uint32_t pid;
    uint64_t start, next_start; /* field 22 of its stat, and of the pid's next holder's */
};

/*
 * The processes of `joulestat run`'s command: its own, every descendant seen at a scan of
 * /proc and, where it has a cgroup of its own, every process seen in that cgroup, each by
 * pid and start time (field 22 of its stat): a pid reused by another process is not the
 * command's, and what a member left under its pid stays the command's after the reuse.
 */
struct run_tree {
    pid_t root;
    int proc_fd;            /* --path.procfs, not owned */
    struct run_cgroup *cg;  /* NULL: the process tree only */
    bool followed_cgroup;   /* cg was there to the command's end */
    struct hashmap members; /* pid + 1 -> start time + 1 (1: unknown): in the tree */
    struct hashmap alive;   /* pid + 1 -> ppid + 1, this scan, scratch */
    struct hashmap starts;  /* pid + 1 -> start time + 1, this scan, scratch */
    struct hashmap ticks;   /* pid + 1 -> CPU ticks + 1, this scan, scratch */
    unsigned n_members;
    struct run_former_member *former; /* members whose pid was seen reused */
    size_t n_former, cap_former;
    /* Of the members alive at the last scan: their own ticks and those of the children
     * they waited for (utime + stime + cutime + cstime), so a child's time is counted
     * after it exited too. */
    uint64_t cpu_ticks;
};

void run_tree_init(struct run_tree *t, int proc_fd);
void run_tree_done(struct run_tree *t);

/* The command, just started: the first member, by its start as /proc shows it now. */
void run_tree_set_root(struct run_tree *t, pid_t root);

/* One pass over /proc: forgets members whose pid another process holds now, adds the
 * processes of the command's cgroup and those whose parent is in the tree, and sums the
 * members' CPU ticks. */
void run_tree_scan(struct run_tree *t);

bool run_tree_has(const struct run_tree *t, uint32_t pid);
/* The start a member was seen with; 0 when not a member or not known. */
uint64_t run_tree_member_start(const struct run_tree *t, uint32_t pid);
/* The start of the process alive at pid at the last scan; 0 when none was. */
uint64_t run_tree_alive_start(const struct run_tree *t, uint32_t pid);
/* Adds a process no scan saw (found by the kernel's exec events). Returns 0 or -ENOMEM. */
int run_tree_adopt(struct run_tree *t, uint32_t pid, uint64_t start);

/* A start (field 22) as unix time, as the series' start_time_seconds are; < 0 unknown. */
typedef double (*run_start_seconds_fn)(uint64_t starttime, void *userdata);

/* Whether the series of pid that started at start_seconds (unix time; < 0 unknown) is a
 * member's, now or before its pid was reused. */
bool run_tree_owns(const struct run_tree *t, uint32_t pid, double start_seconds,
                   run_start_seconds_fn to_seconds, void *userdata);
