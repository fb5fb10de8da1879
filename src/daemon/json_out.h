/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

/* Writes s to f as a JSON string: quoted, with '"', '\' and control characters escaped
 * (`ps --json`, `run --json`). */
void json_put_string(FILE *f, const char *s);
