/* SPDX-License-Identifier: MIT */
#include "httpclient.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "strbuf.h"

static int connect_to(int family, const char *host, int port) {
    struct sockaddr_storage ss = {0};
    socklen_t len;
    int fd;

    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
            return -EINVAL;
        len = sizeof(*a);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;

        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
            return -EINVAL;
        len = sizeof(*a);
    }
    fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
        int r = -errno;

        close(fd);
        return r;
    }
    return fd;
}

int http_connect(int port) {
    return connect_to(AF_INET, "127.0.0.1", port);
}

int http_exchange(int family, const char *host, int port, const char *request, int timeout_ms,
                  struct http_reply *ret) {
    uint64_t deadline = clock_monotonic_ns() + (uint64_t)timeout_ms * 1000000u;
    struct strbuf sb;
    size_t sent = 0, len = strlen(request);
    char *split = NULL;
    int fd, r = 0;

    fd = connect_to(family, host, port);
    if (fd < 0)
        return fd;
    while (sent < len) {
        ssize_t n = send(fd, request + sent, len - sent, MSG_NOSIGNAL);

        if (n < 0) {
            r = -errno;
            close(fd);
            return r;
        }
        sent += (size_t)n;
    }
    strbuf_init(&sb);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        uint64_t now = clock_monotonic_ns();
        char buf[65536];
        ssize_t n;

        if (now >= deadline) {
            r = -ETIMEDOUT;
            break;
        }
        if (poll(&p, 1, (int)((deadline - now) / 1000000u) + 1) == 0)
            continue;
        n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0) {
            r = -errno;
            break;
        }
        if (n == 0)
            break;
        strbuf_append(&sb, buf, (size_t)n);
    }
    close(fd);
    if (r == 0 && strbuf_error(&sb) < 0)
        r = -ENOMEM;
    if (r == 0 && (!sb.buf || !(split = strstr(sb.buf, "\r\n\r\n"))))
        r = -EPROTO;
    if (r < 0) {
        strbuf_done(&sb);
        return r;
    }
    *ret = (struct http_reply){0};
    ret->body_len = sb.len - (size_t)(split + 4 - sb.buf);
    ret->body = malloc(ret->body_len + 1);
    if (ret->body) {
        memcpy(ret->body, split + 4, ret->body_len);
        ret->body[ret->body_len] = '\0';
    }
    split[2] = '\0';
    ret->head = strbuf_steal(&sb, NULL);
    if (!ret->body || !ret->head || sscanf(ret->head, "HTTP/1.%*d %d", &ret->status) != 1) {
        http_reply_done(ret);
        return -EPROTO;
    }
    return 0;
}

int http_simple(int port, const char *method, const char *path, const char *extra_headers,
                struct http_reply *ret) {
    char req[2048];

    (void)snprintf(req, sizeof(req),
                   "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: close\r\n\r\n", method, path,
                   extra_headers ? extra_headers : "");
    return http_exchange(AF_INET, "127.0.0.1", port, req, 5000, ret);
}

void http_reply_done(struct http_reply *r) {
    free(r->head);
    free(r->body);
    *r = (struct http_reply){0};
}

const char *http_header(const struct http_reply *r, const char *name, char *buf, size_t size) {
    size_t n = strlen(name);

    for (const char *l = strstr(r->head, "\r\n"); l && l[2]; l = strstr(l + 2, "\r\n")) {
        const char *line = l + 2, *end = strstr(line, "\r\n");

        if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
            const char *v = line + n + 1;

            while (*v == ' ')
                v++;
            (void)snprintf(buf, size, "%.*s", (int)(end ? end - v : (long)strlen(v)), v);
            return buf;
        }
    }
    return NULL;
}
