/* SPDX-License-Identifier: MIT */
/*
 * What one pass over a procfs costs per process with three ways of reading <pid>/stat,
 * to size the process scan (the largest part of joulestat's sampling CPU, see
 * docs/PERFORMANCE.md):
 *
 *   dir+stat   openat(root, "<pid>", O_DIRECTORY|O_NOFOLLOW), openat(dir, "stat"), read,
 *              two closes (what src/proc/procfs.c does today)
 *   path       openat(root, "<pid>/stat"), read, close
 *   kept-open  pread() on a stat fd kept open from the previous pass (valid on a real
 *              /proc, where the fd follows the live process; a fake tree rewritten by
 *              rename would be read stale)
 *   schedstat  pread() on a kept <pid>/schedstat fd (the on-CPU ns the scanner reads
 *              between stat reads of a single-threaded process); only where the tree has
 *              schedstat files
 *   listing    one pass of readdir() over the root, per pid directory (every scan lists)
 *
 *   bench-procfs-syscalls PROCFS [PASSES]
 *
 * Prints processes and the best-of-PASSES µs per process of each way (thread CPU time).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "parse_num.h"

static uint64_t cpu_ns(void) {
    struct timespec ts;

    (void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The pid directories of the root, in directory order. */
static int list_pids(int root, char (**ret)[16], size_t *ret_n) {
    _cleanup_(freep) char(*names)[16] = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    DIR *d;
    int fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    d = fdopendir(fd);
    if (!d) {
        (void)close(fd);
        return -ENOMEM;
    }
    while ((de = readdir(d))) {
        uint32_t pid;

        if (safe_atou32(de->d_name, &pid) < 0 || strlen(de->d_name) >= 16)
            continue;
        if (grow_array(&names, &cap, n + 1, sizeof(*names)) < 0) {
            (void)closedir(d);
            return -ENOMEM;
        }
        memcpy(names[n++], de->d_name, strlen(de->d_name) + 1);
    }
    (void)closedir(d);
    *ret = TAKE_PTR(names);
    *ret_n = n;
    return 0;
}

static int read_dir_stat(int root, const char *pid, char *buf, size_t size) {
    int dir = openat(root, pid, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), fd;
    ssize_t n;

    if (dir < 0)
        return -errno;
    fd = openat(dir, "stat", O_RDONLY | O_CLOEXEC);
    (void)close(dir);
    if (fd < 0)
        return -errno;
    n = read(fd, buf, size);
    (void)close(fd);
    return n < 0 ? -errno : 0;
}

static int read_path_stat(int root, const char *pid, char *buf, size_t size) {
    char path[32];
    ssize_t n;
    int fd;

    (void)snprintf(path, sizeof(path), "%s/stat", pid);
    fd = openat(root, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    n = read(fd, buf, size);
    (void)close(fd);
    return n < 0 ? -errno : 0;
}

int main(int argc, char **argv) {
    _cleanup_(freep) char(*pids)[16] = NULL;
    _cleanup_(freep) int *fds = NULL, *sched_fds = NULL;
    uint64_t best[5] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    size_t n_stat = 0, n_sched = 0, failed = 0;
    DIR *listing;
    uint32_t passes = 20;
    char buf[1024];
    size_t n = 0;
    int root;

    if (argc < 2 || (argc > 2 && safe_atou32(argv[2], &passes) < 0) || passes == 0) {
        fprintf(stderr, "usage: bench-procfs-syscalls PROCFS [PASSES]\n");
        return 2;
    }
    root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0 || list_pids(root, &pids, &n) < 0 || n == 0) {
        fprintf(stderr, "bench-procfs-syscalls: no pid directories under %s\n", argv[1]);
        return 1;
    }
    fds = calloc(n, sizeof(*fds));
    sched_fds = calloc(n, sizeof(*sched_fds));
    listing = fdopendir(openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fds || !sched_fds || !listing)
        return 1;
    /* The ways that open run first, with no fd kept, so that keeping two fds per process
     * later cannot make them fail for want of fds (EMFILE), which would time errors. */
    for (uint32_t p = 0; p < passes; p++) {
        uint64_t t0 = cpu_ns(), t1, t2, t3;

        for (size_t i = 0; i < n; i++)
            failed += read_dir_stat(root, pids[i], buf, sizeof(buf)) < 0;
        t1 = cpu_ns();
        for (size_t i = 0; i < n; i++)
            failed += read_path_stat(root, pids[i], buf, sizeof(buf)) < 0;
        t2 = cpu_ns();
        rewinddir(listing);
        while (readdir(listing))
            ;
        t3 = cpu_ns();
        best[0] = MIN(best[0], t1 - t0);
        best[1] = MIN(best[1], t2 - t1);
        best[4] = MIN(best[4], t3 - t2);
    }
    for (size_t i = 0; i < n; i++) {
        char path[32];

        (void)snprintf(path, sizeof(path), "%s/stat", pids[i]);
        fds[i] = openat(root, path, O_RDONLY | O_CLOEXEC);
        (void)snprintf(path, sizeof(path), "%s/schedstat", pids[i]);
        sched_fds[i] = openat(root, path, O_RDONLY | O_CLOEXEC);
        n_stat += fds[i] >= 0;
        n_sched += sched_fds[i] >= 0;
        failed += fds[i] < 0 && errno == EMFILE;
    }
    for (uint32_t p = 0; p < passes; p++) {
        uint64_t t0 = cpu_ns(), t1, t2;

        for (size_t i = 0; i < n; i++)
            if (fds[i] >= 0)
                (void)pread(fds[i], buf, sizeof(buf), 0);
        t1 = cpu_ns();
        for (size_t i = 0; i < n; i++)
            if (sched_fds[i] >= 0)
                (void)pread(sched_fds[i], buf, sizeof(buf), 0);
        t2 = cpu_ns();
        best[2] = MIN(best[2], t1 - t0);
        best[3] = MIN(best[3], t2 - t1);
    }
    printf("processes=%zu dir+stat_us=%.2f path_us=%.2f kept_open_us=%.2f", n,
           (double)best[0] / 1e3 / (double)n, (double)best[1] / 1e3 / (double)n,
           (double)best[2] / 1e3 / (double)MAX(n_stat, (size_t)1));
    if (n_sched > 0)
        printf(" schedstat_us=%.2f", (double)best[3] / 1e3 / (double)n_sched);
    /* Processes that exit meanwhile fail a few reads; many failures mean the figures
     * timed errors (no fds left, no permission). */
    printf(" listing_us=%.2f failed=%zu\n", (double)best[4] / 1e3 / (double)n, failed);
    (void)closedir(listing);
    for (size_t i = 0; i < n; i++) {
        if (fds[i] >= 0)
            (void)close(fds[i]);
        if (sched_fds[i] >= 0)
            (void)close(sched_fds[i]);
    }
    (void)close(root);
    return 0;
}
