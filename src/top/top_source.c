/* SPDX-License-Identifier: MIT */
#include "top_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "curl_loader.h"
#include "exposition.h"
#include "log.h"
#include "macro.h"
#include "sampler.h"
#include "snapshot.h"

#define TOP_FETCH_TIMEOUT_MS 5000L
#define TOP_BODY_MAX (64u << 20) /* an exposition larger than this is not one */

struct top_source {
    struct config cfg;
    /* local */
    struct snapshot_slot *slot;
    struct sampler *sampler;
    /* remote */
    const struct curl_api *cu;
    CURL *curl;
    char describe[256];
};

/* The URL without its user:password@, for the header line. */
static void describe_url(const char *url, char *buf, size_t size) {
    const char *scheme = strstr(url, "://"), *host = scheme ? scheme + 3 : url;
    const char *at = strchr(host, '@'), *slash = strchr(host, '/');

    if (at && (!slash || at < slash))
        (void)snprintf(buf, size, "%.*s%s", (int)(host - url), url, at + 1);
    else
        (void)snprintf(buf, size, "%s", url);
}

static int open_local(struct top_source *s) {
    int r;

    /* One window per refresh for everything, with per-process CPU energy (as ps). */
    s->cfg.process_scan_interval_ns = s->cfg.sample_interval_ns;
    s->cfg.cpu_process_metrics = true;
    s->slot = snapshot_slot_new();
    if (!s->slot)
        return -ENOMEM;
    r = sampler_new(&s->cfg, s->slot, &s->sampler);
    if (r < 0)
        return log_error_errno(r, "top: cannot open the sources: %m");
    (void)snprintf(s->describe, sizeof(s->describe), "local sources");
    return 0;
}

static int open_remote(struct top_source *s) {
    const char *reason = NULL;
    int r;

    /* Said without its password, whatever goes wrong. */
    describe_url(s->cfg.top_url, s->describe, sizeof(s->describe));
    if (strncasecmp(s->cfg.top_url, "http://", 7) != 0 &&
        strncasecmp(s->cfg.top_url, "https://", 8) != 0) {
        log_error("top: '%s' is not an http:// or https:// URL", s->describe);
        return -EINVAL;
    }
    r = curl_api_get(&s->cu, &reason);
    if (r < 0) {
        log_error("top: cannot read '%s': libcurl.so.4 did not load (%s); install libcurl4",
                  s->describe, reason ? reason : "unknown reason");
        return r;
    }
    (void)s->cu->global_init(CURL_GLOBAL_DEFAULT);
    s->curl = s->cu->easy_init();
    if (!s->curl)
        return -ENOMEM;
    return 0;
}

int top_source_new(const struct config *cfg, struct top_source **ret) {
    struct top_source *s = calloc(1, sizeof(*s));
    int r;

    if (!s)
        return -ENOMEM;
    s->cfg = *cfg;
    r = cfg->top_url ? open_remote(s) : open_local(s);
    if (r < 0) {
        top_source_free(s);
        return r;
    }
    *ret = s;
    return 0;
}

struct top_source *top_source_free(struct top_source *s) {
    if (!s)
        return NULL;
    sampler_free(s->sampler);
    snapshot_slot_free(s->slot);
    if (s->curl)
        s->cu->easy_cleanup(s->curl);
    free(s);
    return NULL;
}

const char *top_source_describe(const struct top_source *s) {
    return s->describe;
}

static int fetch_local(struct top_source *s, struct strbuf *out, char *err, size_t err_size) {
    struct tick_time t = sampler_now();
    struct snapshot *snap;
    int r;

    r = sampler_tick(s->sampler, &t);
    if (r < 0) {
        (void)snprintf(err, err_size, "sampling failed: %s", strerror(-r));
        return r;
    }
    snap = snapshot_slot_get(s->slot);
    if (!snap) {
        (void)snprintf(err, err_size, "no sample yet");
        return -ENODATA;
    }
    r = exposition_render(snap, NULL, out);
    (void)snapshot_unref(snap);
    if (r < 0) {
        (void)snprintf(err, err_size, "cannot render the sample: %s", strerror(-r));
        return r;
    }
    return 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *userdata) {
    struct strbuf *out = userdata;

    if (out->len + size * n > TOP_BODY_MAX)
        return 0; /* ends the transfer with CURLE_WRITE_ERROR */
    strbuf_append(out, data, size * n);
    return strbuf_error(out) < 0 ? 0 : size * n;
}

static int fetch_remote(struct top_source *s, struct strbuf *out, char *err, size_t err_size) {
    char curl_err[CURL_ERROR_SIZE] = "";
    const struct curl_api *cu = s->cu;
    long status = 0;
    CURLcode c;

    (void)cu->easy_setopt(s->curl, CURLOPT_URL, s->cfg.top_url);
    (void)cu->easy_setopt(s->curl, CURLOPT_WRITEFUNCTION, on_body);
    (void)cu->easy_setopt(s->curl, CURLOPT_WRITEDATA, (void *)out);
    (void)cu->easy_setopt(s->curl, CURLOPT_ERRORBUFFER, curl_err);
    (void)cu->easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, TOP_FETCH_TIMEOUT_MS);
    (void)cu->easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
    (void)cu->easy_setopt(s->curl, CURLOPT_ACCEPT_ENCODING, ""); /* gzip when offered */
    (void)cu->easy_setopt(s->curl, CURLOPT_USERAGENT, "joulestat-top/" JOULESTAT_VERSION);
    c = cu->easy_perform(s->curl);
    (void)cu->easy_setopt(s->curl, CURLOPT_ERRORBUFFER, (char *)NULL);
    if (c != CURLE_OK) {
        (void)snprintf(err, err_size, "%s: %s", s->describe,
                       curl_err[0] ? curl_err : cu->easy_strerror(c));
        return strbuf_error(out) < 0 ? -ENOMEM : -EIO;
    }
    (void)cu->easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        /* 503 before the exporter's first sample: worth a clear word. */
        (void)snprintf(err, err_size, "%s answered HTTP %ld%s", s->describe, status,
                       status == 503 ? " (no sample yet?)" : "");
        return -EIO;
    }
    return 0;
}

int top_source_fetch(struct top_source *s, struct strbuf *out, char *err, size_t err_size) {
    strbuf_reset(out);
    err[0] = '\0';
    return s->curl ? fetch_remote(s, out, err, err_size) : fetch_local(s, out, err, err_size);
}

void top_source_poll(struct top_source *s) {
    struct tick_time t;

    if (!s->sampler)
        return;
    t = sampler_now();
    sampler_poll(s->sampler, &t);
}

uint64_t top_source_poll_interval_ns(const struct top_source *s) {
    return s->sampler ? sampler_poll_interval_ns(&s->cfg) : s->cfg.sample_interval_ns;
}
