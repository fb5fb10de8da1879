/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdlib.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _warn_unused_result_ __attribute__((warn_unused_result))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _noreturn_ __attribute__((noreturn))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Hands the pointer over and leaves NULL behind, so a _cleanup_ does not free it. */
#define TAKE_PTR(p)                                                                                \
    ({                                                                                             \
        typeof(p) _taken = (p);                                                                    \
        (p) = NULL;                                                                                \
        _taken;                                                                                    \
    })

#define TAKE_FD(fd)                                                                                \
    ({                                                                                             \
        int _taken = (fd);                                                                         \
        (fd) = -1;                                                                                 \
        _taken;                                                                                    \
    })

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* Cleanup helpers for _cleanup_(): each accepts a pointer to NULL / -1. */
void freep(void *p);
void closep(const int *fd);
void fclosep(void *f);
void closedirp(void *d);

/* Checked array growth: makes room for at least `need` elements of `size` bytes, growing
 * geometrically. Returns 0 or -ENOMEM (then *array and *cap are unchanged). */
int grow_array(void *array, size_t *cap, size_t need, size_t size);

/* Copies the NUL-terminated src into dst[size] (size > 0), cut to size - 1 bytes when
 * longer: for label slots, where a cut value beats an overflow or a missing NUL. */
void copy_cut(char *dst, size_t size, const char *src);
