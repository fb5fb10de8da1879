/* SPDX-License-Identifier: MIT */
/*
 * The scrape client of the benchmarks: COUNT GET requests over one keep-alive HTTP/1.1
 * connection (as Prometheus scrapes), timing each from the first byte sent to the last
 * byte of the body received.
 *
 *   bench-scrape PORT PATH COUNT [plain|gzip] [PAUSE_MS]
 *
 * PAUSE_MS: sleep that long between requests (0, the default: back to back). joulestat
 * renders /metrics once per snapshot, published once a second; back-to-back scrapes are
 * mostly served that one rendering, scrapes more than a second apart (as Prometheus's)
 * each render a new snapshot.
 *
 * Prints one line of key=value pairs: scrapes, bytes (of the last body, as sent on the
 * wire), series (sample lines of the last body; plain only), p50_ms, p99_ms, max_ms,
 * mean_ms, reconnects. Percentiles are nearest-rank. Exits 1 on any failed request or a
 * status other than 200. Understands Content-Length and chunked bodies (node_exporter
 * sends gzip chunked).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "parse_num.h"

struct conn {
    int fd;
    char *buf; /* received bytes not consumed yet: buf[off..len) */
    size_t off, len, cap;
};

static uint64_t now_ns(void) {
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int conn_open(struct conn *c, int port) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int one = 1;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -errno;
    (void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        int r = -errno;

        (void)close(c->fd);
        c->fd = -1;
        return r;
    }
    c->off = c->len = 0;
    return 0;
}

static void conn_close(struct conn *c) {
    if (c->fd >= 0)
        (void)close(c->fd);
    c->fd = -1;
    c->off = c->len = 0;
}

/* Reads more bytes into the buffer. 0 on progress, -EPIPE when the peer closed. */
static int conn_fill(struct conn *c) {
    ssize_t n;

    if (c->off > 0 && c->off == c->len)
        c->off = c->len = 0;
    if (c->len + 65536 > c->cap) {
        int r = grow_array(&c->buf, &c->cap, c->len + 65536, 1);

        if (r < 0)
            return r;
    }
    do
        n = read(c->fd, c->buf + c->len, c->cap - c->len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if (n == 0)
        return -EPIPE;
    c->len += (size_t)n;
    return 0;
}

/* Returns a pointer to the next CRLF-terminated line (terminator replaced by NUL). */
static int conn_line(struct conn *c, char **ret) {
    for (;;) {
        char *p = c->buf ? memmem(c->buf + c->off, c->len - c->off, "\r\n", 2) : NULL;
        int r;

        if (p) {
            *p = '\0';
            *ret = c->buf + c->off;
            c->off = (size_t)(p - c->buf) + 2;
            return 0;
        }
        r = conn_fill(c);
        if (r < 0)
            return r;
    }
}

/* Appends n body bytes to out (grown as needed). */
static int conn_body(struct conn *c, size_t n, char **out, size_t *out_len, size_t *out_cap) {
    while (n > 0) {
        size_t have = c->len - c->off, take = MIN(have, n);
        int r;

        if (take == 0) {
            r = conn_fill(c);
            if (r < 0)
                return r;
            continue;
        }
        r = grow_array(out, out_cap, *out_len + take + 1, 1);
        if (r < 0)
            return r;
        memcpy(*out + *out_len, c->buf + c->off, take);
        *out_len += take;
        (*out)[*out_len] = '\0';
        c->off += take;
        n -= take;
    }
    return 0;
}

/* One request and its whole reply; the body lands in *out (length *out_len). */
static int request(struct conn *c, const char *req, size_t req_len, char **out, size_t *out_len,
                   size_t *out_cap, bool *ret_close) {
    bool chunked = false, close_after = false;
    uint64_t length = 0;
    char *line;
    int r, status = 0;

    for (size_t sent = 0; sent < req_len;) {
        ssize_t n = write(c->fd, req + sent, req_len - sent);

        if (n < 0)
            return errno == EINTR ? 0 : -errno;
        sent += (size_t)n;
    }
    r = conn_line(c, &line);
    if (r < 0)
        return r;
    if (sscanf(line, "HTTP/1.%*d %d", &status) != 1)
        return -EPROTO;
    for (;;) {
        r = conn_line(c, &line);
        if (r < 0)
            return r;
        if (!*line)
            break;
        if (strncasecmp(line, "Content-Length:", 15) == 0) {
            r = safe_atou64(line + 15 + strspn(line + 15, " \t"), &length);
            if (r < 0)
                return r;
        } else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0 && strcasestr(line, "chunked"))
            chunked = true;
        else if (strncasecmp(line, "Connection:", 11) == 0 && strcasestr(line, "close"))
            close_after = true;
    }
    *out_len = 0;
    if (!chunked)
        r = conn_body(c, (size_t)length, out, out_len, out_cap);
    else
        for (;;) {
            unsigned long n;

            r = conn_line(c, &line);
            if (r < 0)
                return r;
            n = strtoul(line, NULL, 16);
            if (n > 0)
                r = conn_body(c, n, out, out_len, out_cap);
            if (r < 0)
                return r;
            r = conn_line(c, &line); /* CRLF after the chunk, or the empty trailer */
            if (r < 0 || n == 0)
                break;
        }
    if (r < 0)
        return r;
    *ret_close = close_after;
    return status == 200 ? 0 : -EPROTO;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static size_t count_series(const char *body, size_t len) {
    size_t n = 0;

    for (const char *p = body, *end = body + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));

        if (nl != p && *p != '#')
            n++;
        p = nl ? nl + 1 : end;
    }
    return n;
}

