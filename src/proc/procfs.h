/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup_path.h"
#include "proc_pid_stat.h"

/*
 * The process scanner: walks <procfs>/<pid>/ and reports every process with its CPU time
 * and workload identity (container / pod / SLURM job, see cgroup_path.h).
 *
 * A process is (pid, starttime): a pid reused by a new process is a new process. The first
 * time a pid is seen the scanner openat()s its directory (O_DIRECTORY|O_NOFOLLOW) and
 * `stat` relative to it, and keeps one fd of the process open: later scans only pread() it
 * (one syscall instead of five path-walking ones). For a process with one thread that is
 * `schedstat` (its on-CPU ns, a fraction of stat's cost to produce), with `stat` read by
 * path every PROCFS_FULL_READ_SCANS scans (procfs_cpu.c); for more threads, or where
 * schedstat is missing or reads 0, it is `stat`. The ppid, state and comm of a process read
 * through schedstat are those of its last stat read, at most PROCFS_FULL_READ_SCANS scans
 * old; a second thread shows at that read too, and the other threads' CPU time until then
 * is counted there, whole. A kept fd follows its process on procfs
 * (ESRCH once it exited, also when the pid is reused); on other filesystems (fixture trees,
 * the simulator) a replaced pid directory or a `stat` replaced by rename (unless the tree
 * is declared rewritten in place) is detected and reopened by path. At most max_kept_fds
 * are kept (by default only on a real procfs); a known pid beyond that opens "<pid>/stat"
 * in one openat2() that refuses symlinks. Only a process seen for the first time also
 * costs a read of `cgroup` (and of `environ` when the cgroup path names a Slurm job by
 * SLUID only, or names no workload in a place where Slurm without cgroups runs tasks: see
 * workload_identity_wants_slurm_environ()). The identity is cached per (pid, starttime)
 * and read again once, when the process exec'd (its comm changed: procfs_follow_exec()), since
 * runtimes move a child into its cgroup between fork and exec (slurmstepd's tasks, runc
 * init). A move at any other time (systemd-run --scope, pam_slurm_adopt) is not followed. A
 * pid that vanishes during the scan (ENOENT/ESRCH, or an empty read) is skipped silently and
 * counted in stats.vanished.
 *
 * Not thread-safe: one scanner belongs to the sampler thread.
 */

enum procfs_process_flags {
    PROCFS_PROCESS_NEW = 1 << 0,    /* first scan that saw this (pid, starttime) */
    PROCFS_PROCESS_EXITED = 1 << 1, /* seen by the previous scan, gone now */
};

struct procfs_process {
    uint32_t pid;
    uint32_t ppid;
    uint64_t starttime;        /* stat field 22: clock ticks since boot */
    double start_time_seconds; /* unix time: btime + starttime / CLK_TCK */
    const char *comm;          /* never NULL; owned by the scanner, valid as long as identity */
    char state;                /* stat field 3 ('Z' zombie: still reported, its CPU counted) */
    bool kernel_thread;        /* PF_KTHREAD: identity is not read, always IDENTITY_NONE */
    uint64_t cpu_ticks;        /* utime + stime, cumulative */
    /* CPU ticks since the previous scan. A process new in this scan counts its whole
     * cpu_ticks (it started since the previous scan), except in the very first scan,
     * which only sets the baseline (0 for everyone). 0 for EXITED rows, and 0 when the
     * counter went backwards (never a negative or wrapped delta). */
    uint64_t cpu_ticks_delta;
    /* Never NULL. Owned by the scanner; valid until the next procfs_scan() or free. */
    const struct workload_identity *identity;
    unsigned flags; /* enum procfs_process_flags */
};

struct procfs_stats {
    uint64_t scans;
    uint64_t stat_reads;      /* successful reads of <pid>/stat */
    uint64_t cgroup_reads;    /* successful reads of <pid>/cgroup: once per new process, and
                               * again after its exec (exec_rereads) */
    uint64_t exec_rereads;    /* identities read again at a known process's first exec */
    uint64_t exec_stat_reads; /* of stat_reads, those at such an exec (to check the start) */
    uint64_t environ_reads;   /* successful reads of <pid>/environ (SLUID / no-cgroup jobs) */
    uint64_t vanished;        /* pids that disappeared while being read */
    uint64_t parse_errors;    /* malformed stat (process skipped) or cgroup (identity none) */
    /* Other read failures (EACCES under hidepid or ptrace rules, EFBIG...): a pid dir or
     * stat -> process skipped; cgroup -> identity none; environ -> job id stays unknown.
     * An identity read failure is not retried for the same process. */
    uint64_t read_errors;
    size_t cached;            /* processes in the identity cache now */
    uint64_t stat_opens;      /* opens of <pid>/stat by path (new, reused or uncapped pids) */
    size_t kept_fds;          /* <pid>/stat fds kept open now */
    uint64_t stat_skips;      /* stat reads left out: the workload used no CPU (see below) */
    uint64_t schedstat_reads; /* successful reads of <pid>/schedstat */
};

struct procfs_options {
    /* Ticks per second of stat's time fields; 0 = sysconf(_SC_CLK_TCK). */
    unsigned long clk_tck;
    /* <pid>/stat or schedstat fds kept open between scans (one per process at most):
     * 0 = half the soft RLIMIT_NOFILE at creation
     * on a real procfs and none on other filesystems (fixture trees whose writers replace
     * files by rename, where closing a replaced fd frees its inode in our thread);
     * PROCFS_KEEP_NO_FDS = none (open by path every scan); PROCFS_KEEP_FDS_ANYWHERE = the
     * real-procfs default on any filesystem, for trees whose writers rewrite files in place:
     * a kept fd is then read as on procfs, without the fstat() that notices a file
     * replaced by rename (a replaced pid directory is still noticed). */
    size_t max_kept_fds;
    /* Try the eBPF task iterator (task_iter.h) on the kernel's own procfs: every scan then
     * reads all processes in one read, and <pid> files only for new ones. Off: every scan
     * lists the root and reads each process's files. */
    bool try_bpf;
};
#define PROCFS_KEEP_NO_FDS SIZE_MAX
#define PROCFS_KEEP_FDS_ANYWHERE (SIZE_MAX - 1)

