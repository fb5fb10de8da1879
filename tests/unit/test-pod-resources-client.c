/* SPDX-License-Identifier: MIT */
/*
 * The gRPC client against a pod-resources peer on the real gRPC stack (grpcio serving
 * src/kube/pod_resources.proto, started per test), plus hand-made broken peers:
 * nothing listening, not a socket, a silent server, a server that is not HTTP/2.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "macro.h"
#include "pod_resources_client.h"

#define GPU0 "GPU-5f3e2a10-7c4b-4e59-9a1d-2b6c8d0e4f21"
#define MS 1000000ULL

struct peer {
    char dir[256];
    char sock[320];
    char fixture[320];
    pid_t pid;
};

static void sleep_ms(unsigned ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    (void)nanosleep(&ts, NULL);
}

static void copy_fixture(const char *name, const char *dst) {
    char src[512], rel[128], *data = NULL;
    size_t size = 0;
    FILE *f;

    (void)snprintf(rel, sizeof(rel), "tests/kube/podresources/fixtures/%s", name);
    test_source_path(src, sizeof(src), rel);
    f = fopen(src, "re");
    assert_non_null(f);
    data = malloc(1 << 16);
    size = fread(data, 1, 1 << 16, f);
    fclose(f);
    f = fopen(dst, "we");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
    free(data);
}

/* Starts peer.py serving `fixture` and waits until it listens. */
static void peer_start(struct peer *p, const char *fixture) {
    char script[512], ready[320];

    ASSERT_OK(test_mkdtemp(p->dir, sizeof(p->dir)));
    (void)snprintf(p->sock, sizeof(p->sock), "%s/kubelet.sock", p->dir);
    (void)snprintf(p->fixture, sizeof(p->fixture), "%s/fixture.json", p->dir);
    (void)snprintf(ready, sizeof(ready), "%s/ready", p->dir);
    copy_fixture(fixture, p->fixture);
    test_source_path(script, sizeof(script), "tests/kube/podresources/peer.py");
    p->pid = fork();
    assert_true(p->pid >= 0);
    if (p->pid == 0) {
        /* A failed assertion leaves this test without stopping the peer: it must not
         * outlive us (it would hold CTest's output pipe open until the test times out). */
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        execl("/usr/bin/python3", "python3", script, p->sock, p->fixture, ready, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 1200; i++) { /* 60 s: grpcio starts slowly on a loaded machine */
        if (access(ready, F_OK) == 0)
            return;
        sleep_ms(50);
    }
    fail_msg("the pod-resources peer did not start");
}

/* A peer that does not stop within 5 s is killed: never hang the test on it. */
static void peer_stop(struct peer *p) {
    bool reaped = false;
    int status;

    if (p->pid > 0) {
        (void)kill(p->pid, SIGTERM);
        for (int i = 0; i < 100 && !reaped; i++) {
            reaped = waitpid(p->pid, &status, WNOHANG) == p->pid;
            if (!reaped)
                sleep_ms(50);
        }
        if (!reaped) {
            (void)kill(p->pid, SIGKILL);
            (void)waitpid(p->pid, &status, 0);
        }
        p->pid = 0;
    }
}

static void peer_done(struct peer *p) {
    peer_stop(p);
    test_rm_rf(p->dir);
}

static void test_list_from_grpc_peer(void **state) {
    struct podres_list *l = NULL;
    struct peer p;
    uint8_t *msg = NULL;
    size_t len = 0;
    char err[256];

    peer_start(&p, "node.json");
    ASSERT_OK(
        podres_call_list(p.sock, 2000 * MS, PODRES_MAX_RESPONSE, &msg, &len, err, sizeof(err)));
    assert_string_equal(err, "");
    ASSERT_OK(podres_list_decode(msg, len, &l));
    assert_int_equal(l->response->n_pod_resources, 6);
    assert_string_equal(l->response->pod_resources[0]->name, "train-a");
    assert_string_equal(l->response->pod_resources[0]->containers[0]->devices[0]->device_ids[1],
                        GPU0 "::1");
    podres_list_free(l);
    free(msg);

    /* the answer is bounded: the same reply over a 100-byte limit is refused */
    msg = NULL;
    ASSERT_ERRNO(podres_call_list(p.sock, 2000 * MS, 100, &msg, &len, err, sizeof(err)), EMSGSIZE);
    assert_null(msg);
    assert_non_null(strstr(err, "larger than the limit"));

    /* an empty answer is zero bytes of protobuf, still a valid message */
    copy_fixture("empty.json", p.fixture);
    ASSERT_OK(podres_call_list(p.sock, 2000 * MS, PODRES_MAX_RESPONSE, &msg, &len, NULL, 0));
    assert_int_equal(len, 0);
    free(msg);
    peer_done(&p);
}

static void test_grpc_status_error(void **state) {
    struct peer p;
    uint8_t *msg = NULL;
    size_t len = 0;
    char err[256];

    peer_start(&p, "error.json");
    ASSERT_ERRNO(
        podres_call_list(p.sock, 2000 * MS, PODRES_MAX_RESPONSE, &msg, &len, err, sizeof(err)),
        EREMOTEIO);
    assert_null(msg);
    assert_string_equal(err, "grpc-status 14: kubelet is restarting");
    peer_done(&p);
}

static void test_socket_missing_and_not_socket(void **state) {
    char dir[256], path[320], err[256];
    uint8_t *msg = NULL;
    size_t len = 0;

    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    (void)snprintf(path, sizeof(path), "%s/kubelet.sock", dir);
    ASSERT_ERRNO(podres_call_list(path, 200 * MS, 1024, &msg, &len, err, sizeof(err)), ENOENT);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(podres_error_hint(-ENOENT), "hostPath"));

    ASSERT_OK(test_write_file(dir, "kubelet.sock", "not a socket"));
    ASSERT_ERRNO(podres_call_list(path, 200 * MS, 1024, &msg, &len, err, sizeof(err)), ENOTSOCK);
    assert_non_null(strstr(podres_error_hint(-ENOTSOCK), "--pod-resources-socket"));
    assert_null(msg);
    test_rm_rf(dir);
}

