/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * A table of function pointers filled from a dlopen()ed library (nvml_loader.c,
 * curl_loader.c). Each slot names the function, newest name first; the first name the
 * library has fills the slot.
 */
#define DL_MAX_NAMES 2

struct dl_symbol {
    size_t offset; /* of the function pointer in the table */
    bool required;
    const char *names[DL_MAX_NAMES]; /* unused slots NULL */
};

/*
 * Fills every slot of `table` from `dl`; an optional function the library lacks gets NULL
 * (logged at debug level, prefixed with `library`). Returns 0, or -ELIBBAD when a
 * required one is missing (its name logged at debug level).
 */
int dl_resolve(void *dl, const char *library, const struct dl_symbol *symbols, size_t n,
               void *table);
