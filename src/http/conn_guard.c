/* SPDX-License-Identifier: MIT */
#include "conn_guard.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "clock.h"
#include "stopper.h"

/* The watchdog sleeps until the first deadline of a waiting connection, and for good while
 * none waits: a node scraped twice a minute wakes it about as often. */
#define WATCH_NEVER UINT64_MAX
/* How soon a connection past its deadline, its request waiting for a worker, is looked at
 * again. */
#define PENDING_RECHECK_NS (100 * NSEC_PER_MSEC)
/* Defaults of the limits of the same names (0 there). */
/* Pipelined requests follow each other within microseconds, a scraper's next one comes after
 * its interval (a second, for a fast one): only the first go on with a run. */
#define RUN_GAP_NS (100 * NSEC_PER_MSEC)
#define BUSY_EVICT_NS (10 * NSEC_PER_SEC)

struct guarded {
    bool used;
    bool busy;
    bool cut; /* shut down, close pending */
    int fd;
    uint8_t client[16];    /* IPv6, or IPv4 mapped into it */
    uint64_t since_ns;     /* accept, the end of the previous reply, or (busy) the request */
    uint64_t run_since_ns; /* the first request of its run of replies (busy) */
    bool served;           /* a reply was done on it */
};

struct conn_guard {
    struct conn_guard_limits limits;
    pthread_mutex_t lock;
    struct guarded *slots; /* limits.capacity of them */
    unsigned live;         /* used and not cut */
    uint64_t watch_at;     /* when the watchdog wakes next (WATCH_NEVER: when kicked) */
    uint64_t cut_deadline, cut_idle, cut_room, cut_slow_reply;
    struct stopper stopper;
    pthread_t thread;
    bool thread_started;
};

void conn_guard_client_key(const struct sockaddr *addr, uint8_t key[16]) {
    memset(key, 0, 16);
    if (!addr)
        return;
    if (addr->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr;

        memcpy(key, a, IN6_IS_ADDR_V4MAPPED(a) ? 16 : 8);
    } else if (addr->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)(const void *)addr)->sin_addr, 4);
    }
}

static void cut(struct conn_guard *g, struct guarded *c) {
    /* The socket stays open until the server closes it (after conn_guard_closed()), so
     * the descriptor still names this connection. */
    (void)shutdown(c->fd, SHUT_RDWR);
    c->cut = true;
    g->live--;
}

/* Whether a request has arrived on the socket that the server has not read yet: a client
 * that sent its request at once is never the one cut to make room while it waits for a
 * worker (under a flood from its own address it would be, within milliseconds). */
static bool request_pending(const struct guarded *c) {
    int n = 0;

    return ioctl(c->fd, FIONREAD, &n) == 0 && n > 0;
}

/* The oldest waiting connection, of one client (client != NULL) or of any, except `not`
 * and those with a request not read yet. */
static struct guarded *oldest_waiting(struct conn_guard *g, const uint8_t *client,
                                      const struct guarded * not, unsigned *ret_count) {
    struct guarded *oldest = NULL;
    unsigned count = 0;

    for (unsigned i = 0; i < g->limits.capacity; i++) {
        struct guarded *c = &g->slots[i];

        if (!c->used || c->cut || (client && memcmp(c->client, client, 16) != 0))
            continue;
        count++;
        if (c != not &&!c->busy && (!oldest || c->since_ns < oldest->since_ns) &&
            !request_pending(c))
            oldest = c;
    }
    *ret_count = count;
    return oldest;
}

/* The oldest busy connection, of one client (client != NULL) or of any, except `not`, whose
 * run of replies has lasted busy_evict_ns: a reader that slow. */
static struct guarded *oldest_slow_busy(struct conn_guard *g, const uint8_t *client,
                                        const struct guarded * not, uint64_t now) {
    struct guarded *oldest = NULL;

    for (unsigned i = 0; i < g->limits.capacity; i++) {
        struct guarded *c = &g->slots[i];

        if (!c->used || c->cut || !c->busy || c == not ||
            (client && memcmp(c->client, client, 16) != 0) ||
            now - c->run_since_ns < g->limits.busy_evict_ns)
            continue;
        if (!oldest || c->run_since_ns < oldest->run_since_ns)
            oldest = c;
    }
    return oldest;
}