/* A kubelet that accepts nothing any more, its backlog full: the call fails at once rather
 * than wait in connect() for ever (the deadline only covers what comes after it). */
static void test_backlog_full(void **state) {
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char dir[90], err[256]; /* dir + "/kubelet.sock" fits sun_path */
    int listener, queued[8];
    size_t n_queued = 0;
    uint8_t *msg = NULL;
    size_t len = 0;
    uint64_t t0;

    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    (void)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/kubelet.sock", dir);
    listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(listener >= 0);
    assert_int_equal(bind(listener, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(listener, 0), 0);
    /* Fill the backlog: connects that nobody accepts, until one would have to wait. */
    while (n_queued < ARRAY_SIZE(queued)) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        assert_true(fd >= 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            assert_int_equal(errno, EAGAIN);
            close(fd);
            break;
        }
        queued[n_queued++] = fd;
    }
    assert_true(n_queued < ARRAY_SIZE(queued));
    t0 = clock_monotonic_ns();
    ASSERT_ERRNO(podres_call_list(sa.sun_path, 200 * MS, 1024, &msg, &len, err, sizeof(err)),
                 EAGAIN);
    assert_true(clock_monotonic_ns() - t0 < 1000 * MS);
    assert_null(msg);
    for (size_t i = 0; i < n_queued; i++)
        close(queued[i]);
    close(listener);
    test_rm_rf(dir);
}

/* A listening socket of our own; the handler runs for one accepted connection. */
struct fake_server {
    int fd;
    const char *reply; /* NULL: accept and stay silent */
    bool flood;        /* HTTP/2 SETTINGS, then frames of an unknown type without end */
    pthread_t thread;
};

