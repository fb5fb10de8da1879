/* SPDX-License-Identifier: MIT */
/* rate_limit of the web configuration: a token bucket, as Go's rate.Limiter that
 * exporter-toolkit uses (burst tokens, one more every interval, full at start). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "parse_num.h"
#include "webconfig_internal.h"

/* interval: a Go duration ("1s", "250ms", "1m30s"), or an integer, which Go's YAML decoder
 * takes as nanoseconds. Negative durations are refused. */
static int parse_interval(struct loader *l, const yaml_node_t *v, uint64_t *ret) {
    const char *s = scalar(v);
    uint64_t ns;

    if (!s || !*s)
        return web_config_fail(l, v, "rate_limit.interval must be a duration such as 1s");
    if (strspn(s, "0123456789") == strlen(s)) {
        if (safe_atou64(s, &ns) < 0)
            return web_config_fail(l, v, "rate_limit.interval: '%s' is out of range", s);
    } else if (s[0] == '-')
        return web_config_fail(l, v, "rate_limit.interval: '%s' is negative", s);
    else if (!strpbrk(s, "hmsun") || parse_duration_ns(s, &ns) < 0)
        return web_config_fail(l, v,
                               "rate_limit.interval: '%s' is not a duration (such as 1s, 250ms, "
                               "1m30s)",
                               s);
    *ret = ns;
    return 0;
}

static int parse_burst(struct loader *l, const yaml_node_t *v, unsigned *ret) {
    const char *s = scalar(v);
    uint64_t n;

    if (!s || !*s || strspn(s, "0123456789") != strlen(s) || safe_atou64(s, &n) < 0 || n > 1000000)
        return web_config_fail(l, v, "rate_limit.burst must be a whole number from 0 to 1000000");
    *ret = (unsigned)n;
    return 0;
}

int web_config_parse_rate(struct loader *l, const yaml_node_t *map) {
    bool seen_interval = false, seen_burst = false;
    int r;

    if (is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return web_config_fail(l, map, "rate_limit must be a mapping (interval, burst)");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = doc_node(l, p->key);
        const yaml_node_t *v = doc_node(l, p->value);
        const char *key = scalar(k);
        bool *seen;

        if (key && strcmp(key, "interval") == 0)
            seen = &seen_interval;
        else if (key && strcmp(key, "burst") == 0)
            seen = &seen_burst;
        else
            return web_config_fail(l, k, "unknown key '%s' in rate_limit", key ? key : "");
        if (*seen)
            return web_config_fail(l, k, "rate_limit.%s given twice", key);
        *seen = true;
        if (is_null(v))
            continue;
        r = seen == &seen_interval ? parse_interval(l, v, &l->c->rate_interval_ns)
                                   : parse_burst(l, v, &l->c->rate_burst);
        if (r < 0)
            return r;
    }
    return 0;
}

int web_config_rate_take(struct web_config *c, uint64_t now_ns) {
    int allowed;

    if (!c || c->rate_interval_ns == 0)
        return 1;
    (void)pthread_mutex_lock(&c->lock);
    if (c->rate_last_ns == 0)
        c->rate_tokens = c->rate_burst;
    else if (now_ns > c->rate_last_ns) {
        c->rate_tokens += (double)(now_ns - c->rate_last_ns) / (double)c->rate_interval_ns;
        if (c->rate_tokens > c->rate_burst)
            c->rate_tokens = c->rate_burst;
    }
    if (now_ns > c->rate_last_ns)
        c->rate_last_ns = now_ns;
    allowed = c->rate_tokens >= 1.0;
    if (allowed)
        c->rate_tokens -= 1.0;
    (void)pthread_mutex_unlock(&c->lock);
    return allowed;
}
