/* SPDX-License-Identifier: MIT */
/*
 * Deferred GnuTLS initialisation. Loading GnuTLS initialises it (its constructor), and
 * libmicrohttpd's constructor calls gnutls_global_init() again: ASN.1 trees, priority
 * strings and the code that builds them, ~0.9 MiB resident in every exporter, which only
 * an exporter serving TLS needs. Two things defer it:
 *
 * - _gnutls_global_init_skip() returning 1 is GnuTLS's documented switch
 *   (GNUTLS_SKIP_GLOBAL_INIT in gnutls.h): its constructor then leaves initialisation to
 *   the program.
 * - gnutls_global_init() below is found before the library's (the executable comes first
 *   in the symbol lookup order), so libmicrohttpd's start-up call lands here. Until this
 *   executable's own constructor has run, which is after every library's, the call is
 *   answered with success and nothing done; from then on every call (tls_init(), or a
 *   library loaded later that uses GnuTLS) goes to the library's.
 *
 * The library's gnutls_global_deinit() at exit is safe either way: it counts calls.
 */
#include "tls_init.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

int _gnutls_global_init_skip(void);
int gnutls_global_init(void);

typedef int global_init_fn(void);

static global_init_fn *library_global_init;

int _gnutls_global_init_skip(void) {
    return 1;
}

__attribute__((constructor)) static void find_library_global_init(void) {
    void *fn = dlsym(RTLD_NEXT, "gnutls_global_init");

    /* POSIX guarantees function pointers round-trip through void * (dlsym relies on it). */
    memcpy(&library_global_init, &fn, sizeof(fn));
}

int gnutls_global_init(void) {
    return library_global_init ? library_global_init() : 0;
}

int tls_init(void) {
    if (!library_global_init)
        return -EOPNOTSUPP;
    return library_global_init() < 0 ? -EIO : 0;
}
