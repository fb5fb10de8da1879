/* SPDX-License-Identifier: MIT */
/* Client certificates checked in the TLS handshake, and again on each request. */
#include "tls_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "macro.h"

/* Longest SAN compared; longer ones match nothing listed (a listed one is shorter). */
#define SAN_MAX 1024

/* Whether a SAN of the certificate, as text (an IP address as inet_ntop writes it, as Go's
 * net.IP.String() does), is listed. */
static int san_listed(const gnutls_datum_t *der, const struct web_config *c) {
    gnutls_x509_crt_t crt;
    bool found = false;
    int r;

    if (gnutls_x509_crt_init(&crt) < 0)
        return -ENOMEM;
    r = gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER);
    for (unsigned i = 0; r >= 0 && !found; i++) {
        char san[SAN_MAX + 1], text[INET6_ADDRSTRLEN];
        size_t size = SAN_MAX;
        int type = gnutls_x509_crt_get_subject_alt_name(crt, i, san, &size, NULL);

        if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
            break;
        if (type == GNUTLS_E_SHORT_MEMORY_BUFFER)
            continue;
        if (type < 0)
            break;
        san[MIN(size, (size_t)SAN_MAX)] = '\0';
        if (type == GNUTLS_SAN_IPADDRESS) {
            if ((size == 4 && inet_ntop(AF_INET, san, text, sizeof(text))) ||
                (size == 16 && inet_ntop(AF_INET6, san, text, sizeof(text))))
                found = web_config_san_allowed(c, text);
        } else if (type == GNUTLS_SAN_DNSNAME || type == GNUTLS_SAN_RFC822NAME ||
                   type == GNUTLS_SAN_URI)
            found = strlen(san) == size && web_config_san_allowed(c, san);
    }
    gnutls_x509_crt_deinit(crt);
    return found;
}

static char client_auth_oid[] = GNUTLS_KP_TLS_WWW_CLIENT;
static gnutls_typed_vdata_st client_purpose = {
    .type = GNUTLS_DT_KEY_PURPOSE_OID,
    .data = (unsigned char *)client_auth_oid,
};

/* The check itself; on a refusal *ret_alert is the TLS alert Go's crypto/tls sends for it. */
static int check(gnutls_session_t session, const struct web_config *c, const char **ret_why,
                 gnutls_alert_description_t *ret_alert) {
    enum web_client_auth mode = web_config_client_auth(c);
    const gnutls_datum_t *peers;
    unsigned n = 0, status = 0;
    bool verify;
    int r;

    if (mode == WEB_CLIENT_AUTH_NONE || mode == WEB_CLIENT_AUTH_REQUEST)
        return 1;
    peers = session ? gnutls_certificate_get_peers(session, &n) : NULL;
    if (!peers || n == 0) {
        if (mode == WEB_CLIENT_AUTH_VERIFY_IF_GIVEN)
            return 1;
        *ret_why = "a client certificate is required\n";
        /* TLS 1.3 has an alert of its own for it (RFC 8446 4.4.2.4). */
        *ret_alert = session && gnutls_protocol_get_version(session) == GNUTLS_TLS1_3
                         ? GNUTLS_A_CERTIFICATE_REQUIRED
                         : GNUTLS_A_BAD_CERTIFICATE;
        return 0;
    }
    verify = mode == WEB_CLIENT_AUTH_VERIFY_IF_GIVEN || mode == WEB_CLIENT_AUTH_REQUIRE_AND_VERIFY;
    if (verify && !web_config_client_verifiable(c)) {
        *ret_why = "no authority to verify the client certificate against (no client_ca_file "
                   "and no system CA bundle)\n";
        *ret_alert = GNUTLS_A_UNKNOWN_CA;
        return 0;
    }
    /* For client authentication: a certificate whose extended key usage names other
     * purposes only (a server's) is refused, as Go does; one without the extension is not. */
    if (verify && (gnutls_certificate_verify_peers(session, &client_purpose, 1, &status) < 0 ||
                   status != 0)) {
        *ret_why = "the client certificate does not verify against the client CA\n";
        *ret_alert = status & GNUTLS_CERT_SIGNER_NOT_FOUND ? GNUTLS_A_UNKNOWN_CA
                     : status & (GNUTLS_CERT_EXPIRED | GNUTLS_CERT_NOT_ACTIVATED)
                         ? GNUTLS_A_CERTIFICATE_EXPIRED
                         : GNUTLS_A_BAD_CERTIFICATE;
        return 0;
    }
    if (web_config_n_allowed_sans(c) > 0 || !web_config_san_allowed(c, NULL)) {
        r = san_listed(&peers[0], c);
        if (r < 0)
            return r;
        if (r == 0) {
            *ret_why = "no SAN of the client certificate is in client_allowed_sans\n";
            *ret_alert = GNUTLS_A_BAD_CERTIFICATE;
            return 0;
        }
    }
    return 1;
}

int tls_client_check(void *session, const struct web_config *c, const char **ret_why) {
    gnutls_alert_description_t alert;

    return check(session, c, ret_why, &alert);
}

void tls_client_ask(void *session, bool name_authorities) {
    /* Asked for in every mode that wants one; whether it must be there and verify is
     * decided by tls_client_handshake(), so that the client hears why in an alert. */
    gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
    /* Without a client CA the authorities GnuTLS holds are the server's own chain (or the
     * system's bundle): named, a client whose issuer is not among them sends nothing, as
     * Go's does. Go names none then. */
    if (!name_authorities)
        gnutls_certificate_send_x509_rdn_sequence(session, 1);
}

int tls_client_handshake(void *session, const struct web_config *c, const char **ret_why) {
    gnutls_alert_description_t alert = GNUTLS_A_INTERNAL_ERROR;
    int r = check(session, c, ret_why, &alert);

    if (r > 0)
        return 0;
    if (r < 0)
        *ret_why = "out of memory\n";
    /* Best effort: the handshake fails whether or not the alert gets out. */
    (void)gnutls_alert_send(session, GNUTLS_AL_FATAL, alert);
    return -1;
}
