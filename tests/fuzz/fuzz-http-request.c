/* SPDX-License-Identifier: MIT */
/*
 * joulestat's HTTP server on raw bytes: one server per process on 127.0.0.1 (basic auth for
 * prom:s3cret, a rate limit, the sample snapshot), each input written as is to a fresh TCP
 * connection (one request, several pipelined, or none at all) and the answer read until
 * the server closes or goes quiet. Whatever the bytes, the process does not crash, every
 * answer is a well-formed status line and header block with a status the server may give,
 * a method other than GET and HEAD is never served (405 with Allow when it is answered),
 * nothing follows an answer that said Connection: close, a well-formed request gets an
 * answer, and /healthz answers 200 after every input.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "crypt_loader.h"
#include "fuzz.h"
#include "http/httpclient.h"
#include "http/sample-snapshot.h"
#include "macro.h"
#include "server.h"
#include "webconfig.h"

/* Answers kept per input: pipelined requests for /metrics could ask for many bodies. */
#define REPLY_MAX ((size_t)1 << 20)
/* How long to wait for the first byte of an answer, and for more after it. The server
 * answers a complete request within a few ms. An input without an empty line holds no
 * complete request: only a refusal of what came (400, 414, 431) can come, at once, or
 * nothing until the header deadline (libmicrohttpd does not close on a half-close). */
#ifndef FIRST_BYTE_MS
#define FIRST_BYTE_MS 2000 /* the corpus replay, on a machine that may be busy */
#endif
#define FIRST_BYTE_INCOMPLETE_MS 50
#define QUIET_MS 60

static struct snapshot_slot *slot;
static struct http_server *server;
static int port;

static void stop_server(void) {
    server = http_server_stop(server);
    slot = snapshot_slot_free(slot);
}

static void start_server(void) {
    struct http_server_options o = {
        .listen_address = "127.0.0.1:0", .threads = 2, .header_timeout_ms = 1000, .timeout_s = 2};
    struct crypt_data *cd = calloc(1, sizeof(*cd));
    const struct crypt_api *cr = NULL;
    const char *reason = NULL;
    struct web_config *wc = NULL;
    char salt[CRYPT_GENSALT_OUTPUT_SIZE], text[512], err[256];
    struct snapshot *s;
    const char *hash;
    int n;

    FUZZ_CHECK(cd);
    FUZZ_CHECK(crypt_api_get(&cr, &reason) == 0);
    FUZZ_CHECK(cr->gensalt_rn("$2y$", 4, NULL, 0, salt, sizeof(salt)));
    hash = cr->rn("s3cret", salt, cd, sizeof(*cd));
    FUZZ_CHECK(hash && hash[0] == '$');
    /* A burst the replay never reaches; a fuzzer's pipelined inputs do (429). */
    n = snprintf(text, sizeof(text),
                 "basic_auth_users:\n  prom: %s\nrate_limit:\n  interval: 10ms\n  burst: 50\n"
                 "http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n",
                 hash);
    free(cd);
    FUZZ_CHECK(n > 0 && (size_t)n < sizeof(text));
    FUZZ_CHECK(web_config_parse("/fuzz/web.yml", text, (size_t)n, false, &wc, err, sizeof(err)) ==
               0);
    o.web_config = wc;
    slot = snapshot_slot_new();
    s = sample_snapshot_new();
    FUZZ_CHECK(slot && s);
    snapshot_slot_publish(slot, s);
    FUZZ_CHECK(http_server_start(&o, slot, &server) == 0);
    web_config_free(wc); /* the server holds its own reference */
    port = http_server_port(server);
    FUZZ_CHECK(atexit(stop_server) == 0);
}

static void send_all(int fd, const uint8_t *data, size_t size) {
    while (size > 0) {
        ssize_t n = send(fd, data, size, MSG_NOSIGNAL);

        if (n <= 0)
            return; /* the server may close early (431, 405): what it sent is checked */
        data += n;
        size -= (size_t)n;
    }
}

