/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"

static enum log_level max_level = LOG_LEVEL_INFO;

void log_set_max_level(enum log_level level) {
    max_level = level;
}

enum log_level log_get_max_level(void) {
    return max_level;
}

int log_level_from_string(const char *s, enum log_level *ret_level) {
    static const struct {
        const char *name;
        enum log_level level;
    } table[] = {
        {"debug", LOG_LEVEL_DEBUG},     {"info", LOG_LEVEL_INFO},   {"warn", LOG_LEVEL_WARNING},
        {"warning", LOG_LEVEL_WARNING}, {"error", LOG_LEVEL_ERROR},
    };

    for (size_t i = 0; i < ARRAY_SIZE(table); i++)
        if (strcasecmp(s, table[i].name) == 0) {
            *ret_level = table[i].level;
            return 0;
        }
    return -EINVAL;
}

int log_full_errno(enum log_level level, int err, const char *fmt, ...) {
    int e = err < 0 ? -err : err;
    va_list ap;

    if (level <= max_level) {
        char line[1024];

        /* %m reads errno: set it to the error we were given. */
        errno = e;
        va_start(ap, fmt);
        (void)vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        (void)fprintf(stderr, "<%d>%s\n", (int)level, line);
    }
    return -e;
}

#define COMPLAIN_FIRST_INTERVAL_NS (10 * NSEC_PER_SEC)
#define COMPLAIN_MAX_INTERVAL_NS (3600 * NSEC_PER_SEC)

bool complain_should_log(struct complaint *c, uint64_t now_ns) {
    c->count++;
    if (!c->active) {
        c->active = true;
        c->interval_ns = COMPLAIN_FIRST_INTERVAL_NS;
        c->next_ns = now_ns + c->interval_ns;
        return true;
    }
    if (now_ns < c->next_ns)
        return false;
    c->interval_ns = MIN(c->interval_ns * 2, COMPLAIN_MAX_INTERVAL_NS);
    c->next_ns = now_ns + c->interval_ns;
    return true;
}

bool complain_release(struct complaint *c) {
    bool was_active = c->active;

    c->active = false;
    c->count = 0;
    return was_active;
}
