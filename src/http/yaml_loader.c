/* SPDX-License-Identifier: MIT */
#include "yaml_loader.h"

#include <stddef.h>

#include "dl_symbols.h"
#include "macro.h"

/* Tests build this file with a soname that does not exist (tests/libs.cmake). */
#ifndef YAML_LOAD_SONAME
#define YAML_LOAD_SONAME YAML_LIBRARY_SONAME
#endif

_Static_assert(offsetof(struct yaml_api, dl) == 0, "a dl_table: the handle first");
_Static_assert(sizeof(void *) == sizeof(&yaml_parser_load), "dlsym results fit a function pointer");

static const struct dl_symbol yaml_symbols[] = {
    DL_SYMBOL(struct yaml_api, parser_initialize, yaml_parser_initialize),
    DL_SYMBOL(struct yaml_api, parser_set_input_string, yaml_parser_set_input_string),
    DL_SYMBOL(struct yaml_api, parser_load, yaml_parser_load),
    DL_SYMBOL(struct yaml_api, parser_delete, yaml_parser_delete),
    DL_SYMBOL(struct yaml_api, document_get_root_node, yaml_document_get_root_node),
    DL_SYMBOL(struct yaml_api, document_get_node, yaml_document_get_node),
    DL_SYMBOL(struct yaml_api, document_delete, yaml_document_delete),
};

static const char *const yaml_sonames[] = {YAML_LOAD_SONAME};

static const struct dl_table_spec yaml_spec = {
    .library = "libyaml",
    .sonames = yaml_sonames,
    .n_sonames = ARRAY_SIZE(yaml_sonames),
    .symbols = yaml_symbols,
    .n_symbols = ARRAY_SIZE(yaml_symbols),
    .size = sizeof(struct yaml_api),
    .missing = YAML_LIBRARY_MISSING,
    .unloadable = "libyaml exists but cannot be loaded",
    .lacking = "libyaml lacks a required function (too old?)",
};

int yaml_api_get(const struct yaml_api **ret_api, const char **ret_reason) {
    static struct dl_lazy lazy = DL_LAZY_INIT;

    return dl_table_get(&lazy, &yaml_spec, NULL, (const void **)ret_api, ret_reason);
}
