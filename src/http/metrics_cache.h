/* SPDX-License-Identifier: MIT */
#pragma once

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exposition.h"
#include "snapshot.h"
#include "webconfig.h"

/*
 * Render once, serve many: the /metrics response of a snapshot, plain and gzip, is
 * rendered by the first scrape that asks for it and kept as a libmicrohttpd response, which
 * every later scrape of the same snapshot queues as is (libmicrohttpd counts the
 * references; the body is freed with the last). A new snapshot replaces the kept ones.
 *
 * Memory is bounded: bodies still referenced (kept, or being sent to clients, of this
 * snapshot or older ones) may hold at most `budget` bytes together; a scrape that would
 * render past it gets -EBUSY (the server answers 503). Scrapes already served are not cut.
 * Beside them, the buffer of one body no longer served per encoding and the compressor are
 * kept for the next render (the peak is the same: the kept body and the new one).
 *
 * Thread-safe.
 */

struct metrics_cache;

/* metric_prefix: NULL for the exposition's default (copied). Returns 0, -ENOMEM. */
int metrics_cache_new(const char *metric_prefix, size_t budget, struct metrics_cache **ret);
/* Call after the server stopped (no response of the cache queued any more). Accepts NULL;
 * returns NULL. */
struct metrics_cache *metrics_cache_free(struct metrics_cache *c);

/*
 * Queues the 200 response with s's exposition (gzip-encoded when `gzip`) on conn, rendering
 * it when s has not been rendered in that encoding yet (with the server's counters `http`
 * and the headers of wc's http_server_config; either may be NULL). Returns 0 with libmicrohttpd's
 * answer in *ret_result, -EBUSY over the budget, -ENOMEM, or a rendering error (nothing
 * queued then).
 */
int metrics_cache_queue(struct metrics_cache *c, struct MHD_Connection *conn, struct snapshot *s,
                        bool gzip, const struct exposition_http *http, const struct web_config *wc,
                        enum MHD_Result *ret_result);

struct metrics_cache_stats {
    uint64_t renders;  /* bodies rendered */
    uint64_t served;   /* responses queued, rendered or shared */
    size_t live_bytes; /* bodies alive now */
};
void metrics_cache_stats(struct metrics_cache *c, struct metrics_cache_stats *ret);
