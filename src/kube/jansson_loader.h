/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>

/*
 * libjansson loaded with dlopen() on first use, with libcurl (curl_loader.h), so that nodes
 * without the Kubernetes API never map it. Only the pod parsers (kube_pod.c) and the error
 * bodies of kube_request.c use it. <jansson.h> declares some functions inline (json_decref)
 * or as macros (json_array_foreach) that call the library: use the table's slots and
 * jansson_decref() instead, so the binary keeps no reference to libjansson.
 */
struct jansson_api {
    void *dl; /* the library (dl_table) */
    __typeof__(json_loadb) *loadb;
    __typeof__(json_delete) *delete_json; /* json_delete */
    __typeof__(json_object_get) *object_get;
    __typeof__(json_array_size) *array_size;
    __typeof__(json_array_get) *array_get;
    __typeof__(json_string_value) *string_value;
    __typeof__(json_string_length) *string_length;
    __typeof__(json_integer_value) *integer_value;
};

/* The soname loaded, and the text of the error when it is missing. */
#define JANSSON_LIBRARY_SONAME "libjansson.so.4"
#define JANSSON_LIBRARY_MISSING                                                                    \
    "libjansson.so.4 not found: install libjansson4 (Debian) to get pod names from the "           \
    "Kubernetes API"

/*
 * The process-wide table, loaded by the first call (thread-safe) and kept until exit. Later
 * calls return the first call's result: 0 with *ret_api, or -ENOENT (not installed) or
 * -ELIBBAD (not loadable, or a function is missing) with *ret_reason (static text). ret_api
 * is written only on success.
 */
int jansson_api_get(const struct jansson_api **ret_api, const char **ret_reason);

/* json_decref() through the table. */
static inline void jansson_decref(const struct jansson_api *js, json_t *j) {
    if (j && j->refcount != (size_t)-1 && JSON_INTERNAL_DECREF(j) == 0)
        js->delete_json(j);
}