/* A peer that never stops talking: its SETTINGS, then 1 KiB frames of an unknown type
 * (0xfa, which a client must skip), as fast as they are read, until the client leaves. */
static void flood(int c) {
    static const uint8_t settings[9] = {0, 0, 0, 4, 0, 0, 0, 0, 0};
    uint8_t frame[9 + 1024] = {0x00, 0x04, 0x00, 0xfa};

    if (send(c, settings, sizeof(settings), MSG_NOSIGNAL) < 0)
        return;
    while (send(c, frame, sizeof(frame), MSG_NOSIGNAL) > 0)
        ;
}

static void *fake_serve(void *userdata) {
    struct fake_server *s = userdata;
    int c = accept(s->fd, NULL, NULL);
    char buf[4096];

    if (c < 0)
        return NULL;
    if (s->flood)
        flood(c);
    else if (s->reply) {
        (void)read(c, buf, sizeof(buf));
        (void)write(c, s->reply, strlen(s->reply));
        /* Closing with the client's later bytes unread would reset its connection, which
         * it may see before the reply: half-close, then read until the client leaves. */
        (void)shutdown(c, SHUT_WR);
    }
    /* silent, or done: hold the connection until the client gives up */
    while (read(c, buf, sizeof(buf)) > 0)
        ;
    close(c);
    return NULL;
}

static void fake_start(struct fake_server *s, const char *path, const char *reply, bool flood) {
    struct sockaddr_un sa = {.sun_family = AF_UNIX};

    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s->fd >= 0);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(s->fd, 4), 0);
    s->reply = reply;
    s->flood = flood;
    assert_int_equal(pthread_create(&s->thread, NULL, fake_serve, s), 0);
}

static void fake_stop(struct fake_server *s) {
    /* The client is done; should it never have connected, this wakes accept() so the
     * join cannot hang. */
    (void)shutdown(s->fd, SHUT_RDWR);
    pthread_join(s->thread, NULL);
    close(s->fd);
}