struct procfs_scanner;

/*
 * Creates a scanner on a procfs root directory fd (from --path.procfs; the fd is
 * duplicated, the caller keeps its own). Reads btime from <procfs>/stat once, so start
 * times stay fixed for the scanner's life. opts may be NULL.
 * Returns 0, -EBADF/-ENOTDIR for a bad root, -ENOENT/-EACCES/... when <procfs>/stat is
 * unreadable, -EINVAL when it has no valid "btime" line, -ENOMEM. ret_scanner is written
 * only on success.
 */
int procfs_scanner_new(int procfs_fd, const struct procfs_options *opts,
                       struct procfs_scanner **ret_scanner);

/* Frees the scanner and everything it returned. Accepts NULL; returns NULL. */
struct procfs_scanner *procfs_scanner_free(struct procfs_scanner *s);

/*
 * One pass over <procfs>: returns every live process (including kernel threads and
 * zombies) flagged NEW when first seen, followed by the processes of the previous scan
 * that are gone, flagged EXITED (with their last cpu_ticks). Order of live rows is the
 * directory order. The array and the identities it points to are owned by the scanner
 * and stay valid until the next procfs_scan() or procfs_scanner_free(); rows of
 * unchanged processes cause no allocation.
 * Returns the number of rows (>= 0) with *ret_processes set, or -errno when the procfs
 * root cannot be listed, or -ENOMEM. After a failed scan the cache is still consistent
 * and the next scan works, but the CPU deltas of the failed scan are lost.
 */
int procfs_scan(struct procfs_scanner *s, const struct procfs_process **ret_processes);

/*
 * On-demand identity of one pid, between scans (e.g. a pid reported by NVML). Reads
 * <pid>/stat; if (pid, starttime) is not cached yet, reads its identity and caches it, so
 * the next scan neither re-reads it nor loses its CPU time (it is reported NEW there).
 * Returns 0 and fills *ret (its identity pointer lives as long as scan rows do: until the
 * process is gone and the scan after that), -ESRCH when no such process exists (or it
 * vanished while reading), -EINVAL for a malformed stat or pid 0 / >= PROC_PID_LIMIT,
 * -ENOMEM, or another -errno from opening <pid> or reading its stat (-EACCES under
 * hidepid, -ENOTDIR when <pid> is a symlink or not a directory). *ret is written only on
 * success.
 */
struct procfs_lookup {
    uint64_t starttime;
    double start_time_seconds;
    char comm[PROC_COMM_MAX];
    bool kernel_thread;
    const struct workload_identity *identity; /* never NULL */
};
int procfs_lookup(struct procfs_scanner *s, uint32_t pid, struct procfs_lookup *ret);

/*
 * Leaving out reads of processes that cannot have run. Before re-reading a known process
 * through its kept stat fd, the scanner asks unchanged(userdata, identity, scans_ago),
 * where scans_ago >= 1 counts the scans since its stat was last read. The answer must be
 * true only when the CPU usage of the process's workload, read before every scan, was
 * the same at each of the last scans_ago + 1 of those reads: then the process did not run
 * since its last read and its stat (CPU time, state, comm) is what that read gave. Such a
 * process is reported with cpu_ticks_delta 0 and counted in stats.stat_skips.
 *
 * Every process is still read at least every PROCFS_FULL_READ_SCANS scans (staggered by
 * pid), which bounds what a stale row could miss: a parent that exited (ppid), a first exec
 * (a new comm, then a new identity). A pid directory whose inode changed is always read.
 * NULL (the default) reads every process every scan.
 */
#define PROCFS_FULL_READ_SCANS 10
typedef bool (*procfs_unchanged_fn)(void *userdata, const struct workload_identity *identity,
                                    uint64_t scans_ago);
void procfs_set_unchanged(struct procfs_scanner *s, procfs_unchanged_fn unchanged, void *userdata);

/* The identity of pid as the last scan reported it, NULL when that scan did not (or was
 * not read through the task iterator). Valid until the next scan; reads nothing. */
const struct workload_identity *procfs_scanned_identity(const struct procfs_scanner *s,
                                                        uint32_t pid);

/* Unix time of a process's start, from field 22 of its stat (ticks since boot). */
double procfs_start_time_seconds(const struct procfs_scanner *s, uint64_t starttime);

/*
 * How scans read processes: true when through the eBPF task iterator (one read for every
 * process; <pid> files only for a process's identity when it is new), false when by
 * listing the procfs root, with *ret_reason (when not NULL) saying why the iterator is
 * not used, and *ret_error its -errno (0 when it was not tried). A scan whose read of the
 * iterator fails drops it for good and reads /proc from then on.
 */
bool procfs_uses_bpf(const struct procfs_scanner *s, const char **ret_reason, int *ret_error);
/* Whether the iterator's last read walked the process list (Linux 6.7 and later) rather
 * than every task (task_iter.h). */
bool procfs_walks_processes(const struct procfs_scanner *s);

/* Counters since creation (a copy). */
void procfs_get_stats(const struct procfs_scanner *s, struct procfs_stats *ret);
