/* SPDX-License-Identifier: MIT */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The one way to read /proc, sysfs and other virtual files: openat(dirfd, path) with
 * O_CLOEXEC, reads from offset 0 into a buffer larger than the content, and re-reads with a
 * four times bigger buffer (up to max_size) when the file did not fit. Never stdio.
 * read_virtual_file_at() reads on to the end (a file made a record at a time gives about a
 * page a read); the *_into() helpers, for the tick's files made in one piece (stat,
 * cgroup), read once.
 *
 * read_virtual_file_at(): reads at most max_size bytes; the result is NUL-terminated and
 * owned by the caller. Returns 0, -ENOENT/-EACCES/... from openat/read, -EFBIG when the
 * file is larger than max_size. ret_* are written only on success.
 */
int read_virtual_file_at(int dirfd, const char *path, size_t max_size, char **ret_content,
                         size_t *ret_size);

/* Same, into a caller buffer of `cap` bytes (content truncated never: -EFBIG if it does not
 * fit in cap-1 bytes). Returns the length (>= 0) or -errno. For the tick's hot paths. */
int read_file_into_at(int dirfd, const char *path, char *buf, size_t cap);

/* Same, on an already open fd, read from offset 0 with pread(). */
int read_fd_into(int fd, char *buf, size_t cap);

/* Reads a file holding one unsigned decimal number (trailing whitespace allowed). */
int read_u64_at(int dirfd, const char *path, uint64_t *ret_value);

/* Opens a directory relative to dirfd (O_DIRECTORY|O_CLOEXEC). Returns fd or -errno. */
int open_dir_at(int dirfd, const char *path);

/* Opens a root path (e.g. --path.procfs) as a directory fd. Returns fd or -errno. */
int open_root(const char *path);

/* Writes a whole buffer to path (O_CREAT|O_TRUNC, mode 0644) relative to dirfd. */
int write_file_at(int dirfd, const char *path, const void *data, size_t size);

/* Removes a directory tree we created (fake roots, temporary trees); does not follow
 * symlinks. Returns 0 or the first -errno. */
int remove_tree(const char *path);

/* Opens a directory relative to dirfd for listing (O_DIRECTORY|O_CLOEXEC, and O_NOFOLLOW
 * when nofollow). Returns 0 with *ret_dir set (closedir() it), or -errno. */
int opendir_at(int dirfd, const char *path, bool nofollow, DIR **ret_dir);
