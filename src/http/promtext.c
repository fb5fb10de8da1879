/* SPDX-License-Identifier: MIT */
#include "promtext.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool name_char(char c, bool first) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':')
        return true;
    return !first && c >= '0' && c <= '9';
}

bool promtext_name_valid(const char *name) {
    if (!name || !*name)
        return false;
    for (const char *p = name; *p; p++)
        if (!name_char(*p, p == name))
            return false;
    return true;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there are not one
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_sequence_len(const unsigned char *s, size_t avail) {
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n > avail)
        return 0;
    /* Only the second byte has a narrowed range; the rest are plain continuations. */
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* A byte copied as it is: ASCII except NUL (the end), '\\', '"' and newline. */
static inline bool plain_byte(unsigned char c) {
    return c - 1U < 0x7FU && c != '\\' && c != '"' && c != '\n';
}

#define BYTES(b) (0x0101010101010101ULL * (b))

/* Nonzero exactly when some byte of w is 0. */
static inline uint64_t zero_byte(uint64_t w) {
    return (w - BYTES(0x01)) & ~w & BYTES(0x80);
}

/* i advanced over whole 8-byte words of plain bytes (read within max only): the scan of
 * a render's label values, ~1 MB at 10 000 series, at a word a step instead of a byte. */
static size_t skip_plain_words(const unsigned char *s, size_t i, size_t max) {
    while (max - i >= 8) {
        uint64_t w;

        memcpy(&w, s + i, sizeof(w));
        if ((w & BYTES(0x80)) || zero_byte(w) || zero_byte(w ^ BYTES('\\')) ||
            zero_byte(w ^ BYTES('"')) || zero_byte(w ^ BYTES('\n')))
            break;
        i += 8;
    }
    return i;
}

void promtext_put_label_value(struct strbuf *sb, const char *v, size_t max) {
    static const char replacement[] = "\xEF\xBF\xBD";
    const unsigned char *s = (const unsigned char *)v;
    size_t i = 0, run = 0;

    /* One pass, no strnlen(): most values are empty or plain ASCII, copied in one append.
     * A NUL ends the value; inside a UTF-8 sequence it fails the continuation check, so
     * the sequence is cut there as if the value had been measured first. */
    for (;;) {
        unsigned char c;
        size_t n;

        if (max != SIZE_MAX) /* a fixed-size field: all of it is readable */
            i = skip_plain_words(s, i, max);
        while (i < max && plain_byte(s[i]))
            i++;
        if (i >= max || s[i] == '\0')
            break;
        c = s[i];
        if (c >= 0x80) {
            n = utf8_sequence_len(s + i, max - i);
            if (n > 0) {
                i += n;
                continue;
            }
        }
        strbuf_append(sb, v + run, i - run);
        if (c == '\\')
            strbuf_append(sb, "\\\\", 2);
        else if (c == '"')
            strbuf_append(sb, "\\\"", 2);
        else if (c == '\n')
            strbuf_append(sb, "\\n", 2);
        else
            strbuf_append(sb, replacement, sizeof(replacement) - 1);
        run = ++i;
    }
    strbuf_append(sb, v + run, i - run);
}

static bool same_double(double a, double b) {
    return !(a < b) && !(a > b);
}

#define EXACT_INT_LIMIT 9007199254740992.0 /* 2^53 */

/* x rounded to the nearest integer, ties to even (what nearbyint() does in the default
 * rounding mode), for 0 <= x < 2^53, where x - trunc(x) is exact; x itself otherwise.
 * Written out so the daemon does not map libm (300 KiB of resident pages) for one call. */
static double round_half_even(double x) {
    unsigned long long i;
    double frac;

    if (!(x >= 0 && x < EXACT_INT_LIMIT))
        return x;
    i = (unsigned long long)x;
    frac = x - (double)i;
    if (frac > 0.5 || (same_double(frac, 0.5) && (i & 1)))
        i++;
    return (double)i;
}

void promtext_put_double(struct strbuf *sb, double v) {
    double mag = fabs(v), scaled = round_half_even(mag * 1e6);
    char tmp[40];

    if (mag < EXACT_INT_LIMIT && same_double(mag, (double)(unsigned long long)mag)) {
        if (v < 0)
            strbuf_putc(sb, '-');
        strbuf_put_u64(sb, (unsigned long long)mag);
        return;
    }
    if (scaled < EXACT_INT_LIMIT && same_double(scaled / 1e6, mag)) {
        unsigned long long micro = (unsigned long long)scaled, frac = micro % 1000000;
        char digits[6];
        size_t n = 6;

        if (v < 0)
            strbuf_putc(sb, '-');
        strbuf_put_u64(sb, micro / 1000000);
        for (int i = 5; i >= 0; i--) {
            digits[i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        while (n > 1 && digits[n - 1] == '0')
            n--;
        strbuf_putc(sb, '.');
        strbuf_append(sb, digits, n);
        return;
    }
    (void)snprintf(tmp, sizeof(tmp), "%.15g", v);
    if (!same_double(strtod(tmp, NULL), v))
        (void)snprintf(tmp, sizeof(tmp), "%.17g", v);
    strbuf_puts(sb, tmp);
}
