/* SPDX-License-Identifier: MIT */
/*
 * A process's CPU time, read as cheaply as it can be. <pid>/stat carries the whole thread
 * group's utime + stime, but the kernel formats 52 fields for it; <pid>/schedstat carries
 * only the on-CPU nanoseconds of one task, the thread group leader, for a fraction of the
 * cost. For a process with a single thread the two are the same clock (stat's utime and
 * stime are the group's runtime split and cut to ticks), so such a process keeps its
 * schedstat fd open and the scans between its periodic stat reads (every
 * PROCFS_FULL_READ_SCANS, for ppid, state, comm and thread count) pread only that. A
 * process with more threads keeps its stat fd and is read through it every scan.
 *
 * The CPU time reported (cpu_ns) is stat's at a stat read, advanced by schedstat's growth
 * between stat reads. Stat truncates to whole ticks, so at the next stat read it may show
 * less than schedstat already counted: cpu_ns then keeps its larger value (never going
 * back), and takes stat's when larger (threads started and gone between two stat reads, a
 * second thread since the last one). The error is bounded by a few ticks per process, not
 * per scan.
 */
#include "procfs_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "fileio.h"
#include "macro.h"
#include "proc_pid_schedstat.h"

/* "<u64> <u64> <u64>\n" */
#define SCHEDSTAT_BUF_SIZE 96

int procfs_read_schedstat(struct procfs_scanner *s, int fd, uint64_t *ret_ns) {
    char buf[SCHEDSTAT_BUF_SIZE];
    uint64_t ns;
    int n;

    n = read_fd_into(fd, buf, sizeof(buf));
    if (n == 0)
        return -ESRCH;
    if (n < 0)
        return n;
    if (proc_pid_schedstat_parse(buf, (size_t)n, &ns) < 0)
        return -EINVAL;
    s->stats.schedstat_reads++;
    *ret_ns = ns;
    return 0;
}

static void set_ticks(const struct procfs_scanner *s, struct cache_entry *e) {
    e->cpu_ticks = e->cpu_ns / s->tick_ns;
}

void procfs_cpu_from_sched(const struct procfs_scanner *s, struct cache_entry *e,
                           uint64_t sched_ns) {
    if (e->sched_valid && sched_ns > e->sched_ns) {
        e->cpu_ns += sched_ns - e->sched_ns;
        e->interpolated = true;
    }
    e->sched_ns = sched_ns;
    e->sched_valid = true;
    set_ticks(s, e);
}

static void cpu_from_stat(const struct procfs_scanner *s, struct cache_entry *e,
                          const struct proc_pid_stat *st, bool is_new) {
    uint64_t ticks = st->utime + st->stime, stat_ns;

    stat_ns = ticks > UINT64_MAX / s->tick_ns ? UINT64_MAX : ticks * s->tick_ns;
    /* Only schedstat's own overshoot is kept, until stat passes it (stat counts whole
     * ticks, and lowered at a later read the gap would be counted again); a stat that went
     * back by itself is taken as it is (the row's delta is 0 then, as for any counter that
     * went back). */
    if (is_new || !e->interpolated || stat_ns > e->cpu_ns) {
        e->cpu_ns = stat_ns;
        e->interpolated = false;
    }
    e->sched_valid = false;
    e->threads = st->num_threads;
    set_ticks(s, e);
}

/* Opens <pid>/schedstat: through the pid directory when open, else by one openat2() that
 * refuses symlinks (as procfs_known_read_direct() does for stat). -errno on failure. */
static int open_schedstat(struct procfs_scanner *s, int pid_fd, uint32_t pid) {
    struct open_how how = {
        .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    char name[32];
    long fd;

    if (pid_fd >= 0) {
        fd = openat(pid_fd, "schedstat", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return fd < 0 ? -errno : (int)fd;
    }
    if (s->no_openat2)
        return -ENOSYS;
    (void)snprintf(name, sizeof(name), "%u/schedstat", (unsigned)pid);
    fd = syscall(SYS_openat2, s->root_fd, name, &how, sizeof(how));
    return fd < 0 ? -errno : (int)fd;
}

/* A schedstat that cannot be opened while stat can is missing from this kernel (or tree). */
static void check_missing(struct procfs_scanner *s, int pid_fd, uint32_t pid) {
    char name[32];

    (void)snprintf(name, sizeof(name), "%u/stat", (unsigned)pid);
    if (pid_fd >= 0 ? faccessat(pid_fd, "stat", F_OK, 0) == 0
                    : faccessat(s->root_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        s->no_schedstat = true;
}

/* Whether schedstat's reading can stand for this process's CPU time: scheduler
 * statistics off print "0 0 0" for a task that stat shows has run. */
static bool sched_usable(struct procfs_scanner *s, const struct proc_pid_stat *st,
                         uint64_t sched_ns) {
    if (sched_ns == 0 && st->utime + st->stime > 0) {
        s->no_schedstat = true;
        return false;
    }
    return true;
}

int procfs_cpu_settle(struct procfs_scanner *s, struct cache_entry *e,
                      const struct proc_pid_stat *st, int stat_fd, int pid_fd, ino_t dir_ino,
                      bool is_new) {
    _cleanup_(closep) int fd = stat_fd, sched_fd = -1;
    uint64_t ns;

    cpu_from_stat(s, e, st, is_new);
    /* schedstat only when its fd can be kept: beyond the cap a process costs one stat
     * read per scan, not a stat and a schedstat. */
    if (s->no_schedstat || st->num_threads != 1 || s->max_kept == 0 ||
        (e->kept_fd < 0 && s->kept.size >= s->max_kept))
        goto keep_stat;
    if (e->kept_fd >= 0 && e->kept_sched) {
        if (procfs_read_schedstat(s, e->kept_fd, &ns) == 0 && sched_usable(s, st, ns)) {
            procfs_cpu_from_sched(s, e, ns); /* sched_valid was cleared: only pairs */
            return 0;                        /* the stat fd read by path is closed */
        }
        procfs_kept_drop(s, e);
    }
    sched_fd = open_schedstat(s, pid_fd, e->pid);
    if (sched_fd == -ENOENT)
        check_missing(s, pid_fd, e->pid);
    if (sched_fd >= 0 && procfs_read_schedstat(s, sched_fd, &ns) == 0 && sched_usable(s, st, ns)) {
        procfs_cpu_from_sched(s, e, ns);
        return procfs_kept_keep(s, e, TAKE_FD(sched_fd), dir_ino, true);
    }
keep_stat:
    if (fd < 0)
        return 0; /* the kept stat fd was read: it stays */
    return procfs_kept_keep(s, e, TAKE_FD(fd), dir_ino, false);
}