/* When c is due: the end of its header deadline while waiting, of its reply deadline while
 * busy (WATCH_NEVER without one), counted from the first request of its run. */
static uint64_t due_at(const struct conn_guard *g, const struct guarded *c) {
    if (!c->busy)
        return c->since_ns + g->limits.header_timeout_ns;
    return g->limits.reply_timeout_ns ? c->run_since_ns + g->limits.reply_timeout_ns : WATCH_NEVER;
}

/* c waits or is busy from now: the watchdog wakes for its deadline if it would sleep past
 * it. Under the lock. */
static void watch_for(struct conn_guard *g, const struct guarded *c) {
    uint64_t due = due_at(g, c);

    if (due < g->watch_at) {
        g->watch_at = due;
        stopper_kick(&g->stopper);
    }
}

void *conn_guard_opened(struct conn_guard *g, int fd, const struct sockaddr *addr) {
    unsigned per_client_max = g->limits.per_client - g->limits.per_client / 4, count;
    struct guarded *c = NULL, *victim;

    (void)pthread_mutex_lock(&g->lock);
    for (unsigned i = 0; i < g->limits.capacity && !c; i++)
        if (!g->slots[i].used)
            c = &g->slots[i];
    if (!c) {
        g->cut_room++;
        (void)pthread_mutex_unlock(&g->lock);
        (void)shutdown(fd, SHUT_RDWR);
        return NULL;
    }
    *c = (struct guarded){.used = true, .fd = fd, .since_ns = clock_monotonic_ns()};
    conn_guard_client_key(addr, c->client);
    g->live++;
    watch_for(g, c);

    /* Its oldest waiting connection first, else one reading a reply for long; at its hard
     * limit (an IPv6 /64's addresses are each within libmicrohttpd's), the newest itself. */
    victim = oldest_waiting(g, c->client, c, &count);
    if (count > per_client_max && !victim)
        victim = oldest_slow_busy(g, c->client, c, c->since_ns);
    if (count > per_client_max && !victim && count > g->limits.per_client)
        victim = c;
    if (count > per_client_max && victim) {
        cut(g, victim);
        g->cut_room++;
    }
    if (g->live > g->limits.capacity - g->limits.reserve) {
        victim = oldest_waiting(g, NULL, c, &count);
        if (!victim)
            victim = oldest_slow_busy(g, NULL, c, c->since_ns);
        if (victim) {
            cut(g, victim);
            g->cut_room++;
        }
    }
    (void)pthread_mutex_unlock(&g->lock);
    return c;
}

static void set_busy(struct conn_guard *g, void *handle, bool busy) {
    uint64_t now = clock_monotonic_ns();
    struct guarded *c = handle;

    if (!c)
        return;
    (void)pthread_mutex_lock(&g->lock);
    /* A request that comes right after a reply (pipelined, or sent at once) goes on with its
     * run: its reply deadline counts from the run's first request. Else a client pipelining
     * requests and reading each reply slowly, each within its deadline, held its slot for
     * ever. A keep-alive client asks again after a pause. */
    if (busy && !c->busy && (!c->served || now - c->since_ns >= g->limits.run_gap_ns))
        c->run_since_ns = now;
    if (!busy && c->busy)
        c->served = true;
    c->busy = busy;
    c->since_ns = now;
    watch_for(g, c);
    (void)pthread_mutex_unlock(&g->lock);
}

void conn_guard_busy(struct conn_guard *g, void *handle) {
    set_busy(g, handle, true);
}

void conn_guard_waiting(struct conn_guard *g, void *handle) {
    set_busy(g, handle, false);
}

void conn_guard_closed(struct conn_guard *g, void *handle) {
    struct guarded *c = handle;

    if (!c)
        return;
    (void)pthread_mutex_lock(&g->lock);
    if (!c->cut)
        g->live--;
    *c = (struct guarded){0};
    (void)pthread_mutex_unlock(&g->lock);
}

/* Cuts the connections past their deadline; returns the next deadline. A waiting one whose
 * request sits unread in its socket waits for a worker, not on its client: it is looked at
 * again a moment later, as the room rules leave it alone too. */
