/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * --listen-address / --web.listen-address, in the Go exporters' forms:
 *   ":19400"           every address; IPv6 dual-stack where the host has IPv6, else IPv4
 *   "0.0.0.0:19400"    IPv4 literal            "127.0.0.1:19400"
 *   "[::1]:19400"      IPv6 literal in brackets "[::]:19400"
 *   "localhost:19400"  a host name, resolved; the first IPv4 address is preferred
 * Port 0 asks the kernel for a free port (see http_server_port()).
 */
struct listen_address {
    struct sockaddr_storage addr;
    socklen_t len;
    bool any; /* ":port": wildcard, dual-stack where possible */
};

/* Parses and resolves s. Returns 0, -EINVAL for a malformed address or port, or the
 * resolver's failure as -EADDRNOTAVAIL (unknown host). */
int listen_address_parse(const char *s, struct listen_address *ret);

/* Opens, binds and listens (SOCK_CLOEXEC|SOCK_NONBLOCK, SO_REUSEADDR). Returns the fd or
 * -errno from socket/bind/listen (-EADDRINUSE, -EACCES, -EADDRNOTAVAIL, ...). */
int listen_address_open(const struct listen_address *a, int backlog);

/* The port a listening socket is bound to, or -errno. */
int listen_socket_port(int fd);
