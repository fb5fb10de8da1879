/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"
#include "strbuf.h"

/*
 * Renders a snapshot as Prometheus text format 0.0.4 (Content-Type
 * EXPOSITION_CONTENT_TYPE). Pure: no I/O, no clock, no logging; the only allocations are
 * the output buffer and two per-render scratch arrays, never one per series.
 * docs/METRICS.md describes every family.
 */

#define EXPOSITION_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define EXPOSITION_DEFAULT_PREFIX "joulestat_gpu_process"
/* my-gpu-exporter's prefix: with it, the per-process families use that exporter's exact
 * label names and order, and its two per-GPU families are added. */
#define EXPOSITION_COMPAT_PREFIX "my_gpu_process"

struct exposition_options {
    /* Per-process family prefix. NULL: the snapshot's metric_prefix, then the default. */
    const char *metric_prefix;
    /* Value of joulestat_build_info{version}. NULL: JOULESTAT_VERSION. */
    const char *version;
    /* The previous scrape's render time, kept by the server; not emitted when invalid. */
    bool scrape_duration_valid;
    double scrape_duration_seconds;
    /* The HTTP server's own counters at render time; NULL: not emitted. */
    const struct exposition_http *http;
};

/* What the server's connection guard and password checks did (server.c fills it). */
struct exposition_http {
    uint64_t connections_open;
    uint64_t closed_header_deadline; /* waited past the header deadline */
    uint64_t closed_idle;            /* waited past it after a reply: keep-alive, nothing asked */
    uint64_t closed_make_room;       /* the oldest waiting, cut for a new connection */
    uint64_t closed_slow_reply;      /* busy past the reply deadline, or shed */
    uint64_t auth_busy;              /* password checks refused: all bcrypt threads busy */
};

/*
 * Appends the exposition of s to out. o may be NULL (defaults).
 * Returns the number of series written (>= 0), -EINVAL for an invalid metric prefix, or
 * -ENOMEM (then out holds a partial render and its sticky error).
 */
int exposition_render(const struct snapshot *s, const struct exposition_options *o,
                      struct strbuf *out);

/* Takes a render in pieces, in order: 0, or a negative errno that ends the render. */
struct exposition_sink {
    int (*write)(void *userdata, const char *data, size_t len);
    void *userdata;
    size_t chunk; /* hand a piece over once about this many bytes are buffered */
};

/*
 * exposition_render() through a small buffer: at the start of a series, once out holds
 * sink->chunk bytes, they are handed to sink->write and out is emptied (so a piece runs at
 * most one series past the chunk). On return out holds the last piece, not handed over.
 * Returns as exposition_render(), or the sink's error.
 */
int exposition_render_to(const struct snapshot *s, const struct exposition_options *o,
                         struct strbuf *out, const struct exposition_sink *sink);
