/* SPDX-License-Identifier: MIT */
#include "procfs_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "identity_read.h"
#include "fileio.h"
#include "macro.h"
#include "parse_num.h"
#include "small_sort.h"

/* /proc/stat grows with CPUs and interrupts (the "intr" line); read once at start. */
#define PROC_STAT_MAX_SIZE (8u * 1024u * 1024u)
/* Upper bound of the default kept-fd cap when RLIMIT_NOFILE is unlimited or huge. */
#define KEPT_FDS_DEFAULT_MAX (1u << 20)

static bool is_vanished(int r) {
    return r == -ENOENT || r == -ESRCH;
}

/* "btime <seconds>" line of <procfs>/stat. */
static int read_btime(int root_fd, uint64_t *ret) {
    _cleanup_(freep) char *text = NULL;
    size_t len;
    int r;

    r = read_virtual_file_at(root_fd, "stat", PROC_STAT_MAX_SIZE, &text, &len);
    if (r < 0)
        return r;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');

        if (nl)
            *nl = '\0';
        if (strncmp(line, "btime ", 6) == 0)
            return safe_atou64(line + 6, ret) < 0 ? -EINVAL : 0;
        line = nl ? nl + 1 : NULL;
    }
    return -EINVAL;
}

/* Half the soft fd limit: the rest stays for sockets, sysfs and the libraries. */
static size_t default_max_kept(void) {
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 2 > KEPT_FDS_DEFAULT_MAX)
        return KEPT_FDS_DEFAULT_MAX;
    return (size_t)(rl.rlim_cur / 2);
}

