/* SPDX-License-Identifier: MIT */
#include "strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_init(struct strbuf *sb) {
    *sb = (struct strbuf){0};
}

void strbuf_done(struct strbuf *sb) {
    free(sb->buf);
    strbuf_init(sb);
}

void strbuf_reset(struct strbuf *sb) {
    sb->len = 0;
    sb->error = 0;
    if (sb->buf)
        sb->buf[0] = '\0';
}

int strbuf_reserve(struct strbuf *sb, size_t extra) {
    size_t need, cap;
    char *p;

    if (sb->error)
        return sb->error;
    if (extra > SIZE_MAX - sb->len - 1)
        return sb->error = -ENOMEM;
    need = sb->len + extra + 1;
    if (need <= sb->cap)
        return 0;
    cap = sb->cap ? sb->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    p = realloc(sb->buf, cap);
    if (!p)
        return sb->error = -ENOMEM;
    /* A fresh allocation must be a valid empty string too (strbuf_steal relies on it). */
    p[sb->len] = '\0';
    sb->buf = p;
    sb->cap = cap;
    return 0;
}

void strbuf_append_grow(struct strbuf *sb, const char *s, size_t len) {
    if (strbuf_reserve(sb, len) < 0)
        return;
    memcpy(sb->buf + sb->len, s, len);
    sb->len += len;
    sb->buf[sb->len] = '\0';
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...) {
    va_list ap;
    int n;

    if (strbuf_reserve(sb, 64) < 0)
        return;
    va_start(ap, fmt);
    n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        sb->error = -EINVAL;
        return;
    }
    if ((size_t)n >= sb->cap - sb->len) {
        if (strbuf_reserve(sb, (size_t)n) < 0)
            return;
        va_start(ap, fmt);
        (void)vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
        va_end(ap);
    }
    sb->len += (size_t)n;
}

void strbuf_put_u64(struct strbuf *sb, unsigned long long v) {
    char tmp[24];
    size_t i = sizeof(tmp);

    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    strbuf_append(sb, tmp + i, sizeof(tmp) - i);
}

void strbuf_put_micro(struct strbuf *sb, unsigned long long micro) {
    char frac[7];
    unsigned long long f = micro % 1000000;

    strbuf_put_u64(sb, micro / 1000000);
    for (int i = 5; i >= 0; i--) {
        frac[i] = (char)('0' + f % 10);
        f /= 10;
    }
    frac[6] = '\0';
    strbuf_putc(sb, '.');
    strbuf_append(sb, frac, 6);
}

char *strbuf_steal(struct strbuf *sb, size_t *ret_len) {
    char *p;

    if (sb->error || strbuf_reserve(sb, 0) < 0) {
        strbuf_done(sb);
        return NULL;
    }
    p = sb->buf;
    if (ret_len)
        *ret_len = sb->len;
    strbuf_init(sb);
    return p;
}

int strbuf_error(const struct strbuf *sb) {
    return sb->error;
}
