/* SPDX-License-Identifier: MIT */
#include "run_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cpu.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "parse_num.h"

struct run_cgroup {
    int dir_fd;    /* the command's cgroup */
    int parent_fd; /* the cgroup run was started in */
    int procs_fd;  /* dir_fd's cgroup.procs, open for writing: the command enters by it */
    char name[48]; /* "joulestat-run-<pid>-<hex>" */
    char path[PATH_MAX];
};

/* The unified hierarchy: all of /sys/fs/cgroup, or its "unified" mount on a hybrid host. */
static const char *const v2_mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};

/* The "0::<path>" line of a /proc/<pid>/cgroup text: the path, without its '/', into buf
 * ("" for the root). -ENOENT: no such line; -EXDEV: a path outside our cgroup namespace
 * ("/.."), which no mount of ours shows. */
static int v2_path_of(const char *text, size_t len, char *buf, size_t size) {
    for (const char *line = text, *end = text + len; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        size_t n = (size_t)((eol ? eol : end) - line);

        if (n >= 4 && memcmp(line, "0::/", 4) == 0) {
            line += 4, n -= 4;
            if ((n >= 2 && memcmp(line, "..", 2) == 0 && (n == 2 || line[2] == '/')) ||
                memchr(line, '\0', n))
                return -EXDEV;
            if (n >= size)
                return -ENAMETOOLONG;
            memcpy(buf, line, n);
            buf[n] = '\0';
            return 0;
        }
        line += n + 1;
    }
    return -ENOENT;
}

