/* SPDX-License-Identifier: MIT */
#pragma once

/* cmocka needs these before its header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

/* ASSERT_OK(r): r >= 0, printing the errno name otherwise. */
#define ASSERT_OK(expr)                                                                            \
    do {                                                                                           \
        long _r = (long)(expr);                                                                    \
        if (_r < 0)                                                                                \
            fail_msg("%s failed: %s (%ld)", #expr, strerror((int)-_r), _r);                        \
    } while (0)

/* ASSERT_ERRNO(r, E): r == -E. */
#define ASSERT_ERRNO(expr, err)                                                                    \
    do {                                                                                           \
        long _r = (long)(expr);                                                                    \
        if (_r != -(long)(err))                                                                    \
            fail_msg("%s returned %ld, expected -%s", #expr, _r, #err);                            \
    } while (0)

/* A deterministic 64-bit generator (splitmix64) for reproducible property tests. */
uint64_t test_rand_next(uint64_t *state);
/* Uniform in [0, bound) for bound > 0. */
uint64_t test_rand_below(uint64_t *state, uint64_t bound);

/* Path under the source tree (JOULESTAT_SOURCE_DIR): writes into buf, returns buf. */
const char *test_source_path(char *buf, size_t size, const char *relative);
/* Path under the build tree (JOULESTAT_BINARY_DIR). */
const char *test_binary_path(char *buf, size_t size, const char *relative);

/* Makes a fresh temporary directory (mkdtemp under $TMPDIR); returns 0 or -errno. */
int test_mkdtemp(char *buf, size_t size);
/* Removes a directory tree (for temporary fixture roots). */
void test_rm_rf(const char *path);
/* Writes a file, creating parent directories. Returns 0 or -errno. */
int test_write_file(const char *root, const char *relative, const char *content);
/* A full 52-field <pid>/stat line (ppid 1, flags 0x400100) into buf; returns buf. */
const char *test_proc_stat_line(char *buf, size_t size, unsigned pid, const char *comm, char state,
                                unsigned long long utime, unsigned long long stime,
                                unsigned long long start);
