/* SPDX-License-Identifier: MIT */
#include "crypt_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "dl_symbols.h"
#include "macro.h"

/* Tests build this file with a soname that does not exist (tests/libs.cmake). */
#ifndef CRYPT_LOAD_SONAME
#define CRYPT_LOAD_SONAME CRYPT_LIBRARY_SONAME
#endif

/* The name as a string if the slot's type is a pointer to the function's type, otherwise a
 * void expression that cannot initialise a name, so a mismatch does not compile. */
#define SYMBOL(field, sym)                                                                         \
    {                                                                                              \
        offsetof(struct crypt_api, field), true, {                                                 \
            __builtin_choose_expr(                                                                 \
                __builtin_types_compatible_p(__typeof__(((struct crypt_api *)NULL)->field),        \
                                             __typeof__(&sym)),                                    \
                #sym, (void)0)                                                                     \
        }                                                                                          \
    }

_Static_assert(sizeof(void *) == sizeof(&crypt_rn), "dlsym results fit a function pointer");

static const struct dl_symbol crypt_symbols[] = {
    SYMBOL(rn, crypt_rn),
    SYMBOL(gensalt_rn, crypt_gensalt_rn),
};

/* Written once under pthread_once, read-only afterwards; kept until exit, as the server's
 * threads check passwords with it. */
static pthread_once_t crypt_once = PTHREAD_ONCE_INIT;
static struct crypt_api crypt_loaded;
static int crypt_load_error;
static const char *crypt_load_reason;

static void load_once(void) {
    static const char *const sonames[] = {CRYPT_LOAD_SONAME};
    int r = 0;

    crypt_loaded.dl = dl_open("libcrypt", NULL, sonames, ARRAY_SIZE(sonames), &r);
    if (!crypt_loaded.dl) {
        crypt_load_error = r;
        crypt_load_reason = CRYPT_LIBRARY_MISSING;
        return;
    }
    r = dl_resolve(crypt_loaded.dl, "libcrypt", crypt_symbols, ARRAY_SIZE(crypt_symbols),
                   &crypt_loaded);
    if (r < 0) {
        dlclose(crypt_loaded.dl);
        crypt_loaded.dl = NULL;
        crypt_load_error = r;
        crypt_load_reason = "the libcrypt library lacks a required function (too old?)";
    }
}

int crypt_api_get(const struct crypt_api **ret_api, const char **ret_reason) {
    (void)pthread_once(&crypt_once, load_once);
    if (crypt_load_error < 0) {
        *ret_reason = crypt_load_reason;
        return crypt_load_error;
    }
    *ret_api = &crypt_loaded;
    return 0;
}
