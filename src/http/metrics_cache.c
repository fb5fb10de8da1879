/* SPDX-License-Identifier: MIT */
#include "metrics_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "exposition.h"
#include "gzip.h"
#include "macro.h"
#include "strbuf.h"

/* A gzip scrape renders this much text at a time into the compressor: small enough to stay
 * in the core's cache between the two, large enough that the hand-overs cost nothing. */
#define GZIP_RENDER_CHUNK ((size_t)65536)

/* One kept response: the snapshot it shows (a reference, for identity) and the response
 * (the cache's own reference to it). */
struct kept {
    struct snapshot *snap;
    struct MHD_Response *resp;
};

struct metrics_cache {
    char *metric_prefix;
    size_t budget;
    pthread_mutex_t lock;
    struct kept kept[2]; /* [0] plain, [1] gzip */
    _Atomic size_t live_bytes;
    _Atomic uint64_t renders, served;
    /* The last render's time (UINT64_MAX: none yet) and sizes (plain, gzip), so the next
     * one can report it and reserve its buffer in one go. */
    _Atomic uint64_t last_render_ns;
    _Atomic size_t last_size, last_gzip_size;
    /* The buffer of a body no longer served ([0] plain, [1] gzip), and the compressor,
     * kept for the next render: a fresh 2 MB buffer costs ~500 page faults and an
     * munmap() at every snapshot. */
    pthread_mutex_t spare_lock;
    char *spare[2];
    size_t spare_cap[2];
    struct gzip_stream *spare_gz;
};

/* A body handed to libmicrohttpd; freed, and taken off the budget, with the response. */
struct body {
    struct metrics_cache *cache;
    size_t len;
    size_t cap; /* of data's allocation */
    bool gz;
    char *data;
};

static void body_free(void *cls) {
    struct body *b = cls;
    struct metrics_cache *c = b->cache;

    atomic_fetch_sub(&c->live_bytes, b->len);
    if (b->cap <= c->budget) {
        (void)pthread_mutex_lock(&c->spare_lock);
        if (!c->spare[b->gz]) {
            c->spare[b->gz] = TAKE_PTR(b->data);
            c->spare_cap[b->gz] = b->cap;
        }
        (void)pthread_mutex_unlock(&c->spare_lock);
    }
    free(b->data);
    free(b);
}

static int render_plain(struct metrics_cache *c, const struct snapshot *s,
                        const struct exposition_options *o, char **ret_body, size_t *ret_len,
                        size_t *ret_cap) {
    struct strbuf sb;
    char *body;
    size_t cap;
    int r;

    strbuf_init(&sb);
    (void)pthread_mutex_lock(&c->spare_lock);
    if (c->spare[0]) {
        sb.buf = TAKE_PTR(c->spare[0]);
        sb.cap = c->spare_cap[0];
        sb.buf[0] = '\0';
    }
    (void)pthread_mutex_unlock(&c->spare_lock);
    (void)strbuf_reserve(&sb, atomic_load(&c->last_size) + 4096);
    r = exposition_render(s, o, &sb);
    if (r < 0) {
        strbuf_done(&sb);
        return r;
    }
    atomic_store(&c->last_size, sb.len);
    cap = sb.cap;
    body = strbuf_steal(&sb, ret_len);
    if (!body)
        return -ENOMEM;
    *ret_body = body;
    *ret_cap = cap;
    return 0;
}

static int gzip_piece(void *userdata, const char *data, size_t len) {
    return gzip_stream_write(userdata, data, len);
}

/* Rendered through a small buffer into the compressor: the text of the whole exposition
 * (~1.8 MB at 10 000 series) is never held, nor its pages faulted in at every render. */
