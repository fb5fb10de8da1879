/* SPDX-License-Identifier: MIT */
#include "gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <libdeflate.h>

/* libdeflate level 1: on a 1.4 MB exposition 5.0 ms -> 278 KB, where zlib level 1 took
 * 8.9 ms -> 314 KB (thread CPU, this project's bench machine; docs/PERFORMANCE.md). */
#define GZIP_LEVEL 1

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

int gzip_compress(const char *in, size_t len, char **ret_out, size_t *ret_len) {
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(GZIP_LEVEL);
    size_t cap, n;
    char *out;

    if (!c)
        return -ENOMEM;
    cap = libdeflate_gzip_compress_bound(c, len);
    out = malloc(cap);
    if (!out) {
        libdeflate_free_compressor(c);
        return -ENOMEM;
    }
    /* The bound always fits, so 0 ("did not fit") cannot happen; refuse it all the same. */
    n = libdeflate_gzip_compress(c, in, len, out, cap);
    libdeflate_free_compressor(c);
    if (n == 0) {
        free(out);
        return -EIO;
    }
    *ret_out = out;
    *ret_len = n;
    return 0;
}
