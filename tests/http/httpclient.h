/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* A minimal HTTP/1.1 client over TCP for the server tests (one request per connection). */
struct http_reply {
    int status;
    char *head; /* status line and headers, NUL-terminated */
    char *body; /* NUL-terminated; body_len may include NULs (gzip) */
    size_t body_len;
};

/* Sends `request` (a full request text) to host:port (family AF_INET or AF_INET6) and reads
 * the reply until the server closes. Returns 0 or -errno (-ETIMEDOUT after timeout_ms). */
int http_exchange(int family, const char *host, int port, const char *request, int timeout_ms,
                  struct http_reply *ret);
/* GET/HEAD helper: "METHOD path HTTP/1.1", Host, Connection: close, plus extra_headers
 * ("Name: value\r\n" lines, may be NULL). */
int http_simple(int port, const char *method, const char *path, const char *extra_headers,
                struct http_reply *ret);
void http_reply_done(struct http_reply *r);
/* The value of header `name` (case-insensitive) copied into buf, or NULL if absent. */
const char *http_header(const struct http_reply *r, const char *name, char *buf, size_t size);
/* Opens a TCP connection to 127.0.0.1:port and returns the fd (sends nothing), or -errno. */
int http_connect(int port);
