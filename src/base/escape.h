/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/*
 * Text from the system (process names, cgroup paths, pod names, device names) made safe to
 * print on a terminal: control characters (C0, DEL, and C1 as UTF-8), bytes that are not
 * well-formed UTF-8, and the backslash become \xHH (\\ for the backslash); everything else,
 * printable ASCII and well-formed UTF-8, is kept. A name carrying "\x1b]0;...\x07" cannot
 * rewrite the operator's terminal.
 *
 * Writes the escaped s into buf (size > 0), NUL-terminated, cut at an escape's boundary
 * when it does not fit; returns buf. NULL s gives "".
 */
const char *escape_terminal(const char *s, char *buf, size_t size);

/* Room for any string of n bytes, escaped, and its NUL. */
#define ESCAPED_SIZE(n) (4 * (n) + 1)

/*
 * The bytes of s (escape_terminal()'s output) that fill at most `cols` columns of a
 * terminal, and in *ret_used how many they fill: a wide character (CJK, most emoji) takes
 * two, a combining mark none, as wcwidth() says in the LC_CTYPE locale (outside a UTF-8
 * locale, one each). A character that does not fit whole is left out, never half drawn.
 */
size_t terminal_fit_columns(const char *s, int cols, int *ret_used);

/*
 * s (a buffer of size bytes, NUL-terminated) made valid UTF-8 in place: every byte that is
 * not part of a well-formed sequence becomes U+FFFD, cut at a character's boundary to fit.
 * Labels are made so once, where they are read, so that two values the exposition would
 * print alike (U+FFFD for what is not UTF-8) are one value, one key, one series.
 */
void utf8_make_valid(char *s, size_t size);
