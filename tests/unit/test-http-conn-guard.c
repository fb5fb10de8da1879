/* SPDX-License-Identifier: MIT */
/* The connection guard's header deadline on socket pairs: an idle connection is cut at its
 * deadline; one whose request waits unread in its socket (every worker busy) is not, until
 * the server has read it. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conn_guard.h"

static void sleep_ms(long ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Whether the guard shut the server side down: the client reads the end of the stream. */
static bool was_cut(int client) {
    char b;

    return recv(client, &b, 1, MSG_DONTWAIT) == 0;
}

static void test_deadline_spares_unread_request(void **state) {
    const struct conn_guard_limits l = {
        .capacity = 8, .per_client = 4, .reserve = 1, .header_timeout_ns = 50000000};
    static const char request[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    struct conn_guard *g = NULL;
    struct conn_guard_stats st;
    int idle[2], queued[2];
    void *h_idle, *h_queued;
    char buf[sizeof(request)];

    (void)state;
    ASSERT_OK(conn_guard_new(&l, &g));
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, idle), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, queued), 0);
    h_idle = conn_guard_opened(g, idle[0], NULL);
    h_queued = conn_guard_opened(g, queued[0], NULL);
    assert_non_null(h_idle);
    assert_non_null(h_queued);
    assert_int_equal(write(queued[1], request, strlen(request)), (ssize_t)strlen(request));

    sleep_ms(400); /* eight deadlines */
    assert_true(was_cut(idle[1]));
    assert_false(was_cut(queued[1]));
    conn_guard_stats(g, &st);
    assert_int_equal(st.cut_deadline, 1);

    /* A worker reads the request, and nothing more comes: now it waits on its client. */
    assert_int_equal(read(queued[0], buf, sizeof(buf)), (ssize_t)strlen(request));
    sleep_ms(400);
    assert_true(was_cut(queued[1]));
    conn_guard_stats(g, &st);
    assert_int_equal(st.cut_deadline, 2);

    conn_guard_closed(g, h_idle);
    conn_guard_closed(g, h_queued);
    for (int i = 0; i < 2; i++) {
        (void)close(idle[i]);
        (void)close(queued[i]);
    }
    assert_null(conn_guard_free(g));
}

/* A keep-alive connection with nothing more to ask after its reply is cut at the same
 * deadline, counted apart: it is no client trickling a request. */
static void test_idle_after_reply(void **state) {
    const struct conn_guard_limits l = {
        .capacity = 8, .per_client = 4, .reserve = 1, .header_timeout_ns = 50000000};
    struct conn_guard *g = NULL;
    struct conn_guard_stats st;
    int kept[2];
    void *h;

    (void)state;
    ASSERT_OK(conn_guard_new(&l, &g));
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, kept), 0);
    h = conn_guard_opened(g, kept[0], NULL);
    conn_guard_busy(g, h);
    conn_guard_waiting(g, h);
    sleep_ms(400);
    assert_true(was_cut(kept[1]));
    conn_guard_stats(g, &st);
    assert_int_equal(st.cut_idle, 1);
    assert_int_equal(st.cut_deadline, 0);
    conn_guard_closed(g, h);
    for (int i = 0; i < 2; i++)
        (void)close(kept[i]);
    assert_null(conn_guard_free(g));
}

/* A reply still being sent at its deadline is cut, however slowly its client reads on:
 * a busy connection no longer holds its slot and its body for ever. */
static void test_reply_deadline(void **state) {
    const struct conn_guard_limits l = {.capacity = 8,
                                        .per_client = 4,
                                        .reserve = 1,
                                        .header_timeout_ns = 10000000000,
                                        .reply_timeout_ns = 50000000};
    struct conn_guard *g = NULL;
    struct conn_guard_stats st;
    int slow[2];
    void *h;

    (void)state;
    ASSERT_OK(conn_guard_new(&l, &g));
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, slow), 0);
    h = conn_guard_opened(g, slow[0], NULL);
    assert_non_null(h);
    conn_guard_busy(g, h);
    sleep_ms(20);
    assert_false(was_cut(slow[1]));
    sleep_ms(400);
    assert_true(was_cut(slow[1]));
    conn_guard_stats(g, &st);
    assert_int_equal(st.cut_slow_reply, 1);
    assert_int_equal(st.cut_deadline, 0);
    conn_guard_closed(g, h);
    for (int i = 0; i < 2; i++)
        (void)close(slow[i]);
    assert_null(conn_guard_free(g));
}