static double pct_ms(const uint64_t *sorted, size_t n, unsigned pct) {
    size_t rank = (n * pct + 99) / 100; /* nearest rank, 1-based */

    return (double)sorted[MAX(rank, (size_t)1) - 1] / 1e6;
}

int main(int argc, char **argv) {
    _cleanup_(freep) uint64_t *t = NULL;
    _cleanup_(freep) char *body = NULL;
    struct conn c = {.fd = -1};
    size_t body_len = 0, body_cap = 0, count;
    unsigned reconnects = 0;
    char req[512];
    uint32_t port, count32;
    uint32_t pause_ms = 0;
    bool gz;
    double sum = 0;
    int req_len, ret = 1;

    if (argc < 4 || safe_atou32(argv[1], &port) < 0 || port == 0 || port > 65535 ||
        safe_atou32(argv[3], &count32) < 0 || count32 == 0 ||
        (argc > 5 && safe_atou32(argv[5], &pause_ms) < 0)) {
        fprintf(stderr, "usage: bench-scrape PORT PATH COUNT [plain|gzip] [PAUSE_MS]\n");
        return 2;
    }
    count = count32;
    gz = argc > 4 && strcmp(argv[4], "gzip") == 0;
    req_len = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n%s\r\n", argv[2],
                       port, gz ? "Accept-Encoding: gzip\r\n" : "");
    t = calloc(count, sizeof(*t));
    if (!t || req_len < 0 || (size_t)req_len >= sizeof(req))
        return 1;

    for (size_t i = 0; i < count; i++) {
        bool close_after = false;
        uint64_t t0;
        int r;

        if (pause_ms > 0 && i > 0) {
            struct timespec ts = {.tv_sec = pause_ms / 1000,
                                  .tv_nsec = (long)(pause_ms % 1000) * 1000000L};

            (void)nanosleep(&ts, NULL);
        }
        if (c.fd < 0) {
            r = conn_open(&c, (int)port);
            if (r < 0) {
                fprintf(stderr, "bench-scrape: connect: %s\n", strerror(-r));
                goto finish;
            }
            reconnects += i > 0;
        }
        t0 = now_ns();
        r = request(&c, req, (size_t)req_len, &body, &body_len, &body_cap, &close_after);
        t[i] = now_ns() - t0;
        if (r < 0) {
            fprintf(stderr, "bench-scrape: request %zu: %s\n", i, strerror(-r));
            goto finish;
        }
        sum += (double)t[i];
        if (close_after)
            conn_close(&c);
    }
    qsort(t, count, sizeof(*t), cmp_u64);
    printf("scrapes=%zu bytes=%zu series=%zu p50_ms=%.3f p99_ms=%.3f max_ms=%.3f mean_ms=%.3f "
           "reconnects=%u\n",
           count, body_len, gz ? 0 : count_series(body ? body : "", body_len), pct_ms(t, count, 50),
           pct_ms(t, count, 99), (double)t[count - 1] / 1e6, sum / (double)count / 1e6, reconnects);
    ret = 0;
finish:
    conn_close(&c);
    free(c.buf);
    return ret;
}
