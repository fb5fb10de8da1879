/* SPDX-License-Identifier: MIT */
#include "macro.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void freep(void *p) {
    free(*(void **)p);
}

void closep(const int *fd) {
    if (*fd >= 0)
        (void)close(*fd);
}

void fclosep(void *f) {
    FILE *file = *(FILE **)f;
    if (file)
        (void)fclose(file);
}

void closedirp(void *d) {
    DIR *dir = *(DIR **)d;
    if (dir)
        (void)closedir(dir);
}

int grow_array(void *array, size_t *cap, size_t need, size_t size) {
    void **p = array;
    size_t new_cap;
    void *q;

    if (need <= *cap)
        return 0;
    new_cap = *cap ? *cap : 8;
    while (new_cap < need) {
        if (new_cap > SIZE_MAX / 2)
            return -ENOMEM;
        new_cap *= 2;
    }
    q = reallocarray(*p, new_cap, size);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = new_cap;
    return 0;
}

void copy_cut(char *dst, size_t size, const char *src) {
    size_t n = strnlen(src, size - 1);

    memcpy(dst, src, n);
    dst[n] = '\0';
}
