/* SPDX-License-Identifier: MIT */
#include "cgroup_cpu.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "fileio.h"
#include "macro.h"
#include "parse_num.h"

/* cpu.stat is a dozen short lines (more with pressure/burst fields); 4 kB is plenty. */
#define CPU_STAT_MAX 4096
#define CGROUP_PATH_MAX 4096

struct cgroup_cpu {
    int dir_fd;
    int file_fd; /* the usage file, kept open after the first read; -1: not open */
    /* Not a cgroup filesystem (fixture and benchmark trees): a writer may replace the file
     * by rename or remove the directory, which a kept fd would not see; fstat() it first. */
    bool check_links;
    enum cgroup_cpu_kind kind;
    const char *file; /* the layout's usage file, relative to dir_fd */
};

static const struct {
    const char *mount;
    const char *file;
    enum cgroup_cpu_kind kind;
} layouts[] = {
    {"fs/cgroup", "cpu.stat", CGROUP_CPU_V2},
    {"fs/cgroup/unified", "cpu.stat", CGROUP_CPU_V2_HYBRID},
    {"fs/cgroup/cpuacct", "cpuacct.usage", CGROUP_CPU_V1},
    {"fs/cgroup/cpu,cpuacct", "cpuacct.usage", CGROUP_CPU_V1},
};

/* Rejects ".." components: the path comes from /proc and must stay inside the mount (a
 * leading climb out of joulestat's cgroup namespace is resolved apart, open_climbed()). */
static bool path_is_safe(const char *path) {
    for (const char *p = path; (p = strstr(p, "..")); p += 2) {
        bool starts = p == path || p[-1] == '/', ends = p[2] == '\0' || p[2] == '/';

        if (starts && ends)
            return false;
    }
    return true;
}

/* The path below the leading ".." a reader in another cgroup namespace sees
 * ("/../../kubepods-burstable.slice/..."), or NULL when it does not climb. */
static const char *below_climb(const char *path) {
    const char *p = path;
    bool climbed = false;

    for (;;) {
        while (*p == '/')
            p++;
        if (p[0] != '.' || p[1] != '.' || (p[2] != '/' && p[2] != '\0'))
            return climbed ? p : NULL;
        climbed = true;
        p += 2;
    }
}

static int open_in(int sys_fd, const char *path, struct cgroup_cpu **ret) {
    char full[CGROUP_PATH_MAX];
    int last = -ENOENT;

    while (*path == '/')
        path++;
    for (size_t i = 0; i < ARRAY_SIZE(layouts); i++) {
        _cleanup_(closep) int fd = -1;
        struct cgroup_cpu *c;
        struct statfs fs;
        int n;

        n = snprintf(full, sizeof(full), "%s/%s", layouts[i].mount, *path ? path : ".");
        if (n < 0 || (size_t)n >= sizeof(full))
            return -ENAMETOOLONG;
        fd = open_dir_at(sys_fd, full);
        if (fd < 0) {
            if (fd != -ENOENT && fd != -ENOTDIR)
                last = fd;
            continue;
        }
        /* The directory must carry this layout's file (a v1 mount has no cpu.stat). */
        if (faccessat(fd, layouts[i].file, F_OK, 0) < 0)
            continue;
        c = malloc(sizeof(*c));
        if (!c)
            return -ENOMEM;
        *c = (struct cgroup_cpu){
            .file_fd = -1,
            .check_links = fstatfs(fd, &fs) < 0 ||
                           (fs.f_type != CGROUP2_SUPER_MAGIC && fs.f_type != CGROUP_SUPER_MAGIC),
            .kind = layouts[i].kind,
            .file = layouts[i].file,
        };
        c->dir_fd = TAKE_FD(fd);
        *ret = c;
        return 0;
    }
    return last;
}

/* Read in joulestat's own cgroup namespace (a container's), a workload's path climbs out of
 * it to an ancestor joulestat cannot name, then down: rest. A systemd slice names its
 * ancestors ("a-b-c.slice" lies in a.slice/a-b.slice/), so a rest that begins with one is
 * found from the root; else rest is tried from the root and below cgroupfs' "kubepods". */
