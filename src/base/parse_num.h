/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the n bytes at s are all decimal digits (and n > 0): a name's numeric part
 * ("job_42", "nvidia3"), checked before it is parsed. */
bool all_digits_n(const char *s, size_t n);

/*
 * Whole-string, range-checked number parsing. Leading whitespace and one trailing run of
 * whitespace (e.g. "\n" from sysfs) are accepted; anything else is -EINVAL; out of range is
 * -ERANGE. ret_value is written only on success. safe_atou64 also takes "0x" hex.
 */
int safe_atou64(const char *s, uint64_t *ret_value);
int safe_atou32(const char *s, uint32_t *ret_value);
int safe_atoi64(const char *s, int64_t *ret_value);
int safe_atod(const char *s, double *ret_value);

/* Parses a duration such as "100ms", "5m", "1h30m", "2s", "250us" or a bare number of
 * seconds ("0.5"). Returns 0 or -EINVAL/-ERANGE. */
int parse_duration_ns(const char *s, uint64_t *ret_ns);
