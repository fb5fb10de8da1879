/* SPDX-License-Identifier: MIT */
#pragma once

#include <curses.h>

/*
 * ncursesw loaded with dlopen() by `joulestat top` only, so that `joulestat serve` never
 * maps it and libtinfo (~0.25 MiB of RSS). Every function top calls, the <curses.h> macros
 * included (mvaddnstr is wmove then waddnstr on stdscr), goes through this table, so the
 * binary has no ncurses symbol to bind. The libtinfo half comes through the same handle
 * (libncursesw.so.6 needs libtinfo.so.6). Every slot has the type of its symbol in
 * <curses.h> or <term.h>, checked at compile time; the variables (LINES, COLS, stdscr,
 * cur_term) are pointers to them, read after the calls that set them.
 */
struct term; /* TERMINAL, from <term.h> */

struct curses_api {
    void *dl;

    /* the screen (libncursesw) */
    __typeof__(newterm) *newterm;
    __typeof__(set_term) *set_term;
    __typeof__(delscreen) *delscreen;
    __typeof__(endwin) *endwin;
    __typeof__(noecho) *noecho;
    __typeof__(nonl) *nonl;
    __typeof__(set_escdelay) *set_escdelay;
    __typeof__(waddnstr) *waddnstr;
    __typeof__(wattr_on) *wattr_on;
    __typeof__(wattr_off) *wattr_off;
    __typeof__(werase) *werase;
    __typeof__(wgetch) *wgetch;
    __typeof__(whline) *whline;
    __typeof__(wmove) *wmove;
    __typeof__(wrefresh) *wrefresh;

    /* the terminal (libtinfo) */
    __typeof__(cbreak) *cbreak;
    __typeof__(curs_set) *curs_set;
    __typeof__(keypad) *keypad;
    __typeof__(wtimeout) *wtimeout;
    __typeof__(tigetstr) *tigetstr;
    int (*setupterm)(const char *term, int fd, int *ret_error);
    int (*del_curterm)(struct term *t);

    /* variables */
    int *lines_var;             /* LINES: the screen's height, updated on a resize */
    int *cols_var;              /* COLS: its width */
    WINDOW **stdscr_var;        /* stdscr: the screen's window after set_term */
    struct term **cur_term_var; /* cur_term: what setupterm set up */
};

/* The soname loaded, and the text of the error when it is missing. */
#define CURSES_LIBRARY_SONAME "libncursesw.so.6"
#define CURSES_LIBRARY_MISSING                                                                     \
    "libncursesw.so.6 not found: install libncursesw6 (Debian) for the terminal view, or use "     \
    "'joulestat ps'"

/*
 * Tests only: a library path used instead of CURSES_LIBRARY_SONAME by curses_api_get(), read
 * once at its first call (tests/e2e/top-tmux.sh points it at a missing file).
 */
#define CURSES_LIBRARY_ENV "JOULESTAT_CURSES_LIBRARY"

/*
 * Opens `path` (NULL: CURSES_LIBRARY_SONAME) and resolves every slot. Returns 0, -ENOENT (no
 * such library), -ELIBBAD (not loadable, or a symbol is missing) or -ENOMEM, with *ret_reason
 * (static text) saying why. ret_api is written only on success.
 */
int curses_api_open(const char *path, struct curses_api **ret_api, const char **ret_reason);

/* dlclose()s and frees; accepts NULL, returns NULL. Only for a library nothing was called in:
 * ncurses keeps what setupterm and newterm allocate in its own variables. */
struct curses_api *curses_api_free(struct curses_api *api);

/*
 * The process-wide table, loaded by the first call and kept until exit (what ncurses
 * allocated stays reachable from its variables). Later calls return the first call's result:
 * 0 with *ret_api, or its negative errno with *ret_reason. ret_api is written only on success.
 */
int curses_api_get(const struct curses_api **ret_api, const char **ret_reason);