static int open_climbed(int sys_fd, const char *rest, struct cgroup_cpu **ret) {
    size_t first = strcspn(rest, "/"), n = 0;
    char path[CGROUP_PATH_MAX];
    int r = -ENOENT;

    if (first > 6 && memcmp(rest + first - 6, ".slice", 6) == 0 && rest[0] != '-') {
        for (size_t i = 0; i < first - 6 && n < sizeof(path); i++)
            if (rest[i] == '-') {
                int k = snprintf(path + n, sizeof(path) - n, "%.*s.slice/", (int)i, rest);

                if (k < 0 || (size_t)k >= sizeof(path) - n)
                    return -ENAMETOOLONG;
                n += (size_t)k;
            }
        if (snprintf(path + n, sizeof(path) - n, "%s", rest) >= (int)(sizeof(path) - n))
            return -ENAMETOOLONG;
        r = open_in(sys_fd, path, ret);
        if (r != -ENOENT)
            return r;
    }
    r = open_in(sys_fd, rest, ret);
    if (r != -ENOENT)
        return r;
    if (snprintf(path, sizeof(path), "kubepods/%s", rest) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    return open_in(sys_fd, path, ret);
}

int cgroup_cpu_open(int sys_fd, const char *path, struct cgroup_cpu **ret) {
    const char *rest = below_climb(path);

    if (!path_is_safe(rest ? rest : path) || (rest && !*rest))
        return -EINVAL;
    return rest ? open_climbed(sys_fd, rest, ret) : open_in(sys_fd, path, ret);
}

struct cgroup_cpu *cgroup_cpu_free(struct cgroup_cpu *c) {
    if (!c)
        return NULL;
    if (c->dir_fd >= 0)
        (void)close(c->dir_fd);
    if (c->file_fd >= 0)
        (void)close(c->file_fd);
    free(c);
    return NULL;
}

enum cgroup_cpu_kind cgroup_cpu_get_kind(const struct cgroup_cpu *c) {
    return c->kind;
}

int cgroup_cpu_stat_parse_usage(const char *text, uint64_t *ret_usage_us) {
    const char *key = "usage_usec ";
    size_t key_len = strlen(key);

    for (const char *line = text; *line;) {
        const char *eol = strchrnul(line, '\n');
        char tmp[32];
        size_t len;

        if ((size_t)(eol - line) > key_len && strncmp(line, key, key_len) == 0) {
            len = (size_t)(eol - line) - key_len;
            if (len >= sizeof(tmp))
                return -EINVAL;
            memcpy(tmp, line + key_len, len);
            tmp[len] = '\0';
            return safe_atou64(tmp, ret_usage_us) < 0 ? -EINVAL : 0;
        }
        line = *eol ? eol + 1 : eol;
    }
    return -ENODATA;
}

/* The usage file's fd: kept open, since each read of a cgroup file regenerates it (one
 * pread instead of an open, a read and a close per workload and scan). */
static int usage_fd(struct cgroup_cpu *c) {
    struct stat sb;
    int fd;

    if (c->file_fd >= 0 && c->check_links && (fstat(c->file_fd, &sb) < 0 || sb.st_nlink == 0)) {
        (void)close(c->file_fd);
        c->file_fd = -1;
    }
    if (c->file_fd < 0) {
        fd = openat(c->dir_fd, c->file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
            return -errno;
        c->file_fd = fd;
    }
    return c->file_fd;
}

int cgroup_cpu_read(struct cgroup_cpu *c, uint64_t *ret_usage_us) {
    char buf[CPU_STAT_MAX];
    uint64_t v;
    int fd, r;

    fd = usage_fd(c);
    r = fd < 0 ? fd : read_fd_into(fd, buf, sizeof(buf));
    /* A removed cgroup's open directory answers ENODEV; say "gone" the usual way. */
    if (r == -ENODEV)
        return -ENOENT;
    if (r < 0)
        return r;
    if (c->kind != CGROUP_CPU_V1)
        return cgroup_cpu_stat_parse_usage(buf, ret_usage_us);
    r = safe_atou64(buf, &v);
    if (r < 0)
        return -EINVAL;
    *ret_usage_us = v / 1000; /* cpuacct.usage is in nanoseconds */
    return 0;
}
