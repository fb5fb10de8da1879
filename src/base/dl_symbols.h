/* SPDX-License-Identifier: MIT */
#pragma once

#include <pthread.h>
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

/* A required slot of a `type` table whose `field` has the type of a pointer to `sym`: the
 * name as a string when it does, otherwise a void expression that cannot initialise a name,
 * so a mismatch does not compile. Data symbols (ncurses' LINES) take a pointer to them. */
#define DL_SYMBOL(type, field, sym)                                                                \
    {                                                                                              \
        offsetof(type, field), true, {                                                             \
            __builtin_choose_expr(                                                                 \
                __builtin_types_compatible_p(__typeof__(((type *)NULL)->field), __typeof__(&sym)), \
                #sym, (void)0)                                                                     \
        }                                                                                          \
    }

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

/* A library's table loaded by the first caller that needs it and kept until exit (its
 * functions may be called from any thread): dl_table_get(). */
struct dl_lazy {
    pthread_mutex_t lock;
    bool tried;
    int error;
    const char *reason;
    void *dl;
};
#define DL_LAZY_INIT                                                                               \
    { .lock = PTHREAD_MUTEX_INITIALIZER }

/*
 * An optional library kept as an allocated table of its functions whose first member is
 * the handle (`void *dl`): libcurl, ncursesw, libyaml, libcrypt, libjansson. Tests may open
 * and free one with other paths; the program asks for each once (dl_table_get()).
 */
struct dl_table_spec {
    const char *library; /* for messages: "libcurl" */
    const char *const *sonames;
    size_t n_sonames;
    const struct dl_symbol *symbols;
    size_t n_symbols;
    size_t size;            /* of the table */
    const char *missing;    /* the reason when it is not installed */
    const char *unloadable; /* ... when it exists but does not load */
    const char *lacking;    /* ... when a required function is missing */
};

/*
 * A new table from `path` when given, else from the sonames. Returns 0, -ENOMEM, -ENOENT
 * (not installed), or -ELIBBAD (does not load, or lacks a function) with *ret_reason the
 * spec's reason. *ret_table is written only on success.
 */
int dl_table_open(const struct dl_table_spec *spec, const char *path, void **ret_table,
                  const char **ret_reason);
/* Closes the library and frees the table. Accepts NULL; returns NULL. */
void *dl_table_free(void *table);

/*
 * dl_table_open() on the first call, of the path in the environment variable `env` when
 * given, set and not empty (tests), else of the sonames; every call returns the first one's result.
 * The table is kept until exit: other threads may hold pointers into it. Thread-safe.
 */
int dl_table_get(struct dl_lazy *l, const struct dl_table_spec *spec, const char *env,
                 const void **ret_table, const char **ret_reason);
