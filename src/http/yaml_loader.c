/* SPDX-License-Identifier: MIT */
#include "yaml_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "dl_symbols.h"
#include "macro.h"

/* Tests build this file with a soname that does not exist (tests/libs.cmake). */
#ifndef YAML_LOAD_SONAME
#define YAML_LOAD_SONAME YAML_LIBRARY_SONAME
#endif

/* The name as a string if the slot's type is a pointer to the function's type, otherwise a
 * void expression that cannot initialise a name, so a mismatch does not compile. */
#define SYMBOL(field, sym)                                                                         \
    {                                                                                              \
        offsetof(struct yaml_api, field), true, {                                                  \
            __builtin_choose_expr(                                                                 \
                __builtin_types_compatible_p(__typeof__(((struct yaml_api *)NULL)->field),         \
                                             __typeof__(&sym)),                                    \
                #sym, (void)0)                                                                     \
        }                                                                                          \
    }

_Static_assert(sizeof(void *) == sizeof(&yaml_parser_load), "dlsym results fit a function pointer");

static const struct dl_symbol yaml_symbols[] = {
    SYMBOL(parser_initialize, yaml_parser_initialize),
    SYMBOL(parser_set_input_string, yaml_parser_set_input_string),
    SYMBOL(parser_load, yaml_parser_load),
    SYMBOL(parser_delete, yaml_parser_delete),
    SYMBOL(document_get_root_node, yaml_document_get_root_node),
    SYMBOL(document_get_node, yaml_document_get_node),
    SYMBOL(document_delete, yaml_document_delete),
};

/* Written once under pthread_once, read-only afterwards; kept until exit, as a reload on
 * another thread may use it. */
static pthread_once_t yaml_once = PTHREAD_ONCE_INIT;
static struct yaml_api yaml_loaded;
static int yaml_load_error;
static const char *yaml_load_reason;

static void load_once(void) {
    static const char *const sonames[] = {YAML_LOAD_SONAME};
    int r = 0;

    yaml_loaded.dl = dl_open("libyaml", NULL, sonames, ARRAY_SIZE(sonames), &r);
    if (!yaml_loaded.dl) {
        yaml_load_error = r;
        yaml_load_reason = YAML_LIBRARY_MISSING;
        return;
    }
    r = dl_resolve(yaml_loaded.dl, "libyaml", yaml_symbols, ARRAY_SIZE(yaml_symbols), &yaml_loaded);
    if (r < 0) {
        dlclose(yaml_loaded.dl);
        yaml_loaded.dl = NULL;
        yaml_load_error = r;
        yaml_load_reason = "the libyaml library lacks a required function (too old?)";
    }
}

int yaml_api_get(const struct yaml_api **ret_api, const char **ret_reason) {
    (void)pthread_once(&yaml_once, load_once);
    if (yaml_load_error < 0) {
        *ret_reason = yaml_load_reason;
        return yaml_load_error;
    }
    *ret_api = &yaml_loaded;
    return 0;
}
