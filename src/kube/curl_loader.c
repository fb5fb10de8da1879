/* SPDX-License-Identifier: MIT */
#include "curl_loader.h"

#include <stddef.h>

#include "dl_symbols.h"
#include "macro.h"

_Static_assert(sizeof(void *) == sizeof(&curl_easy_init), "dlsym results fit a function pointer");
_Static_assert(offsetof(struct curl_api, dl) == 0, "a dl_table: the handle first");

static const struct dl_symbol curl_symbols[] = {
    DL_SYMBOL(struct curl_api, global_init, curl_global_init),
    DL_SYMBOL(struct curl_api, global_cleanup, curl_global_cleanup),
    DL_SYMBOL(struct curl_api, easy_init, curl_easy_init),
    DL_SYMBOL(struct curl_api, easy_setopt, curl_easy_setopt),
    DL_SYMBOL(struct curl_api, easy_perform, curl_easy_perform),
    DL_SYMBOL(struct curl_api, easy_getinfo, curl_easy_getinfo),
    DL_SYMBOL(struct curl_api, easy_cleanup, curl_easy_cleanup),
    DL_SYMBOL(struct curl_api, easy_escape, curl_easy_escape),
    DL_SYMBOL(struct curl_api, easy_strerror, curl_easy_strerror),
    DL_SYMBOL(struct curl_api, free_mem, curl_free),
    DL_SYMBOL(struct curl_api, slist_append, curl_slist_append),
    DL_SYMBOL(struct curl_api, slist_free_all, curl_slist_free_all),
};

static const char *const curl_sonames[] = {CURL_LIBRARY_SONAME};

/* RTLD_LOCAL (dl_open()): libcurl's TLS libraries must not resolve symbols of anything
 * loaded later. */
static const struct dl_table_spec curl_spec = {
    .library = "libcurl",
    .sonames = curl_sonames,
    .n_sonames = ARRAY_SIZE(curl_sonames),
    .symbols = curl_symbols,
    .n_symbols = ARRAY_SIZE(curl_symbols),
    .size = sizeof(struct curl_api),
    .missing = CURL_LIBRARY_MISSING,
    .unloadable = "the libcurl library exists but cannot be loaded",
    .lacking = "the libcurl library lacks a required function (too old?)",
};

int curl_api_open(const char *path, struct curl_api **ret_api, const char **ret_reason) {
    return dl_table_open(&curl_spec, path, (void **)ret_api, ret_reason);
}

struct curl_api *curl_api_free(struct curl_api *api) {
    return dl_table_free(api);
}

/* Kept until exit: other threads may hold pointers into it, and libcurl keeps global
 * state. */
static struct dl_lazy curl_lazy = DL_LAZY_INIT;

int curl_api_get(const struct curl_api **ret_api, const char **ret_reason) {
    return dl_table_get(&curl_lazy, &curl_spec, CURL_LIBRARY_ENV, (const void **)ret_api,
                        ret_reason);
}
