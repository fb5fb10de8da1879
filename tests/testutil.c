/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

uint64_t test_rand_next(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t test_rand_below(uint64_t *state, uint64_t bound) {
    return test_rand_next(state) % bound;
}

static const char *env_path(char *buf, size_t size, const char *var, const char *fallback,
                            const char *relative) {
    const char *base = getenv(var);

    (void)snprintf(buf, size, "%s/%s", base ? base : fallback, relative);
    return buf;
}

const char *test_source_path(char *buf, size_t size, const char *relative) {
    return env_path(buf, size, "JOULESTAT_SOURCE_DIR", "..", relative);
}

const char *test_binary_path(char *buf, size_t size, const char *relative) {
    return env_path(buf, size, "JOULESTAT_BINARY_DIR", ".", relative);
}

int test_mkdtemp(char *buf, size_t size) {
    const char *tmp = getenv("TMPDIR");

    (void)snprintf(buf, size, "%s/joulestat-test-XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(buf) ? 0 : -errno;
}

void test_rm_rf(const char *path) {
    (void)remove_tree(path);
}

int test_write_file(const char *root, const char *relative, const char *content) {
    char path[4096];

    (void)snprintf(path, sizeof(path), "%s/%s", root, relative);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    return write_file_at(AT_FDCWD, path, content, strlen(content));
}

const char *test_proc_stat_line(char *buf, size_t size, unsigned pid, const char *comm, char state,
                                unsigned long long utime, unsigned long long stime,
                                unsigned long long start) {
    (void)snprintf(buf, size,
                   "%u (%s) %c 1 %u %u 0 -1 4194560 120 0 3 0 %llu %llu 0 0 20 0 1 0 %llu "
                   "12345678 900 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
                   "0 0 0 0 0 0 0 0\n",
                   pid, comm, state, pid, pid, utime, stime, start);
    return buf;
}
