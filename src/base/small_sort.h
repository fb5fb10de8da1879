/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Arrays up to this size are sorted by SMALL_SORT(); larger ones by qsort(). */
#define SMALL_SORT_MAX 128

/*
 * Sorts array[0..n) in place by insertion. before(a, b), given pointers to two elements,
 * is true when *a must come first. For the short lists sorted every tick (a GPU's
 * processes, its utilisation samples): no allocation and no call per comparison, as
 * glibc's qsort() has, and linear when the input is nearly in order already. Stable.
 */
#define SMALL_SORT(array, n, before)                                                               \
    do {                                                                                           \
        for (size_t _i = 1; _i < (n); _i++) {                                                      \
            typeof((array)[0]) _v = (array)[_i];                                                   \
            size_t _j = _i;                                                                        \
                                                                                                   \
            for (; _j > 0 && before(&_v, &(array)[_j - 1]); _j--)                                  \
                (array)[_j] = (array)[_j - 1];                                                     \
            (array)[_j] = _v;                                                                      \
        }                                                                                          \
    } while (0)

/* qsort() and bsearch() order of uint32_t values (pids). */
static inline int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}
