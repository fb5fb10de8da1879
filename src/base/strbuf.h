/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "macro.h"

/*
 * A growable, always NUL-terminated buffer. An error is sticky: after an allocation failure
 * (or an error its user stores in `error`, such as a failed write of what it held) later
 * appends do nothing and strbuf_error() returns it, so a long render checks once at the end
 * instead of after every append, and output is never silently truncated.
 */
struct strbuf {
    char *buf;
    size_t len;
    size_t cap;
    int error;
};

void strbuf_init(struct strbuf *sb);
void strbuf_done(struct strbuf *sb);
/* Empties without releasing memory, so a reused buffer does not allocate. */
void strbuf_reset(struct strbuf *sb);
int strbuf_reserve(struct strbuf *sb, size_t extra);
/* strbuf_append() when the buffer must grow (or is in error). */
void strbuf_append_grow(struct strbuf *sb, const char *s, size_t len);

/* Inline: a render makes ~20 appends per series, nearly all into room already there. */
static inline void strbuf_append(struct strbuf *sb, const char *s, size_t len) {
    if (len < sb->cap - sb->len && !sb->error) { /* cap > len always; room for the NUL */
        memcpy(sb->buf + sb->len, s, len);
        sb->len += len;
        sb->buf[sb->len] = '\0';
        return;
    }
    strbuf_append_grow(sb, s, len);
}

static inline void strbuf_puts(struct strbuf *sb, const char *s) {
    strbuf_append(sb, s, strlen(s));
}

static inline void strbuf_putc(struct strbuf *sb, char c) {
    strbuf_append(sb, &c, 1);
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...) _printf_(2, 3);
void strbuf_put_u64(struct strbuf *sb, unsigned long long v);
/* Writes micro-units as a decimal with six fraction digits: 1234567 -> "1.234567". */
void strbuf_put_micro(struct strbuf *sb, unsigned long long micro);
/* Gives the buffer away (caller frees) and leaves sb empty. NULL on a sticky error. */
char *strbuf_steal(struct strbuf *sb, size_t *ret_len);
int strbuf_error(const struct strbuf *sb);