/* Shedding cuts the replies busy for at least the time given, never the caller's own nor a
 * waiting connection. */
static void test_shed_slow(void **state) {
    const struct conn_guard_limits l = {
        .capacity = 16, .per_client = 16, .reserve = 1, .header_timeout_ns = 10000000000};
    struct conn_guard *g = NULL;
    struct conn_guard_stats st;
    int fds[4][2];
    void *h[4];

    (void)state;
    ASSERT_OK(conn_guard_new(&l, &g));
    for (int i = 0; i < 4; i++) {
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds[i]), 0);
        h[i] = conn_guard_opened(g, fds[i][0], NULL);
        assert_non_null(h[i]);
    }
    conn_guard_busy(g, h[0]); /* sending for a while */
    conn_guard_busy(g, h[1]); /* the caller */
    sleep_ms(100);
    conn_guard_busy(g, h[2]); /* just started */
    /* h[3] waits for its next request */
    assert_int_equal(conn_guard_shed_slow(g, h[1], 50000000), 1);
    assert_true(was_cut(fds[0][1]));
    for (int i = 1; i < 4; i++)
        assert_false(was_cut(fds[i][1]));
    conn_guard_stats(g, &st);
    assert_int_equal(st.cut_slow_reply, 1);
    assert_int_equal(st.live, 3);
    for (int i = 0; i < 4; i++) {
        conn_guard_closed(g, h[i]);
        (void)close(fds[i][0]);
        (void)close(fds[i][1]);
    }
    assert_null(conn_guard_free(g));
}

static struct sockaddr_in6 ipv6(const char *text) {
    struct sockaddr_in6 a = {.sin6_family = AF_INET6};

    assert_int_equal(inet_pton(AF_INET6, text, &a.sin6_addr), 1);
    return a;
}

/* Addresses of one IPv6 /64 are one client: a host using a new address for each
 * connection pushes out its own oldest waiting one, as one address does; another /64 is
 * left alone. */
static void test_ipv6_client_is_its_prefix(void **state) {
    const struct conn_guard_limits l = {
        .capacity = 32, .per_client = 4, .reserve = 1, .header_timeout_ns = 10000000000};
    const char *addrs[] = {"2001:db8:0:1::5", "2001:db8:0:2::5", "2001:db8:0:1::6",
                           "2001:db8:0:1:ffff::7", "2001:db8:0:1::8"};
    struct conn_guard *g = NULL;
    struct conn_guard_stats st;
    int fds[5][2];
    void *h[5];

    (void)state;
    ASSERT_OK(conn_guard_new(&l, &g));
    for (int i = 0; i < 5; i++) {
        struct sockaddr_in6 a = ipv6(addrs[i]);

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds[i]), 0);
        h[i] = conn_guard_opened(g, fds[i][0], (struct sockaddr *)&a);
        assert_non_null(h[i]);
    }
    /* The fourth of 2001:db8:0:1::/64 (over 3 of 4) cut its oldest; 2001:db8:0:2:: kept */
    assert_true(was_cut(fds[0][1]));
    for (int i = 1; i < 5; i++)
        assert_false(was_cut(fds[i][1]));
    conn_guard_stats(g, &st);
    assert_int_equal(st.cut_room, 1);
    for (int i = 0; i < 5; i++) {
        conn_guard_closed(g, h[i]);
        (void)close(fds[i][0]);
        (void)close(fds[i][1]);
    }
    assert_null(conn_guard_free(g));
}

/* Requests that follow each reply at once (pipelined) are one run with one reply deadline:
 * a client reading each reply slowly, each within its deadline, is cut all the same. One
 * that pauses between requests, as a keep-alive scraper does, starts a new run each time. */
static void test_pipelined_run_has_one_deadline(void **state) {
    const struct conn_guard_limits l = {.capacity = 8,
                                        .per_client = 8,
                                        .reserve = 1,
                                        .header_timeout_ns = 10000000000,
                                        .reply_timeout_ns = 500000000,
                                        .run_gap_ns = 100000000};
    struct conn_guard *g = NULL;
    int piped[2], paused[2];
    void *hp, *hk;

    (void)state;
    ASSERT_OK(conn_guard_new(&l, &g));
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, piped), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, paused), 0);
    hp = conn_guard_opened(g, piped[0], NULL);
    hk = conn_guard_opened(g, paused[0], NULL);
    conn_guard_busy(g, hp);
    for (int i = 0; i < 5; i++) { /* 150 ms a reply, the next request at once */
        conn_guard_busy(g, hk);
        sleep_ms(20);
        conn_guard_waiting(g, hk);
        sleep_ms(130); /* over run_gap_ns */
        conn_guard_waiting(g, hp);
        conn_guard_busy(g, hp);
    }
    assert_true(was_cut(piped[1])); /* 500 ms after its first request */
    assert_false(was_cut(paused[1]));
    conn_guard_closed(g, hp);
    conn_guard_closed(g, hk);
    for (int i = 0; i < 2; i++) {
        (void)close(piped[i]);
        (void)close(paused[i]);
    }
    assert_null(conn_guard_free(g));
}

