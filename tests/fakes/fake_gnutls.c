/* SPDX-License-Identifier: MIT */
/* A stand-in for GnuTLS's gnutls_global_init(), in a shared library the tls_init tests
 * link after the executable, where the real one would be found. */
#include "fake_gnutls.h"

int fake_gnutls_result;
unsigned fake_gnutls_calls;

int gnutls_global_init(void) {
    fake_gnutls_calls++;
    return fake_gnutls_result;
}
