/* SPDX-License-Identifier: MIT */
/* The server, in-process, on 127.0.0.1 with an ephemeral port and a raw-socket client. */
#include "testutil.h"

#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "clock.h"
#include "crypt_loader.h"
#include "exposition.h"
#include "httpclient.h"
#include "labels.h"
#include "listen.h"
#include "sample-snapshot.h"
#include "server.h"

struct fixture {
    struct snapshot_slot *slot;
    struct http_server *srv;
    int port;
};

static void start(struct fixture *f, const struct http_server_options *o) {
    f->slot = snapshot_slot_new();
    assert_non_null(f->slot);
    ASSERT_OK(http_server_start(o, f->slot, &f->srv));
    f->port = http_server_port(f->srv);
    assert_true(f->port > 0 && f->port < 65536);
}

static void stop(struct fixture *f) {
    f->srv = http_server_stop(f->srv);
    assert_null(f->srv);
    f->slot = snapshot_slot_free(f->slot);
}

static void publish_sample(struct fixture *f, double timestamp) {
    struct snapshot *s = sample_snapshot_new();

    assert_non_null(s);
    s->timestamp_seconds = timestamp;
    snapshot_slot_publish(f->slot, s);
}

static double now_s(void) {
    return (double)clock_realtime_ns() / 1e9;
}

/* Removes the lines that may differ between two renderings of one snapshot: the
 * scrape-duration family (the first rendering has none, so one series less in the series
 * count) and the server's connection counters (a connection may still be closing). */
static void drop_scrape_duration(char *text) {
    char *l;

    while ((l = strstr(text, "joulestat_scrape_duration_seconds")) ||
           (l = strstr(text, "joulestat_series ")) || (l = strstr(text, "joulestat_http_"))) {
        char *start = l, *end = strchr(l, '\n');

        while (start > text && start[-1] != '\n')
            start--;
        end = end ? end + 1 : l + strlen(l);
        memmove(start, end, strlen(end) + 1);
    }
}

static char *gunzip(const char *in, size_t len, size_t *ret_len) {
    z_stream zs = {0};
    size_t cap = 8 << 20; /* the large exposition is ~1 MB */
    char *out = malloc(cap);

    assert_non_null(out);
    assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
    zs.next_in = (unsigned char *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    zs.next_out = (unsigned char *)out;
    zs.avail_out = (uInt)(cap - 1);
    assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
    *ret_len = zs.total_out;
    out[zs.total_out] = '\0';
    inflateEnd(&zs);
    return out;
}

static void test_routes(void **state) {
    struct http_server_options o = {.listen_address = "127.0.0.1:0"};
    struct fixture f = {0};
    struct http_reply r;
    char h[256];

    start(&f, &o);
    /* Nothing sampled yet. */
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    assert_int_equal(r.status, 503);
    http_reply_done(&r);
    ASSERT_OK(http_simple(f.port, "GET", "/healthz", NULL, &r));
    assert_int_equal(r.status, 503);
    assert_string_equal(r.body, "no sample yet\n");
    http_reply_done(&r);

    publish_sample(&f, now_s());
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    assert_int_equal(r.status, 200);
    assert_string_equal(http_header(&r, "Content-Type", h, sizeof(h)), EXPOSITION_CONTENT_TYPE);
    assert_null(http_header(&r, "Content-Encoding", h, sizeof(h)));
    assert_non_null(strstr(r.body, "joulestat_gpu_energy_joules_total{gpu=\"0\",uuid=\"GPU-1111"));
    assert_non_null(strstr(r.body, "} 2071.000000\n"));
    /* The first rendering has no previous one to report; the next snapshot's does. */
    assert_null(strstr(r.body, "joulestat_scrape_duration_seconds"));
    http_reply_done(&r);
    publish_sample(&f, now_s());
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    assert_non_null(strstr(r.body, "\njoulestat_scrape_duration_seconds "));
    http_reply_done(&r);

    ASSERT_OK(http_simple(f.port, "HEAD", "/metrics", NULL, &r));
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body_len, 0);
    assert_true(atoi(http_header(&r, "Content-Length", h, sizeof(h))) > 10000);
    http_reply_done(&r);

    ASSERT_OK(http_simple(f.port, "GET", "/healthz", NULL, &r));
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "ok\n");
    http_reply_done(&r);

    ASSERT_OK(http_simple(f.port, "GET", "/", NULL, &r));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "<a href=\"/metrics\">"));
    assert_non_null(strstr(http_header(&r, "Content-Type", h, sizeof(h)), "text/html"));
    http_reply_done(&r);

    ASSERT_OK(http_simple(f.port, "GET", "/metricsx", NULL, &r));
    assert_int_equal(r.status, 404);
    http_reply_done(&r);
    ASSERT_OK(http_simple(f.port, "POST", "/metrics", "Content-Length: 0\r\n", &r));
    assert_int_equal(r.status, 405);
    assert_string_equal(http_header(&r, "Allow", h, sizeof(h)), "GET, HEAD");
    http_reply_done(&r);
    ASSERT_OK(http_simple(f.port, "DELETE", "/", NULL, &r));
    assert_int_equal(r.status, 405);
    http_reply_done(&r);
    stop(&f);
}