/* Busy connections hold the room: a new one is let in by cutting the one whose run has
 * lasted busy_evict_ns (a reader that slow), not refused. Where an address's every
 * connection is busy and young, its connection over per_client is the one cut. */
static void test_slow_busy_make_room(void **state) {
    const struct conn_guard_limits l = {.capacity = 4,
                                        .per_client = 3,
                                        .reserve = 1,
                                        .header_timeout_ns = 10000000000,
                                        .busy_evict_ns = 300000000};
    struct sockaddr_in6 other = ipv6("2001:db8:0:9::1");
    struct conn_guard *g = NULL;
    int fds[5][2];
    void *h[5];

    (void)state;
    ASSERT_OK(conn_guard_new(&l, &g));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds[i]), 0);
        h[i] = conn_guard_opened(g, fds[i][0], NULL);
        conn_guard_busy(g, h[i]);
        sleep_ms(i == 0 ? 400 : 0); /* slow; the others young by far */
    }
    /* A fourth address-less connection: over per_client (3), all busy, two of them young,
     * the oldest slow: that one goes. */
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds[3]), 0);
    h[3] = conn_guard_opened(g, fds[3][0], NULL);
    assert_true(was_cut(fds[0][1]));
    for (int i = 1; i < 4; i++)
        assert_false(was_cut(fds[i][1]));
    conn_guard_busy(g, h[3]);
    conn_guard_closed(g, h[0]); /* as the server closes a cut one */
    h[0] = NULL;
    /* Another address, the server full of young busy ones: the room rule finds none to
     * cut, and lets it in (the headroom below the hard limit). */
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds[4]), 0);
    h[4] = conn_guard_opened(g, fds[4][0], (struct sockaddr *)&other);
    assert_non_null(h[4]);
    assert_false(was_cut(fds[4][1]));
    for (int i = 0; i < 5; i++) {
        conn_guard_closed(g, h[i]);
        (void)close(fds[i][0]);
        (void)close(fds[i][1]);
    }
    assert_null(conn_guard_free(g));
}

/* An address's connections all busy and young, and per_client of them (an IPv6 /64 may
 * spread them over addresses each within libmicrohttpd's own limit): a new one is the one
 * cut. */
static void test_client_hard_limit(void **state) {
    const struct conn_guard_limits l = {
        .capacity = 16, .per_client = 3, .reserve = 1, .header_timeout_ns = 10000000000};
    const char *addrs[] = {"2001:db8:0:1::5", "2001:db8:0:1::6", "2001:db8:0:1::7",
                           "2001:db8:0:1::8"};
    struct conn_guard *g = NULL;
    int fds[4][2];
    void *h[4];

    (void)state;
    ASSERT_OK(conn_guard_new(&l, &g));
    for (int i = 0; i < 4; i++) {
        struct sockaddr_in6 a = ipv6(addrs[i]);

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds[i]), 0);
        h[i] = conn_guard_opened(g, fds[i][0], (struct sockaddr *)&a);
        assert_non_null(h[i]);
        conn_guard_busy(g, h[i]);
    }
    for (int i = 0; i < 3; i++)
        assert_false(was_cut(fds[i][1]));
    assert_true(was_cut(fds[3][1]));
    for (int i = 0; i < 4; i++) {
        conn_guard_closed(g, h[i]);
        (void)close(fds[i][0]);
        (void)close(fds[i][1]);
    }
    assert_null(conn_guard_free(g));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline_spares_unread_request),
        cmocka_unit_test(test_idle_after_reply),
        cmocka_unit_test(test_reply_deadline),
        cmocka_unit_test(test_shed_slow),
        cmocka_unit_test(test_ipv6_client_is_its_prefix),
        cmocka_unit_test(test_pipelined_run_has_one_deadline),
        cmocka_unit_test(test_slow_busy_make_room),
        cmocka_unit_test(test_client_hard_limit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