static void test_timeout_and_not_http2(void **state) {
    struct fake_server s;
    char dir[256], path[320], err[256];
    uint8_t *msg = NULL;
    size_t len = 0;
    uint64_t t0;

    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    (void)snprintf(path, sizeof(path), "%s/silent.sock", dir);
    fake_start(&s, path, NULL, false);
    t0 = (uint64_t)time(NULL);
    ASSERT_ERRNO(podres_call_list(path, 300 * MS, 1024, &msg, &len, err, sizeof(err)), ETIMEDOUT);
    assert_true((uint64_t)time(NULL) - t0 <= 2);
    fake_stop(&s);

    (void)snprintf(path, sizeof(path), "%s/http1.sock", dir);
    fake_start(&s, path, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", false);
    ASSERT_ERRNO(podres_call_list(path, 2000 * MS, 1024, &msg, &len, err, sizeof(err)), EPROTO);
    fake_stop(&s);

    /* A peer that floods the connection: the deadline holds all the same (the thread that
     * polls would otherwise be kept reading, and the daemon's stop would wait on it). */
    (void)snprintf(path, sizeof(path), "%s/flood.sock", dir);
    fake_start(&s, path, NULL, true);
    t0 = clock_monotonic_ns();
    ASSERT_ERRNO(podres_call_list(path, 300 * MS, 1024, &msg, &len, err, sizeof(err)), ETIMEDOUT);
    assert_true(clock_monotonic_ns() - t0 < 1500 * MS);
    fake_stop(&s);

    /* a peer that closes without a word */
    (void)snprintf(path, sizeof(path), "%s/closer.sock", dir);
    fake_start(&s, path, "", false);
    ASSERT_ERRNO(podres_call_list(path, 2000 * MS, 1024, &msg, &len, err, sizeof(err)), ECONNRESET);
    fake_stop(&s);
    assert_null(msg);
    test_rm_rf(dir);
}

/* Permission denied, as a non-root user meets the root-only kubelet socket. */
static void test_permission_denied(void **state) {
    struct peer p;
    pid_t child;
    int status;

    if (geteuid() != 0)
        skip();
    peer_start(&p, "node.json");
    assert_int_equal(chmod(p.dir, 0700), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        uint8_t *msg = NULL;
        size_t len;
        int r;

        if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
            _exit(100);
        r = podres_call_list(p.sock, 1000 * MS, 1024, &msg, &len, NULL, 0);
        _exit(r == -EACCES ? 0 : 101);
    }
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_non_null(strstr(podres_error_hint(-EACCES), "root"));
    peer_done(&p);
}

/* The source: state published per poll; a failing peer keeps the last allocations. */
static void test_source_keeps_table_while_down(void **state) {
    struct podres_source_options o = {.interval_ns = 50 * MS, .timeout_ns = 2000 * MS};
    struct podres_source *src;
    struct podres_state *st;
    const struct gpu_alloc *a;
    struct peer p;

    peer_start(&p, "node.json");
    o.socket_path = p.sock;
    ASSERT_OK(podres_source_new(&o, &src));
    assert_null(podres_source_get(src));

    ASSERT_OK(podres_source_poll(src));
    st = podres_source_get(src);
    assert_true(st->up);
    assert_int_equal(st->polls, 1);
    assert_int_equal(st->generation, 1);
    assert_int_equal(gpu_alloc_table_find(st->table, GPU0, &a), 2);
    assert_int_equal(a[1].replicas, 2);
    podres_state_unref(st);

    /* grpc error: down, message kept, allocations kept */
    copy_fixture("error.json", p.fixture);
    ASSERT_ERRNO(podres_source_poll(src), EREMOTEIO);
    st = podres_source_get(src);
    assert_false(st->up);
    assert_int_equal(st->error, -EREMOTEIO);
    assert_int_equal(st->errors, 1);
    assert_int_equal(st->generation, 1);
    assert_string_equal(st->message, "grpc-status 14: kubelet is restarting");
    assert_int_equal(gpu_alloc_table_find(st->table, GPU0, &a), 2);
    podres_state_unref(st);

    /* the peer gone entirely (grpc may or may not leave its socket file behind) */
    peer_stop(&p);
    {
        int r = podres_source_poll(src);

        assert_true(r == -ECONNREFUSED || r == -ENOENT);
    }
    st = podres_source_get(src);
    assert_false(st->up);
    assert_int_equal(gpu_alloc_table_find(st->table, GPU0, &a), 2);
    podres_state_unref(st);

    /* back: the thread picks it up */
    unlink(p.sock);
    copy_fixture("empty.json", p.fixture);
    {
        char dir[256];

        memcpy(dir, p.dir, sizeof(dir));
        peer_start(&p, "empty.json");
        test_rm_rf(dir);
    }
    podres_source_free(src);
    o.socket_path = p.sock;
    ASSERT_OK(podres_source_new(&o, &src));
    ASSERT_OK(podres_source_start(src));
    for (int i = 0; i < 500; i++) { /* 10 s: a loaded CI machine is slow */
        st = podres_source_get(src);
        if (st && st->up)
            break;
        podres_state_unref(st);
        st = NULL;
        sleep_ms(20);
    }
    if (!st || !st->table)
        fail_msg("the polling thread did not publish a good state");
    assert_true(st->up);
    assert_int_equal(st->table->n, 0);
    podres_state_unref(st);
    podres_source_stop(src);
    podres_source_stop(src); /* twice is fine */
    assert_null(podres_source_free(src));
    assert_null(podres_source_free(NULL));
    assert_null(podres_state_unref(NULL));
    peer_done(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_from_grpc_peer),
        cmocka_unit_test(test_grpc_status_error),
        cmocka_unit_test(test_socket_missing_and_not_socket),
        cmocka_unit_test(test_timeout_and_not_http2),
        cmocka_unit_test(test_permission_denied),
        cmocka_unit_test(test_backlog_full),
        cmocka_unit_test(test_source_keeps_table_while_down),
    };

    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