/* A gzip scrape inflates to the plain one (less the scrape duration). */
static void check_gzip_matches_plain(struct fixture *f) {
    struct http_reply plain, gz;
    _cleanup_(freep) char *inflated = NULL;
    size_t len;
    char h[128];

    ASSERT_OK(http_simple(f->port, "GET", "/m", NULL, &plain));
    ASSERT_OK(http_simple(f->port, "GET", "/m", "Accept-Encoding: deflate, gzip;q=0.8\r\n", &gz));
    assert_int_equal(gz.status, 200);
    assert_string_equal(http_header(&gz, "Content-Encoding", h, sizeof(h)), "gzip");
    assert_string_equal(http_header(&gz, "Vary", h, sizeof(h)), "Accept-Encoding");
    assert_string_equal(http_header(&plain, "Vary", h, sizeof(h)), "Accept-Encoding");
    assert_true(gz.body_len < plain.body_len / 3);
    inflated = gunzip(gz.body, gz.body_len, &len);
    drop_scrape_duration(plain.body);
    drop_scrape_duration(inflated);
    assert_string_equal(inflated, plain.body);
    http_reply_done(&plain);
    http_reply_done(&gz);
}

/* The sample with 3 000 more containers: ~1 MB of text, rendered into the compressor in
 * many 64 KiB pieces. */
static void publish_workloads(struct fixture *f, size_t n) {
    struct snapshot *s = sample_snapshot_new();

    assert_non_null(s);
    for (size_t i = 0; i < s->n_workloads; i++)
        labels_unref(s->workloads[i].id);
    free(s->workloads);
    s->workloads = calloc(n, sizeof(*s->workloads));
    assert_non_null(s->workloads);
    s->n_workloads = s->cap_workloads = n;
    for (size_t i = 0; i < n; i++) {
        struct snap_workload *w = &s->workloads[i];
        struct snap_identity id = {0};

        w->kind = WORKLOAD_CONTAINER;
        w->gpu_energy_uj = 1000 * i;
        w->cpu_energy_uj = 7 * i;
        (void)snprintf(id.namespace_, sizeof(id.namespace_), "ns-%zu", i % 13);
        (void)snprintf(id.pod, sizeof(id.pod), "pod-%zu", i / 2);
        (void)snprintf(id.container, sizeof(id.container), "c-%zu", i);
        (void)snprintf(id.container_id, sizeof(id.container_id), "%064zx", i * 7919);
        w->id = labels_new(&id);
        assert_non_null(w->id);
    }
    s->timestamp_seconds = now_s();
    snapshot_slot_publish(f->slot, s);
}

static void publish_large(struct fixture *f) {
    publish_workloads(f, 3000);
}

static void test_gzip(void **state) {
    struct http_server_options o = {.listen_address = "127.0.0.1:0", .metrics_path = "/m"};
    struct fixture f = {0};
    struct http_reply refused, old;
    char h[128];

    start(&f, &o);
    publish_sample(&f, now_s());
    check_gzip_matches_plain(&f);
    publish_large(&f);
    check_gzip_matches_plain(&f);
    /* Plain renders reuse a body's buffer once it is no longer served: the small body's
     * (grown), then the large one's (larger than needed). */
    for (int i = 0; i < 2; i++) {
        publish_sample(&f, now_s());
        check_gzip_matches_plain(&f);
    }

    ASSERT_OK(http_simple(f.port, "GET", "/m", "Accept-Encoding: br, gzip;q=0\r\n", &refused));
    assert_null(http_header(&refused, "Content-Encoding", h, sizeof(h)));
    assert_non_null(strstr(refused.body, "# HELP "));
    http_reply_done(&refused);
    /* The old path is gone with a custom one. */
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &old));
    assert_int_equal(old.status, 404);
    http_reply_done(&old);
    stop(&f);
}

static bool never_fresh(const struct snapshot *s, void *userdata) {
    (*(int *)userdata)++;
    return false;
}

/* Render once, serve many: the scrapes of one snapshot share one body per encoding; a new
 * snapshot is rendered once more; bodies alive are bounded by the budget (503 beyond). */
static void test_shared_render(void **state) {
    struct http_server_options o = {.listen_address = "127.0.0.1:0"};
    struct http_server_stats st;
    struct fixture f = {0};
    struct http_reply a, b;
    size_t plain_len;

    start(&f, &o);
    publish_large(&f);
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &a));
    for (int i = 0; i < 5; i++) {
        ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &b));
        assert_int_equal(b.status, 200);
        assert_int_equal(b.body_len, a.body_len);
        assert_memory_equal(b.body, a.body, a.body_len);
        http_reply_done(&b);
        ASSERT_OK(http_simple(f.port, "GET", "/metrics", "Accept-Encoding: gzip\r\n", &b));
        assert_int_equal(b.status, 200);
        http_reply_done(&b);
    }
    plain_len = a.body_len;
    http_reply_done(&a);
    http_server_stats(f.srv, &st);
    assert_int_equal(st.renders, 2); /* one plain, one gzip */
    assert_int_equal(st.metrics_served, 11);
    publish_large(&f);
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &a));
    http_reply_done(&a);
    http_server_stats(f.srv, &st);
    assert_int_equal(st.renders, 3);
    /* Alive: the kept plain body of this snapshot; the previous one's (plain and gzip),
     * never served again, were let go. */
    assert_true(st.live_body_bytes > 0 && st.live_body_bytes <= plain_len + plain_len / 4);
    stop(&f);

    /* A budget of one and a half bodies: the kept body plus a new one would not fit, but
     * the kept one shows an older snapshot and is let go first: every new snapshot is
     * served, not 503 for good. */
    o.render_budget = plain_len + plain_len / 2;
    start(&f, &o);
    for (int i = 0; i < 3; i++) {
        publish_large(&f);
        ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &a));
        assert_int_equal(a.status, 200);
        http_reply_done(&a);
    }
    http_server_stats(f.srv, &st);
    assert_int_equal(st.renders, 3);
    assert_true(st.live_body_bytes <= o.render_budget);
    stop(&f);

    /* A budget under one body: with none alive, each new snapshot is still rendered (the
     * last body's size, over the budget, refused every render after the first for good). */
    o.render_budget = plain_len / 2;
    start(&f, &o);
    for (int i = 0; i < 3; i++) {
        publish_large(&f);
        ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &a));
        assert_int_equal(a.status, 200);
        http_reply_done(&a);
    }
    stop(&f);
}

