/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

/* Writes s to f as a JSON string: quoted, with '"', '\' and control characters escaped
 * and each byte that is not part of well-formed UTF-8 written as U+FFFD (`ps --json`,
 * `run --json`). */
void json_put_string(FILE *f, const char *s);
