/* SPDX-License-Identifier: MIT */
#include "crypt_loader.h"

#include "dl_symbols.h"
#include "macro.h"

/* Tests build this file with a soname that does not exist (tests/libs.cmake). */
#ifndef CRYPT_LOAD_SONAME
#define CRYPT_LOAD_SONAME CRYPT_LIBRARY_SONAME
#endif

_Static_assert(sizeof(void *) == sizeof(&crypt_rn), "dlsym results fit a function pointer");

static const struct dl_symbol crypt_symbols[] = {
    DL_SYMBOL(struct crypt_api, rn, crypt_rn),
    DL_SYMBOL(struct crypt_api, gensalt_rn, crypt_gensalt_rn),
};

int crypt_api_get(const struct crypt_api **ret_api, const char **ret_reason) {
    static const char *const sonames[] = {CRYPT_LOAD_SONAME};
    static struct dl_lazy lazy = DL_LAZY_INIT;
    static struct crypt_api api; /* written once under lazy's lock, read-only after */
    int r = dl_lazy_load(&lazy, "libcrypt", sonames, ARRAY_SIZE(sonames), crypt_symbols,
                         ARRAY_SIZE(crypt_symbols), &api, CRYPT_LIBRARY_MISSING, ret_reason);

    if (r < 0)
        return r;
    *ret_api = &api;
    return 0;
}