static int open_v2_mount(const char **ret_mount) {
    for (size_t i = 0; i < ARRAY_SIZE(v2_mounts); i++) {
        struct statfs fs;
        int fd = open(v2_mounts[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
            continue;
        if (fstatfs(fd, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC) {
            *ret_mount = v2_mounts[i];
            return fd;
        }
        (void)close(fd);
    }
    return -EOPNOTSUPP;
}

static void find_pid(pid_t pid, void *userdata) {
    pid_t *wanted = userdata;

    if (pid == *wanted)
        *wanted = 0;
}

/* Whether the cgroup open at dir_fd holds pid: the mount shows the cgroup our /proc/self/
 * cgroup names only where its root is our cgroup namespace's (not a bind-mounted subtree). */
static bool holds(int dir_fd, pid_t pid) {
    struct run_cgroup probe = {.dir_fd = dir_fd};

    return run_cgroup_for_each_pid(&probe, find_pid, &pid) == 0 && pid == 0;
}

int run_cgroup_create(int proc_fd, struct run_cgroup **ret) {
    _cleanup_(closep) int mount_fd = -1, parent_fd = -1;
    char own[PATH_MAX], text[4096];
    const char *mount = NULL;
    struct run_cgroup *cg;
    uint64_t usage;
    int r, len;

    len = read_file_into_at(proc_fd, "self/cgroup", text, sizeof(text));
    if (len < 0)
        return len;
    r = v2_path_of(text, (size_t)len, own, sizeof(own));
    if (r < 0)
        return r;
    mount_fd = open_v2_mount(&mount);
    if (mount_fd < 0)
        return mount_fd;
    parent_fd = open_dir_at(mount_fd, own[0] ? own : ".");
    if (parent_fd < 0)
        return parent_fd;
    if (!holds(parent_fd, getpid()))
        return -ENOENT;
    cg = calloc(1, sizeof(*cg));
    if (!cg)
        return -ENOMEM;
    *cg = (struct run_cgroup){.dir_fd = -1, .procs_fd = -1};
    /* The pid and the time: a run in another pid namespace may have our pid. */
    (void)snprintf(cg->name, sizeof(cg->name), "joulestat-run-%d-%" PRIx64, (int)getpid(),
                   (uint64_t)(clock_monotonic_ns() & 0xffffffffffU));
    len =
        snprintf(cg->path, sizeof(cg->path), "%s%s%s/%s", mount, own[0] ? "/" : "", own, cg->name);
    r = len < 0 || (size_t)len >= sizeof(cg->path) ? -ENAMETOOLONG
        : mkdirat(parent_fd, cg->name, 0755) < 0   ? -errno
                                                   : 0;
    if (r < 0) {
        free(cg);
        return r;
    }
    cg->parent_fd = TAKE_FD(parent_fd);
    /* From here on, run_cgroup_free() removes the directory. */
    cg->dir_fd = r = open_dir_at(cg->parent_fd, cg->name);
    if (r >= 0) {
        cg->procs_fd = openat(cg->dir_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
        r = cg->procs_fd < 0 ? -errno : run_cgroup_usage_us(cg, &usage);
    }
    if (r < 0) {
        run_cgroup_free(cg);
        return r;
    }
    *ret = cg;
    return 0;
}

int run_cgroup_enter(const struct run_cgroup *cg) {
    return write(cg->procs_fd, "0", 1) == 1 ? 0 : -errno;
}

int run_cgroup_usage_us(const struct run_cgroup *cg, uint64_t *ret_us) {
    char text[1024];
    int len = read_file_into_at(cg->dir_fd, "cpu.stat", text, sizeof(text));

    if (len < 0)
        return len;
    return cgroup_cpu_stat_parse_usage(text, ret_us);
}

int run_cgroup_for_each_pid(const struct run_cgroup *cg, void (*fn)(pid_t pid, void *userdata),
                            void *userdata) {
    _cleanup_(freep) char *text = NULL;
    size_t len;
    int r = read_virtual_file_at(cg->dir_fd, "cgroup.procs", 64U << 20, &text, &len);

    if (r < 0)
        return r;
    for (char *line = text, *end = text + len; line < end;) {
        char *eol = strchrnul(line, '\n');
        uint32_t pid;

        *eol = '\0';
        if (safe_atou32(line, &pid) == 0 && pid > 0 && pid <= INT_MAX)
            fn((pid_t)pid, userdata);
        line = eol + 1;
    }
    return 0;
}

const char *run_cgroup_path(const struct run_cgroup *cg) {
    return cg->path;
}

static void move_to_parent(pid_t pid, void *userdata) {
    int fd = *(const int *)userdata;
    char buf[16];
    int n = snprintf(buf, sizeof(buf), "%d", (int)pid);

    if (write(fd, buf, (size_t)n) < 0)
        log_debug_errno(-errno, "run: cannot move process %d out of the command's cgroup: %m",
                        (int)pid);
}

struct run_cgroup *run_cgroup_free(struct run_cgroup *cg) {
    _cleanup_(closep) int parent_procs = -1;
    int r = -EBUSY;

    if (!cg)
        return NULL;
    parent_procs = openat(cg->parent_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
    /* A process that forks while the others are moved lands in the cgroup again, and one
     * still on its way out (the command's last child, exiting as the command ends) can be
     * neither moved nor waited for: rounds 10 ms apart, for up to 2 s. */
    for (unsigned round = 0; round < 200 && r == -EBUSY; round++) {
        if (round > 0)
            (void)nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        if (parent_procs >= 0 && cg->dir_fd >= 0)
            (void)run_cgroup_for_each_pid(cg, move_to_parent, &parent_procs);
        r = unlinkat(cg->parent_fd, cg->name, AT_REMOVEDIR) < 0 ? -errno : 0;
    }
    if (r < 0)
        log_warning_errno(r,
                          "run: cannot remove the command's cgroup %s: %m; processes it left "
                          "running may still be in it: remove it when they end",
                          cg->path);
    if (cg->procs_fd >= 0)
        (void)close(cg->procs_fd);
    if (cg->dir_fd >= 0)
        (void)close(cg->dir_fd);
    if (cg->parent_fd >= 0)
        (void)close(cg->parent_fd);
    free(cg);
    return NULL;
}