static uint64_t enforce_deadlines(struct conn_guard *g, uint64_t now) {
    uint64_t next = WATCH_NEVER;

    (void)pthread_mutex_lock(&g->lock);
    for (unsigned i = 0; i < g->limits.capacity; i++) {
        struct guarded *c = &g->slots[i];
        uint64_t due = due_at(g, c);

        if (!c->used || c->cut)
            continue;
        if (c->busy) {
            if (due <= now) {
                cut(g, c);
                g->cut_slow_reply++;
            } else if (due < next)
                next = due;
            continue;
        }
        if (due <= now && request_pending(c))
            due = now + PENDING_RECHECK_NS;
        else if (due <= now) {
            cut(g, c);
            /* After a reply, a keep-alive client that has nothing more to ask: not one that
             * trickles a request. */
            if (c->served)
                g->cut_idle++;
            else
                g->cut_deadline++;
            continue;
        }
        if (due < next)
            next = due;
    }
    g->watch_at = next;
    (void)pthread_mutex_unlock(&g->lock);
    return next;
}

static void *watchdog(void *arg) {
    struct conn_guard *g = arg;
    uint64_t next = enforce_deadlines(g, clock_monotonic_ns());

    /* A kick (a connection waiting with an earlier deadline) ends a sleep early. */
    while (!stopper_sleep_until(&g->stopper, next))
        next = enforce_deadlines(g, clock_monotonic_ns());
    return NULL;
}

int conn_guard_new(const struct conn_guard_limits *l, struct conn_guard **ret) {
    struct conn_guard *g;
    int r;

    if (!l || !ret || l->capacity < 2 || l->per_client < 2 || l->per_client > l->capacity ||
        l->reserve >= l->capacity || l->header_timeout_ns == 0)
        return -EINVAL;
    g = calloc(1, sizeof(*g));
    if (!g)
        return -ENOMEM;
    g->limits = *l;
    if (g->limits.run_gap_ns == 0)
        g->limits.run_gap_ns = RUN_GAP_NS;
    if (g->limits.busy_evict_ns == 0)
        g->limits.busy_evict_ns = BUSY_EVICT_NS;
    g->watch_at = WATCH_NEVER;
    g->slots = calloc(l->capacity, sizeof(*g->slots));
    if (!g->slots) {
        free(g);
        return -ENOMEM;
    }
    (void)pthread_mutex_init(&g->lock, NULL);
    stopper_init(&g->stopper);
    r = -pthread_create(&g->thread, NULL, watchdog, g);
    if (r < 0) {
        conn_guard_free(g);
        return r;
    }
    g->thread_started = true;
    *ret = g;
    return 0;
}

struct conn_guard *conn_guard_free(struct conn_guard *g) {
    if (!g)
        return NULL;
    if (g->thread_started) {
        stopper_stop(&g->stopper);
        (void)pthread_join(g->thread, NULL);
    }
    stopper_done(&g->stopper);
    (void)pthread_mutex_destroy(&g->lock);
    free(g->slots);
    free(g);
    return NULL;
}

unsigned conn_guard_shed_slow(struct conn_guard *g, const void * not, uint64_t min_busy_ns) {
    uint64_t now = clock_monotonic_ns();
    unsigned n = 0;

    (void)pthread_mutex_lock(&g->lock);
    for (unsigned i = 0; i < g->limits.capacity; i++) {
        struct guarded *c = &g->slots[i];

        if (c->used && !c->cut && c->busy && c != not &&now - c->run_since_ns >= min_busy_ns) {
            cut(g, c);
            n++;
        }
    }
    g->cut_slow_reply += n;
    (void)pthread_mutex_unlock(&g->lock);
    return n;
}

void conn_guard_stats(struct conn_guard *g, struct conn_guard_stats *ret) {
    (void)pthread_mutex_lock(&g->lock);
    *ret = (struct conn_guard_stats){.live = g->live,
                                     .cut_deadline = g->cut_deadline,
                                     .cut_idle = g->cut_idle,
                                     .cut_room = g->cut_room,
                                     .cut_slow_reply = g->cut_slow_reply};
    (void)pthread_mutex_unlock(&g->lock);
}
