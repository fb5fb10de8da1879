/* SPDX-License-Identifier: MIT */
#include "dl_symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
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

int dl_lazy_load(struct dl_lazy *l, const char *library, const char *const *sonames, size_t n,
                 const struct dl_symbol *symbols, size_t n_symbols, void *table,
                 const char *missing, const char **ret_reason) {
    int r;

    pthread_mutex_lock(&l->lock);
    if (!l->tried) {
        l->tried = true;
        l->dl = dl_open(library, NULL, sonames, n, &l->error);
        if (!l->dl)
            l->reason = missing;
        else if ((l->error = dl_resolve(l->dl, library, symbols, n_symbols, table)) < 0) {
            dlclose(l->dl);
            l->dl = NULL;
            snprintf(l->lacking, sizeof(l->lacking), "%s lacks a required function (too old?)",
                     library);
            l->reason = l->lacking;
        }
    }
    r = l->error;
    if (r < 0)
        *ret_reason = l->reason;
    pthread_mutex_unlock(&l->lock);
    return r < 0 ? r : 0;
}
