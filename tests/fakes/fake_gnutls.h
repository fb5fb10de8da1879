/* SPDX-License-Identifier: MIT */
#pragma once

/* What the fake gnutls_global_init() returns (GnuTLS: 0 or a negative error code), and how
 * often it was called. */
extern int fake_gnutls_result;
extern unsigned fake_gnutls_calls;

int gnutls_global_init(void);