/* A client that asked for /metrics and reads nothing: its socket's window kept small, so
 * that the reply cannot be sent in one go. */
static int slow_reader(int port) {
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), small = 4096;

    assert_true(fd >= 0);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(req) - 1);
    return fd;
}

/* A client reading its reply too slowly is cut at the reply deadline; one holding an old
 * body while the bodies' budget is spent is cut by the next scrape that finds no room, so
 * that the one after it is served. */
static void test_slow_readers(void **state) {
    struct http_server_options o = {
        .listen_address = "127.0.0.1:0", .timeout_s = 10, .reply_timeout_ms = 1200};
    struct http_server_stats st;
    struct fixture f = {0};
    struct http_reply r;
    size_t plain_len;
    int fd;

    start(&f, &o);
    publish_workloads(&f, 20000);
    fd = slow_reader(f.port);
    usleep(300 * 1000);
    http_server_stats(f.srv, &st);
    assert_int_equal(st.cut_slow_reply, 0);
    usleep(1500 * 1000);
    http_server_stats(f.srv, &st);
    assert_int_equal(st.cut_slow_reply, 1);
    close(fd);
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    plain_len = r.body_len;
    http_reply_done(&r);
    stop(&f);

    /* Room for one and a half bodies: the slow reader's (the cache lets its own reference
     * to that older snapshot's body go) and a new one do not fit. Replies are shed after a
     * sixth of the 6 s deadline. */
    o.reply_timeout_ms = 6000;
    o.render_budget = plain_len * 3 / 2;
    start(&f, &o);
    publish_workloads(&f, 20000);
    fd = slow_reader(f.port);
    usleep(1200 * 1000);
    publish_workloads(&f, 20000);
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    assert_int_equal(r.status, 503);
    http_reply_done(&r);
    usleep(300 * 1000);
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    assert_int_equal(r.status, 200);
    http_reply_done(&r);
    http_server_stats(f.srv, &st);
    assert_int_equal(st.cut_slow_reply, 1);
    close(fd);
    stop(&f);
}

static long rss_kib(void) {
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");

    assert_non_null(f);
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* Clients that pipeline scrapes and do not read the answers (40 connections, 10 requests
 * each, a ~1 MB exposition) hold one shared body, not one each: the server's memory does
 * not grow with them (it grew by one body per connection before). */
static void test_pipelined_memory(void **state) {
    /* All 40 from this address: room for them (at the default 32, the oldest would be cut
     * while still waiting, as they should be). */
    struct http_server_options o = {.listen_address = "127.0.0.1:0", .per_client_limit = 64};
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    struct http_server_stats st;
    struct fixture f = {0};
    struct http_reply r;
    int fds[40];
    long before, after;

    start(&f, &o);
    publish_large(&f);
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    assert_int_equal(r.status, 200);
    before = rss_kib();
    for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
        fds[i] = http_connect(f.port);
        assert_true(fds[i] >= 0);
        for (int k = 0; k < 10; k++)
            assert_int_equal(send(fds[i], req, sizeof(req) - 1, MSG_NOSIGNAL),
                             (ssize_t)sizeof(req) - 1);
    }
    usleep(500000);
    after = rss_kib();
    http_server_stats(f.srv, &st);
    print_message("40 pipelining clients that do not read: +%ld KiB resident, %zu bytes of "
                  "bodies alive (one is %zu), %llu rendered\n",
                  after - before, st.live_body_bytes, r.body_len, (unsigned long long)st.renders);
    assert_true(st.live_body_bytes <= r.body_len + 4096);
    assert_int_equal(st.renders, 1);
    assert_true(after - before < 8 * 1024);
    http_reply_done(&r);
    for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
        close(fds[i]);
    stop(&f);
}

static void test_health_freshness(void **state) {
    struct http_server_options o = {.listen_address = "127.0.0.1:0",
                                    .max_sample_age_ns = 30 * NSEC_PER_SEC};
    struct fixture f = {0};
    struct http_reply r;
    int calls = 0;

    start(&f, &o);
    publish_sample(&f, now_s() - 5);
    ASSERT_OK(http_simple(f.port, "GET", "/healthz", NULL, &r));
    assert_int_equal(r.status, 200);
    http_reply_done(&r);
    publish_sample(&f, now_s() - 120);
    ASSERT_OK(http_simple(f.port, "GET", "/healthz", NULL, &r));
    assert_int_equal(r.status, 503);
    assert_string_equal(r.body, "sampler stale\n");
    http_reply_done(&r);
    /* A stale sampler still serves its last numbers. */
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    assert_int_equal(r.status, 200);
    http_reply_done(&r);
    stop(&f);

    o.is_fresh = never_fresh;
    o.userdata = &calls;
    start(&f, &o);
    publish_sample(&f, now_s());
    ASSERT_OK(http_simple(f.port, "GET", "/healthz", NULL, &r));
    assert_int_equal(r.status, 503);
    assert_int_equal(calls, 1);
    http_reply_done(&r);
    stop(&f);
}

