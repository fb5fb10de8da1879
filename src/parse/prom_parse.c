/* SPDX-License-Identifier: MIT */
#include "prom_parse.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cursor over one line. */
struct cursor {
    const char *p, *end;
};

static bool at_end(const struct cursor *c) {
    return c->p >= c->end;
}

static void skip_blanks(struct cursor *c) {
    while (!at_end(c) && (*c->p == ' ' || *c->p == '\t'))
        c->p++;
}

static bool name_char(char ch, bool first, bool colon) {
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_')
        return true;
    if (colon && ch == ':')
        return true;
    return !first && ch >= '0' && ch <= '9';
}

/* A metric name (colons allowed) or a label name into dst[PROM_NAME_MAX], cut when longer. */
static int read_name(struct cursor *c, bool colon, char *dst) {
    size_t n = 0;

    if (at_end(c) || !name_char(*c->p, true, colon))
        return -EBADMSG;
    while (!at_end(c) && name_char(*c->p, n == 0, colon)) {
        if (n + 1 < PROM_NAME_MAX)
            dst[n++] = *c->p;
        c->p++;
    }
    dst[n] = '\0';
    return 0;
}

/* A quoted label value: \\, \" and \n unescaped (any other escape kept as written). */
static int read_value(struct cursor *c, char *dst) {
    size_t n = 0;

    if (at_end(c) || *c->p != '"')
        return -EBADMSG;
    c->p++;
    for (;;) {
        char ch;

        if (at_end(c))
            return -EBADMSG; /* no closing quote */
        ch = *c->p++;
        if (ch == '"')
            break;
        if (ch == '\\') {
            char next;

            if (at_end(c))
                return -EBADMSG;
            next = *c->p++;
            if (next == 'n')
                ch = '\n';
            else if (next == '\\' || next == '"')
                ch = next;
            else {
                /* Not an escape of the format: keep both bytes. */
                if (n + 2 < PROM_VALUE_MAX) {
                    dst[n++] = '\\';
                    dst[n++] = next;
                }
                continue;
            }
        }
        if (n + 1 < PROM_VALUE_MAX)
            dst[n++] = ch;
    }
    dst[n] = '\0';
    return 0;
}

static int read_labels(struct cursor *c, struct prom_sample *s) {
    c->p++; /* '{' */
    for (;;) {
        struct prom_label scratch, *l;
        int r;

        skip_blanks(c);
        if (at_end(c))
            return -EBADMSG;
        if (*c->p == '}') {
            c->p++;
            return 0;
        }
        l = s->n_labels < PROM_LABELS_MAX ? &s->labels[s->n_labels] : &scratch;
        r = read_name(c, false, l->name);
        if (r < 0)
            return r;
        skip_blanks(c);
        if (at_end(c) || *c->p != '=')
            return -EBADMSG;
        c->p++;
        skip_blanks(c);
        r = read_value(c, l->value);
        if (r < 0)
            return r;
        if (l != &scratch)
            s->n_labels++;
        skip_blanks(c);
        if (!at_end(c) && *c->p == ',')
            c->p++; /* a trailing comma before '}' is allowed */
        else if (at_end(c) || *c->p != '}')
            return -EBADMSG;
    }
}

/* The next blank-separated token, NUL-terminated into buf[size]; -EBADMSG when too long. */
static int read_token(struct cursor *c, char *buf, size_t size) {
    size_t n = 0;

    skip_blanks(c);
    while (!at_end(c) && *c->p != ' ' && *c->p != '\t') {
        if (n + 1 >= size)
            return -EBADMSG;
        buf[n++] = *c->p++;
    }
    buf[n] = '\0';
    return n > 0 ? 0 : -EBADMSG;
}

