/* SPDX-License-Identifier: MIT */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "parse_num.h"

static int parse_port(const char *s, uint16_t *ret) {
    uint32_t port;

    /* Digits only: safe_atou32 would accept a trailing newline. */
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 5)
        return -EINVAL;
    if (safe_atou32(s, &port) < 0 || port > 65535)
        return -EINVAL;
    *ret = (uint16_t)port;
    return 0;
}

static void set_port(struct listen_address *a, uint16_t port) {
    if (a->addr.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&a->addr)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)&a->addr)->sin_port = htons(port);
}

static int resolve(const char *host, struct listen_address *a) {
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG};
    struct addrinfo *res = NULL, *pick = NULL;
    int r;

    r = getaddrinfo(host, NULL, &hints, &res);
    if (r == EAI_MEMORY)
        return -ENOMEM;
    if (r != 0 || !res)
        return -EADDRNOTAVAIL;
    for (struct addrinfo *i = res; i; i = i->ai_next)
        if (i->ai_family == AF_INET) {
            pick = i;
            break;
        }
    if (!pick)
        pick = res;
    if (pick->ai_addrlen > sizeof(a->addr)) {
        freeaddrinfo(res);
        return -EINVAL;
    }
    memcpy(&a->addr, pick->ai_addr, pick->ai_addrlen);
    a->len = pick->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int listen_address_parse(const char *s, struct listen_address *ret) {
    struct listen_address a = {0};
    char host[256];
    const char *colon;
    uint16_t port;
    size_t hlen;
    int r;

    if (!s || !*s)
        return -EINVAL;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a.addr;

        if (!close || close[1] != ':')
            return -EINVAL;
        hlen = (size_t)(close - s - 1);
        if (hlen == 0 || hlen >= sizeof(host))
            return -EINVAL;
        memcpy(host, s + 1, hlen);
        host[hlen] = '\0';
        if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
            return -EINVAL;
        in6->sin6_family = AF_INET6;
        a.len = sizeof(*in6);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return -EINVAL;
        hlen = (size_t)(colon - s);
        if (hlen >= sizeof(host) || memchr(s, ':', hlen))
            return -EINVAL; /* a bare IPv6 address needs brackets */
        memcpy(host, s, hlen);
        host[hlen] = '\0';
    }
    r = parse_port(colon + 1, &port);
    if (r < 0)
        return r;
    if (s[0] != '[') {
        struct sockaddr_in *in4 = (struct sockaddr_in *)&a.addr;

        if (hlen == 0) {
            /* Wildcard: IPv6 any with V6ONLY off, so IPv4 clients connect too. */
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a.addr;

            in6->sin6_family = AF_INET6;
            in6->sin6_addr = in6addr_any;
            a.len = sizeof(*in6);
            a.any = true;
        } else if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
            in4->sin_family = AF_INET;
            a.len = sizeof(*in4);
        } else {
            r = resolve(host, &a);
            if (r < 0)
                return r;
        }
    }
    set_port(&a, port);
    *ret = a;
    return 0;
}

static int open_one(const struct sockaddr *sa, socklen_t len, bool dual_stack, int backlog) {
    _cleanup_(closep) int fd = -1;
    int one = 1, zero = 0;

    fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
        return -errno;
    if (sa->sa_family == AF_INET6 &&
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual_stack ? &zero : &one, sizeof(int)) < 0)
        return -errno;
    if (bind(fd, sa, len) < 0 || listen(fd, backlog) < 0)
        return -errno;
    return TAKE_FD(fd);
}

int listen_address_open(const struct listen_address *a, int backlog) {
    int fd = open_one((const struct sockaddr *)&a->addr, a->len, a->any, backlog);

    /* A host without IPv6: the wildcard falls back to IPv4 0.0.0.0. */
    if (fd < 0 && a->any && (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL)) {
        struct sockaddr_in in4 = {.sin_family = AF_INET,
                                  .sin_port = ((const struct sockaddr_in6 *)&a->addr)->sin6_port,
                                  .sin_addr.s_addr = htonl(INADDR_ANY)};

        fd = open_one((const struct sockaddr *)&in4, sizeof(in4), false, backlog);
    }
    return fd;
}

int listen_socket_port(int fd) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
        return -errno;
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return -EAFNOSUPPORT;
}
