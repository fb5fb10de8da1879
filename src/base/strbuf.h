/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

/*
 * A growable, always NUL-terminated buffer. An allocation failure is sticky: later appends
 * do nothing and strbuf_error() returns -ENOMEM, so a long render checks once at the end
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
void strbuf_append(struct strbuf *sb, const char *s, size_t len);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_putc(struct strbuf *sb, char c);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) _printf_(2, 3);
void strbuf_put_u64(struct strbuf *sb, unsigned long long v);
/* Writes micro-units as a decimal with six fraction digits: 1234567 -> "1.234567". */
void strbuf_put_micro(struct strbuf *sb, unsigned long long micro);
/* Gives the buffer away (caller frees) and leaves sb empty. NULL on a sticky error. */
char *strbuf_steal(struct strbuf *sb, size_t *ret_len);
int strbuf_error(const struct strbuf *sb);
