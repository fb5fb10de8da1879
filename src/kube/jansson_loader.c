/* SPDX-License-Identifier: MIT */
#include "jansson_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "dl_symbols.h"
#include "macro.h"

/* Tests build this file with a soname that does not exist (tests/libs.cmake). */
#ifndef JANSSON_LOAD_SONAME
#define JANSSON_LOAD_SONAME JANSSON_LIBRARY_SONAME
#endif

/* The name as a string if the slot's type is a pointer to the function's type, otherwise a
 * void expression that cannot initialise a name, so a mismatch does not compile. */
#define SYMBOL(field, sym)                                                                         \
    {                                                                                              \
        offsetof(struct jansson_api, field), true, {                                               \
            __builtin_choose_expr(                                                                 \
                __builtin_types_compatible_p(__typeof__(((struct jansson_api *)NULL)->field),      \
                                             __typeof__(&sym)),                                    \
                #sym, (void)0)                                                                     \
        }                                                                                          \
    }

_Static_assert(sizeof(void *) == sizeof(&json_loadb), "dlsym results fit a function pointer");

static const struct dl_symbol jansson_symbols[] = {
    SYMBOL(loadb, json_loadb),
    SYMBOL(delete_json, json_delete),
    SYMBOL(object_get, json_object_get),
    SYMBOL(array_size, json_array_size),
    SYMBOL(array_get, json_array_get),
    SYMBOL(string_value, json_string_value),
    SYMBOL(string_length, json_string_length),
    SYMBOL(integer_value, json_integer_value),
};

/* Written once under pthread_once, read-only afterwards; kept until exit, as other threads
 * hold pointers into it. */
static pthread_once_t jansson_once = PTHREAD_ONCE_INIT;
static struct jansson_api jansson_loaded;
static int jansson_load_error;
static const char *jansson_load_reason;

static void load_once(void) {
    static const char *const sonames[] = {JANSSON_LOAD_SONAME};
    int r = 0;

    jansson_loaded.dl = dl_open("libjansson", NULL, sonames, ARRAY_SIZE(sonames), &r);
    if (!jansson_loaded.dl) {
        jansson_load_error = r;
        jansson_load_reason = JANSSON_LIBRARY_MISSING;
        return;
    }
    r = dl_resolve(jansson_loaded.dl, "libjansson", jansson_symbols, ARRAY_SIZE(jansson_symbols),
                   &jansson_loaded);
    if (r < 0) {
        dlclose(jansson_loaded.dl);
        jansson_loaded.dl = NULL;
        jansson_load_error = r;
        jansson_load_reason = "the libjansson library lacks a required function (too old?)";
    }
}

int jansson_api_get(const struct jansson_api **ret_api, const char **ret_reason) {
    (void)pthread_once(&jansson_once, load_once);
    if (jansson_load_error < 0) {
        *ret_reason = jansson_load_reason;
        return jansson_load_error;
    }
    *ret_api = &jansson_loaded;
    return 0;
}
