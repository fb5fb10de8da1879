/* SPDX-License-Identifier: MIT */
/*
 * A scan through the eBPF task iterator: every process with its CPU time, parent, state,
 * thread count and start time in one read, instead of listing /proc and reading one file
 * per process. Only a (pid, start time) not cached yet costs its <pid> directory: stat,
 * to check it is still the process the iterator saw, then its identity (cgroup, environ),
 * as a listed scan reads them.
 */
#include "procfs_internal.h"

#include <errno.h>
#include <string.h>

#include "macro.h"

/* A process the cache does not know: its entry, or NULL when it is gone or its pid
 * already belongs to another process (the next scan sees that one). */
static int new_entry(struct procfs_scanner *s, const struct task_iter_process *p,
                     uint64_t starttime, struct cache_entry **ret) {
    _cleanup_(closep) int pid_fd = -1, stat_fd = -1;
    struct proc_pid_stat st = {.pid = p->pid, .flags = p->flags, .starttime = starttime};

    *ret = NULL;
    if (!(p->flags & PROC_PF_KTHREAD)) {
        pid_fd = procfs_open_pid_dir(s, p->pid);
        if (pid_fd < 0)
            return 0;
        stat_fd = procfs_open_read_stat(s, pid_fd, p->pid, &st);
        if (stat_fd < 0 || st.starttime != starttime)
            return 0;
    }
    return procfs_get_entry(s, pid_fd, &st, ret) == -ENOMEM ? -ENOMEM : 0;
}

static void take(struct procfs_scanner *s, struct cache_entry *e,
                 const struct task_iter_process *p) {
    e->ppid = p->ppid;
    e->state = p->state;
    e->threads = p->threads;
    memset(e->comm, 0, sizeof(e->comm));
    memcpy(e->comm, p->comm, sizeof(p->comm));
    /* Never backwards: a thread that exits between the reads of its own record and of
     * its leader's exited-threads sum shows once too little. */
    if (e->seen_scan == 0 || p->cpu_ns > e->cpu_ns)
        e->cpu_ns = p->cpu_ns;
    /* Exact nanoseconds, ahead of stat's whole ticks: kept should a later scan read stat
     * (the iterator failed), as schedstat's are. */
    e->interpolated = true;
    e->cpu_ticks = e->cpu_ns / s->tick_ns;
}

int procfs_scan_bpf(struct procfs_scanner *s) {
    const struct task_iter_process *procs;
    int n, r;

    n = task_iter_read(s->iter, &procs);
    if (n < 0)
        return n;
    r = grow_array(&s->rows, &s->cap_rows, (size_t)n, sizeof(*s->rows));
    if (r < 0)
        return r;
    for (int i = 0; i < n; i++) {
        const struct task_iter_process *p = &procs[i];
        uint64_t starttime = p->start_boottime_ns / s->tick_ns, prev;
        struct procfs_process *row;
        struct cache_entry *e;
        bool is_new;

        if (p->pid == 0 || p->pid >= PROC_PID_LIMIT || starttime >= KEY_STARTTIME_LIMIT)
            continue;
        e = hashmap_get(&s->cache, key_of(p->pid, starttime));
        if (!e) {
            r = new_entry(s, p, starttime, &e);
            if (r < 0)
                return r;
            if (!e)
                continue;
        }
        is_new = e->seen_scan == 0;
        prev = e->cpu_ticks;
        procfs_follow_exec(s, e, p->comm, -1);
        take(s, e, p);
        e->seen_scan = e->read_scan = s->scan_no;
        row = &s->rows[s->n_rows++];
        procfs_fill_row(s, e, row);
        procfs_saw(s, e);
        if (is_new) {
            row->flags = PROCFS_PROCESS_NEW;
            row->cpu_ticks_delta = procfs_new_row_ticks(s, e);
        } else
            row->cpu_ticks_delta = e->cpu_ticks >= prev ? e->cpu_ticks - prev : 0;
    }
    return 0;
}