/* Waits until the server closes fd (read returns 0 or an error); returns the ms it took. */
static int wait_closed(int fd, int limit_ms) {
    uint64_t t0 = clock_monotonic_ns();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char c;

    if (poll(&p, 1, limit_ms) <= 0)
        return -1;
    assert_true(recv(fd, &c, 1, 0) <= 0);
    return (int)((clock_monotonic_ns() - t0) / NSEC_PER_MSEC);
}

static void test_slow_clients(void **state) {
    struct http_server_options o = {
        .listen_address = "127.0.0.1:0", .timeout_s = 1, .connection_limit = 16, .threads = 2};
    struct fixture f = {0};
    struct http_reply r;
    int silent, partial, ms;
    uint64_t t0;

    start(&f, &o);
    publish_sample(&f, now_s());
    silent = http_connect(f.port);
    partial = http_connect(f.port);
    assert_true(silent >= 0 && partial >= 0);
    assert_int_equal(send(partial, "GET /metrics HTTP/1.1\r\nHo", 25, MSG_NOSIGNAL), 25);
    /* Two stuck clients do not hold up a scrape. */
    t0 = clock_monotonic_ns();
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    assert_int_equal(r.status, 200);
    http_reply_done(&r);
    assert_true(clock_monotonic_ns() - t0 < 500 * NSEC_PER_MSEC);
    /* The idle timeout (1 s) closes them. */
    ms = wait_closed(silent, 5000);
    assert_true(ms >= 0 && ms < 5000);
    assert_true(wait_closed(partial, 5000) >= 0);
    close(silent);
    close(partial);
    stop(&f);
}

/* One byte every 200 ms restarts libmicrohttpd's idle timeout (10 s here) each time; the
 * header deadline (1 s) is absolute and cuts the client anyway. */
static void test_header_deadline(void **state) {
    struct http_server_options o = {
        .listen_address = "127.0.0.1:0", .timeout_s = 10, .header_timeout_ms = 1000};
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaa";
    struct fixture f = {0};
    struct pollfd p;
    uint64_t t0;
    int fd, ms = -1;

    start(&f, &o);
    publish_sample(&f, now_s());
    fd = http_connect(f.port);
    assert_true(fd >= 0);
    t0 = clock_monotonic_ns();
    for (size_t i = 0; i < sizeof(req) - 1; i++) {
        if (send(fd, req + i, 1, MSG_NOSIGNAL) != 1)
            break;
        p = (struct pollfd){.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 200) > 0) {
            ms = (int)((clock_monotonic_ns() - t0) / NSEC_PER_MSEC);
            break;
        }
    }
    if (ms < 900 || ms > 4000)
        fail_msg("a client sending a byte every 200 ms was cut after %d ms, expected ~1 s", ms);
    close(fd);
    stop(&f);
}

/* At the connection limit, a new client is let in and the oldest waiting one is cut: idle
 * connections, from this address or any, never keep a scrape out. */
static void test_connection_limit(void **state) {
    struct http_server_options o = {
        .listen_address = "127.0.0.1:0", .timeout_s = 10, .connection_limit = 8, .threads = 2};
    struct fixture f = {0};
    struct http_reply r;
    int idle[20], cut = 0;
    const char *closed;
    uint64_t t0;

    start(&f, &o);
    publish_sample(&f, now_s());
    for (size_t i = 0; i < ARRAY_SIZE(idle); i++) {
        idle[i] = http_connect(f.port);
        assert_true(idle[i] >= 0);
        usleep(5000);
    }
    for (int i = 0; i < 5; i++) {
        t0 = clock_monotonic_ns();
        ASSERT_OK(http_simple(f.port, "GET", "/healthz", NULL, &r));
        assert_int_equal(r.status, 200);
        http_reply_done(&r);
        assert_true(clock_monotonic_ns() - t0 < 500 * NSEC_PER_MSEC);
    }
    /* The oldest were cut, the newest are still open. */
    for (size_t i = 0; i < ARRAY_SIZE(idle); i++)
        if (wait_closed(idle[i], 0) >= 0)
            cut++;
    assert_true(cut >= 12);
    assert_true(wait_closed(idle[0], 0) >= 0);
    assert_true(wait_closed(idle[ARRAY_SIZE(idle) - 1], 0) < 0);
    /* Counted in the self-metrics. */
    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    closed = strstr(r.body, "\njoulestat_http_connections_closed_total{reason=\"make_room\"} ");
    assert_non_null(closed);
    assert_true(atoi(strchr(closed, '}') + 2) >= 12);
    assert_non_null(strstr(r.body, "\njoulestat_http_connections "));
    http_reply_done(&r);
    for (size_t i = 0; i < ARRAY_SIZE(idle); i++)
        close(idle[i]);
    stop(&f);
}

/* libcrypt as the daemon loads it. */
static const struct crypt_api *crypt_lib(void) {
    const struct crypt_api *api = NULL;
    const char *reason = NULL;

    if (crypt_api_get(&api, &reason) < 0)
        fail_msg("%s", reason);
    return api;
}

static char *bcrypt_cost(const char *password, unsigned long cost) {
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    struct crypt_data *cd = calloc(1, sizeof(*cd));
    char *out;

    assert_non_null(cd);
    assert_non_null(crypt_lib()->gensalt_rn("$2y$", cost, NULL, 0, salt, sizeof(salt)));
    out = strdup(crypt_lib()->rn(password, salt, cd, sizeof(*cd)));
    free(cd);
    return out;
}

