/* SPDX-License-Identifier: MIT */
/*
 * One unary gRPC call, v1.PodResourcesLister/List, over a unix socket: HTTP/2 cleartext
 * with prior knowledge (libnghttp2 does the framing, HPACK and flow control), request
 * body = the 5-byte framing of an empty ListPodResourcesRequest, answer = one framed
 * message followed by trailers carrying grpc-status.
 */
#include "pod_resources_client.h"

#include <errno.h>
#include <inttypes.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "macro.h"
#include "parse_num.h"

#define LIST_PATH "/v1.PodResourcesLister/List"
#define GRPC_HEADER_LEN 5

struct call {
    int fd;
    int32_t stream_id;
    size_t max_response;
    bool closed;     /* our stream ended */
    bool eof;        /* the peer closed the connection */
    size_t received; /* bytes read from the peer */
    size_t frames;   /* valid HTTP/2 frames among them */
    int error;       /* first failure seen in a callback */
    int http_status;
    bool grpc_content_type;
    bool have_grpc_status;
    uint64_t grpc_status;
    char grpc_message[200];
    uint8_t *body;
    size_t body_len, body_cap;
    size_t request_sent;
    uint64_t deadline_ns; /* CLOCK_MONOTONIC: the whole call ends by then */
};

static void set_error(struct call *c, int err) {
    if (c->error == 0)
        c->error = err;
}

static ssize_t on_send(nghttp2_session *session, const uint8_t *data, size_t len, int flags,
                       void *userdata) {
    struct call *c = userdata;
    ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);

    if (n >= 0)
        return n;
    if (errno == EAGAIN)
        return NGHTTP2_ERR_WOULDBLOCK;
    set_error(c, errno == EPIPE ? -ECONNRESET : -errno);
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

