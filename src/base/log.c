/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

static enum log_level max_level = LOG_LEVEL_INFO;
static bool journal_prefix; /* stderr is the journal: "<N>" instead of time and level */

bool log_stream_is_journal(const char *journal_stream, int fd) {
    unsigned long long dev, ino;
    struct stat st;
    int end = 0;

    /* systemd sets JOURNAL_STREAM=<st_dev>:<st_ino> of the stream it connected; a child
     * whose stderr was redirected since inherits the variable, so compare with our fd. */
    if (!journal_stream || sscanf(journal_stream, "%llu:%llu%n", &dev, &ino, &end) != 2 ||
        journal_stream[end] != '\0')
        return false;
    if (fstat(fd, &st) < 0)
        return false;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_open(void) {
    journal_prefix = log_stream_is_journal(getenv("JOURNAL_STREAM"), STDERR_FILENO);
}

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

static const char *level_name(enum log_level level) {
    switch (level) {
    case LOG_LEVEL_ERROR:
        return "error";
    case LOG_LEVEL_WARNING:
        return "warning";
    case LOG_LEVEL_INFO:
        return "info";
    case LOG_LEVEL_DEBUG:
        return "debug";
    }
    return "log";
}

/* A terminal or a file: UTC time to the millisecond, the level in words, the message. */
static void log_plain_line(enum log_level level, const char *line) {
    uint64_t now = clock_realtime_ns();
    time_t sec = (time_t)(now / NSEC_PER_SEC);
    char stamp[32] = "";
    struct tm tm;

    if (gmtime_r(&sec, &tm))
        (void)strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    (void)fprintf(stderr, "%s.%03uZ %s: %s\n", stamp, (unsigned)(now % NSEC_PER_SEC / 1000000),
                  level_name(level), line);
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
        if (journal_prefix)
            (void)fprintf(stderr, "<%d>%s\n", (int)level, line);
        else
            log_plain_line(level, line);
    }
    return -e;
}

#define COMPLAIN_FIRST_INTERVAL_NS (10 * NSEC_PER_SEC)
#define COMPLAIN_MAX_INTERVAL_NS (3600 * NSEC_PER_SEC)

bool complain_should_log(struct complaint *c, uint64_t now_ns) {
    c->count++;
    if (!c->active) {
        c->active = true;
        c->said = false;
        if (now_ns >= c->next_ns + c->interval_ns) /* quiet long enough: a new story */
            c->interval_ns = 0;
    }
    if (c->interval_ns != 0 && now_ns < c->next_ns)
        return false;
    c->interval_ns = c->interval_ns == 0 ? COMPLAIN_FIRST_INTERVAL_NS
                                         : MIN(c->interval_ns * 2, COMPLAIN_MAX_INTERVAL_NS);
    c->next_ns = now_ns + c->interval_ns;
    c->said = true;
    return true;
}

bool complain_release(struct complaint *c) {
    bool said = c->active && c->said;

    c->active = c->said = false;
    c->count = 0;
    return said;
}
