/* SPDX-License-Identifier: MIT */
#include "run_tree.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fileio.h"
#include "macro.h"
#include "parse_num.h"
#include "proc_pid_stat.h"

void run_tree_init(struct run_tree *t, int proc_fd) {
    *t = (struct run_tree){.proc_fd = proc_fd};
    hashmap_init(&t->members);
    hashmap_init(&t->alive);
    hashmap_init(&t->starts);
    hashmap_init(&t->ticks);
}

void run_tree_done(struct run_tree *t) {
    hashmap_done(&t->members);
    hashmap_done(&t->alive);
    hashmap_done(&t->starts);
    hashmap_done(&t->ticks);
    free(t->former);
    t->former = NULL;
    t->n_former = t->cap_former = 0;
}

/* field 22 of pid's stat + 1; 1 (unknown) if it is gone. */
static uintptr_t stat_start(int proc_fd, pid_t pid) {
    struct proc_pid_stat st;
    char path[64], buf[1024];
    int len;

    (void)snprintf(path, sizeof(path), "%d/stat", (int)pid);
    len = read_file_into_at(proc_fd, path, buf, sizeof(buf));
    if (len < 0 || proc_pid_stat_parse(buf, (size_t)len, &st) < 0)
        return 1;
    return (uintptr_t)st.starttime + 1;
}

void run_tree_set_root(struct run_tree *t, pid_t root) {
    t->root = root;
    if (hashmap_put(&t->members, (uint64_t)root + 1, (void *)stat_start(t->proc_fd, root)) >= 0)
        t->n_members = 1;
}

/* The CPU ticks of the members alive now. */
static void sum_ticks(struct run_tree *t) {
    for (size_t i = 0;;) {
        uint64_t key;
        void *v;

        if (!hashmap_next(&t->ticks, &i, &key, &v))
            break;
        if (hashmap_get(&t->members, key))
            t->cpu_ticks += (uint64_t)(uintptr_t)v - 1;
    }
}

/* A member whose pid now names a process started at another time exited, and its pid went
 * to someone else: no longer in the tree, but what it left is still the command's. */
static void forget_reused(struct run_tree *t) {
    for (size_t i = 0;;) {
        uint64_t key;
        void *start, *now;

        if (!hashmap_next(&t->members, &i, &key, &start))
            break;
        now = hashmap_get(&t->starts, key);
        if ((uintptr_t)start == 1 || !now || now == start)
            continue;
        /* Should it not fit, its GPU series is left out of the report. */
        if (grow_array(&t->former, &t->cap_former, t->n_former + 1, sizeof(*t->former)) >= 0)
            t->former[t->n_former++] = (struct run_former_member){
                (uint32_t)(key - 1), (uint64_t)(uintptr_t)start - 1, (uint64_t)(uintptr_t)now - 1};
        (void)hashmap_remove(&t->members, key);
        i = 0; /* the walk starts again after a removal */
    }
}

/* A process in the command's cgroup is the command's, whoever its parent is now. */
static void adopt_from_cgroup(pid_t pid, void *userdata) {
    struct run_tree *t = userdata;
    uint64_t key = (uint64_t)pid + 1;
    void *start = hashmap_get(&t->starts, key);

    if (start && !hashmap_get(&t->members, key) && hashmap_put(&t->members, key, start) >= 0)
        t->n_members++;
}

void run_tree_scan(struct run_tree *t) {
    _cleanup_(closedirp) DIR *dir = NULL;
    struct dirent *de;
    bool grew = true;
    char buf[1024];

    hashmap_clear(&t->alive);
    hashmap_clear(&t->starts);
    hashmap_clear(&t->ticks);
    t->cpu_ticks = 0;
    if (opendir_at(t->proc_fd, ".", false, &dir) < 0)
        return;
    while ((de = readdir(dir))) {
        struct proc_pid_stat st;
        char path[64];
        uint32_t pid;
        int len;

        if (safe_atou32(de->d_name, &pid) < 0)
            continue;
        (void)snprintf(path, sizeof(path), "%u/stat", pid);
        len = read_file_into_at(t->proc_fd, path, buf, sizeof(buf));
        if (len < 0 || proc_pid_stat_parse(buf, (size_t)len, &st) < 0)
            continue; /* gone since the listing */
        (void)hashmap_put(&t->alive, (uint64_t)pid + 1, (void *)(uintptr_t)(st.ppid + 1));
        (void)hashmap_put(&t->starts, (uint64_t)pid + 1, (void *)(uintptr_t)(st.starttime + 1));
        (void)hashmap_put(&t->ticks, (uint64_t)pid + 1,
                          (void *)(uintptr_t)(st.utime + st.stime + st.cutime + st.cstime + 1));
    }
    forget_reused(t);
    if (t->cg)
        (void)run_cgroup_for_each_pid(t->cg, adopt_from_cgroup, t);
    while (grew) { /* children usually have higher pids, but pids wrap: until stable */
        grew = false;
        for (size_t i = 0;;) {
            uint64_t key;
            void *v;

            if (!hashmap_next(&t->alive, &i, &key, &v))
                break;
            if (hashmap_get(&t->members, key) || !hashmap_get(&t->members, (uint64_t)(uintptr_t)v))
                continue;
            if (hashmap_put(&t->members, key, hashmap_get(&t->starts, key)) >= 0) {
                t->n_members++;
                grew = true;
            }
        }
    }
    sum_ticks(t);
}

bool run_tree_has(const struct run_tree *t, uint32_t pid) {
    return hashmap_get(&t->members, (uint64_t)pid + 1) != NULL;
}

uint64_t run_tree_member_start(const struct run_tree *t, uint32_t pid) {
    uintptr_t v = (uintptr_t)hashmap_get(&t->members, (uint64_t)pid + 1);

    return v > 1 ? (uint64_t)(v - 1) : 0;
}

uint64_t run_tree_alive_start(const struct run_tree *t, uint32_t pid) {
    uintptr_t v = (uintptr_t)hashmap_get(&t->starts, (uint64_t)pid + 1);

    return v > 1 ? (uint64_t)(v - 1) : 0;
}

int run_tree_adopt(struct run_tree *t, uint32_t pid, uint64_t start) {
    int r = hashmap_put(&t->members, (uint64_t)pid + 1, (void *)(uintptr_t)(start + 1));

    if (r < 0)
        return r;
    t->n_members++;
    return 0;
}

/* Whether a series that started at `seconds` (unix time, < 0 unknown) can be that of a
 * process started at `start` (0 unknown), before the pid's next holder started at `next`
 * (0: none seen). The series may start later than the process: where no scan saw it, the
 * driver's accounting gives when its GPU work began. */
static bool started_within(double seconds, uint64_t start, uint64_t next,
                           run_start_seconds_fn to_seconds, void *userdata) {
    double from = start ? to_seconds(start, userdata) : -1;
    double until = next ? to_seconds(next, userdata) : -1;

    if (seconds < 0)
        return true;
    if (from >= 0 && seconds < from - 1e-3)
        return false; /* an earlier holder's */
    return until < 0 || seconds < until - 1e-3;
}

bool run_tree_owns(const struct run_tree *t, uint32_t pid, double start_seconds,
                   run_start_seconds_fn to_seconds, void *userdata) {
    if (run_tree_has(t, pid) &&
        started_within(start_seconds, run_tree_member_start(t, pid), 0, to_seconds, userdata))
        return true;
    for (size_t i = 0; i < t->n_former; i++)
        if (t->former[i].pid == pid &&
            started_within(start_seconds, t->former[i].start, t->former[i].next_start, to_seconds,
                           userdata))
            return true;
    return false;
}
