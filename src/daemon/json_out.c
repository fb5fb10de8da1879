/* SPDX-License-Identifier: MIT */
#include "json_out.h"

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 when the byte at s starts none. */
static size_t utf8_sequence_length(const unsigned char *s) {
    unsigned char lo = 0x80, hi = 0xbf;
    size_t len;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        len = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        lo = s[0] == 0xe0 ? 0xa0 : 0x80; /* overlong */
        hi = s[0] == 0xed ? 0x9f : 0xbf; /* surrogates */
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        lo = s[0] == 0xf0 ? 0x90 : 0x80; /* overlong */
        hi = s[0] == 0xf4 ? 0x8f : 0xbf; /* above U+10FFFF */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0; /* the NUL that ends the string stops here too */
    return len;
}

void json_put_string(FILE *f, const char *s) {
    const unsigned char *p = (const unsigned char *)s;

    fputc('"', f);
    while (*p) {
        size_t len = utf8_sequence_length(p);

        if (len == 0) {
            /* Not UTF-8 (a command name or argument is any bytes): JSON must be. */
            fputs("\\ufffd", f);
            p++;
        } else if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p++);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p++);
        else {
            fwrite(p, 1, len, f);
            p += len;
        }
    }
    fputc('"', f);
}
