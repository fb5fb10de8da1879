/* SPDX-License-Identifier: MIT */
#pragma once

/* What the fake gnutls_global_init() returns (GnuTLS: 0 or a negative error code), and how
 * often it was called. */
extern int fake_gnutls_result;
extern unsigned fake_gnutls_calls;
/* What a gnutls_global_init() call made while the library was loaded returned. */
extern int fake_gnutls_startup_result;

int gnutls_global_init(void);
