/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/*
 * Building blocks of the Prometheus text format 0.0.4, kept apart from the families so
 * they can be tested (and fuzzed) on their own. None of them allocates except through
 * the strbuf, and none logs.
 */

/* True when name matches [a-zA-Z_:][a-zA-Z0-9_:]* (a valid metric name or prefix). */
bool promtext_name_valid(const char *name);

/*
 * Appends a label value read from at most max bytes of v (stops at the first NUL): '\\',
 * '"' and newline are escaped, bytes that are not valid UTF-8 become U+FFFD. Unless max is
 * SIZE_MAX (a NUL-terminated string), all max bytes of v must be readable (a fixed-size
 * field): it is scanned a word at a time, past the NUL.
 */
void promtext_put_label_value(struct strbuf *sb, const char *v, size_t max);

/*
 * Appends a finite double in a form that reads back to the same value: integers without
 * a fraction, values with at most six decimals through an integer path, everything else
 * with the shortest of %.15g / %.17g that round-trips. The caller checks isfinite().
 */
void promtext_put_double(struct strbuf *sb, double v);
