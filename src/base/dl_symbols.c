/* SPDX-License-Identifier: MIT */
#include "dl_symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "log.h"

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