int procfs_scanner_new(int procfs_fd, const struct procfs_options *opts,
                       struct procfs_scanner **ret_scanner) {
    _cleanup_(freep) struct procfs_scanner *s = NULL;
    _cleanup_(closep) int root = -1, list = -1;
    struct statfs fs;
    bool real_procfs;
    long tck;
    int r;

    root = fcntl(procfs_fd, F_DUPFD_CLOEXEC, 3);
    if (root < 0)
        return -errno;
    list = open_dir_at(root, ".");
    if (list < 0)
        return list;

    s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    r = read_btime(root, &s->btime);
    if (r < 0)
        return r;
    tck = opts && opts->clk_tck ? (long)opts->clk_tck : sysconf(_SC_CLK_TCK);
    s->clk_tck = tck > 0 ? (unsigned long)tck : 100;
    s->tick_ns = s->clk_tck < 1000000000u ? 1000000000u / s->clk_tck : 1;

    real_procfs = fstatfs(root, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
    s->max_kept = opts ? opts->max_kept_fds : 0;
    s->check_links = !real_procfs && s->max_kept != PROCFS_KEEP_FDS_ANYWHERE;
    if (s->max_kept == PROCFS_KEEP_NO_FDS)
        s->max_kept = 0;
    else if (s->max_kept == PROCFS_KEEP_FDS_ANYWHERE)
        s->max_kept = default_max_kept();
    else if (s->max_kept == 0)
        /* Writers of fake trees replace stat by rename: our close of the replaced file
         * would then free its inode in the sampler thread, which costs more than the
         * path walk it saves. Only a real procfs keeps fds unless asked. */
        s->max_kept = real_procfs ? default_max_kept() : 0;

    s->dir = fdopendir(list);
    if (!s->dir)
        return -errno;
    if (!real_procfs)
        s->bpf_reason = "not the kernel's procfs";
    else if (!opts || !opts->try_bpf)
        s->bpf_reason = "turned off";
    else {
        r = task_iter_open(root, &s->iter, &s->bpf_reason);
        if (r == -ENOMEM)
            return r;
        s->bpf_error = r;
    }
    (void)TAKE_FD(list); /* owned by the DIR now */
    s->root_fd = TAKE_FD(root);
    hashmap_init(&s->cache);
    hashmap_init(&s->kept);
    identity_pool_init(&s->identities);
    *ret_scanner = TAKE_PTR(s);
    return 0;
}

static struct cache_entry *entry_free(struct procfs_scanner *s, struct cache_entry *e) {
    if (!e)
        return NULL;
    if (e->kept_fd >= 0)
        (void)close(e->kept_fd);
    identity_pool_put(&s->identities, e->identity);
    free(e);
    return NULL;
}

struct procfs_scanner *procfs_scanner_free(struct procfs_scanner *s) {
    uint64_t key;
    void *value;

    if (!s)
        return NULL;
    for (size_t i = 0; hashmap_next(&s->cache, &i, &key, &value);)
        entry_free(s, value);
    hashmap_done(&s->cache);
    hashmap_done(&s->kept);
    for (size_t i = 0; i < s->n_graveyard; i++)
        entry_free(s, s->graveyard[i]);
    identity_pool_done(&s->identities); /* after the last entry_free() */
    task_iter_free(s->iter);
    free(s->graveyard);
    free(s->unread);
    free(s->rows);
    if (s->dir)
        (void)closedir(s->dir);
    if (s->root_fd >= 0)
        (void)close(s->root_fd);
    free(s);
    return NULL;
}

void procfs_set_unchanged(struct procfs_scanner *s, procfs_unchanged_fn unchanged, void *userdata) {
    s->unchanged = unchanged;
    s->unchanged_userdata = userdata;
}

bool procfs_uses_bpf(const struct procfs_scanner *s, const char **ret_reason, int *ret_error) {
    if (ret_reason)
        *ret_reason = s->iter ? NULL : s->bpf_reason;
    if (ret_error)
        *ret_error = s->iter ? 0 : s->bpf_error;
    return s->iter != NULL;
}

bool procfs_walks_processes(const struct procfs_scanner *s) {
    return task_iter_walks_processes(s->iter);
}

void procfs_get_stats(const struct procfs_scanner *s, struct procfs_stats *ret) {
    *ret = s->stats;
    ret->cached = s->cache.size;
    ret->kept_fds = s->kept.size;
}

int procfs_account_read_error(struct procfs_scanner *s, int r) {
    if (r == -ENOMEM)
        return r;
    if (is_vanished(r)) {
        s->stats.vanished++;
        return -ESRCH;
    }
    s->stats.read_errors++;
    return r;
}

/* Parses the n bytes of <pid>/stat in stat_buf. */
static int parse_stat(struct procfs_scanner *s, int n, uint32_t pid, struct proc_pid_stat *ret) {
    if (proc_pid_stat_parse(s->stat_buf, (size_t)n, ret) < 0 || ret->pid != pid ||
        ret->starttime >= KEY_STARTTIME_LIMIT) {
        s->stats.parse_errors++;
        return -EINVAL;
    }
    return 0;
}

/* Opens and reads <pid>/stat through the pid directory fd. Returns the open stat fd (the
 * caller may keep it) or -errno (-ESRCH: gone, -EINVAL: malformed). */
int procfs_open_read_stat(struct procfs_scanner *s, int pid_fd, uint32_t pid,
                          struct proc_pid_stat *ret) {
    _cleanup_(closep) int fd = -1;
    int n, r;

    fd = openat(pid_fd, "stat", O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return procfs_account_read_error(s, -errno);
    s->stats.stat_opens++;
    n = read_fd_into(fd, s->stat_buf, sizeof(s->stat_buf));
    if (n == 0) /* the process died between open and read */
        n = -ESRCH;
    if (n < 0)
        return procfs_account_read_error(s, n);
    s->stats.stat_reads++;
    r = parse_stat(s, n, pid, ret);
    if (r < 0)
        return r;
    return TAKE_FD(fd);
}

/* The identity of a new process: IDENTITY_NONE when unreadable or unknown, -ESRCH when the
 * process is gone (then it must not be cached). */
static int read_identity(struct procfs_scanner *s, int pid_fd, struct workload_identity *ret) {
    struct identity_read_counts c = {0};
    int r = identity_read_at(pid_fd, ret, &c);

    s->stats.cgroup_reads += c.cgroup_reads;
    s->stats.environ_reads += c.environ_reads;
    s->stats.parse_errors += c.parse_errors;
    s->stats.read_errors += c.read_errors;
    s->stats.vanished += c.vanished;
    return r;
}

/* Finds (pid, starttime) in the cache or creates its entry, reading the identity once.
 * Returns 0 with *ret_entry, -ESRCH (gone), -ENOMEM. */
int procfs_get_entry(struct procfs_scanner *s, int pid_fd, const struct proc_pid_stat *st,
                     struct cache_entry **ret_entry) {
    struct workload_identity id = {0};
    struct cache_entry *e;
    uint64_t key = key_of(st->pid, st->starttime);
    int r;

    *ret_entry = hashmap_get(&s->cache, key);
    if (*ret_entry)
        return 0;

    if (!(st->flags & PROC_PF_KTHREAD)) {
        r = read_identity(s, pid_fd, &id);
        if (r < 0)
            return r;
    }
    e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    e->pid = st->pid;
    e->starttime = st->starttime;
    e->kept_fd = -1;
    e->kernel_thread = (st->flags & PROC_PF_KTHREAD) != 0;
    r = identity_pool_get(&s->identities, &id, &e->identity);
    if (r >= 0)
        r = hashmap_put(&s->cache, key, e);
    if (r < 0) {
        entry_free(s, e);
        return r;
    }
    *ret_entry = e;
    return 0;
}

void procfs_follow_exec(struct procfs_scanner *s, struct cache_entry *e, const char *comm,
                        int pid_fd) {
    _cleanup_(closep) int own_fd = -1, stat_fd = -1;
    struct workload_identity id = {0};
    const struct workload_identity *pooled;
    struct proc_pid_stat st;
    int r;

    if (e->seen_scan == 0 || e->kernel_thread || e->exec_followed ||
        (!e->exec_pending && strncmp(e->comm, comm, sizeof(e->comm)) == 0))
        return;
    e->exec_pending = false;
    if (pid_fd < 0) {
        pid_fd = own_fd = procfs_open_pid_dir(s, e->pid);
        if (pid_fd < 0) {
            e->exec_pending = identity_read_error_is_transient(pid_fd);
            return;
        }
    }
    /* Through the pid directory, and the same process still (not a new holder of the pid):
     * else it is gone, and nothing is to be read. */
    stat_fd = procfs_open_read_stat(s, pid_fd, e->pid, &st);
    if (stat_fd < 0) {
        e->exec_pending = identity_read_error_is_transient(stat_fd); /* out of fds: later */
        return;
    }
    s->stats.exec_stat_reads++;
    if (st.starttime != e->starttime)
        return;
    r = read_identity(s, pid_fd, &id);
    if (r >= 0)
        r = identity_pool_get(&s->identities, &id, &pooled);
    if (r < 0) {
        e->exec_pending = identity_read_error_is_transient(r);
        return;
    }
    identity_pool_put(&s->identities, e->identity);
    e->identity = pooled;
    e->exec_followed = true;
    s->stats.exec_rereads++;
}

static void entry_update(struct cache_entry *e, const struct proc_pid_stat *st) {
    e->ppid = st->ppid;
    e->state = st->state;
    memcpy(e->comm, st->comm, sizeof(e->comm));
}

static double start_time_seconds(const struct procfs_scanner *s, uint64_t starttime) {
    return (double)s->btime + (double)starttime / (double)s->clk_tck;
}

uint64_t procfs_new_row_ticks(struct procfs_scanner *s, const struct cache_entry *e) {
    if (s->scan_no <= 1 || e->starttime < s->prev_latest_start)
        return 0;
    return e->cpu_ticks;
}

void procfs_saw(struct procfs_scanner *s, const struct cache_entry *e) {
    s->latest_start = MAX(s->latest_start, e->starttime);
}

void procfs_fill_row(const struct procfs_scanner *s, const struct cache_entry *e,
                     struct procfs_process *row) {
    *row = (struct procfs_process){
        .pid = e->pid,
        .ppid = e->ppid,
        .starttime = e->starttime,
        .start_time_seconds = start_time_seconds(s, e->starttime),
        .state = e->state,
        .kernel_thread = e->kernel_thread,
        .cpu_ticks = e->cpu_ticks,
        .comm = e->comm,
        .identity = e->identity,
    };
}

/* Opens <procfs>/<pid> without following links: the fd pins this process, so stat and
 * cgroup read through it belong to the same (pid, starttime). */
int procfs_open_pid_dir(struct procfs_scanner *s, uint32_t pid) {
    char name[16];
    int fd;

    (void)snprintf(name, sizeof(name), "%u", (unsigned)pid);
    fd = openat(s->root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return procfs_account_read_error(s, -errno);
    return fd;
}

/* A known single-threaded process between its stat reads: its kept schedstat only. */
static bool scan_sched_only(struct procfs_scanner *s, uint32_t pid, ino_t dir_ino) {
    struct procfs_process *row;
    struct cache_entry *e;
    uint64_t ns, prev;

    e = procfs_kept_sched_read(s, pid, dir_ino, &ns);
    if (!e)
        return false;
    prev = e->cpu_ticks;
    procfs_cpu_from_sched(s, e, ns);
    e->seen_scan = e->read_scan = s->scan_no;
    row = &s->rows[s->n_rows++];
    procfs_fill_row(s, e, row);
    row->cpu_ticks_delta = e->cpu_ticks >= prev ? e->cpu_ticks - prev : 0;
    return true;
}

/* A pid whose stat could not be read (r) though it did not vanish: a known process of that
 * pid is not taken for exited by the sweep (it would be new again at the next scan, with
 * its whole lifetime's CPU time in one window). Returns 0 or -ENOMEM. */
static int unread(struct procfs_scanner *s, uint32_t pid, int r) {
    if (r == -ENOMEM)
        return r;
    /* Gone, or no pid directory any more (a symlink in its place shows another's stat). */
    if (r == -ESRCH || r == -ELOOP || r == -ENOTDIR)
        return 0;
    r = grow_array(&s->unread, &s->cap_unread, s->n_unread + 1, sizeof(*s->unread));
    if (r < 0)
        return r;
    s->unread[s->n_unread++] = pid;
    return 0;
}

static int scan_pid(struct procfs_scanner *s, uint32_t pid, ino_t dir_ino) {
    _cleanup_(closep) int pid_fd = -1, stat_fd = -1;
    struct proc_pid_stat st;
    struct cache_entry *e;
    uint64_t prev;
    bool is_new;
    int r;

    r = grow_array(&s->rows, &s->cap_rows, s->n_rows + 1, sizeof(*s->rows));
    if (r < 0)
        return r;
    e = procfs_kept_unchanged(s, pid, dir_ino);
    if (e) {
        e->seen_scan = s->scan_no;
        procfs_fill_row(s, e, &s->rows[s->n_rows++]); /* flags 0, cpu_ticks_delta 0 */
        s->stats.stat_skips++;
        return 0;
    }
    if (scan_sched_only(s, pid, dir_ino))
        return 0;
    e = procfs_kept_read(s, pid, dir_ino, &st);
    if (!e) {
        e = procfs_known_read_direct(s, pid, &st, &stat_fd);
        if (!e && stat_fd < -1)
            return unread(s, pid, stat_fd); /* gone or refused */
    }
    if (!e) {
        pid_fd = procfs_open_pid_dir(s, pid);
        if (pid_fd < 0) /* gone, or not a real pid directory (e.g. a symlink) */
            return unread(s, pid, pid_fd);
        stat_fd = procfs_open_read_stat(s, pid_fd, pid, &st);
        if (stat_fd < 0)
            return unread(s, pid, stat_fd);
        r = procfs_get_entry(s, pid_fd, &st, &e);
        if (r == -ENOMEM)
            return r;
        if (r < 0)
            return 0;
    }

    is_new = e->seen_scan == 0;
    prev = e->cpu_ticks;
    procfs_follow_exec(s, e, st.comm, pid_fd);
    r = procfs_cpu_settle(s, e, &st, TAKE_FD(stat_fd), pid_fd, dir_ino, is_new);
    if (r < 0)
        return r;
    entry_update(e, &st);
    e->seen_scan = e->read_scan = s->scan_no;

    procfs_fill_row(s, e, &s->rows[s->n_rows]);
    procfs_saw(s, e);
    if (is_new) {
        s->rows[s->n_rows].flags = PROCFS_PROCESS_NEW;
        s->rows[s->n_rows].cpu_ticks_delta = procfs_new_row_ticks(s, e);
    } else
        s->rows[s->n_rows].cpu_ticks_delta = e->cpu_ticks >= prev ? e->cpu_ticks - prev : 0;
    s->n_rows++;
    return 0;
}

static bool parse_pid_name(const char *name, uint32_t *ret) {
    uint32_t v = 0;

    if (name[0] < '1' || name[0] > '9')
        return false;
    for (const char *p = name; *p; p++) {
        if (*p < '0' || *p > '9' || v >= PROC_PID_LIMIT / 10 + 1)
            return false;
        v = v * 10 + (uint32_t)(*p - '0');
    }
    if (v >= PROC_PID_LIMIT)
        return false;
    *ret = v;
    return true;
}

/* Mark and sweep: entries not seen by this scan are gone. Rows exist only for processes
 * a scan has reported before; lookup-only entries just go. */
static int sweep(struct procfs_scanner *s) {
    size_t gone = 0;
    uint64_t key;
    void *value;
    int r;

    if (s->n_unread > 1)
        qsort(s->unread, s->n_unread, sizeof(*s->unread), compare_u32);
    for (size_t i = 0; hashmap_next(&s->cache, &i, &key, &value);) {
        struct cache_entry *e = value;

        if (e->seen_scan == s->scan_no)
            continue;
        /* Listed but not read: there still, its CPU time counted at its next read. */
        if (s->n_unread > 0 && e->seen_scan != 0 &&
            bsearch(&e->pid, s->unread, s->n_unread, sizeof(*s->unread), compare_u32)) {
            e->seen_scan = s->scan_no;
            continue;
        }
        gone++;
    }
    if (gone == 0)
        return 0;
    r = grow_array(&s->graveyard, &s->cap_graveyard, gone, sizeof(*s->graveyard));
    if (r < 0)
        return r;
    r = grow_array(&s->rows, &s->cap_rows, s->n_rows + gone, sizeof(*s->rows));
    if (r < 0)
        return r;

    for (size_t i = 0; hashmap_next(&s->cache, &i, &key, &value);)
        if (((struct cache_entry *)value)->seen_scan != s->scan_no)
            s->graveyard[s->n_graveyard++] = value;
    for (size_t i = 0; i < s->n_graveyard; i++) {
        struct cache_entry *e = s->graveyard[i];

        procfs_kept_drop(s, e);
        (void)hashmap_remove(&s->cache, key_of(e->pid, e->starttime));
        if (e->seen_scan == 0)
            continue;
        procfs_fill_row(s, e, &s->rows[s->n_rows]);
        s->rows[s->n_rows].flags = PROCFS_PROCESS_EXITED;
        s->n_rows++;
    }
    return 0;
}

int procfs_scan(struct procfs_scanner *s, const struct procfs_process **ret_processes) {
    struct dirent *de;
    int r;

    for (size_t i = 0; i < s->n_graveyard; i++)
        entry_free(s, s->graveyard[i]);
    s->n_graveyard = 0;
    s->n_rows = s->n_sorted_rows = 0;
    s->n_unread = 0;
    s->scan_no++;
    s->stats.scans++;
    if (s->latest_start > 0) /* a scan that saw nothing says nothing */
        s->prev_latest_start = s->latest_start;
    s->latest_start = 0;

    if (s->iter) {
        r = procfs_scan_bpf(s);
        if (r == -ENOMEM)
            return r;
        if (r == 0) {
            s->n_sorted_rows = s->n_rows;
            goto sweep;
        }
        /* Refused (a filter, a lost capability) or broken: /proc from now on. */
        s->iter = task_iter_free(s->iter);
        s->bpf_reason = "reading the task iterator failed";
        s->bpf_error = r;
        s->n_rows = 0;
    }
    rewinddir(s->dir);
    for (;;) {
        uint32_t pid;

        errno = 0;
        de = readdir(s->dir);
        if (!de) {
            if (errno != 0)
                return -errno;
            break;
        }
        if (!parse_pid_name(de->d_name, &pid))
            continue;
        r = scan_pid(s, pid, de->d_ino);
        if (r < 0)
            return r;
    }

sweep:
    r = sweep(s);
    if (r < 0)
        return r;
    *ret_processes = s->rows;
    return (int)s->n_rows;
}

int procfs_lookup(struct procfs_scanner *s, uint32_t pid, struct procfs_lookup *ret) {
    _cleanup_(closep) int pid_fd = -1, stat_fd = -1;
    struct proc_pid_stat st;
    struct cache_entry *e;
    int r;

    if (pid == 0 || pid >= PROC_PID_LIMIT)
        return -EINVAL;
    pid_fd = procfs_open_pid_dir(s, pid);
    if (pid_fd < 0)
        return pid_fd;
    stat_fd = procfs_open_read_stat(s, pid_fd, pid, &st);
    if (stat_fd < 0)
        return stat_fd;
    r = procfs_get_entry(s, pid_fd, &st, &e);
    if (r < 0)
        return r;
    if (e->seen_scan == 0)
        entry_update(e, &st); /* comm and state for a process no scan has seen yet */

    *ret = (struct procfs_lookup){
        .starttime = e->starttime,
        .start_time_seconds = start_time_seconds(s, e->starttime),
        .kernel_thread = e->kernel_thread,
        .identity = e->identity,
    };
    memcpy(ret->comm, st.comm, sizeof(ret->comm));
    return 0;
}

const struct workload_identity *procfs_scanned_identity(const struct procfs_scanner *s,
                                                        uint32_t pid) {
    size_t lo = 0, hi = s->n_sorted_rows;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (s->rows[mid].pid == pid)
            return s->rows[mid].identity;
        if (s->rows[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

double procfs_start_time_seconds(const struct procfs_scanner *s, uint64_t starttime) {
    return start_time_seconds(s, starttime);
}
