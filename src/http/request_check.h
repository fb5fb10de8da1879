/* SPDX-License-Identifier: MIT */
#pragma once

#include <microhttpd.h>

/*
 * Strict HTTP on a request whose headers are complete, before anything is served:
 *   405  a method other than GET and HEAD (the reply carries Allow: GET, HEAD);
 *   400  HTTP/1.1 without a Host header, or with more than one (RFC 9112 3.2);
 *   400  Content-Length given twice with different values (RFC 9112 6.3: a framing no
 *        two parties may read the same way, the start of request smuggling);
 *   400  a body (Content-Length above 0, or Transfer-Encoding): GET and HEAD have no use
 *        for one (RFC 9110 9.3.1), and a reply queued while libmicrohttpd reads it would
 *        not be sent (the connection closed without an answer).
 * Returns the status to answer with, with a short reason in *ret_reason, or 0 when the
 * request may be served. The size of a request's headers is bounded by the connection
 * memory limit instead (431 from libmicrohttpd).
 */
unsigned request_check(struct MHD_Connection *conn, const char *method, const char *version,
                       const char **ret_reason);