/* Reads until close, REPLY_MAX bytes, or a quiet spell; returns the length read. */
static size_t read_answer(int fd, char *buf, int first_ms) {
    size_t len = 0;

    while (len < REPLY_MAX) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;

        if (poll(&p, 1, len == 0 ? first_ms : QUIET_MS) <= 0)
            break;
        n = recv(fd, buf + len, REPLY_MAX - len, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    return len;
}

static bool status_expected(unsigned status) {
    static const unsigned expected[] = {100, 200, 400, 401, 404, 405, 413, 414, 429, 431, 503, 505};

    for (size_t i = 0; i < ARRAY_SIZE(expected); i++)
        if (status == expected[i])
            return true;
    return false;
}

/* The method of the input's first request line when it is a plain token, else "". */
static void first_method(const uint8_t *in, size_t size, char *buf, size_t buf_size) {
    size_t i = 0;

    while (i < size && i + 1 < buf_size && in[i] > ' ' && in[i] < 0x7f)
        buf[i] = (char)in[i], i++;
    buf[i < size && in[i] == ' ' ? i : 0] = '\0';
}

static bool vchar(uint8_t c) {
    return c > ' ' && c < 0x7f;
}

static bool tchar(uint8_t c) {
    return vchar(c) && !strchr("\"(),/:;<=>?@[\\]{}", c);
}

/* A request line and header lines as RFC 9112 writes them, ending with an empty line: the
 * server owes it an answer (whatever it is). Lenient parsers may answer more. */
static bool well_formed(const uint8_t *in, size_t size) {
    const uint8_t *p = in, *end = in + size;

    while (p < end && tchar(*p))
        p++;
    if (p == in || p == end || *p++ != ' ' || p == end || *p++ != '/')
        return false;
    while (p < end && vchar(*p))
        p++;
    if ((size_t)(end - p) < 11 || memcmp(p, " HTTP/1.", 8) != 0 || (p[8] != '0' && p[8] != '1') ||
        memcmp(p + 9, "\r\n", 2) != 0)
        return false;
    p += 11;
    while (p < end && *p != '\r') {
        const uint8_t *name = p;

        while (p < end && tchar(*p))
            p++;
        if (p == name || p == end || *p++ != ':')
            return false;
        while (p < end && *p >= ' ' && *p < 0x7f)
            p++;
        if ((size_t)(end - p) < 2 || memcmp(p, "\r\n", 2) != 0)
            return false;
        p += 2;
    }
    return (size_t)(end - p) >= 2 && memcmp(p, "\r\n", 2) == 0;
}

/*
 * Whether the first request's header block (through its empty line) nearly fills the
 * connection's memory: libmicrohttpd 0.9.75 then reads the request but finds no room for
 * the reply's headers, and closes the connection without an answer (blocks of 7946 to 8046
 * bytes with the 8 KiB pool of 8192; 8146 got 431). docs/METRICS.md says so.
 */
static bool fills_the_pool(const uint8_t *in, size_t size) {
    const uint8_t *end = memmem(in, size, "\r\n\r\n", 4);
    size_t block = end ? (size_t)(end - in) + 4 : size;

    return block + 512 >= HTTP_CONNECTION_MEMORY && block <= HTTP_CONNECTION_MEMORY;
}

/* The value of header `name` in the header block [head, end), copied into buf. */
static const char *header_value(const char *head, const char *end, const char *name, char *buf,
                                size_t size) {
    size_t nlen = strlen(name);

    for (const char *l = head; l < end;) {
        const char *eol = memmem(l, (size_t)(end - l), "\r\n", 2);

        if (!eol)
            eol = end;
        if ((size_t)(eol - l) > nlen && l[nlen] == ':' && strncasecmp(l, name, nlen) == 0) {
            const char *v = l + nlen + 1;
            size_t n;

            while (v < eol && *v == ' ')
                v++;
            n = (size_t)(eol - v) < size - 1 ? (size_t)(eol - v) : size - 1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return buf;
        }
        l = eol + 2;
    }
    return NULL;
}

static bool starts_answer(const char *p, const char *end) {
    static const char prefix[] = "HTTP/1.";
    size_t n = (size_t)(end - p) < sizeof(prefix) - 1 ? (size_t)(end - p) : sizeof(prefix) - 1;

    return memcmp(p, prefix, n) == 0;
}

/* Checks the answers in out[0, len) one after the other; the last may be cut short. */
static void check_answers(const char *method, const char *out, size_t len) {
    const char *p = out, *end = out + len;
    bool first = true;

    while (p < end) {
        const char *head_end, *next;
        char value[64], *e;
        unsigned status;
        unsigned long cl;

        FUZZ_CHECK(starts_answer(p, end));
        head_end = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
        if (!head_end)
            return; /* cut short by the reading deadline */
        /* "HTTP/1.1 200 OK": version, three digits, a space. */
        FUZZ_CHECK(head_end - p >= 13 && (p[7] == '0' || p[7] == '1') && p[8] == ' ' &&
                   p[12] == ' ');
        status = (unsigned)strtoul(p + 9, &e, 10);
        FUZZ_CHECK(e == p + 12 && status_expected(status));
        for (const char *c = p; c < head_end; c++)
            FUZZ_CHECK(*c != '\0' && (*c != '\r' || c[1] == '\n'));
        if (status == 405)
            FUZZ_CHECK(header_value(p, head_end, "Allow", value, sizeof(value)) &&
                       strcmp(value, "GET, HEAD") == 0);
        if (first && method[0]) {
            bool served = status == 200 || status == 401 || status == 404;
            bool get_or_head = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;

            /* Not GET or HEAD: never served, nor asked for credentials. */
            FUZZ_CHECK(get_or_head || !served);
            FUZZ_CHECK(!get_or_head || status != 405);
        }
        first = false;
        head_end += 4;
        if (status == 100) {
            p = head_end;
            continue;
        }
        if (!header_value(p, head_end - 2, "Content-Length", value, sizeof(value)))
            return; /* a body until close: nothing can follow */
        cl = strtoul(value, &e, 10);
        FUZZ_CHECK(e != value && *e == '\0');
        if (header_value(p, head_end - 2, "Connection", value, sizeof(value)) &&
            strcasecmp(value, "close") == 0) {
            size_t head_len = (size_t)(head_end - p);

            /* libmicrohttpd 0.9.75 writes the header block of its own answer to a malformed
             * Content-Length twice (then the body once): tolerated, as nothing of the
             * request is in it and the connection closes. */
            if ((size_t)(end - head_end) >= head_len && memcmp(head_end, p, head_len) == 0)
                head_end += head_len;
            /* The last answer on this connection: its body at most (none after HEAD). */
            FUZZ_CHECK((size_t)(end - head_end) <= cl);
            return;
        }
        next = head_end + cl;
        if (next > end)
            return;
        /* After a HEAD the next answer starts where the headers end. */
        if (starts_answer(next, end))
            p = next;
        else
            p = head_end;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char *out;
    struct http_reply r;
    char method[32];
    bool complete;
    size_t len;
    int fd;

    if (!server)
        start_server();
    if (!out)
        out = malloc(REPLY_MAX);
    FUZZ_CHECK(out);
    fd = http_connect(port);
    FUZZ_CHECK(fd >= 0);
    send_all(fd, data, size);
    complete = memmem(data, size, "\r\n\r\n", 4) || memmem(data, size, "\n\n", 2);
    len = read_answer(fd, out, complete ? FIRST_BYTE_MS : FIRST_BYTE_INCOMPLETE_MS);
    close(fd);
    if (getenv("FUZZ_HTTP_VERBOSE"))
        fprintf(stderr, "-- %zu bytes in, %zu out:\n%.*s\n", size, len, (int)len, out);
    first_method(data, size, method, sizeof(method));
    FUZZ_CHECK(len > 0 || !well_formed(data, size) || fills_the_pool(data, size));
    check_answers(method, out, len);
    /* Whatever the input did, the next liveness probe is answered. */
    FUZZ_CHECK(http_simple(port, "GET", "/healthz", NULL, &r) == 0);
    FUZZ_CHECK(r.status == 200);
    http_reply_done(&r);
    return 0;
}
