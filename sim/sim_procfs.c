/* SPDX-License-Identifier: MIT */
#include "sim_procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "sim_control.h"

#define USEC_PER_TICK (1000000u / SIM_CLK_TCK)
#define UPTIME_REFRESH_US 100000u /* rewrite <dir>/uptime at most every 100 ms */

struct sim_procfs {
    int dirfd;
    int execfd; /* <dir>/.exec: each program as read at its exec, kept after it exits */
    const struct sim_scenario *sc;
    uint64_t t0_us;
    size_t next_start; /* into sc->procs (sorted by start) */
    size_t next_stop;  /* into by_stop */
    const struct sim_process **by_stop;
    uint64_t uptime_written_t;
    bool uptime_valid;
};

int sim_procfs_open(const char *dir, struct sim_procfs **ret) {
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return -errno;
    int fd = open_root(dir);
    if (fd < 0)
        return fd;
    struct sim_procfs *fs = calloc(1, sizeof(*fs));
    if (!fs) {
        close(fd);
        return -ENOMEM;
    }
    fs->dirfd = fd;
    fs->execfd = -1;
    if (mkdirat(fd, JOULESTAT_SIM_EXEC_RECORDS, 0755) < 0 && errno != EEXIST) {
        int r = -errno;
        sim_procfs_free(fs);
        return r;
    }
    fs->execfd = open_dir_at(fd, JOULESTAT_SIM_EXEC_RECORDS);
    if (fs->execfd < 0) {
        int r = fs->execfd;
        sim_procfs_free(fs);
        return r;
    }
    *ret = fs;
    return 0;
}

struct sim_procfs *sim_procfs_free(struct sim_procfs *fs) {
    if (!fs)
        return NULL;
    if (fs->dirfd >= 0)
        close(fs->dirfd);
    if (fs->execfd >= 0)
        close(fs->execfd);
    free(fs->by_stop);
    free(fs);
    return NULL;
}

uint64_t sim_procfs_btime(const struct sim_scenario *sc, uint64_t t0_us) {
    uint64_t boot = t0_us > sc->uptime_us ? t0_us - sc->uptime_us : 0;
    return boot / 1000000;
}

uint64_t sim_procfs_start_ticks(const struct sim_scenario *sc, uint64_t t0_us,
                                const struct sim_process *p) {
    uint64_t abs = t0_us + p->start_us;
    uint64_t boot_us = sim_procfs_btime(sc, t0_us) * 1000000;
    return (abs - boot_us) / USEC_PER_TICK;
}

/* Removes a directory holding only files (a pid directory). */
static int remove_flat_dir(int parent_fd, const char *name) {
    DIR *d;
    int r0 = opendir_at(parent_fd, name, true, &d);
    if (r0 < 0)
        return r0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            (void)unlinkat(dirfd(d), de->d_name, 0);
    closedir(d);
    if (unlinkat(parent_fd, name, AT_REMOVEDIR) < 0)
        return -errno;
    return 0;
}

static bool is_pid_name(const char *s) {
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* Removes every pid directory and leftover temporary directory. */
static int clear_tree(int root_fd) {
    DIR *d;
    int r0 = opendir_at(root_fd, ".", false, &d);
    if (r0 < 0)
        return r0;
    int r = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        if (is_pid_name(n) || !strncmp(n, ".new-", 5) || !strncmp(n, ".old-", 5)) {
            int k = remove_flat_dir(root_fd, n);
            if (k < 0 && r == 0)
                r = k;
        }
    }
    closedir(d);
    return r;
}

static int write_text(int dirfd, const char *name, const char *text) {
    return write_file_at(dirfd, name, text, strlen(text));
}

static int write_uptime(struct sim_procfs *fs, uint64_t t) {
    uint64_t up_us = fs->sc->uptime_us + t;
    char buf[64];
    (void)snprintf(buf, sizeof buf, "%llu.%02llu %llu.%02llu\n",
                   (unsigned long long)(up_us / 1000000), (unsigned long long)(up_us / 10000 % 100),
                   (unsigned long long)(up_us / 1000000 * 2),
                   (unsigned long long)(up_us / 10000 % 100));
    fs->uptime_written_t = t;
    fs->uptime_valid = true;
    return write_text(fs->dirfd, "uptime", buf);
}

static int write_stat(struct sim_procfs *fs) {
    char buf[512];
    (void)snprintf(buf, sizeof buf,
                   "cpu  421337 12 98765 8123456 2345 0 1234 0 0 0\n"
                   "cpu0 210668 6 49382 4061728 1172 0 617 0 0 0\n"
                   "cpu1 210669 6 49383 4061728 1173 0 617 0 0 0\n"
                   "intr 0\n"
                   "ctxt 123456789\n"
                   "btime %llu\n"
                   "processes %zu\n"
                   "procs_running 1\n"
                   "procs_blocked 0\n",
                   (unsigned long long)sim_procfs_btime(fs->sc, fs->t0_us), fs->sc->n_procs + 1000);
    return write_text(fs->dirfd, "stat", buf);
}

