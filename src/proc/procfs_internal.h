/* SPDX-License-Identifier: MIT */
#pragma once

/* The process scanner's state, shared by procfs.c (scans, lookups, the cache) and
 * procfs_known.c (reading processes it already knows). Not a public API. */

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hashmap.h"
#include "procfs.h"
#include "procfs_identity.h"
#include "task_iter.h"

/* stat is ~52 numbers of at most 20 digits plus a comm of at most 64 bytes. */
#define STAT_BUF_SIZE 2048

/* Cache key: pid < 2^22 in the low bits, starttime above. Exact (no collisions) while
 * starttime < 2^42 ticks, i.e. for 139 years of uptime at 1000 Hz. */
#define KEY_PID_BITS 22
#define KEY_STARTTIME_LIMIT (UINT64_C(1) << (64 - KEY_PID_BITS))

struct cache_entry {
    uint32_t pid;
    uint32_t ppid;
    uint64_t starttime;
    uint64_t cpu_ticks; /* cpu_ns in clock ticks, as of the last scan that saw it */
    uint64_t cpu_ns;    /* CPU time reported so far (procfs_cpu.c) */
    uint64_t sched_ns;  /* schedstat's on-CPU time at its last read, when sched_valid */
    uint64_t seen_scan; /* number of the last scan that saw it; 0: looked up only */
    uint64_t read_scan; /* number of the last scan that read its stat or schedstat */
    uint32_t threads;   /* stat's num_threads at the last stat read */
    char state;
    bool kernel_thread;
    bool sched_valid;
    bool interpolated;  /* cpu_ns advanced by schedstat since the last stat read */
    bool kept_sched;    /* kept_fd is <pid>/schedstat, not <pid>/stat */
    bool exec_followed; /* its identity was read again at a new comm (procfs_follow_exec()) */
    bool exec_pending;  /* that read failed for want of memory or fds: the next scan retries */
    char comm[PROC_COMM_MAX];
    const struct workload_identity *identity; /* pooled: shared with same-identity entries */
    /* <pid>/stat or <pid>/schedstat kept open between scans (-1: none), and the inode of
     * the <pid> directory it was opened under, as the listing reported it. */
    int kept_fd;
    ino_t dir_ino;
};

struct procfs_scanner {
    int root_fd;
    DIR *dir; /* on its own open of the root, rewound every scan */
    unsigned long clk_tck;
    uint64_t btime;
    uint64_t scan_no;
    /* The latest start (starttime) among the processes the previous scan saw, and this
     * one's so far. */
    uint64_t prev_latest_start, latest_start;

    struct hashmap cache; /* key_of(pid, starttime) -> struct cache_entry */
    struct identity_pool identities;
    /* pid -> the cache entry holding that pid's kept stat fd (at most one per pid). */
    struct hashmap kept;
    size_t max_kept;
    /* Not a real procfs (fixture trees, the simulator) and not declared rewritten in place
     * (PROCFS_KEEP_FDS_ANYWHERE): a writer may replace stat by rename, which a kept fd
     * would not see, so each kept fd is fstat()ed first. */
    bool check_links;
    bool no_openat2; /* openat2() failed with ENOSYS/EPERM (old kernel, seccomp) */
    /* <pid>/schedstat is missing (no CONFIG_SCHED_INFO) or reads 0 for a process that ran
     * (scheduler statistics off): CPU time from stat only. */
    bool no_schedstat;
    uint64_t tick_ns; /* nanoseconds per clock tick */
    /* The eBPF task iterator when it replaces the listing and the per-process reads
     * (procfs_bpf.c), else NULL with bpf_reason saying why. */
    struct task_iter *iter;
    const char *bpf_reason;
    int bpf_error;
    procfs_unchanged_fn unchanged;
    void *unchanged_userdata;

    struct procfs_process *rows;
    size_t n_rows, cap_rows;
    /* rows[0..n_sorted_rows) are in ascending pid order (the iterator's): 0 after a
     * listed scan, whose order the directory decides. */
    size_t n_sorted_rows;

    /* Entries reported EXITED by the last scan: freed at the start of the next one, so
     * the identity pointers in those rows stay valid until then. */
    struct cache_entry **graveyard;
    size_t n_graveyard, cap_graveyard;
    /* Pids whose stat this scan could not read, though they were there (out of
     * descriptors, a read cut short): not taken for exited. Sorted before the sweep. */
    uint32_t *unread;
    size_t n_unread, cap_unread;

    char stat_buf[STAT_BUF_SIZE];
    struct procfs_stats stats;
};

static inline uint64_t key_of(uint32_t pid, uint64_t starttime) {
    return (starttime << KEY_PID_BITS) | pid;
}

/* Counts a failed read; returns -ESRCH for "the process is gone" so callers skip it.
 * -ENOMEM is ours, not the process's: passed through uncounted. */
int procfs_account_read_error(struct procfs_scanner *s, int r);

