/* SPDX-License-Identifier: MIT */
#pragma once

#include <curl/curl.h>

/*
 * libcurl loaded with dlopen() on first use, so that nodes without the Kubernetes API never
 * map libcurl and the TLS, Kerberos and LDAP libraries it pulls in (~2.5 MiB of RSS). Only
 * the API client (kube_api.c, kube_request.c) uses it. Every pointer has the type of its function
 * in <curl/curl.h> (checked at compile time); easy_setopt and easy_getinfo keep their variadic
 * prototypes, so pass exactly the types libcurl documents (long, pointers, curl_off_t).
 */
struct curl_api {
    void *dl;

    __typeof__(curl_global_init) *global_init;
    __typeof__(curl_global_cleanup) *global_cleanup;
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_easy_escape) *easy_escape;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_free) *free_mem; /* curl_free */
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
};

/* The soname loaded by default, and the text of the error when it is missing. */
#define CURL_LIBRARY_SONAME "libcurl.so.4"
#define CURL_LIBRARY_MISSING                                                                       \
    "libcurl.so.4 not found: install libcurl4 (Debian) to get pod names from the Kubernetes API"

/*
 * Tests only: a library path used instead of CURL_LIBRARY_SONAME by curl_api_get(), read once
 * at its first call (tests/unit/test-curl-loader.c points it at a missing file).
 */
#define CURL_LIBRARY_ENV "JOULESTAT_CURL_LIBRARY"

/*
 * Opens `path` (NULL: CURL_LIBRARY_SONAME) and resolves every function. Returns 0, -ENOENT
 * (no such library), -ELIBBAD (not loadable, or a function is missing) or -ENOMEM, with
 * *ret_reason (static text) saying why. ret_api is written only on success. Does not call
 * curl_global_init.
 */
int curl_api_open(const char *path, struct curl_api **ret_api, const char **ret_reason);

/* dlclose()s and frees; accepts NULL, returns NULL. */
struct curl_api *curl_api_free(struct curl_api *api);

/*
 * The process-wide table, loaded by the first call (thread-safe, pthread_once) and kept until
 * exit. Later calls return the first call's result: 0 with *ret_api, or its negative errno
 * with *ret_reason. ret_api is written only on success.
 */
int curl_api_get(const struct curl_api **ret_api, const char **ret_reason);