static char *bcrypt(const char *password) {
    return bcrypt_cost(password, 4);
}

static void test_basic_auth(void **state) {
    _cleanup_(freep) char *hash = bcrypt("s3cret");
    struct http_server_options o = {.listen_address = "127.0.0.1:0"};
    struct web_config *wc = NULL;
    struct fixture f = {0};
    struct http_reply r;
    char dir[256], text[512], path[512], h[128];

    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    (void)snprintf(text, sizeof(text),
                   "basic_auth_users:\n  prom: %s\nhttp_server_config:\n  headers:\n"
                   "    X-Frame-Options: deny\n    X-Content-Type-Options: nosniff\n",
                   hash);
    ASSERT_OK(test_write_file(dir, "web.yml", text));
    (void)snprintf(path, sizeof(path), "%s/web.yml", dir);
    ASSERT_OK(web_config_load(path, &wc, NULL, 0));
    o.web_config = wc;
    start(&f, &o);
    publish_sample(&f, now_s());

    ASSERT_OK(http_simple(f.port, "GET", "/metrics", NULL, &r));
    assert_int_equal(r.status, 401);
    assert_string_equal(http_header(&r, "WWW-Authenticate", h, sizeof(h)),
                        "Basic realm=\"joulestat\"");
    /* http_server_config.headers on every answer: 401, 200, health, 404, 405. */
    assert_string_equal(http_header(&r, "X-Frame-Options", h, sizeof(h)), "deny");
    http_reply_done(&r);
    ASSERT_OK(http_simple(f.port, "GET", "/healthz", NULL, &r));
    assert_string_equal(http_header(&r, "X-Content-Type-Options", h, sizeof(h)), "nosniff");
    http_reply_done(&r);
    ASSERT_OK(
        http_simple(f.port, "GET", "/nothing", "Authorization: Basic cHJvbTpzM2NyZXQ=\r\n", &r));
    assert_int_equal(r.status, 404);
    assert_string_equal(http_header(&r, "X-Frame-Options", h, sizeof(h)), "deny");
    http_reply_done(&r);
    ASSERT_OK(http_simple(f.port, "DELETE", "/metrics", NULL, &r));
    assert_int_equal(r.status, 405);
    assert_string_equal(http_header(&r, "X-Frame-Options", h, sizeof(h)), "deny");
    http_reply_done(&r);
    /* prom:s3cret */
    ASSERT_OK(
        http_simple(f.port, "GET", "/metrics", "Authorization: Basic cHJvbTpzM2NyZXQ=\r\n", &r));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "joulestat_series "));
    assert_string_equal(http_header(&r, "X-Frame-Options", h, sizeof(h)), "deny");
    http_reply_done(&r);
    /* prom:wrong */
    ASSERT_OK(
        http_simple(f.port, "GET", "/metrics", "Authorization: Basic cHJvbTp3cm9uZw==\r\n", &r));
    assert_int_equal(r.status, 401);
    http_reply_done(&r);
    /* other:s3cret */
    ASSERT_OK(
        http_simple(f.port, "GET", "/metrics", "Authorization: Basic b3RoZXI6czNjcmV0\r\n", &r));
    assert_int_equal(r.status, 401);
    http_reply_done(&r);
    /* Health needs no credentials (liveness probes send none), and ignores wrong ones. */
    ASSERT_OK(http_simple(f.port, "GET", "/healthz", NULL, &r));
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "ok\n");
    http_reply_done(&r);
    ASSERT_OK(
        http_simple(f.port, "GET", "/healthz", "Authorization: Basic b3RoZXI6czNjcmV0\r\n", &r));
    assert_int_equal(r.status, 200);
    http_reply_done(&r);
    /* Not base64 at all. */
    ASSERT_OK(http_simple(f.port, "GET", "/", "Authorization: Basic !!!\r\n", &r));
    assert_int_equal(r.status, 401);
    http_reply_done(&r);
    stop(&f);
    web_config_free(wc);
    test_rm_rf(dir);
}

struct timed_request {
    int port;
    const char *headers;
    int status;
    uint64_t ns;
};

static void *timed_request(void *arg) {
    struct timed_request *t = arg;
    uint64_t t0 = clock_monotonic_ns();
    struct http_reply r;

    t->status = http_simple(t->port, "GET", "/metrics", t->headers, &r) < 0 ? -1 : r.status;
    if (t->status > 0)
        http_reply_done(&r);
    t->ns = clock_monotonic_ns() - t0;
    return NULL;
}

#define AUTH_RIGHT "Authorization: Basic cHJvbTpzM2NyZXQ=\r\n" /* prom:s3cret */
#define AUTH_WRONG "Authorization: Basic cHJvbTp3cm9uZzE=\r\n" /* prom:wrong1 */

/* Starts the server with one basic-auth user, prom, of the given hash (its web.yml in a
 * new directory dir) and a sample published. Returns the configuration, the caller's. */
static struct web_config *start_with_user(struct fixture *f, struct http_server_options *o,
                                          const char *hash, char *dir, size_t dir_size) {
    struct web_config *wc = NULL;
    char text[256], path[512];

    ASSERT_OK(test_mkdtemp(dir, dir_size));
    (void)snprintf(text, sizeof(text), "basic_auth_users:\n  prom: %s\n", hash);
    ASSERT_OK(test_write_file(dir, "web.yml", text));
    (void)snprintf(path, sizeof(path), "%s/web.yml", dir);
    ASSERT_OK(web_config_load(path, &wc, NULL, 0));
    o->web_config = wc;
    start(f, o);
    publish_sample(f, now_s());
    return wc;
}

