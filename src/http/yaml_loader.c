/* SPDX-License-Identifier: MIT */
#include "yaml_loader.h"

#include "dl_symbols.h"
#include "macro.h"

/* Tests build this file with a soname that does not exist (tests/libs.cmake). */
#ifndef YAML_LOAD_SONAME
#define YAML_LOAD_SONAME YAML_LIBRARY_SONAME
#endif

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

int yaml_api_get(const struct yaml_api **ret_api, const char **ret_reason) {
    static const char *const sonames[] = {YAML_LOAD_SONAME};
    static struct dl_lazy lazy = DL_LAZY_INIT;
    static struct yaml_api api; /* written once under lazy's lock, read-only after */
    int r = dl_lazy_load(&lazy, "libyaml", sonames, ARRAY_SIZE(sonames), yaml_symbols,
                         ARRAY_SIZE(yaml_symbols), &api, YAML_LIBRARY_MISSING, ret_reason);

    if (r < 0)
        return r;
    *ret_api = &api;
    return 0;
}
