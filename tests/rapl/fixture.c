/* SPDX-License-Identifier: MIT */
#include "fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "parse_num.h"
#include "testutil.h"

/* nftw() has no user pointer: the copy runs single-threaded, so file-scope state is fine
 * here (test code only). */
static const char *copy_src, *copy_dst;

static int materialise_msr(const char *values_path, const char *msr_path) {
    _cleanup_(freep) char *text = NULL;
    _cleanup_(closep) int fd = -1;
    char *save = NULL;
    int r;

    r = read_virtual_file_at(AT_FDCWD, values_path, 1 << 16, &text, NULL);
    if (r < 0)
        return r;
    fd = open(msr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *space = strchr(line, ' ');
        uint64_t reg, value;

        if (line[0] == '#' || !space)
            continue;
        *space = '\0';
        if (safe_atou64(line, &reg) < 0 || safe_atou64(space + 1, &value) < 0)
            return -EINVAL;
        if (pwrite(fd, &value, sizeof(value), (off_t)reg) != (ssize_t)sizeof(value))
            return -errno;
    }
    return 0;
}

static int copy_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    char dst[4096], content_path[4096];
    const char *rel = path + strlen(copy_src);
    _cleanup_(freep) char *content = NULL;
    size_t size = 0;

    (void)snprintf(dst, sizeof(dst), "%s%s", copy_dst, rel);
    if (type == FTW_D)
        return mkdir(dst, 0755) < 0 && errno != EEXIST ? -1 : 0;
    if (type != FTW_F)
        return 0;
    if (strcmp(path + strlen(path) - strlen("/msr-values"), "/msr-values") == 0) {
        (void)snprintf(content_path, sizeof(content_path), "%.*s/msr",
                       (int)(strlen(dst) - strlen("/msr-values")), dst);
        return materialise_msr(path, content_path) < 0 ? -1 : 0;
    }
    if (read_virtual_file_at(AT_FDCWD, path, 1 << 20, &content, &size) < 0)
        return -1;
    return write_file_at(AT_FDCWD, dst, content, size) < 0 ? -1 : 0;
}

int fixture_tree(const char *name, char *root, size_t size) {
    char src[1024], rel[256];
    int r;

    (void)snprintf(rel, sizeof(rel), "tests/trees/%s", name);
    test_source_path(src, sizeof(src), rel);
    r = test_mkdtemp(root, size);
    if (r < 0)
        return r;
    copy_src = src;
    copy_dst = root;
    r = nftw(src, copy_one, 16, FTW_PHYS);
    copy_src = copy_dst = NULL;
    if (r != 0) {
        test_rm_rf(root);
        return -EIO;
    }
    return 0;
}

int fixture_set_msr(const char *root, unsigned cpu, uint64_t reg, uint64_t value) {
    _cleanup_(closep) int fd = -1;
    char path[1024];

    (void)snprintf(path, sizeof(path), "%s/dev/cpu/%u/msr", root, cpu);
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    if (pwrite(fd, &value, sizeof(value), (off_t)reg) != (ssize_t)sizeof(value))
        return -EIO;
    return 0;
}

int fixture_set_u64(const char *root, const char *relative, uint64_t value) {
    char path[1024];

    (void)snprintf(path, sizeof(path), "%s/%s", root, relative);
    return write_file_at(AT_FDCWD, path, &value, sizeof(value));
}

static int open_sub(const char *root, const char *sub) {
    char path[1024];

    (void)snprintf(path, sizeof(path), "%s/%s", root, sub);
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return -errno;
    return open_root(path);
}

int fixture_open(const char *root, struct fixture_fds *ret) {
    struct fixture_fds f = {open_sub(root, "proc"), open_sub(root, "sys"), open_sub(root, "dev")};

    if (f.proc < 0 || f.sys < 0 || f.dev < 0) {
        int r = f.proc < 0 ? f.proc : f.sys < 0 ? f.sys : f.dev;

        fixture_close(&f);
        return r;
    }
    *ret = f;
    return 0;
}

void fixture_close(struct fixture_fds *f) {
    closep(&f->proc);
    closep(&f->sys);
    closep(&f->dev);
    *f = (struct fixture_fds){-1, -1, -1};
}

struct rapl_options fixture_options(const struct fixture_fds *f, enum rapl_mode mode) {
    return (struct rapl_options){
        .sys_fd = f->sys,
        .dev_fd = f->dev,
        .proc_fd = f->proc,
        .mode = mode,
    };
}

void fixture_done(const char *root) {
    test_rm_rf(root);
}

void fixture_rapl_open(struct fixture_rapl *e, const char *tree) {
    ASSERT_OK(fixture_tree(tree, e->root, sizeof(e->root)));
    ASSERT_OK(fixture_open(e->root, &e->fds));
}

int fixture_rapl_start(struct fixture_rapl *e, enum rapl_mode mode) {
    struct rapl_options o = fixture_options(&e->fds, mode);

    return rapl_open(&o, &e->rapl, &e->status);
}

void fixture_rapl_done(struct fixture_rapl *e) {
    e->rapl = rapl_free(e->rapl);
    fixture_close(&e->fds);
    fixture_done(e->root);
}
