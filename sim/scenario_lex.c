/* SPDX-License-Identifier: MIT */
#include "scenario_lex.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

int sim_lexer_init(struct sim_lexer *lx, const char *text, const char *origin, char *err,
                   size_t err_size) {
    char *copy = strdup(text);
    if (!copy)
        return -ENOMEM;
    *lx = (struct sim_lexer){
        .text = copy,
        .pos = copy,
        .line = 1,
        .err = err,
        .err_size = err_size,
        .origin = origin ? origin : "<scenario>",
    };
    return 0;
}

void sim_lexer_done(struct sim_lexer *lx) {
    free(lx->text);
    lx->text = lx->pos = NULL;
}

int sim_lexer_fail(const struct sim_lexer *lx, unsigned line, const char *fmt, ...) {
    if (lx->err && lx->err_size > 0) {
        int n = snprintf(lx->err, lx->err_size, "%s:%u: ", lx->origin, line);
        if (n >= 0 && (size_t)n < lx->err_size) {
            va_list ap;
            va_start(ap, fmt);
            (void)vsnprintf(lx->err + n, lx->err_size - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -EINVAL;
}

static bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

static int add_token(struct sim_directive *d, const char *key, const char *value, unsigned line) {
    int r = grow_array(&d->tokens, &d->cap_tokens, d->n_tokens + 1, sizeof(*d->tokens));
    if (r < 0)
        return r;
    d->tokens[d->n_tokens++] = (struct sim_token){.key = key, .value = value, .line = line};
    return 0;
}

/* Reads a quoted value starting after the opening quote and unescapes it in place. Returns
 * the position after the closing quote. */
static int read_quoted(struct sim_lexer *lx, unsigned line, char **p) {
    char *in = *p, *out = *p;
    for (;;) {
        char c = *in;
        if (c == '\0')
            return sim_lexer_fail(lx, line, "unterminated quoted value");
        if (c == '"')
            break;
        if (c == '\\') {
            char e = in[1];
            if (e != '"' && e != '\\')
                return sim_lexer_fail(lx, line, "unknown escape in quoted value");
            c = e;
            in++;
        }
        *out++ = c;
        in++;
    }
    char *after = in + 1;
    *out = '\0';
    if (*after != '\0' && !is_blank(*after) && *after != '#')
        return sim_lexer_fail(lx, line, "text right after a closing quote");
    *p = after;
    return 0;
}

/* Cuts the current physical line out of the text (NUL at its end) and moves past it. */
static char *take_line(struct sim_lexer *lx) {
    char *start = lx->pos, *p = start;
    while (*p && *p != '\n')
        p++;
    if (*p == '\n') {
        *p++ = '\0';
        lx->line++;
    }
    lx->pos = p;
    return start;
}

/* Tokenises one physical line. The first word of a non-continuation line is the keyword. */
static int lex_line(struct sim_lexer *lx, struct sim_directive *d) {
    unsigned line = lx->line;
    char *p = take_line(lx);
    int r;

    for (;;) {
        while (is_blank(*p))
            p++;
        if (*p == '\0' || *p == '#')
            return 0;

        char *word = p, *value = NULL;
        while (*p && !is_blank(*p) && *p != '=' && *p != '#')
            p++;
        if (*p == '=') {
            if (p == word)
                return sim_lexer_fail(lx, line, "'=' without a key");
            *p++ = '\0';
            value = p;
            if (*p == '"') {
                value = ++p;
                r = read_quoted(lx, line, &p);
                if (r < 0)
                    return r;
            } else {
                while (*p && !is_blank(*p) && *p != '#')
                    p++;
            }
        }
        /* terminate the word or value; a '#' right after it still starts a comment */
        bool comment = *p == '#';
        if (*p)
            *p++ = '\0';

        if (!value && !d->keyword) {
            d->keyword = word;
            d->line = line;
        } else {
            r = add_token(d, value ? word : NULL, value ? value : word, line);
            if (r < 0)
                return r;
        }
        if (comment)
            return 0;
    }
}

/* True when the line at p holds only blanks and/or a comment. */
static bool line_is_empty(const char *p) {
    while (is_blank(*p))
        p++;
    return *p == '\0' || *p == '\n' || *p == '#';
}

int sim_lexer_next(struct sim_lexer *lx, struct sim_directive *d) {
    int r;

    d->keyword = NULL;
    d->line = 0;
    d->n_tokens = 0;

    /* find the start of a directive */
    for (;;) {
        if (*lx->pos == '\0')
            return 0;
        if (line_is_empty(lx->pos)) {
            (void)take_line(lx);
            continue;
        }
        if (is_blank(*lx->pos))
            return sim_lexer_fail(lx, lx->line, "indented line does not continue a directive");
        break;
    }

    unsigned first_line = lx->line;
    r = lex_line(lx, d);
    if (r < 0)
        return r;
    if (!d->keyword)
        return sim_lexer_fail(lx, first_line, "line does not start with a keyword");

    /* continuation lines: start with a blank and carry something */
    for (;;) {
        if (*lx->pos == '\0' || !is_blank(*lx->pos))
            break;
        if (line_is_empty(lx->pos)) {
            (void)take_line(lx);
            continue;
        }
        r = lex_line(lx, d);
        if (r < 0)
            return r;
    }
    return 1;
}
