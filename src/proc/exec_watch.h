/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cgroup_path.h"
#include "proc_pid_stat.h"

/*
 * Who a short-lived process was, read while it lived. A GPU job of 300 ms is gone long
 * before the next process scan, and then NVML's bare pid has no cgroup, pod or job. The
 * kernel's process connector (netlink, CN_IDX_PROC) announces every exec and exit: a
 * thread of its own reads the new program's stat, cgroup and environment at once, and
 * keeps what it read for a while after the process exits, for the sampler to ask by pid.
 *
 * Subscribing needs CAP_NET_ADMIN (root) and a kernel with CONFIG_PROC_EVENTS: without
 * them exec_watch_start() fails and joulestat identifies processes by scanning alone. The
 * socket is opened before privileges are dropped; receiving needs none.
 */

/* Records are kept this long after their process exited, and at most this many. */
#define EXEC_WATCH_KEEP_NS (UINT64_C(120) * 1000000000)
#define EXEC_WATCH_MAX 16384
/* Exits noted between two exec_watch_take_exits(), at most. */
#define EXEC_WATCH_MAX_EXITS 1024

struct exec_record {
    uint64_t starttime; /* field 22 of <pid>/stat: with the pid, who it was */
    uint32_t ppid;      /* its parent at the exec */
    char comm[PROC_COMM_MAX];
    struct workload_identity identity;
    bool exited;
};

/* A process that exited, and its parent then. */
struct exec_exit {
    uint32_t pid;
    uint32_t parent;
};

struct exec_watch_stats {
    uint64_t execs;     /* exec events received */
    uint64_t read;      /* of which the process's files were read */
    uint64_t missed;    /* of which it was gone before they could be read */
    uint64_t exits;     /* exits of known processes */
    uint64_t overflows; /* times the socket's buffer overflowed (events lost) */
    uint64_t ignored;   /* events received but not used (forks, threads): 0 with the filter */
};

struct exec_watch;

/* Subscribes and starts the thread; procfs_fd (borrowed, stays open) is the /proc to read.
 * Returns 0, -EXDEV (procfs_fd is not the kernel's procfs: a test tree), -EPERM (not
 * allowed), -EPROTONOSUPPORT (no process connector), -ENOMEM or another -errno. *ret is
 * written only on success. */
int exec_watch_start(int procfs_fd, struct exec_watch **ret);

/* A watch fed by someone else's records instead of the kernel's events: records_fd (taken on
 * success, closed by exec_watch_stop()) holds a <pid> directory per program, its /proc files as
 * they were at its exec; each lookup reads the newest there. The simulated node keeps such a tree
 * (`joulestat replay`). It notes no exits. Returns 0 or -ENOMEM. */
int exec_watch_open_records(int records_fd, struct exec_watch **ret);

/* Stops the thread and frees everything. Accepts NULL; returns NULL. */
struct exec_watch *exec_watch_stop(struct exec_watch *w);

/* The newest record of pid. Returns 0, -ESRCH when none is kept, or -ENOMEM (reading a
 * record of exec_watch_open_records()). Thread-safe. */
int exec_watch_lookup(struct exec_watch *w, uint32_t pid, struct exec_record *ret);

/*
 * Every process exit since the previous call (of any process, exec'd or not), moved into
 * out (room for EXEC_WATCH_MAX_EXITS). Returns how many, or -ENOBUFS when the list is not
 * complete: more exits than it holds, the kernel dropped events, or the watch stopped on
 * an error. Thread-safe.
 */
int exec_watch_take_exits(struct exec_watch *w, struct exec_exit *out);

void exec_watch_get_stats(struct exec_watch *w, struct exec_watch_stats *ret);
