/* SPDX-License-Identifier: MIT */
#pragma once

#include <yaml.h>

/*
 * libyaml loaded with dlopen() when a web configuration file is parsed (webconfig.c), so
 * that a default `serve` never maps it. Every pointer has the type of its function in
 * <yaml.h> (checked at compile time).
 */
struct yaml_api {
    void *dl; /* the library (dl_table) */
    __typeof__(yaml_parser_initialize) *parser_initialize;
    __typeof__(yaml_parser_set_input_string) *parser_set_input_string;
    __typeof__(yaml_parser_load) *parser_load;
    __typeof__(yaml_parser_delete) *parser_delete;
    __typeof__(yaml_document_get_root_node) *document_get_root_node;
    __typeof__(yaml_document_get_node) *document_get_node;
    __typeof__(yaml_document_delete) *document_delete;
};

/* The soname loaded, and the text of the error when it is missing. */
#define YAML_LIBRARY_SONAME "libyaml-0.so.2"
#define YAML_LIBRARY_MISSING                                                                       \
    "libyaml-0.so.2 not found: install libyaml-0-2 (Debian) to read a web configuration file"

/*
 * The process-wide table, loaded by the first call (thread-safe) and kept until exit. Later
 * calls return the first call's result: 0 with *ret_api, or -ENOENT (not installed) or
 * -ELIBBAD (not loadable, or a function is missing) with *ret_reason (static text). ret_api
 * is written only on success.
 */
int yaml_api_get(const struct yaml_api **ret_api, const char **ret_reason);