static ssize_t on_recv(nghttp2_session *session, uint8_t *buf, size_t len, int flags,
                       void *userdata) {
    struct call *c = userdata;
    ssize_t n;

    /* nghttp2_session_recv() reads until the socket would block: a peer that never stops
     * sending (frames of unknown types are skipped and count against no limit) would keep
     * it here for good, past the deadline the loop around it checks. */
    if (clock_monotonic_ns() >= c->deadline_ns) {
        set_error(c, -ETIMEDOUT);
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    n = recv(c->fd, buf, len, 0);
    if (n > 0) {
        c->received += (size_t)n;
        return n;
    }
    if (n == 0) {
        c->eof = true;
        return NGHTTP2_ERR_EOF;
    }
    if (errno == EAGAIN)
        return NGHTTP2_ERR_WOULDBLOCK;
    set_error(c, -errno);
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* grpc-message is percent-encoded (PROTOCOL-HTTP2.md); control bytes become '?'. */
static void decode_message(const uint8_t *v, size_t len, char *out, size_t size) {
    size_t o = 0;

    for (size_t i = 0; i < len && o + 1 < size; i++) {
        unsigned char ch = v[i];

        if (ch == '%' && i + 2 < len) {
            char hex[3] = {(char)v[i + 1], (char)v[i + 2], 0};
            char *end;
            unsigned long x = strtoul(hex, &end, 16);

            if (*end == '\0') {
                ch = (unsigned char)x;
                i += 2;
            }
        }
        out[o++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    out[o] = '\0';
}

static bool header_is(const uint8_t *name, size_t len, const char *want) {
    return len == strlen(want) && memcmp(name, want, len) == 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *userdata) {
    struct call *c = userdata;
    char v[32];

    if (frame->hd.stream_id != c->stream_id)
        return 0;
    if (header_is(name, namelen, ":status")) {
        unsigned status = 0;

        (void)snprintf(v, sizeof(v), "%.*s", (int)MIN(valuelen, sizeof(v) - 1), value);
        if (safe_atou32(v, &status) >= 0)
            c->http_status = (int)status;
    } else if (header_is(name, namelen, "content-type")) {
        c->grpc_content_type = valuelen >= 16 && memcmp(value, "application/grpc", 16) == 0 &&
                               (valuelen == 16 || value[16] == '+' || value[16] == ';');
    } else if (header_is(name, namelen, "grpc-status")) {
        (void)snprintf(v, sizeof(v), "%.*s", (int)MIN(valuelen, sizeof(v) - 1), value);
        c->have_grpc_status = safe_atou64(v, &c->grpc_status) >= 0;
        if (!c->have_grpc_status)
            set_error(c, -EPROTO);
    } else if (header_is(name, namelen, "grpc-message"))
        decode_message(value, valuelen, c->grpc_message, sizeof(c->grpc_message));
    return 0;
}

static int on_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data,
                   size_t len, void *userdata) {
    struct call *c = userdata;

    if (stream_id != c->stream_id)
        return 0;
    if (c->body_len + len > c->max_response + GRPC_HEADER_LEN) {
        set_error(c, -EMSGSIZE);
        return nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
    }
    if (grow_array(&c->body, &c->body_cap, c->body_len + len, 1) < 0) {
        set_error(c, -ENOMEM);
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    memcpy(c->body + c->body_len, data, len);
    c->body_len += len;
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                           void *userdata) {
    struct call *c = userdata;

    if (stream_id != c->stream_id)
        return 0;
    c->closed = true;
    if (error_code != NGHTTP2_NO_ERROR)
        set_error(c, -EPROTO);
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *userdata) {
    struct call *c = userdata;

    c->frames++;
    return 0;
}

/* We only send GOAWAY when the peer broke the protocol (not HTTP/2, bad frames). */
static int on_frame_send(nghttp2_session *session, const nghttp2_frame *frame, void *userdata) {
    if (frame->hd.type == NGHTTP2_GOAWAY)
        set_error(userdata, -EPROTO);
    return 0;
}

/* The request body: an empty message, framed (flag 0, length 0). */
static ssize_t read_request(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                            size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                            void *userdata) {
    static const uint8_t empty_message[GRPC_HEADER_LEN] = {0, 0, 0, 0, 0};
    struct call *c = userdata;
    size_t n = MIN(length, GRPC_HEADER_LEN - c->request_sent);

    memcpy(buf, empty_message + c->request_sent, n);
    c->request_sent += n;
    if (c->request_sent == GRPC_HEADER_LEN)
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static int connect_unix(const char *path, int *ret_fd) {
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    _cleanup_(closep) int fd = -1;

    if (strlen(path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    /* Non-blocking from the start: a unix connect to a listener whose backlog is full (a
     * wedged kubelet) would otherwise wait for ever; it fails at once with EAGAIN and the
     * call is tried again at the next poll. Then non-blocking I/O under poll() with the
     * deadline. */
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int err = errno;
        struct stat st;

        /* connect() to a file that is not a socket says "refused": tell them apart. */
        if (err == ECONNREFUSED && stat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
            return -ENOTSOCK;
        return -err;
    }
    *ret_fd = TAKE_FD(fd);
    return 0;
}

#define NV(name, value)                                                                            \
    {                                                                                              \
        (uint8_t *)(uintptr_t)(name), (uint8_t *)(uintptr_t)(value), sizeof(name) - 1,             \
            sizeof(value) - 1, NGHTTP2_NV_FLAG_NONE                                                \
    }

static int start_session(struct call *c, nghttp2_session **ret) {
    nghttp2_session_callbacks *cb;
    nghttp2_session *session;
    /* Big windows: a List answer of several MiB then needs few WINDOW_UPDATE round trips. */
    nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1U << 24},
    };
    nghttp2_nv headers[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        NV(":path", LIST_PATH),
        NV(":authority", "localhost"),
        NV("content-type", "application/grpc"),
        NV("te", "trailers"),
        NV("user-agent", "joulestat"),
    };
    nghttp2_data_provider body = {.read_callback = read_request};
    int r;

    if (nghttp2_session_callbacks_new(&cb) != 0)
        return -ENOMEM;
    nghttp2_session_callbacks_set_send_callback(cb, on_send);
    nghttp2_session_callbacks_set_recv_callback(cb, on_recv);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    r = nghttp2_session_client_new(&session, cb, c);
    nghttp2_session_callbacks_del(cb);
    if (r != 0)
        return -ENOMEM;
    if (nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, ARRAY_SIZE(settings)) != 0 ||
        nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0, 1 << 24) != 0) {
        nghttp2_session_del(session);
        return -ENOMEM;
    }
    c->stream_id = nghttp2_submit_request(session, NULL, headers, ARRAY_SIZE(headers), &body, c);
    if (c->stream_id < 0) {
        nghttp2_session_del(session);
        return -ENOMEM;
    }
    *ret = session;
    return 0;
}

/* Drives the session until our stream closes, the peer goes away or the deadline. */
static int run_session(struct call *c, nghttp2_session *session, uint64_t deadline_ns) {
    c->deadline_ns = deadline_ns;
    while (!c->closed) {
        struct pollfd p = {.fd = c->fd};
        uint64_t now = clock_monotonic_ns();
        int r;

        if (nghttp2_session_send(session) != 0)
            return c->error ? c->error : -EPROTO;
        if (c->closed)
            break;
        if (!nghttp2_session_want_read(session) && !nghttp2_session_want_write(session))
            return c->error ? c->error : -ECONNRESET;
        if (now >= deadline_ns)
            return -ETIMEDOUT;
        p.events = (short)(POLLIN | (nghttp2_session_want_write(session) ? POLLOUT : 0));
        r = poll(&p, 1, (int)MIN((deadline_ns - now + 999999) / 1000000, 60000));
        if (r < 0 && errno != EINTR)
            return -errno;
        if (r <= 0)
            continue;
        r = nghttp2_session_recv(session);
        if (c->error)
            return c->error;
        if (r != 0 && r != NGHTTP2_ERR_EOF)
            return -EPROTO;
        if (r == NGHTTP2_ERR_EOF || c->eof) {
            if (c->closed)
                return 0;
            /* Bytes but not one frame: whatever answered does not speak HTTP/2. */
            return c->received > 0 && c->frames == 0 ? -EPROTO : -ECONNRESET;
        }
    }
    return c->error;
}

/* Checks the answer and extracts the one framed message. */
static int finish_call(struct call *c, uint8_t **ret_msg, size_t *ret_len, char *errbuf,
                       size_t errlen) {
    uint32_t len;
    uint8_t *msg;

    if (c->http_status != 200) {
        (void)snprintf(errbuf, errlen, "HTTP status %d, not a gRPC answer", c->http_status);
        return -EPROTO;
    }
    if (!c->have_grpc_status) {
        (void)snprintf(errbuf, errlen, "answer without grpc-status");
        return -EPROTO;
    }
    if (c->grpc_status != 0) {
        (void)snprintf(errbuf, errlen, "grpc-status %" PRIu64 ": %s", c->grpc_status,
                       c->grpc_message[0] ? c->grpc_message : "(no message)");
        return -EREMOTEIO;
    }
    if (!c->grpc_content_type) {
        (void)snprintf(errbuf, errlen, "content-type is not application/grpc");
        return -EPROTO;
    }
    if (c->body_len < GRPC_HEADER_LEN) {
        (void)snprintf(errbuf, errlen, "answer without a message (%zu bytes)", c->body_len);
        return -EPROTO;
    }
    len = (uint32_t)c->body[1] << 24 | (uint32_t)c->body[2] << 16 | (uint32_t)c->body[3] << 8 |
          c->body[4];
    if (c->body[0] != 0 || (size_t)len != c->body_len - GRPC_HEADER_LEN) {
        (void)snprintf(errbuf, errlen,
                       "bad gRPC framing (compressed flag %u, length %" PRIu32 " of %zu bytes)",
                       c->body[0], len, c->body_len - GRPC_HEADER_LEN);
        return -EPROTO;
    }
    msg = malloc(len ? len : 1);
    if (!msg)
        return -ENOMEM;
    memcpy(msg, c->body + GRPC_HEADER_LEN, len);
    *ret_msg = msg;
    *ret_len = len;
    return 0;
}

int podres_call_list(const char *socket_path, uint64_t timeout_ns, size_t max_response,
                     uint8_t **ret_msg, size_t *ret_len, char *errbuf, size_t errlen) {
    struct call c = {.fd = -1, .max_response = max_response};
    nghttp2_session *session = NULL;
    char scratch[8];
    int r;

    if (!errbuf || errlen == 0) {
        errbuf = scratch;
        errlen = sizeof(scratch);
    }
    errbuf[0] = '\0';
    r = connect_unix(socket_path, &c.fd);
    if (r < 0) {
        (void)snprintf(errbuf, errlen, "cannot connect to %s: %s", socket_path, strerror(-r));
        return r;
    }
    r = start_session(&c, &session);
    if (r >= 0)
        r = run_session(&c, session, clock_monotonic_ns() + timeout_ns);
    if (r < 0)
        (void)snprintf(errbuf, errlen, "List on %s: %s", socket_path,
                       r == -EMSGSIZE ? "answer larger than the limit" : strerror(-r));
    else
        r = finish_call(&c, ret_msg, ret_len, errbuf, errlen);
    if (session)
        nghttp2_session_del(session);
    free(c.body);
    (void)close(c.fd);
    return r;
}

const char *podres_error_hint(int err) {
    switch (err) {
    case -ENOENT:
    case -ENOTDIR:
        return "mount the kubelet's pod-resources directory into the pod (hostPath "
               "/var/lib/kubelet/pod-resources) or point --pod-resources-socket at it";
    case -EACCES:
    case -EPERM:
        return "the socket is root-only: run joulestat as root (or with the socket's group); "
               "on SELinux hosts allow containers to reach it (container-selinux)";
    case -ECONNREFUSED:
        return "nothing listens on the socket: is the kubelet running?";
    case -ENOTSOCK:
        return "the path is not a socket: check --pod-resources-socket";
    default:
        return "the kubelet's pod-resources API is not answering as expected; allocations are "
               "kept from the last good answer";
    }
}