/* A wrong password costs a bcrypt (cost 13 here, ~0.5 s), run off the server's workers;
 * meanwhile a scrape with remembered credentials and /healthz answer at once, even with a
 * single worker, and the same wrong password again is refused from memory. The server
 * stops promptly with checks running and waiting. */
static void auth_not_blocking(unsigned threads) {
    static const char *const more[] = {
        "Authorization: Basic cHJvbTp3cm9uZzI=\r\n", "Authorization: Basic cHJvbTp3cm9uZzM=\r\n",
        "Authorization: Basic cHJvbTp3cm9uZzQ=\r\n", "Authorization: Basic cHJvbTp3cm9uZzU=\r\n"};
    _cleanup_(freep) char *hash = bcrypt_cost("s3cret", 13);
    struct http_server_options o = {.listen_address = "127.0.0.1:0", .threads = threads};
    struct timed_request pending[ARRAY_SIZE(more)];
    pthread_t pending_th[ARRAY_SIZE(more)];
    struct timed_request wrong, right, again;
    struct web_config *wc = NULL;
    struct fixture f = {0};
    struct http_reply r;
    char dir[256];
    pthread_t th;
    uint64_t t0, health_ns;

    wc = start_with_user(&f, &o, hash, dir, sizeof(dir));

    right = (struct timed_request){.port = f.port, .headers = AUTH_RIGHT};
    (void)timed_request(&right); /* the first use of a password pays its bcrypt */
    assert_int_equal(right.status, 200);

    wrong = (struct timed_request){.port = f.port, .headers = AUTH_WRONG};
    assert_int_equal(pthread_create(&th, NULL, timed_request, &wrong), 0);
    usleep(50000);
    right = (struct timed_request){.port = f.port, .headers = AUTH_RIGHT};
    (void)timed_request(&right);
    t0 = clock_monotonic_ns();
    ASSERT_OK(http_simple(f.port, "GET", "/healthz", NULL, &r));
    health_ns = clock_monotonic_ns() - t0;
    assert_int_equal(r.status, 200);
    http_reply_done(&r);
    assert_int_equal(pthread_join(th, NULL), 0);
    again = (struct timed_request){.port = f.port, .headers = AUTH_WRONG};
    (void)timed_request(&again);

    print_message("wrong password %.0f ms; meanwhile scrape %.1f ms, healthz %.1f ms; "
                  "the same wrong password again %.1f ms\n",
                  (double)wrong.ns / 1e6, (double)right.ns / 1e6, (double)health_ns / 1e6,
                  (double)again.ns / 1e6);
    assert_int_equal(wrong.status, 401);
    assert_int_equal(right.status, 200);
    assert_int_equal(again.status, 401);
    /* The wrong password was still being checked while the scrape ran. */
    assert_true(wrong.ns > right.ns + 100 * NSEC_PER_MSEC);
    assert_true(right.ns < 300 * NSEC_PER_MSEC);
    assert_true(health_ns < 300 * NSEC_PER_MSEC);
    assert_true(again.ns < 100 * NSEC_PER_MSEC);

    for (size_t i = 0; i < ARRAY_SIZE(more); i++) {
        pending[i] = (struct timed_request){.port = f.port, .headers = more[i]};
        assert_int_equal(pthread_create(&pending_th[i], NULL, timed_request, &pending[i]), 0);
    }
    usleep(100000);
    t0 = clock_monotonic_ns();
    stop(&f);
    /* Two checks were running (they finish), two waiting (answered 503 at once). */
    assert_true(clock_monotonic_ns() - t0 < 3 * wrong.ns + 1000 * NSEC_PER_MSEC);
    for (size_t i = 0; i < ARRAY_SIZE(more); i++) {
        assert_int_equal(pthread_join(pending_th[i], NULL), 0);
        assert_true(pending[i].status == 401 || pending[i].status == 503 ||
                    pending[i].status == -1);
    }
    web_config_free(wc);
    test_rm_rf(dir);
}

static void test_auth_not_blocking(void **state) {
    auth_not_blocking(0);
}

static void test_auth_one_worker(void **state) {
    auth_not_blocking(1);
}

/* GET /metrics with `auth` from source address src (a loopback address of its own, as
 * another client): its status, or -1. */
struct sourced_request {
    const char *src;
    int port;
    const char *auth;
    int status;
};

static void *request_from(void *arg) {
    struct sourced_request *q = arg;
    struct sockaddr_in from = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
    char req[256], buf[64] = "";
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ssize_t n = -1;

    q->status = -1;
    to.sin_port = htons((uint16_t)q->port);
    (void)inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    (void)inet_pton(AF_INET, q->src, &from.sin_addr);
    (void)snprintf(req, sizeof(req),
                   "GET /metrics HTTP/1.1\r\nHost: x\r\n%sConnection: close\r\n\r\n", q->auth);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&from, sizeof(from)) == 0 &&
        connect(fd, (struct sockaddr *)&to, sizeof(to)) == 0 &&
        write(fd, req, strlen(req)) == (ssize_t)strlen(req))
        n = read(fd, buf, sizeof(buf) - 1);
    if (n >= 12 && strncmp(buf, "HTTP/1.1 ", 9) == 0)
        q->status = atoi(buf + 9);
    if (fd >= 0)
        (void)close(fd);
    return NULL;
}