/* Closes the kept fd of an entry and forgets it. */
void procfs_kept_drop(struct procfs_scanner *s, struct cache_entry *e);
/* Keeps a freshly opened stat (sched false) or schedstat (sched true) fd for the next scans
 * while under the cap, else closes it. Takes ownership of fd. Returns 0 or -ENOMEM. */
int procfs_kept_keep(struct procfs_scanner *s, struct cache_entry *e, int fd, ino_t dir_ino,
                     bool sched);
/* The entry of pid read through its kept stat fd into *st, or NULL (the fd is dropped
 * when it no longer shows the same process; the caller opens stat by path). A kept
 * schedstat fd is left alone: the caller reads stat by path and procfs_cpu_settle() reads
 * the schedstat fd. */
struct cache_entry *procfs_kept_read(struct procfs_scanner *s, uint32_t pid, ino_t dir_ino,
                                     struct proc_pid_stat *st);
/* The entry of pid when this scan reads only its kept schedstat fd (a single-threaded
 * process between its periodic stat reads), with the on-CPU ns read in *ret_ns; else NULL
 * (the fd is dropped when it no longer shows the same process). */
struct cache_entry *procfs_kept_sched_read(struct procfs_scanner *s, uint32_t pid, ino_t dir_ino,
                                           uint64_t *ret_ns);

/* procfs.c, shared with procfs_bpf.c. */
int procfs_open_pid_dir(struct procfs_scanner *s, uint32_t pid);
/* Reads <pid>/stat through the pid directory: the stat fd, or -errno (-ESRCH: gone). */
int procfs_open_read_stat(struct procfs_scanner *s, int pid_fd, uint32_t pid,
                          struct proc_pid_stat *ret);
/* The cache entry of (st->pid, st->starttime), made with its identity read when new.
 * pid_fd may be -1 for a kernel thread. 0, -ESRCH, -ENOMEM. */
int procfs_get_entry(struct procfs_scanner *s, int pid_fd, const struct proc_pid_stat *st,
                     struct cache_entry **ret_entry);
void procfs_fill_row(const struct procfs_scanner *s, const struct cache_entry *e,
                     struct procfs_process *row);
/* A process this scan sees first (e has its CPU time now): its CPU time in this window. All
 * of it if it may have started since the previous scan, as it may unless it started before
 * a process that scan saw (in the same clock tick it may: counted); else it was there and
 * missed (an identity read that failed for want of fds, a scan cut short), and its time
 * before is no part of this window: 0, from which the next scan counts. */
uint64_t procfs_new_row_ticks(struct procfs_scanner *s, const struct cache_entry *e);
/* Counts e among the processes this scan saw (for procfs_new_row_ticks()). */
void procfs_saw(struct procfs_scanner *s, const struct cache_entry *e);
/* A known process whose comm is no longer the one cached exec'd (or renamed itself): its
 * identity is read again, through pid_fd (-1: opened here), once in its life (the first
 * exec is the one after its runtime placed it: slurmstepd attaches a task to its step's
 * cgroup between fork and exec, runc moves runc init; a scan in between cached the parent's
 * workload; later renames, setproctitle's, cost nothing). A read that fails for want of
 * memory or fds is tried again at the next scan (exec_pending). */
void procfs_follow_exec(struct procfs_scanner *s, struct cache_entry *e, const char *comm,
                        int pid_fd);
/* procfs_bpf.c: one scan's live rows from the task iterator. 0 or -errno. */
int procfs_scan_bpf(struct procfs_scanner *s);

/* procfs_cpu.c: a process's CPU time from stat, and from schedstat between stat reads. */

/* Reads a schedstat fd: 0 with *ret_ns, or -errno (-ESRCH: gone, -EINVAL: malformed). */
int procfs_read_schedstat(struct procfs_scanner *s, int fd, uint64_t *ret_ns);
/* Adds the on-CPU time a schedstat read shows since the last one. */
void procfs_cpu_from_sched(const struct procfs_scanner *s, struct cache_entry *e,
                           uint64_t sched_ns);
/* After a stat read of e (st): takes its CPU time, reads schedstat as well when the
 * process has one thread and an fd of it can be kept, and keeps the fd the next scans read
 * (schedstat for one thread, stat for more). stat_fd: the stat fd just read (taken), or -1
 * when the kept stat fd was read; pid_fd: the <pid> directory when open, else -1. is_new:
 * the first stat read of this process by a scan. Returns 0 or -ENOMEM. */
int procfs_cpu_settle(struct procfs_scanner *s, struct cache_entry *e,
                      const struct proc_pid_stat *st, int stat_fd, int pid_fd, ino_t dir_ino,
                      bool is_new);
/* A known process without a kept fd, read with one openat2() of "<pid>/stat": its entry
 * with *st filled and the fd in *ret_fd, or NULL (*ret_fd = -errno when gone or refused). */
struct cache_entry *procfs_known_read_direct(struct procfs_scanner *s, uint32_t pid,
                                             struct proc_pid_stat *st, int *ret_fd);
/* The kept entry of pid when its stat need not be read this scan, else NULL. */
struct cache_entry *procfs_kept_unchanged(struct procfs_scanner *s, uint32_t pid, ino_t dir_ino);
