/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* True when an Accept-Encoding header value allows gzip ("gzip" or "x-gzip" listed with a
 * q-value other than 0). NULL (no header) means no. */
bool gzip_accepted(const char *accept_encoding);

/*
 * A gzip stream compressed as its input arrives (ISA-L's igzip at its fastest level:
 * scrapes are frequent), so a large body can be fed in pieces from a small buffer.
 * About 170 KB of state.
 */
struct gzip_stream;

/* out_hint: the expected compressed size (the last one), so the output rarely grows.
 * Returns 0 or -ENOMEM. */
int gzip_stream_new(size_t out_hint, struct gzip_stream **ret);
/* Compresses data[0..len) onto the stream. 0, -ENOMEM, -EIO (compressor failed) or
 * -EINVAL (already finished). */
int gzip_stream_write(struct gzip_stream *g, const char *data, size_t len);
/* Compresses the last piece and ends the stream; *ret_out (malloc()ed, the caller's) holds
 * the whole gzip member. Same errors as gzip_stream_write(). */
int gzip_stream_finish(struct gzip_stream *g, const char *data, size_t len, char **ret_out,
                       size_t *ret_len);
/* The same, with the capacity of *ret_out's allocation in *ret_cap, for its reuse. */
int gzip_stream_finish_cap(struct gzip_stream *g, const char *data, size_t len, char **ret_out,
                           size_t *ret_len, size_t *ret_cap);
/* Starts a new stream on g (its compressor's state reused, nothing allocated), into out
 * (out_cap bytes, taken over; NULL: the output g still has), grown to out_hint if smaller.
 * Returns 0 or -ENOMEM (g still holds the output; a restart again may follow). */
int gzip_stream_restart(struct gzip_stream *g, char *out, size_t out_cap, size_t out_hint);
struct gzip_stream *gzip_stream_free(struct gzip_stream *g); /* returns NULL */
/* For _cleanup_(): frees *p when it is not NULL. */
void gzip_stream_freep(struct gzip_stream **p);
