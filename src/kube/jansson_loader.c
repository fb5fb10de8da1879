/* SPDX-License-Identifier: MIT */
#include "jansson_loader.h"

#include "dl_symbols.h"
#include "macro.h"

/* Tests build this file with a soname that does not exist (tests/libs.cmake). */
#ifndef JANSSON_LOAD_SONAME
#define JANSSON_LOAD_SONAME JANSSON_LIBRARY_SONAME
#endif

_Static_assert(sizeof(void *) == sizeof(&json_loadb), "dlsym results fit a function pointer");

static const struct dl_symbol jansson_symbols[] = {
    DL_SYMBOL(struct jansson_api, loadb, json_loadb),
    DL_SYMBOL(struct jansson_api, delete_json, json_delete),
    DL_SYMBOL(struct jansson_api, object_get, json_object_get),
    DL_SYMBOL(struct jansson_api, array_size, json_array_size),
    DL_SYMBOL(struct jansson_api, array_get, json_array_get),
    DL_SYMBOL(struct jansson_api, string_value, json_string_value),
    DL_SYMBOL(struct jansson_api, string_length, json_string_length),
    DL_SYMBOL(struct jansson_api, integer_value, json_integer_value),
};

int jansson_api_get(const struct jansson_api **ret_api, const char **ret_reason) {
    static const char *const sonames[] = {JANSSON_LOAD_SONAME};
    static struct dl_lazy lazy = DL_LAZY_INIT;
    static struct jansson_api api; /* written once under lazy's lock, read-only after */
    int r = dl_lazy_load(&lazy, "libjansson", sonames, ARRAY_SIZE(sonames), jansson_symbols,
                         ARRAY_SIZE(jansson_symbols), &api, JANSSON_LIBRARY_MISSING, ret_reason);

    if (r < 0)
        return r;
    *ret_api = &api;
    return 0;
}