static int render_gzip(struct metrics_cache *c, const struct snapshot *s,
                       const struct exposition_options *o, char **ret_body, size_t *ret_len,
                       size_t *ret_cap) {
    _cleanup_(gzip_stream_freep) struct gzip_stream *g = NULL;
    struct exposition_sink sink = {.write = gzip_piece, .chunk = GZIP_RENDER_CHUNK};
    size_t hint = atomic_load(&c->last_gzip_size) + 4096, out_cap;
    struct strbuf sb;
    char *out;
    int r;

    (void)pthread_mutex_lock(&c->spare_lock);
    g = TAKE_PTR(c->spare_gz);
    out = TAKE_PTR(c->spare[1]);
    out_cap = c->spare_cap[1];
    (void)pthread_mutex_unlock(&c->spare_lock);
    if (!g && (r = gzip_stream_new(out ? 0 : hint, &g)) < 0) {
        free(out);
        return r;
    }
    r = gzip_stream_restart(g, out, out_cap, hint);
    if (r < 0)
        return r;
    sink.userdata = g;
    strbuf_init(&sb);
    (void)strbuf_reserve(&sb, GZIP_RENDER_CHUNK + 16384);
    r = exposition_render_to(s, o, &sb, &sink);
    if (r >= 0)
        r = gzip_stream_finish_cap(g, sb.buf, sb.len, ret_body, ret_len, ret_cap);
    strbuf_done(&sb);
    if (r < 0)
        return r;
    atomic_store(&c->last_gzip_size, *ret_len);
    (void)pthread_mutex_lock(&c->spare_lock);
    if (!c->spare_gz)
        c->spare_gz = TAKE_PTR(g);
    (void)pthread_mutex_unlock(&c->spare_lock);
    return 0;
}

/* A new response for s, with its headers; the caller owns its one reference. */
static int render(struct metrics_cache *c, const struct snapshot *s, bool gz,
                  const struct exposition_http *http, const struct web_config *wc,
                  struct MHD_Response **ret) {
    uint64_t t0 = clock_monotonic_ns(), last = atomic_load(&c->last_render_ns);
    struct exposition_options o = {
        .metric_prefix = c->metric_prefix,
        .scrape_duration_valid = last != UINT64_MAX,
        .scrape_duration_seconds = (double)last / 1e9,
        .http = http,
    };
    size_t expected = gz ? atomic_load(&c->last_gzip_size) : atomic_load(&c->last_size);
    struct MHD_Response *resp;
    struct body *b;
    int r;

    /* Over the budget with what this body will likely add: refused before any work. The
     * estimate is reserved at once, so that scrapes arriving together see each other's.
     * With no body alive one is always rendered: an exposition that once outgrew the whole
     * budget (the estimate is the last body's size) was refused for good, even once it
     * shrank; one such render at a time. */
    size_t reserve = MAX(expected, (size_t)1), live = atomic_fetch_add(&c->live_bytes, reserve);

    if (live > 0 && live + reserve > c->budget) {
        atomic_fetch_sub(&c->live_bytes, reserve);
        return -EBUSY;
    }
    b = calloc(1, sizeof(*b));
    if (b) {
        b->cache = c;
        b->gz = gz;
        r = gz ? render_gzip(c, s, &o, &b->data, &b->len, &b->cap)
               : render_plain(c, s, &o, &b->data, &b->len, &b->cap);
    } else
        r = -ENOMEM;
    if (r < 0) {
        free(b);
        atomic_fetch_sub(&c->live_bytes, reserve);
        return r;
    }
    atomic_fetch_add(&c->live_bytes, b->len);
    atomic_fetch_sub(&c->live_bytes, reserve);
    resp = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data, body_free, b);
    if (!resp) {
        body_free(b);
        return -ENOMEM;
    }
    (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, EXPOSITION_CONTENT_TYPE);
    if (gz)
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    /* Both encodings: a shared cache keeps the plain one apart from the gzip one too. */
    (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
    for (int h = 0; h < WEB_HEADERS; h++)
        if (web_config_header(wc, h))
            (void)MHD_add_response_header(resp, web_header_names[h], web_config_header(wc, h));
    atomic_fetch_add(&c->renders, 1);
    atomic_store(&c->last_render_ns, clock_monotonic_ns() - t0);
    *ret = resp;
    return 0;
}

/* Under the lock: queues the kept response when it shows s. */
static bool queue_kept(struct metrics_cache *c, struct MHD_Connection *conn, struct snapshot *s,
                       bool gz, enum MHD_Result *ret_result) {
    struct kept *k = &c->kept[gz];

    if (!k->resp || k->snap != s)
        return false;
    *ret_result = MHD_queue_response(conn, MHD_HTTP_OK, k->resp);
    return true;
}

