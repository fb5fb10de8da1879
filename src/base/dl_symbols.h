/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * The one way joulestat loads an optional library (NVML for the GPU backend, libcurl for
 * the Kubernetes API): dlopen() of a configured path or of the first soname in a list that
 * loads, then a table of function pointers filled by dlsym(). Each slot names its
 * function newest version first ("nvmlInit_v2", then "nvmlInit"); the first name the
 * library has fills the slot, so one binary works with old and new libraries.
 */
#define DL_MAX_NAMES 2

struct dl_symbol {
    size_t offset; /* of the function pointer in the table */
    bool required;
    const char *names[DL_MAX_NAMES]; /* newest first; unused slots NULL */
};

/*
 * Opens `path` when given, else the first of sonames[0..n) that loads (versioned sonames
 * first: the unversioned symlink ships only with development packages), with
 * RTLD_NOW|RTLD_LOCAL so missing symbols show now and nothing leaks into later libraries.
 * Failures are logged at debug level, prefixed with `library`. Returns the handle, or NULL
 * with *ret_error -ENOENT (nothing loadable there) or -ELIBBAD (`path` names an existing
 * file that does not load).
 */
void *dl_open(const char *library, const char *path, const char *const *sonames, size_t n,
              int *ret_error);

/*
 * Fills every slot of `table` from `dl`; an optional function the library lacks gets NULL
 * (logged at debug level, prefixed with `library`). Returns 0, or -ELIBBAD when a
 * required one is missing (its name logged at debug level).
 */
int dl_resolve(void *dl, const char *library, const struct dl_symbol *symbols, size_t n,
               void *table);