static int write_process_files(struct sim_procfs *fs, int dirfd, const struct sim_process *p) {
    char stat[512], comm[SIM_COMM_MAX + 1];
    uint64_t rss_pages = p->memory_bytes / 4096 / 16 + 2048;
    int r;

    /* all 52 fields of /proc/<pid>/stat; 22 is the start time in clock ticks */
    (void)snprintf(stat, sizeof stat,
                   "%u (%s) S %u %u %u 0 -1 4194560 1200 0 3 0 0 0 0 0 20 0 4 0 %llu %llu %llu "
                   "18446744073709551615 1 1 0 0 0 0 0 4096 17922 0 0 0 17 %u "
                   "0 0 0 0 0 0 0 0 0 0 0 0 0\n",
                   p->pid, p->comm, p->ppid, p->pid, p->pid,
                   (unsigned long long)sim_procfs_start_ticks(fs->sc, fs->t0_us, p),
                   (unsigned long long)(rss_pages * 4096 * 4), (unsigned long long)rss_pages,
                   p->pid % 2);
    (void)snprintf(comm, sizeof comm, "%s\n", p->comm);
    if ((r = write_text(dirfd, "stat", stat)) < 0 ||
        (r = write_text(dirfd, "cgroup", p->cgroup)) < 0 ||
        (r = write_text(dirfd, "comm", comm)) < 0 ||
        (r = write_file_at(dirfd, "cmdline", p->comm, strlen(p->comm) + 1)) < 0)
        return r;
    return 0;
}

/* Writes p's directory under root_fd; an existing one is kept, or replaced (a reused pid's
 * record). */
static int create_process_at(struct sim_procfs *fs, int root_fd, const struct sim_process *p,
                             bool replace) {
    char name[16], tmp[24];
    struct stat st;
    int r;

    (void)snprintf(name, sizeof name, "%u", p->pid);
    /* the same process on a second GPU: already there */
    if (fstatat(root_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (!replace)
            return 0;
        r = remove_flat_dir(root_fd, name);
        if (r < 0)
            return r;
    }
    (void)snprintf(tmp, sizeof tmp, ".new-%u", p->pid);
    (void)remove_flat_dir(root_fd, tmp);
    if (mkdirat(root_fd, tmp, 0755) < 0)
        return -errno;
    int fd = open_dir_at(root_fd, tmp);
    if (fd < 0)
        return fd;
    r = write_process_files(fs, fd, p);
    close(fd);
    if (r >= 0 && renameat(root_fd, tmp, root_fd, name) < 0)
        r = -errno;
    if (r < 0)
        (void)remove_flat_dir(root_fd, tmp);
    return r;
}

static int remove_process(struct sim_procfs *fs, const struct sim_process *p) {
    char name[16], old[24];
    (void)snprintf(name, sizeof name, "%u", p->pid);
    (void)snprintf(old, sizeof old, ".old-%u", p->pid);
    if (renameat(fs->dirfd, name, fs->dirfd, old) < 0)
        return errno == ENOENT ? 0 : -errno; /* never created, or a second GPU's entry */
    return remove_flat_dir(fs->dirfd, old);
}

static int by_stop(const void *a, const void *b) {
    const struct sim_process *x = *(const struct sim_process *const *)a;
    const struct sim_process *y = *(const struct sim_process *const *)b;
    return x->stop_us < y->stop_us ? -1 : (x->stop_us > y->stop_us);
}

int sim_procfs_reset(struct sim_procfs *fs, const struct sim_scenario *sc, uint64_t t0_us) {
    const struct sim_process **v = calloc(MAX(sc->n_procs, (size_t)1), sizeof(*v));
    int r;
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < sc->n_procs; i++)
        v[i] = &sc->procs[i];
    qsort(v, sc->n_procs, sizeof(*v), by_stop);
    free(fs->by_stop);
    fs->by_stop = v;
    fs->sc = sc;
    fs->t0_us = t0_us;
    fs->next_start = fs->next_stop = 0;
    fs->uptime_valid = false;

    r = clear_tree(fs->dirfd);
    if (r >= 0)
        r = clear_tree(fs->execfd);
    if (r < 0)
        return r;
    r = write_stat(fs);
    if (r < 0)
        return r;
    return write_uptime(fs, 0);
}

int sim_procfs_sync(struct sim_procfs *fs, uint64_t t) {
    const struct sim_scenario *sc = fs->sc;
    int r = 0, k;

    if (!sc)
        return 0;
    /* exits first, so a reused pid's new process is never removed by its predecessor */
    while (fs->next_stop < sc->n_procs && fs->by_stop[fs->next_stop]->stop_us <= t) {
        k = remove_process(fs, fs->by_stop[fs->next_stop++]);
        if (k < 0 && r == 0)
            r = k;
    }
    while (fs->next_start < sc->n_procs && sc->procs[fs->next_start].start_us <= t) {
        const struct sim_process *p = &sc->procs[fs->next_start++];
        /* its exec, which an exec watcher reads however short the program */
        k = create_process_at(fs, fs->execfd, p, true);
        if (k < 0 && r == 0)
            r = k;
        if (p->stop_us <= t)
            continue; /* started and exited between two looks */
        k = create_process_at(fs, fs->dirfd, p, false);
        if (k < 0 && r == 0)
            r = k;
    }
    if (!fs->uptime_valid || t >= fs->uptime_written_t + UPTIME_REFRESH_US) {
        k = write_uptime(fs, t);
        if (k < 0 && r == 0)
            r = k;
    }
    return r;
}
