/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * GnuTLS, which libmicrohttpd links, is initialised only when a TLS listener is started
 * (see tls_init.c). Call tls_init() before starting one. Returns 0, or -EOPNOTSUPP when
 * GnuTLS is not in the process, or -EIO when it fails to initialise.
 */
int tls_init(void);
