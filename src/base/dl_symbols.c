/* SPDX-License-Identifier: MIT */
#include "dl_symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

void *dl_open(const char *library, const char *path, const char *const *sonames, size_t n,
              int *ret_error) {
    if (path) {
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);

        if (dl)
            return dl;
        log_debug("%s: dlopen(%s): %s", library, path, dlerror());
        /* A bare soname is looked up by the loader: not loadable there means not there. */
        *ret_error = strchr(path, '/') && access(path, F_OK) == 0 ? -ELIBBAD : -ENOENT;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        void *dl = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);

        if (dl)
            return dl;
        log_debug("%s: dlopen(%s): %s", library, sonames[i], dlerror());
    }
    *ret_error = -ENOENT;
    return NULL;
}

int dl_resolve(void *dl, const char *library, const struct dl_symbol *symbols, size_t n,
               void *table) {
    for (size_t i = 0; i < n; i++) {
        const struct dl_symbol *sym = &symbols[i];
        void *fn = NULL;

        for (size_t k = 0; k < DL_MAX_NAMES && sym->names[k] && !fn; k++)
            fn = dlsym(dl, sym->names[k]);
        if (!fn && sym->required)
            return log_debug_errno(-ELIBBAD, "%s: required symbol %s not found", library,
                                   sym->names[0]);
        if (!fn)
            log_debug("%s: optional symbol %s not found", library, sym->names[0]);
        /* POSIX guarantees function pointers round-trip through void * (dlsym relies on it). */
        memcpy((char *)table + sym->offset, &fn, sizeof(fn));
    }
    return 0;
}

int dl_table_open(const struct dl_table_spec *spec, const char *path, void **ret_table,
                  const char **ret_reason) {
    void **table = calloc(1, spec->size), *dl;
    int r;

    if (!table) {
        *ret_reason = "out of memory";
        return -ENOMEM;
    }
    dl = dl_open(spec->library, path, spec->sonames, spec->n_sonames, &r);
    if (!dl) {
        free(table);
        *ret_reason = r == -ELIBBAD ? spec->unloadable : spec->missing;
        return r;
    }
    r = dl_resolve(dl, spec->library, spec->symbols, spec->n_symbols, table);
    if (r < 0) {
        dlclose(dl);
        free(table);
        *ret_reason = spec->lacking;
        return r;
    }
    table[0] = dl;
    *ret_table = table;
    return 0;
}

void *dl_table_free(void *table) {
    if (!table)
        return NULL;
    if (*(void **)table)
        dlclose(*(void **)table);
    free(table);
    return NULL;
}

int dl_table_get(struct dl_lazy *l, const struct dl_table_spec *spec, const char *env,
                 const void **ret_table, const char **ret_reason) {
    int r;

    pthread_mutex_lock(&l->lock);
    if (!l->tried) {
        const char *path = env ? getenv(env) : NULL;

        l->tried = true;
        l->error = dl_table_open(spec, path && path[0] ? path : NULL, &l->dl, &l->reason);
    }
    r = l->error;
    if (r < 0)
        *ret_reason = l->reason;
    else
        *ret_table = l->dl;
    pthread_mutex_unlock(&l->lock);
    return r;
}
