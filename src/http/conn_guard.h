/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>
#include <sys/socket.h>

/*
 * Keeps the server's connection slots from being held by clients that never send a request:
 * the table of live connections, the oldest-waiting-first eviction and the watchdog thread
 * that enforces an absolute deadline on receiving a request's headers.
 *
 * A connection is "waiting" from its accept (or from the end of its previous reply, on
 * keep-alive) until its request's headers are complete, then "busy" until the reply is
 * done. Only waiting connections are ever cut, by shutting their socket down; the server's
 * own thread then sees the end of the stream and closes it. Three rules:
 *
 *  - deadline: a connection waiting longer than header_timeout_ns in all is cut; sending a
 *    byte at a time does not extend it (libmicrohttpd's own timeout restarts at each byte).
 *    One whose bytes sit unread in its socket (every worker busy) is not cut until they
 *    are read: it waits on the server, not on its client;
 *  - per client address (an IPv6 client's /64): when a new connection makes it hold more than
 *    per_client - per_client/4 live connections, the address's oldest waiting one is cut;
 *  - in all: when a new connection leaves fewer than `reserve` of `capacity` slots free, the
 *    oldest waiting connection of any address is cut.
 *
 * Where no waiting connection is there to cut, the oldest one whose run of replies (below)
 * has lasted busy_evict_ns is: a client that slow to read is not let hold the room. Only
 * when an address's every connection is young and busy and it has per_client of them (an
 * IPv6 /64, whose addresses are each within libmicrohttpd's per-address limit) is the new
 * one cut.
 *
 * So a new connection is let in and gets its turn: idle and slow clients cannot keep a
 * scrape or a health probe out, whatever address they come from, and a client's own flood
 * only pushes out its own older connections first.
 * The headroom between the eviction thresholds and the hard limits (libmicrohttpd's
 * connection and per-address limits, set to capacity and per_client) covers connections
 * that are cut but not yet closed.
 *
 * A busy connection has a deadline of its own: its reply must be done reply_timeout_ns
 * after its request came (libmicrohttpd's idle timeout restarts at every segment sent, so
 * a client reading one segment every few seconds would hold its connection, and the body
 * it is sent, for ever). Requests that follow a reply within run_gap_ns (pipelined) are one
 * run, with one deadline from its first request. When the bodies being sent fill their memory
 * budget, the server cuts those that have been sending for a while (conn_guard_shed_slow()).
 *
 * Thread-safe: the callbacks come from the server's worker threads.
 */

struct conn_guard_limits {
    unsigned capacity;          /* connections in all (>= 2) */
    unsigned per_client;        /* per client address (>= 2, <= capacity) */
    unsigned reserve;           /* slots kept free of waiting connections (< capacity) */
    uint64_t header_timeout_ns; /* > 0 */
    uint64_t reply_timeout_ns;  /* a run's first request to its last reply done; 0: none */
    uint64_t run_gap_ns;        /* a request sooner after a reply goes on with its run; 0: 100 ms */
    uint64_t busy_evict_ns;     /* a run this long may be cut to make room; 0: 10 s */
};

struct conn_guard;

/* The client's address as 16 bytes, so that IPv4 and IPv4-mapped IPv6 compare equal. An
 * IPv6 client is its /64: a host is given a whole /64 and may use any address in it. NULL
 * (a socket pair in tests) is all zeros. */
void conn_guard_client_key(const struct sockaddr *addr, uint8_t key[16]);

/* Starts the watchdog thread. Returns 0, -EINVAL for inconsistent limits, -ENOMEM, or the
 * error of pthread_create(). *ret written only on success. */
int conn_guard_new(const struct conn_guard_limits *l, struct conn_guard **ret);
/* Stops the watchdog. Call after the server stopped (no callbacks in flight). Accepts NULL;
 * returns NULL. */
struct conn_guard *conn_guard_free(struct conn_guard *g);

/* A new connection: registers it (waiting) and cuts what the rules above say. Returns the
 * handle to pass to the other calls, or NULL when the table is full (the connection is then
 * cut at once; it cannot happen while capacity is the server's hard limit). */
void *conn_guard_opened(struct conn_guard *g, int fd, const struct sockaddr *addr);
/* Its request's headers are complete (busy), or its reply is done (waiting again). */
void conn_guard_busy(struct conn_guard *g, void *handle);
void conn_guard_waiting(struct conn_guard *g, void *handle);
/* Closed: before its socket is closed, so the watchdog never touches a reused descriptor. */
void conn_guard_closed(struct conn_guard *g, void *handle);

/* Cuts the busy connections (but `not`) that have been busy for at least min_busy_ns:
 * slow readers holding bodies when memory for more is short. Returns how many. */
unsigned conn_guard_shed_slow(struct conn_guard *g, const void * not, uint64_t min_busy_ns);

/* Connections cut so far: by the header deadline (before a first reply, and after one:
 * idle), to make room (either rule), and slow replies (the reply deadline, or shed). */
struct conn_guard_stats {
    uint64_t live, cut_deadline, cut_idle, cut_room, cut_slow_reply;
};
void conn_guard_stats(struct conn_guard *g, struct conn_guard_stats *ret);
