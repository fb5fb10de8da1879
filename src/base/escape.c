/* SPDX-License-Identifier: MIT */
#include "escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

/* Length of the well-formed UTF-8 sequence at s (2..4), or 0. Overlong forms, surrogates
 * and code points past U+10FFFF are not well-formed. Sets *cp to the code point. */
static size_t utf8_sequence(const unsigned char *s, uint32_t *cp) {
    size_t n;
    uint32_t c, min;

    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2, c = s[0] & 0x1fu, min = 0x80;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3, c = s[0] & 0x0fu, min = 0x800;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4, c = s[0] & 0x07u, min = 0x10000;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        c = (c << 6) | (s[i] & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

const char *escape_terminal(const char *s, char *buf, size_t size) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t used = 0;

    while (*p) {
        char piece[16];
        size_t len = 0, n = 0;
        uint32_t cp = 0;

        if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
            piece[len++] = (char)*p;
            n = 1;
        } else if (*p == '\\') {
            piece[len++] = '\\';
            piece[len++] = '\\';
            n = 1;
        } else if (*p >= 0x80 && (n = utf8_sequence(p, &cp)) > 0 && cp >= 0xa0) {
            memcpy(piece, p, n);
            len = n;
        } else {
            /* A control character, or one byte of what is not well-formed UTF-8 (or a C1
             * control, all of whose bytes are escaped). */
            n = n ? n : 1;
            for (size_t i = 0; i < n; i++) {
                piece[len++] = '\\';
                piece[len++] = 'x';
                piece[len++] = hex[p[i] >> 4];
                piece[len++] = hex[p[i] & 0xf];
            }
        }
        if (used + len >= size)
            break;
        memcpy(buf + used, piece, len);
        used += len;
        p += n;
    }
    buf[used] = '\0';
    return buf;
}

size_t terminal_fit_columns(const char *s, int cols, int *ret_used) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    int used = 0;

    while (p[i]) {
        uint32_t cp = p[i];
        size_t n = p[i] >= 0x80 ? utf8_sequence(p + i, &cp) : 1;
        int w = 1;

        if (n == 0) /* not from escape_terminal(): a byte, a column */
            n = 1;
        else if (cp >= 0x80 && cp <= (uint32_t)WCHAR_MAX)
            w = wcwidth((wchar_t)cp) < 0 ? 1 : wcwidth((wchar_t)cp);
        if (used + w > cols)
            break;
        used += w;
        i += n;
    }
    *ret_used = used;
    return i;
}

void utf8_make_valid(char *s, size_t size) {
    static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
    char out[256];
    const unsigned char *p = (const unsigned char *)s;
    size_t used = 0, n;
    uint32_t cp;
    bool changed = false;

    if (size == 0 || size > 256)
        return; /* label fields are smaller; anything else is left as it is */
    while (*p && *p < 0x80)
        p++; /* ASCII, nearly every label: nothing to copy */
    if (!*p)
        return;
    p = (const unsigned char *)s;
    while (*p) {
        const char *piece = (const char *)p;
        size_t len = 1;

        if (*p >= 0x80) {
            n = utf8_sequence(p, &cp);
            if (n == 0) {
                piece = replacement;
                len = 3;
                changed = true;
            } else
                len = n;
        }
        if (used + len >= size)
            break; /* cut at a character's boundary */
        memcpy(out + used, piece, len);
        used += len;
        p += piece == replacement ? 1 : len;
    }
    if (!changed)
        return;
    out[used] = '\0';
    memcpy(s, out, used + 1);
}
