/* SPDX-License-Identifier: MIT */
/* Reading a process the scanner already knows, cheaper than the pid directory walk of a
 * new one: through the stat fd kept since an earlier scan, with one direct openat2(), or
 * not at all while its workload has not run (procfs_set_unchanged()). */
#include "procfs_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "fileio.h"
#include "macro.h"

void procfs_kept_drop(struct procfs_scanner *s, struct cache_entry *e) {
    if (e->kept_fd < 0)
        return;
    (void)close(e->kept_fd);
    e->kept_fd = -1;
    e->kept_sched = false;
    if (hashmap_get(&s->kept, e->pid) == e)
        (void)hashmap_remove(&s->kept, e->pid);
}

int procfs_kept_keep(struct procfs_scanner *s, struct cache_entry *e, int fd, ino_t dir_ino,
                     bool sched) {
    struct cache_entry *old;
    int r;

    if (s->max_kept == 0) { /* nothing is ever kept: skip the map */
        (void)close(fd);
        return 0;
    }
    old = hashmap_get(&s->kept, e->pid);
    if (old)
        procfs_kept_drop(s, old);
    procfs_kept_drop(s, e);
    if (s->kept.size >= s->max_kept) {
        (void)close(fd);
        return 0;
    }
    r = hashmap_put(&s->kept, e->pid, e);
    if (r < 0) {
        (void)close(fd);
        return r;
    }
    e->kept_fd = fd;
    e->kept_sched = sched;
    e->dir_ino = dir_ino;
    return 0;
}

/*
 * Reads <pid>/stat through the fd kept by a previous scan. Returns the entry, or NULL when
 * there is none or the fd no longer shows the same process; the fd is dropped then and the
 * caller opens <pid>/stat by path. On procfs a kept fd follows its process: once it exits,
 * reads fail with ESRCH, also when the pid is reused. On other filesystems the pid directory
 * may have been replaced (its inode in the listing changed) or stat replaced by rename (the
 * kept file has no link left); both are checked, an in-place rewrite is simply read.
 */
struct cache_entry *procfs_kept_read(struct procfs_scanner *s, uint32_t pid, ino_t dir_ino,
                                     struct proc_pid_stat *st) {
    struct cache_entry *e = hashmap_get(&s->kept, pid);
    struct stat sb;
    int n;

    if (!e)
        return NULL;
    if (e->dir_ino != dir_ino)
        goto stale;
    if (e->kept_sched)
        return NULL;
    if (s->check_links && (fstat(e->kept_fd, &sb) < 0 || sb.st_nlink == 0))
        goto stale;
    n = read_fd_into(e->kept_fd, s->stat_buf, sizeof(s->stat_buf));
    if (n <= 0) /* exited (ESRCH), or a rewrite caught between truncate and write */
        goto stale;
    /* A parse failure is counted by the by-path read that follows. */
    if (proc_pid_stat_parse(s->stat_buf, (size_t)n, st) < 0 || st->pid != pid ||
        st->starttime != e->starttime)
        goto stale;
    s->stats.stat_reads++;
    return e;
stale:
    procfs_kept_drop(s, e);
    return NULL;
}

/*
 * A known process without a kept fd (fake trees, beyond the cap): one openat2() of
 * "<pid>/stat" refusing symlinks on the way (as O_NOFOLLOW on the pid directory does)
 * instead of opening the directory and then stat. Returns its cache entry with *st filled
 * and the fd in *ret_fd, or NULL: a new process or a malformed stat (the caller takes the
 * directory path, which pins the process for its identity and counts errors), or the
 * process is gone or refused (*ret_fd = -errno, counted here).
 */
struct cache_entry *procfs_known_read_direct(struct procfs_scanner *s, uint32_t pid,
                                             struct proc_pid_stat *st, int *ret_fd) {
    struct open_how how = {
        .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    _cleanup_(closep) int fd = -1;
    struct cache_entry *e;
    char name[32];
    long r;
    int n;

    *ret_fd = -1;
    if (s->no_openat2)
        return NULL;
    (void)snprintf(name, sizeof(name), "%u/stat", (unsigned)pid);
    r = syscall(SYS_openat2, s->root_fd, name, &how, sizeof(how));
    if (r < 0) {
        if (errno == ENOSYS || errno == EPERM || errno == E2BIG)
            s->no_openat2 = true;
        else
            *ret_fd = procfs_account_read_error(s, -errno);
        return NULL;
    }
    fd = (int)r;
    n = read_fd_into(fd, s->stat_buf, sizeof(s->stat_buf));
    if (n <= 0 || proc_pid_stat_parse(s->stat_buf, (size_t)n, st) < 0 || st->pid != pid ||
        st->starttime >= KEY_STARTTIME_LIMIT)
        return NULL;
    e = hashmap_get(&s->cache, key_of(pid, st->starttime));
    if (!e)
        return NULL;
    s->stats.stat_opens++;
    s->stats.stat_reads++;
    *ret_fd = TAKE_FD(fd);
    return e;
}

/*
 * The kept entry of pid when its stat need not be read this scan (procfs_set_unchanged()):
 * the same pid directory, read by an earlier scan, not due for its periodic read, and its
 * workload's CPU usage unchanged since then.
 */
struct cache_entry *procfs_kept_unchanged(struct procfs_scanner *s, uint32_t pid, ino_t dir_ino) {
    struct cache_entry *e;

    if (!s->unchanged || (s->scan_no + pid) % PROCFS_FULL_READ_SCANS == 0)
        return NULL;
    e = hashmap_get(&s->kept, pid);
    if (!e || e->dir_ino != dir_ino || e->read_scan == 0 || e->read_scan >= s->scan_no ||
        e->kernel_thread)
        return NULL;
    return s->unchanged(s->unchanged_userdata, e->identity, s->scan_no - e->read_scan) ? e : NULL;
}

struct cache_entry *procfs_kept_sched_read(struct procfs_scanner *s, uint32_t pid, ino_t dir_ino,
                                           uint64_t *ret_ns) {
    struct cache_entry *e = hashmap_get(&s->kept, pid);
    struct stat sb;
    uint64_t ns;

    if (!e || !e->kept_sched || !e->sched_valid || e->read_scan == 0 ||
        (s->scan_no + pid) % PROCFS_FULL_READ_SCANS == 0)
        return NULL;
    if (e->dir_ino != dir_ino)
        goto stale;
    if (s->check_links && (fstat(e->kept_fd, &sb) < 0 || sb.st_nlink == 0))
        goto stale;
    if (procfs_read_schedstat(s, e->kept_fd, &ns) < 0)
        goto stale;
    *ret_ns = ns;
    return e;
stale:
    procfs_kept_drop(s, e);
    return NULL;
}
