/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "strbuf.h"

/*
 * Where `joulestat top` gets its frames: the exposition text that /metrics serves.
 *   - local: top opens the sources itself (as `ps` does: NVML, RAPL, the processes, the
 *     Kubernetes API when configured), ticks the sampler once per refresh and renders the
 *     snapshot into the same text an exporter would serve;
 *   - remote: an HTTP(S) GET of a running exporter's metrics URL through libcurl (loaded
 *     when needed), credentials in the URL (http://user:password@host:port/metrics).
 * So both views are read by the same code, from the same format.
 */
struct top_source;

/* Opens the local sources (cfg->top_url NULL) or prepares the remote one. Returns 0 or a
 * negative errno, with the reason logged. ret is written only on success. */
int top_source_new(const struct config *cfg, struct top_source **ret);
struct top_source *top_source_free(struct top_source *s);

/* What the frames come from: "local sources" or the URL (passwords hidden). */
const char *top_source_describe(const struct top_source *s);

/*
 * Takes a frame into out (emptied first). Returns 0, or a negative errno with a reason in
 * err[err_size] (for the status line): the URL did not answer, answered non-200, ...
 */
int top_source_fetch(struct top_source *s, struct strbuf *out, char *err, size_t err_size);

/* Between frames, every top_source_poll_interval_ns(): the local sampler keeps the GPUs'
 * utilisation samples (sampler_poll). Does nothing for a remote source. */
void top_source_poll(struct top_source *s);
uint64_t top_source_poll_interval_ns(const struct top_source *s);
