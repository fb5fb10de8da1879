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

/*
 * The same checks made during the TLS handshake, as Go does them, so that a missing or
 * unacceptable certificate fails the handshake rather than each request: for a GnuTLS
 * verify function (gnutls_session_set_verify_function) on a server session whose
 * certificate request tls_client_ask() set. Returns 0 accepted; -1 refused, after sending
 * the alert Go sends (certificate required in TLS 1.3, else bad certificate, when none was
 * given; unknown CA, certificate expired or bad certificate when it does not verify; bad
 * certificate for a SAN not listed), with the reason in *ret_why.
 */
int tls_client_handshake(void *session, const struct web_config *c, const char **ret_why);
/* Makes the server session ask the client for a certificate (not require it), naming the
 * acceptable authorities only when name_authorities (a client CA was given). */
void tls_client_ask(void *session, bool name_authorities);