static int parse_value(const char *tok, double *ret) {
    char *end;
    double v;

    /* The format's spellings; strtod takes these and other forms of its own too. */
    if (strcmp(tok, "NaN") == 0)
        v = (double)NAN;
    else if (strcmp(tok, "+Inf") == 0 || strcmp(tok, "Inf") == 0)
        v = HUGE_VAL;
    else if (strcmp(tok, "-Inf") == 0)
        v = -HUGE_VAL;
    else {
        if (!((tok[0] >= '0' && tok[0] <= '9') || tok[0] == '-' || tok[0] == '+' || tok[0] == '.'))
            return -EBADMSG;
        errno = 0;
        v = strtod(tok, &end);
        if (*end != '\0' || (errno == ERANGE && isinf(v)))
            return -EBADMSG;
    }
    *ret = v;
    return 0;
}

static int parse_timestamp(const char *tok, long long *ret) {
    char *end;
    long long v;

    if (!((tok[0] >= '0' && tok[0] <= '9') || tok[0] == '-'))
        return -EBADMSG;
    errno = 0;
    v = strtoll(tok, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return -EBADMSG;
    *ret = v;
    return 0;
}

/* prom_parse_line() into *s directly: s is written to even when the line is bad. */
static int parse_line_into(const char *line, size_t len, struct prom_sample *sp) {
    struct cursor c = {line, line + len};
    char tok[64];
    int r;

    if (len > 0 && line[len - 1] == '\r')
        c.end--;
    skip_blanks(&c);
    if (at_end(&c) || *c.p == '#')
        return 0;
    sp->n_labels = 0;
    sp->has_timestamp = false;
    sp->timestamp_ms = 0;
    r = read_name(&c, true, sp->name);
    if (r < 0)
        return r;
    if (!at_end(&c) && *c.p == '{') {
        r = read_labels(&c, sp);
        if (r < 0)
            return r;
    }
    if (at_end(&c) || (*c.p != ' ' && *c.p != '\t'))
        return -EBADMSG; /* the value must be set apart */
    r = read_token(&c, tok, sizeof(tok));
    if (r < 0 || parse_value(tok, &sp->value) < 0)
        return -EBADMSG;
    skip_blanks(&c);
    if (!at_end(&c)) {
        r = read_token(&c, tok, sizeof(tok));
        if (r < 0 || parse_timestamp(tok, &sp->timestamp_ms) < 0)
            return -EBADMSG;
        sp->has_timestamp = true;
        skip_blanks(&c);
        if (!at_end(&c))
            return -EBADMSG;
    }
    return 1;
}

int prom_parse_line(const char *line, size_t len, struct prom_sample *ret) {
    struct prom_sample s;
    int r = parse_line_into(line, len, &s);

    if (r <= 0)
        return r;
    /* Only the labels in use: a sample is mostly empty label slots. */
    memcpy(ret->name, s.name, sizeof(s.name));
    ret->n_labels = s.n_labels;
    memcpy(ret->labels, s.labels, s.n_labels * sizeof(s.labels[0]));
    ret->value = s.value;
    ret->has_timestamp = s.has_timestamp;
    ret->timestamp_ms = s.timestamp_ms;
    return 1;
}

const char *prom_sample_label(const struct prom_sample *s, const char *name) {
    for (size_t i = 0; i < s->n_labels; i++)
        if (strcmp(s->labels[i].name, name) == 0)
            return s->labels[i].value;
    return NULL;
}

int prom_parse_text(const char *text, size_t len, prom_sample_fn fn, void *userdata,
                    size_t *ret_bad) {
    struct prom_sample s;
    size_t bad = 0, pos = 0;
    int n = 0;

    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t line_len = nl ? (size_t)(nl - (text + pos)) : len - pos;
        int r = parse_line_into(text + pos, line_len, &s);

        pos += line_len + (nl ? 1 : 0);
        if (r < 0) {
            bad++;
            continue;
        }
        if (r == 0)
            continue;
        r = fn(&s, userdata);
        if (r < 0)
            return r;
        if (n < INT_MAX)
            n++;
    }
    if (ret_bad)
        *ret_bad = bad;
    return n;
}
