/* SPDX-License-Identifier: MIT */
#include "gzip.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <isa-l/igzip_lib.h>

#include "macro.h"

/* ISA-L's igzip level 1: on a 1.66 MB exposition 2.1 ms -> 297 KB, where libdeflate's
 * level 1 (its fastest) took 5.4 ms -> 298 KB and zlib's 8.9 ms (best of 30, this
 * project's bench machine; bench/notes.md). */
#define GZIP_LEVEL 1
/* Output grows in steps of at least this much; pieces of input at most this big (the
 * compressor counts in 32 bits). */
#define GZIP_OUT_MIN ((size_t)16384)
#define GZIP_IN_MAX ((size_t)1 << 30)

static const char *skip_space(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* "q=0", "q=0.", "q=0.000": refused. Anything else (q=0.5, q=1, missing) allows it. */
static bool q_is_zero(const char *p, const char *end) {
    p = skip_space(p, end);
    if (end - p < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=')
        return false;
    p += 2;
    if (p >= end || *p != '0')
        return false;
    for (p++; p < end && (*p == '.' || *p == '0'); p++)
        ;
    return skip_space(p, end) == end;
}

bool gzip_accepted(const char *ae) {
    if (!ae)
        return false;
    for (const char *item = ae; *item;) {
        const char *end = item + strcspn(item, ","), *tok = skip_space(item, end);
        size_t n = strcspn(tok, " \t;,");
        const char *param = tok + n;

        if ((n == 4 && strncasecmp(tok, "gzip", 4) == 0) ||
            (n == 6 && strncasecmp(tok, "x-gzip", 6) == 0)) {
            bool refused = false;

            /* Parameters: ";q=..." possibly among others. */
            while (param < end && (param = memchr(param, ';', (size_t)(end - param)))) {
                const char *next = memchr(param + 1, ';', (size_t)(end - param - 1));

                refused |= q_is_zero(param + 1, next ? next : end);
                param = next ? next : end;
            }
            if (!refused)
                return true;
        }
        item = *end ? end + 1 : end;
    }
    return false;
}

struct gzip_stream {
    struct isal_zstream z;
    uint8_t *out;
    size_t out_len, out_cap;
    bool finished;
    /* Level 1's work area. The small size: on a 1.7 MB exposition it compresses as fast
     * and as well as the default (282 KiB) in a third of the memory. */
    uint8_t level_buf[ISAL_DEF_LVL1_SMALL];
};

static void stream_init(struct gzip_stream *g) {
    isal_deflate_init(&g->z);
    g->z.level = GZIP_LEVEL;
    g->z.level_buf = g->level_buf;
    g->z.level_buf_size = sizeof(g->level_buf);
    g->z.gzip_flag = IGZIP_GZIP;
    g->out_len = 0;
    g->finished = false;
}

int gzip_stream_new(size_t out_hint, struct gzip_stream **ret) {
    /* Not zeroed: isal_deflate_init() sets the state and the work area needs no init. */
    struct gzip_stream *g = malloc(sizeof(*g));

    if (!g)
        return -ENOMEM;
    stream_init(g);
    g->out = NULL;
    g->out_cap = 0;
    if (grow_array(&g->out, &g->out_cap, MAX(out_hint, GZIP_OUT_MIN), 1) < 0) {
        free(g);
        return -ENOMEM;
    }
    *ret = g;
    return 0;
}

int gzip_stream_restart(struct gzip_stream *g, char *out, size_t out_cap, size_t out_hint) {
    stream_init(g);
    if (out) {
        free(g->out);
        g->out = (uint8_t *)out;
        g->out_cap = out_cap;
    }
    if (g->out_cap < out_hint && grow_array(&g->out, &g->out_cap, out_hint, 1) < 0)
        return -ENOMEM;
    return 0;
}

struct gzip_stream *gzip_stream_free(struct gzip_stream *g) {
    if (g) {
        free(g->out);
        free(g);
    }
    return NULL;
}

void gzip_stream_freep(struct gzip_stream **p) {
    *p = gzip_stream_free(*p);
}

/* One call of the compressor on the input it was given, into the room left in the output
 * (grown first when short). */
static int deflate_step(struct gzip_stream *g) {
    size_t room;

    if (g->out_cap - g->out_len < GZIP_OUT_MIN &&
        grow_array(&g->out, &g->out_cap, g->out_len + GZIP_OUT_MIN, 1) < 0)
        return -ENOMEM;
    room = MIN(g->out_cap - g->out_len, (size_t)UINT32_MAX);
    g->z.next_out = g->out + g->out_len;
    g->z.avail_out = (uint32_t)room;
    if (isal_deflate(&g->z) != COMP_OK)
        return -EIO;
    g->out_len += room - g->z.avail_out;
    return 0;
}

/* Compresses data[0..len) (in pieces the compressor's 32-bit counts can take) and, when
 * last, ends the stream: until the compressor has written its trailer. */
static int deflate_all(struct gzip_stream *g, const char *data, size_t len, bool last) {
    int r;

    if (g->finished)
        return -EINVAL;
    do {
        size_t n = MIN(len, GZIP_IN_MAX);

        g->z.next_in = (uint8_t *)(uintptr_t)data;
        g->z.avail_in = (uint32_t)n;
        g->z.end_of_stream = last && n == len;
        do { /* room left over means it took all it was given */
            r = deflate_step(g);
            if (r < 0)
                return r;
        } while (g->z.avail_in > 0 || g->z.avail_out == 0);
        data += n;
        len -= n;
    } while (len > 0);
    /* The trailer may need more calls once the input is taken; each one writes. */
    while (last && g->z.internal_state.state != ZSTATE_END) {
        size_t before = g->out_len;
        int state = (int)g->z.internal_state.state;

        r = deflate_step(g);
        if (r < 0)
            return r;
        if (g->out_len == before && (int)g->z.internal_state.state == state)
            return -EIO; /* no progress: never loop forever on a compressor's fault */
    }
    return 0;
}

int gzip_stream_write(struct gzip_stream *g, const char *data, size_t len) {
    return deflate_all(g, data, len, false);
}

int gzip_stream_finish_cap(struct gzip_stream *g, const char *data, size_t len, char **ret_out,
                           size_t *ret_len, size_t *ret_cap) {
    int r = deflate_all(g, data, len, true);

    if (r < 0)
        return r;
    g->finished = true;
    *ret_out = (char *)TAKE_PTR(g->out);
    *ret_len = g->out_len;
    if (ret_cap)
        *ret_cap = g->out_cap;
    g->out_len = g->out_cap = 0;
    return 0;
}

int gzip_stream_finish(struct gzip_stream *g, const char *data, size_t len, char **ret_out,
                       size_t *ret_len) {
    return gzip_stream_finish_cap(g, data, len, ret_out, ret_len, NULL);
}
