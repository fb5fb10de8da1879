/* SPDX-License-Identifier: MIT */
#include "crypt_loader.h"

#include <stddef.h>

#include "dl_symbols.h"
#include "macro.h"

/* Tests build this file with a soname that does not exist (tests/libs.cmake). */
#ifndef CRYPT_LOAD_SONAME
#define CRYPT_LOAD_SONAME CRYPT_LIBRARY_SONAME
#endif

_Static_assert(offsetof(struct crypt_api, dl) == 0, "a dl_table: the handle first");
_Static_assert(sizeof(void *) == sizeof(&crypt_rn), "dlsym results fit a function pointer");

static const struct dl_symbol crypt_symbols[] = {
    DL_SYMBOL(struct crypt_api, rn, crypt_rn),
    DL_SYMBOL(struct crypt_api, gensalt_rn, crypt_gensalt_rn),
};

static const char *const crypt_sonames[] = {CRYPT_LOAD_SONAME};

static const struct dl_table_spec crypt_spec = {
    .library = "libcrypt",
    .sonames = crypt_sonames,
    .n_sonames = ARRAY_SIZE(crypt_sonames),
    .symbols = crypt_symbols,
    .n_symbols = ARRAY_SIZE(crypt_symbols),
    .size = sizeof(struct crypt_api),
    .missing = CRYPT_LIBRARY_MISSING,
    .unloadable = "libcrypt exists but cannot be loaded",
    .lacking = "libcrypt lacks a required function (too old?)",
};

int crypt_api_get(const struct crypt_api **ret_api, const char **ret_reason) {
    static struct dl_lazy lazy = DL_LAZY_INIT;

    return dl_table_get(&lazy, &crypt_spec, NULL, (const void **)ret_api, ret_reason);
}
