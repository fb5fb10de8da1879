/* SPDX-License-Identifier: MIT */
#pragma once

#include "webconfig.h"

/*
 * The client certificate of a TLS connection (session: its gnutls_session_t) against the
 * web configuration's client_auth_type and client_allowed_sans, as Go's crypto/tls and
 * exporter-toolkit check it during the handshake:
 *   RequestClientCert        asked for; anything or nothing accepted
 *   RequireAnyClientCert     one must be sent; not verified
 *   VerifyClientCertIfGiven  verified against the client CA when sent
 *   RequireAndVerifyClientCert  one must be sent and verify
 * and, with client_allowed_sans, one of its DNS, e-mail, IP or URI SANs must be listed.
 * Returns 1 accepted, 0 refused (*ret_why: static text), -ENOMEM.
 */
int tls_client_check(void *session, const struct web_config *c, const char **ret_why);
