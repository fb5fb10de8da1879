/* SPDX-License-Identifier: MIT */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

/* syslog-compatible levels. On stderr: "<N>message" when stderr is the journal (journald
 * reads the prefix as the priority), "TIME LEVEL: message" anywhere else. */
enum log_level {
    LOG_LEVEL_ERROR = 3,
    LOG_LEVEL_WARNING = 4,
    LOG_LEVEL_INFO = 6,
    LOG_LEVEL_DEBUG = 7,
};

/* Chooses the line format for stderr from JOURNAL_STREAM (once, at startup). */
void log_open(void);
/* True when journal_stream ("<dev>:<inode>", from JOURNAL_STREAM) names fd's file. */
bool log_stream_is_journal(const char *journal_stream, int fd);

void log_set_max_level(enum log_level level);
enum log_level log_get_max_level(void);
/* Parses "debug", "info", "warn"/"warning", "error". Returns 0 or -EINVAL. */
int log_level_from_string(const char *s, enum log_level *ret_level);

/* Logs and returns -|err| (or 0 when err is 0). `%m` in fmt prints strerror(|err|). */
int log_full_errno(enum log_level level, int err, const char *fmt, ...) _printf_(3, 4);

#define log_debug(...) (void)log_full_errno(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define log_info(...) (void)log_full_errno(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_warning(...) (void)log_full_errno(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_error(...) (void)log_full_errno(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
#define log_debug_errno(e, ...) log_full_errno(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_LEVEL_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_LEVEL_ERROR, (e), __VA_ARGS__)

/*
 * Rate limiter for a repeating failure: complain_should_log() is true at the first
 * failure, then at doubling intervals (capped at one hour); complain_release() returns
 * true exactly once when a failure that was logged recovers, so the caller can say so.
 * The backoff outlives a recovery: a source that fails and recovers over and over (a
 * flapping GPU) is said at the same doubling intervals, its recoveries only after a
 * failure that was; quiet for twice its interval, it starts again from the first.
 */
struct complaint {
    uint64_t next_ns;     /* no line before this */
    uint64_t interval_ns; /* the backoff; 0: none yet */
    uint64_t count;
    bool active; /* failing now */
    bool said;   /* and that was logged */
};

bool complain_should_log(struct complaint *c, uint64_t now_ns);
bool complain_release(struct complaint *c);