/* One client guessing passwords as fast as it can (here 20 at once, each a bcrypt of
 * ~0.5 s) fills its own share of the checks' queue, not the queue: the scraper's first
 * check, from another address, is answered, not refused busy. */
static void test_auth_flood_one_client(void **state) {
    _cleanup_(freep) char *hash = bcrypt_cost("s3cret", 13);
    struct http_server_options o = {.listen_address = "127.0.0.1:0"};
    struct sourced_request flood[20], scraper;
    pthread_t th[ARRAY_SIZE(flood)];
    char dir[256], auth[ARRAY_SIZE(flood)][64];
    struct web_config *wc = NULL;
    struct fixture f = {0};
    unsigned busy = 0;

    (void)state;
    wc = start_with_user(&f, &o, hash, dir, sizeof(dir));
    for (size_t i = 0; i < ARRAY_SIZE(flood); i++) {
        /* prom:wrongNN, each another guess */
        static const char b64[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        char plain[16];
        unsigned char *p = (unsigned char *)plain;
        char enc[32];
        size_t k = 0;

        (void)snprintf(plain, sizeof(plain), "prom:wrong%02zu", i); /* 12 bytes */
        for (size_t j = 0; j < 12; j += 3) {
            uint32_t v = (uint32_t)p[j] << 16 | (uint32_t)p[j + 1] << 8 | p[j + 2];

            enc[k++] = b64[v >> 18 & 63];
            enc[k++] = b64[v >> 12 & 63];
            enc[k++] = b64[v >> 6 & 63];
            enc[k++] = b64[v & 63];
        }
        enc[k] = '\0';
        (void)snprintf(auth[i], sizeof(auth[i]), "Authorization: Basic %s\r\n", enc);
        flood[i] = (struct sourced_request){.src = "127.0.0.2", .port = f.port, .auth = auth[i]};
        assert_int_equal(pthread_create(&th[i], NULL, request_from, &flood[i]), 0);
    }
    usleep(200000);
    scraper = (struct sourced_request){.src = "127.0.0.1", .port = f.port, .auth = AUTH_RIGHT};
    (void)request_from(&scraper);
    for (size_t i = 0; i < ARRAY_SIZE(flood); i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        busy += flood[i].status == 503;
    }
    print_message("scraper %d; %u of %zu guesses refused busy\n", scraper.status, busy,
                  ARRAY_SIZE(flood));
    assert_int_equal(scraper.status, 200);
    assert_true(busy >= ARRAY_SIZE(flood) - 2 - 4); /* two running, a quarter of 16 waiting */
    stop(&f);
    web_config_free(wc);
    test_rm_rf(dir);
}

/* One raw request (with Connection: close where it matters); returns the status. */
static int raw_status(int port, const char *request, char *allow, size_t allow_size) {
    struct http_reply r;
    int status;

    ASSERT_OK(http_exchange(AF_INET, "127.0.0.1", port, request, 5000, &r));
    status = r.status;
    if (allow && !http_header(&r, "Allow", allow, allow_size))
        allow[0] = '\0';
    http_reply_done(&r);
    return status;
}

static void test_strict_http(void **state) {
    struct http_server_options o = {.listen_address = "127.0.0.1:0"};
    struct fixture f = {0};
    char allow[64], big[12000], req[12200];

    start(&f, &o);
    publish_sample(&f, now_s());
    /* Other methods: 405 with Allow, also with a body (the connection used to be closed
     * without an answer). */
    assert_int_equal(raw_status(f.port,
                                "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n"
                                "hello",
                                allow, sizeof(allow)),
                     405);
    assert_string_equal(allow, "GET, HEAD");
    assert_int_equal(raw_status(f.port,
                                "PUT /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
                                allow, sizeof(allow)),
                     405);
    assert_string_equal(allow, "GET, HEAD");
    /* HTTP/1.1 needs exactly one Host; HTTP/1.0 none. */
    assert_int_equal(
        raw_status(f.port, "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", NULL, 0), 400);
    assert_int_equal(raw_status(f.port,
                                "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n"
                                "Connection: close\r\n\r\n",
                                NULL, 0),
                     400);
    assert_int_equal(raw_status(f.port, "GET /healthz HTTP/1.0\r\n\r\n", NULL, 0), 200);
    /* Content-Length twice: different values are refused, the same value is one. */
    assert_int_equal(raw_status(f.port,
                                "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                                "Content-Length: 5\r\nConnection: close\r\n\r\n",
                                NULL, 0),
                     400);
    assert_int_equal(raw_status(f.port,
                                "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                                "Content-Length: 0\r\nConnection: close\r\n\r\n",
                                NULL, 0),
                     200);
    /* GET and HEAD with a body: refused before it is read (the connection used to be
     * closed without an answer). */
    assert_int_equal(raw_status(f.port,
                                "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                                "\r\n5\r\nhello\r\n0\r\n\r\n",
                                NULL, 0),
                     400);
    assert_int_equal(raw_status(f.port,
                                "HEAD /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab",
                                NULL, 0),
                     400);
    /* Request headers are bounded (HTTP_CONNECTION_MEMORY): 4 KB pass, 10 KB get 431. */
    memset(big, 'a', sizeof(big));
    big[4000] = '\0';
    (void)snprintf(req, sizeof(req),
                   "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\nConnection: close\r\n\r\n",
                   big);
    assert_int_equal(raw_status(f.port, req, NULL, 0), 200);
    big[4000] = 'a';
    big[10000] = '\0';
    (void)snprintf(req, sizeof(req),
                   "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\nConnection: close\r\n\r\n",
                   big);
    assert_int_equal(raw_status(f.port, req, NULL, 0), 431);
    stop(&f);
}

static bool ipv6_loopback_works(void) {
    struct listen_address a;
    int fd;

    if (listen_address_parse("[::1]:0", &a) < 0)
        return false;
    fd = listen_address_open(&a, 1);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

static void check_get(int family, const char *host, int port) {
    struct http_reply r;
    char req[128];

    (void)snprintf(req, sizeof(req),
                   "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ASSERT_OK(http_exchange(family, host, port, req, 5000, &r));
    assert_int_equal(r.status, 200);
    http_reply_done(&r);
}

static void test_listen_forms(void **state) {
    bool v6 = ipv6_loopback_works();
    struct http_server_options o = {0};
    struct fixture f = {0};

    o.listen_address = ":0"; /* every address; dual-stack where IPv6 exists */
    start(&f, &o);
    publish_sample(&f, now_s());
    check_get(AF_INET, "127.0.0.1", f.port);
    if (v6)
        check_get(AF_INET6, "::1", f.port);
    stop(&f);

    o.listen_address = "0.0.0.0:0";
    start(&f, &o);
    publish_sample(&f, now_s());
    check_get(AF_INET, "127.0.0.1", f.port);
    stop(&f);

    o.listen_address = "localhost:0"; /* resolved; IPv4 preferred */
    start(&f, &o);
    publish_sample(&f, now_s());
    check_get(AF_INET, "127.0.0.1", f.port);
    stop(&f);

    if (v6) {
        o.listen_address = "[::1]:0";
        start(&f, &o);
        publish_sample(&f, now_s());
        check_get(AF_INET6, "::1", f.port);
        stop(&f);
    }
}

static void test_bad_addresses(void **state) {
    static const char *const malformed[] = {
        "9400", "",           "127.0.0.1", "127.0.0.1:",     ":65536",
        ":-1",  ":94x0",      ":9400\n",   "[::1]9400",      "[::1",
        "[]:1", "[nothex]:1", "::1:9400",  "1.2.3.4:123456",
    };
    struct http_server_options o = {0};
    struct snapshot_slot *slot = snapshot_slot_new();
    struct http_server *srv = NULL, *other = NULL;

    assert_non_null(slot);
    for (size_t i = 0; i < ARRAY_SIZE(malformed); i++) {
        o.listen_address = malformed[i];
        if (http_server_start(&o, slot, &srv) != -EINVAL)
            fail_msg("'%s' was not refused with -EINVAL", malformed[i]);
        assert_null(srv);
    }
    /* Parses, but no such host / not an address of this machine. */
    o.listen_address = "no-such-host.invalid:9400";
    ASSERT_ERRNO(http_server_start(&o, slot, &srv), EADDRNOTAVAIL);
    o.listen_address = "192.0.2.1:0"; /* TEST-NET-1 */
    ASSERT_ERRNO(http_server_start(&o, slot, &srv), EADDRNOTAVAIL);
    assert_null(srv);
    /* A port already taken. */
    o.listen_address = "127.0.0.1:0";
    ASSERT_OK(http_server_start(&o, slot, &srv));
    {
        char addr[64];

        (void)snprintf(addr, sizeof(addr), "127.0.0.1:%d", http_server_port(srv));
        o.listen_address = addr;
        ASSERT_ERRNO(http_server_start(&o, slot, &other), EADDRINUSE);
        assert_null(other);
    }
    srv = http_server_stop(srv);
    /* Metrics paths that are not plain, or collide with the other routes. */
    o.listen_address = "127.0.0.1:0";
    for (const char *const *p = (const char *const[]){"metrics", "/", "/healthz", "/a b", "/a\"b",
                                                      "/<x>", "/q?x=1", NULL};
         *p; p++) {
        o.metrics_path = *p;
        if (http_server_start(&o, slot, &srv) != -EINVAL)
            fail_msg("metrics path '%s' was not refused", *p);
    }
    o.metrics_path = NULL;
    /* A prefix that is no metric name (it would fail every scrape). */
    for (const char *const *p = (const char *const[]){"", "9x", "a-b", "a b", NULL}; *p; p++) {
        o.metric_prefix = *p;
        if (http_server_start(&o, slot, &srv) != -EINVAL)
            fail_msg("metric prefix '%s' was not refused", *p);
        assert_null(srv);
    }
    o.metric_prefix = "my_gpu_process";
    ASSERT_OK(http_server_start(&o, slot, &srv));
    srv = http_server_stop(srv);
    o.metric_prefix = NULL;
    ASSERT_ERRNO(http_server_start(NULL, slot, &srv), EINVAL);
    ASSERT_ERRNO(http_server_start(&o, NULL, &srv), EINVAL);
    assert_int_equal(http_server_port(NULL), -EINVAL);
    assert_null(http_server_stop(NULL));
    snapshot_slot_free(slot);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_shared_render),
        cmocka_unit_test(test_pipelined_memory),
        cmocka_unit_test(test_slow_readers),
        cmocka_unit_test(test_health_freshness),
        cmocka_unit_test(test_slow_clients),
        cmocka_unit_test(test_header_deadline),
        cmocka_unit_test(test_connection_limit),
        cmocka_unit_test(test_basic_auth),
        cmocka_unit_test(test_auth_not_blocking),
        cmocka_unit_test(test_auth_one_worker),
        cmocka_unit_test(test_auth_flood_one_client),
        cmocka_unit_test(test_strict_http),
        cmocka_unit_test(test_listen_forms),
        cmocka_unit_test(test_bad_addresses),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
