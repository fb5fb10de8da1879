/* SPDX-License-Identifier: MIT */
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "parse_num.h"

#define READ_INITIAL_SIZE 4096

int read_fd_into(int fd, char *buf, size_t cap) {
    ssize_t n;

    if (cap < 1)
        return -EINVAL;
    do
        n = pread(fd, buf, cap, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if ((size_t)n >= cap)
        return -EFBIG;
    buf[n] = '\0';
    return (int)n;
}

int read_file_into_at(int dirfd, const char *path, char *buf, size_t cap) {
    _cleanup_(closep) int fd = -1;

    fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    return read_fd_into(fd, buf, cap);
}

/* As read_fd_into(), reading on to the end: a file the kernel makes a record at a time
 * (/proc/cpuinfo, maps) gives about a page a read, whatever the buffer. */
static int read_fd_to_end(int fd, char *buf, size_t cap) {
    size_t len = 0;

    while (len < cap) {
        ssize_t n = pread(fd, buf + len, cap - len, (off_t)len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0) {
            buf[len] = '\0';
            return (int)len;
        }
        len += (size_t)n;
    }
    return -EFBIG;
}

int read_virtual_file_at(int dirfd, const char *path, size_t max_size, char **ret_content,
                         size_t *ret_size) {
    _cleanup_(closep) int fd = -1;
    _cleanup_(freep) char *buf = NULL;
    size_t size;

    /* read_fd_into() returns an int length, and we allocate size + 1. */
    max_size = MIN(max_size, (size_t)INT_MAX - 1);
    size = MIN((size_t)READ_INITIAL_SIZE, max_size);
    fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;

    /* Grow until the file fits or max_size is reached: every read starts at offset 0,
     * and the size quadruples, so this ends after a few rounds. */
    for (;;) {
        char *p;
        int n;

        /* One byte more than we accept, so a full read tells us the file was larger. */
        p = realloc(buf, size + 1);
        if (!p)
            return -ENOMEM;
        buf = p;
        n = read_fd_to_end(fd, buf, size + 1);
        if (n >= 0) {
            if (ret_size)
                *ret_size = (size_t)n;
            *ret_content = TAKE_PTR(buf);
            return 0;
        }
        if (n != -EFBIG)
            return n;
        if (size >= max_size)
            return -EFBIG;
        size = size > max_size / 4 ? max_size : size * 4;
    }
}

int read_u64_at(int dirfd, const char *path, uint64_t *ret_value) {
    char buf[64];
    int r;

    r = read_file_into_at(dirfd, path, buf, sizeof(buf));
    if (r < 0)
        return r;
    return safe_atou64(buf, ret_value);
}

int open_dir_at(int dirfd, const char *path) {
    int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    return fd < 0 ? -errno : fd;
}

int open_root(const char *path) {
    return open_dir_at(AT_FDCWD, path);
}

int write_file_at(int dirfd, const char *path, const void *data, size_t size) {
    _cleanup_(closep) int fd = -1;
    const char *p = data;

    fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    while (size > 0) {
        ssize_t n = write(fd, p, size);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) < 0 ? -errno : 0;
}

int remove_tree(const char *path) {
    int r = nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);

    return r < 0 ? -errno : r;
}

int opendir_at(int dirfd, const char *path, bool nofollow, DIR **ret_dir) {
    int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
    int fd = openat(dirfd, path, flags);
    DIR *d;

    if (fd < 0)
        return -errno;
    d = fdopendir(fd);
    if (!d) {
        int r = -errno;

        (void)close(fd);
        return r;
    }
    *ret_dir = d;
    return 0;
}
