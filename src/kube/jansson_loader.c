/* SPDX-License-Identifier: MIT */
#include "jansson_loader.h"

#include <stddef.h>

#include "dl_symbols.h"
#include "macro.h"

/* Tests build this file with a soname that does not exist (tests/libs.cmake). */
#ifndef JANSSON_LOAD_SONAME
#define JANSSON_LOAD_SONAME JANSSON_LIBRARY_SONAME
#endif

_Static_assert(offsetof(struct jansson_api, dl) == 0, "a dl_table: the handle first");
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

static const char *const jansson_sonames[] = {JANSSON_LOAD_SONAME};

static const struct dl_table_spec jansson_spec = {
    .library = "libjansson",
    .sonames = jansson_sonames,
    .n_sonames = ARRAY_SIZE(jansson_sonames),
    .symbols = jansson_symbols,
    .n_symbols = ARRAY_SIZE(jansson_symbols),
    .size = sizeof(struct jansson_api),
    .missing = JANSSON_LIBRARY_MISSING,
    .unloadable = "libjansson exists but cannot be loaded",
    .lacking = "libjansson lacks a required function (too old?)",
};

int jansson_api_get(const struct jansson_api **ret_api, const char **ret_reason) {
    static struct dl_lazy lazy = DL_LAZY_INIT;

    return dl_table_get(&lazy, &jansson_spec, NULL, (const void **)ret_api, ret_reason);
}
