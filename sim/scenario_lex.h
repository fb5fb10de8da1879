/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The scenario format's lexical layer: splits text into directives. A directive is a line
 * "keyword [positional] key=value ...", continued by following lines that start with
 * whitespace. Values may be double-quoted ("a b", with \" and \\ escapes). '#' starts a
 * comment outside quotes. Parsing happens in place on a private copy of the text.
 */

#include <stddef.h>

struct sim_token {
    const char *key;   /* NULL for a positional word */
    const char *value; /* the word itself for a positional */
    unsigned line;
};

struct sim_directive {
    const char *keyword;
    unsigned line;
    size_t n_tokens;
    size_t cap_tokens;
    struct sim_token *tokens;
};

struct sim_lexer {
    char *text; /* owned copy, cut up in place */
    char *pos;
    unsigned line;
    char *err;
    size_t err_size;
    const char *origin;
};

/* Copies text. Returns 0 or -ENOMEM. */
int sim_lexer_init(struct sim_lexer *lx, const char *text, const char *origin, char *err,
                   size_t err_size);
void sim_lexer_done(struct sim_lexer *lx);

/*
 * Reads the next directive into d (tokens array reused between calls). Returns 1 when a
 * directive was read, 0 at the end, -EINVAL (message written) on a lexical error, -ENOMEM.
 */
int sim_lexer_next(struct sim_lexer *lx, struct sim_directive *d);

/* Formats "origin:line: message" into the lexer's error buffer and returns -EINVAL. */
int sim_lexer_fail(const struct sim_lexer *lx, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