static void drop_stale(struct metrics_cache *c, const struct snapshot *s) {
    struct kept stale[ARRAY_SIZE(c->kept)] = {0};

    (void)pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < ARRAY_SIZE(c->kept); i++)
        if (c->kept[i].resp && c->kept[i].snap != s) {
            stale[i] = c->kept[i];
            c->kept[i] = (struct kept){0};
        }
    (void)pthread_mutex_unlock(&c->lock);
    /* Outside the lock: the last reference frees a body. */
    for (size_t i = 0; i < ARRAY_SIZE(stale); i++) {
        if (stale[i].resp)
            MHD_destroy_response(stale[i].resp);
        (void)snapshot_unref(stale[i].snap);
    }
}

int metrics_cache_queue(struct metrics_cache *c, struct MHD_Connection *conn, struct snapshot *s,
                        bool gz, const struct exposition_http *http, const struct web_config *wc,
                        enum MHD_Result *ret_result) {
    struct MHD_Response *fresh = NULL, *old_resp = NULL;
    struct snapshot *old_snap = NULL;
    struct kept *k = &c->kept[gz];
    enum MHD_Result result;
    bool hit;
    int r;

    /* Queued under the lock, so that the kept response cannot be released in between
     * (queueing takes libmicrohttpd's reference for the connection). */
    (void)pthread_mutex_lock(&c->lock);
    hit = queue_kept(c, conn, s, gz, &result);
    (void)pthread_mutex_unlock(&c->lock);
    if (!hit) {
        /* The kept bodies of older snapshots are never served again: let them go before
         * this render is weighed against the budget (held, they refused every render of a
         * body over half of it, for good). Those still being sent stay until they are. */
        drop_stale(c, s);
        r = render(c, s, gz, http, wc, &fresh);
        if (r < 0)
            return r;
        (void)pthread_mutex_lock(&c->lock);
        /* Another scrape may have rendered s meanwhile: then either one does. */
        if (k->snap != s) {
            old_resp = k->resp;
            old_snap = k->snap;
            k->resp = fresh;
            k->snap = snapshot_ref(s);
            fresh = NULL; /* the cache's reference now */
        }
        result = MHD_queue_response(conn, MHD_HTTP_OK, k->resp);
        (void)pthread_mutex_unlock(&c->lock);
        /* Dropped outside the lock: the last reference frees a body. */
        if (fresh)
            MHD_destroy_response(fresh);
        if (old_resp)
            MHD_destroy_response(old_resp);
        (void)snapshot_unref(old_snap);
    }
    atomic_fetch_add(&c->served, 1);
    *ret_result = result;
    return 0;
}

int metrics_cache_new(const char *metric_prefix, size_t budget, struct metrics_cache **ret) {
    struct metrics_cache *c = calloc(1, sizeof(*c));

    if (!c)
        return -ENOMEM;
    c->metric_prefix = metric_prefix ? strdup(metric_prefix) : NULL;
    if (metric_prefix && !c->metric_prefix) {
        free(c);
        return -ENOMEM;
    }
    c->budget = budget;
    (void)pthread_mutex_init(&c->lock, NULL);
    (void)pthread_mutex_init(&c->spare_lock, NULL);
    atomic_init(&c->live_bytes, 0);
    atomic_init(&c->renders, 0);
    atomic_init(&c->served, 0);
    atomic_init(&c->last_render_ns, UINT64_MAX);
    atomic_init(&c->last_size, 0);
    atomic_init(&c->last_gzip_size, 0);
    *ret = c;
    return 0;
}

struct metrics_cache *metrics_cache_free(struct metrics_cache *c) {
    if (!c)
        return NULL;
    for (size_t i = 0; i < ARRAY_SIZE(c->kept); i++) {
        if (c->kept[i].resp)
            MHD_destroy_response(c->kept[i].resp);
        (void)snapshot_unref(c->kept[i].snap);
    }
    (void)pthread_mutex_destroy(&c->lock);
    (void)pthread_mutex_destroy(&c->spare_lock);
    for (size_t i = 0; i < ARRAY_SIZE(c->spare); i++)
        free(c->spare[i]);
    gzip_stream_free(c->spare_gz);
    free(c->metric_prefix);
    free(c);
    return NULL;
}

void metrics_cache_stats(struct metrics_cache *c, struct metrics_cache_stats *ret) {
    *ret = (struct metrics_cache_stats){
        .renders = atomic_load(&c->renders),
        .served = atomic_load(&c->served),
        .live_bytes = atomic_load(&c->live_bytes),
    };
}
