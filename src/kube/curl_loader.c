/* SPDX-License-Identifier: MIT */
#include "curl_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "dl_symbols.h"
#include "macro.h"

/* The name as a string if the slot's type is a pointer to the function's type, otherwise a
 * void expression that cannot initialise a name, so a mismatch does not compile. */
#define SYMBOL(field, sym)                                                                         \
    {                                                                                              \
        offsetof(struct curl_api, field), true, {                                                  \
            __builtin_choose_expr(                                                                 \
                __builtin_types_compatible_p(__typeof__(((struct curl_api *)NULL)->field),         \
                                             __typeof__(&sym)),                                    \
                #sym, (void)0)                                                                     \
        }                                                                                          \
    }

_Static_assert(sizeof(void *) == sizeof(&curl_easy_init), "dlsym results fit a function pointer");

static const struct dl_symbol curl_symbols[] = {
    SYMBOL(global_init, curl_global_init),     SYMBOL(global_cleanup, curl_global_cleanup),
    SYMBOL(easy_init, curl_easy_init),         SYMBOL(easy_setopt, curl_easy_setopt),
    SYMBOL(easy_perform, curl_easy_perform),   SYMBOL(easy_getinfo, curl_easy_getinfo),
    SYMBOL(easy_cleanup, curl_easy_cleanup),   SYMBOL(easy_escape, curl_easy_escape),
    SYMBOL(easy_strerror, curl_easy_strerror), SYMBOL(free_mem, curl_free),
    SYMBOL(slist_append, curl_slist_append),   SYMBOL(slist_free_all, curl_slist_free_all),
};

static int resolve_symbols(struct curl_api *api, const char **ret_reason) {
    int r = dl_resolve(api->dl, "libcurl", curl_symbols, ARRAY_SIZE(curl_symbols), api);

    if (r < 0)
        *ret_reason = "the libcurl library lacks a required function (too old?)";
    return r;
}

int curl_api_open(const char *path, struct curl_api **ret_api, const char **ret_reason) {
    static const char *const sonames[] = {CURL_LIBRARY_SONAME};
    _cleanup_(freep) struct curl_api *api = NULL;
    const char *reason = NULL;
    int r;

    api = calloc(1, sizeof(*api));
    if (!api) {
        *ret_reason = "out of memory";
        return -ENOMEM;
    }

    /* RTLD_LOCAL: libcurl's TLS libraries must not resolve symbols of anything loaded later. */
    api->dl = dl_open("libcurl", path, sonames, ARRAY_SIZE(sonames), &r);
    if (!api->dl) {
        *ret_reason = r == -ELIBBAD ? "the libcurl library exists but cannot be loaded"
                                    : CURL_LIBRARY_MISSING;
        return r;
    }

    r = resolve_symbols(api, &reason);
    if (r < 0) {
        dlclose(api->dl);
        *ret_reason = reason;
        return r;
    }

    *ret_api = TAKE_PTR(api);
    return 0;
}

struct curl_api *curl_api_free(struct curl_api *api) {
    if (!api)
        return NULL;
    if (api->dl)
        dlclose(api->dl);
    free(api);
    return NULL;
}

/* Written once under pthread_once, read-only afterwards. The table lives until exit: other
 * threads may hold pointers into it, and libcurl keeps global state. */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static struct curl_api *curl_loaded;
static int curl_load_error;
static const char *curl_load_reason;

static void load_once(void) {
    const char *path = getenv(CURL_LIBRARY_ENV);

    curl_load_error = curl_api_open(path && path[0] ? path : NULL, &curl_loaded, &curl_load_reason);
}

int curl_api_get(const struct curl_api **ret_api, const char **ret_reason) {
    (void)pthread_once(&curl_once, load_once);
    if (curl_load_error < 0) {
        *ret_reason = curl_load_reason;
        return curl_load_error;
    }
    *ret_api = curl_loaded;
    return 0;
}
