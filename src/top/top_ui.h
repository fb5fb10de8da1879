/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "top_model.h"
#include "top_view.h"

/*
 * The terminal side of `joulestat top` (ncurses): draws the view of a model, reads keys
 * into the view. Every name is escaped (escape.h) before it reaches the terminal.
 *
 * Keys: q quit; g / G next / previous level (process, container, pod, job, service);
 * > or s / < next / previous sort column, r reverse it, P power, E energy, N name,
 * I intensity; / type a filter (Enter keeps it, Esc drops it), Esc clears it; arrows,
 * PgUp/PgDn, Home/End scroll.
 */
struct top_ui;

/*
 * Whether this terminal can show top: stdin and stdout are terminals, ncursesw loads
 * (curses_loader.h), TERM names a known terminal that can move the cursor (not "dumb").
 * Returns 0, or -ENOTTY or the loader's negative errno, with the reason in err[err_size].
 */
int top_ui_check_terminal(char *err, size_t err_size);

/* Takes over the terminal. Returns 0 or a negative errno; ret written only on success. */
int top_ui_open(struct top_ui **ret);
/* Gives the terminal back as it was; accepts NULL, returns NULL. */
struct top_ui *top_ui_close(struct top_ui *ui);

/* What the header says besides the model. */
struct top_status {
    const char *source;     /* "local sources" or the URL */
    bool local;             /* the counters started with top (no URL) */
    const char *error;      /* the last fetch's error, or "" */
    double refresh_seconds; /* the refresh period */
    bool log_kept;          /* log lines are held, to be printed at exit */
};

void top_ui_draw(struct top_ui *ui, const struct top_model *m, const struct top_view *v,
                 const struct top_status *st);

/* Waits up to timeout_ms for a key and applies it to the view. Returns false when the
 * user asked to quit. */
bool top_ui_key(struct top_ui *ui, struct top_view *v, int timeout_ms);
