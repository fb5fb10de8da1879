/* SPDX-License-Identifier: MIT */
#pragma once

#include <crypt.h>

/*
 * libcrypt (libxcrypt) loaded with dlopen() when a web configuration names basic-auth users
 * (webconfig.c), so that a server without them never maps it. Every pointer has the type of
 * its function in <crypt.h> (checked at compile time).
 */
struct crypt_api {
    void *dl; /* the library (dl_table) */
    __typeof__(crypt_rn) *rn;
    __typeof__(crypt_gensalt_rn) *gensalt_rn;
};

/* The soname loaded, and the text of the error when it is missing. */
#define CRYPT_LIBRARY_SONAME "libcrypt.so.1"
#define CRYPT_LIBRARY_MISSING                                                                      \
    "libcrypt.so.1 not found: install libcrypt1 (Debian) to check basic-auth passwords"

/*
 * The process-wide table, loaded by the first call (thread-safe) and kept until exit. Later
 * calls return the first call's result: 0 with *ret_api, or -ENOENT (not installed) or
 * -ELIBBAD (not loadable, or a function is missing) with *ret_reason (static text). ret_api
 * is written only on success.
 */
int crypt_api_get(const struct crypt_api **ret_api, const char **ret_reason);
