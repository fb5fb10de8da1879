/* SPDX-License-Identifier: MIT */
/* A stand-in for GnuTLS's gnutls_global_init(), in a shared library the tls_init tests
 * link after the executable, where the real one would be found. */
#include "fake_gnutls.h"

int fake_gnutls_result;
unsigned fake_gnutls_calls;
int fake_gnutls_startup_result = 1;

/* As libmicrohttpd's constructor does: a call at load time, before the executable's own
 * constructors have run. It binds to the executable's gnutls_global_init(). */
__attribute__((constructor)) static void call_at_load(void) {
    fake_gnutls_startup_result = gnutls_global_init();
}

int gnutls_global_init(void) {
    fake_gnutls_calls++;
    return fake_gnutls_result;
}
