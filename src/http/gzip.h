/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* True when an Accept-Encoding header value allows gzip ("gzip" or "x-gzip" listed with a
 * q-value other than 0). NULL (no header) means no. */
bool gzip_accepted(const char *accept_encoding);

/* Compresses in[0..len) into a gzip stream (libdeflate at a fast level: scrapes are
 * frequent). *ret_out is malloc()ed for the caller. Returns 0, -ENOMEM, or -EIO if the
 * compressor fails otherwise. */
int gzip_compress(const char *in, size_t len, char **ret_out, size_t *ret_len);
