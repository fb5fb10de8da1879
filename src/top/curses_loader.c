/* SPDX-License-Identifier: MIT */
#include "curses_loader.h"

#include <stddef.h>
#include <term.h> /* after the table's header: its capability macros (lines, ...) stay here */

#include "dl_symbols.h"
#include "macro.h"

_Static_assert(sizeof(void *) == sizeof(&wmove), "dlsym results fit a function pointer");
_Static_assert(offsetof(struct curses_api, dl) == 0, "a dl_table: the handle first");

static const struct dl_symbol curses_symbols[] = {
    DL_SYMBOL(struct curses_api, newterm, newterm),
    DL_SYMBOL(struct curses_api, set_term, set_term),
    DL_SYMBOL(struct curses_api, delscreen, delscreen),
    DL_SYMBOL(struct curses_api, endwin, endwin),
    DL_SYMBOL(struct curses_api, noecho, noecho),
    DL_SYMBOL(struct curses_api, nonl, nonl),
    DL_SYMBOL(struct curses_api, set_escdelay, set_escdelay),
    DL_SYMBOL(struct curses_api, waddnstr, waddnstr),
    DL_SYMBOL(struct curses_api, wattr_on, wattr_on),
    DL_SYMBOL(struct curses_api, wattr_off, wattr_off),
    DL_SYMBOL(struct curses_api, werase, werase),
    DL_SYMBOL(struct curses_api, wgetch, wgetch),
    DL_SYMBOL(struct curses_api, whline, whline),
    DL_SYMBOL(struct curses_api, wmove, wmove),
    DL_SYMBOL(struct curses_api, wrefresh, wrefresh),
    DL_SYMBOL(struct curses_api, cbreak, cbreak),
    DL_SYMBOL(struct curses_api, curs_set, curs_set),
    DL_SYMBOL(struct curses_api, keypad, keypad),
    DL_SYMBOL(struct curses_api, wtimeout, wtimeout),
    DL_SYMBOL(struct curses_api, tigetstr, tigetstr),
    DL_SYMBOL(struct curses_api, setupterm, setupterm),
    DL_SYMBOL(struct curses_api, del_curterm, del_curterm),
    DL_SYMBOL(struct curses_api, lines_var, LINES),
    DL_SYMBOL(struct curses_api, cols_var, COLS),
    DL_SYMBOL(struct curses_api, stdscr_var, stdscr),
    DL_SYMBOL(struct curses_api, cur_term_var, cur_term),
};

static const char *const curses_sonames[] = {CURSES_LIBRARY_SONAME};

/* dlsym() on the handle searches the library, then what it needs: libtinfo.so.6. */
static const struct dl_table_spec curses_spec = {
    .library = "ncursesw",
    .sonames = curses_sonames,
    .n_sonames = ARRAY_SIZE(curses_sonames),
    .symbols = curses_symbols,
    .n_symbols = ARRAY_SIZE(curses_symbols),
    .size = sizeof(struct curses_api),
    .missing = CURSES_LIBRARY_MISSING,
    .unloadable = "the ncursesw library exists but cannot be loaded",
    .lacking = "the ncursesw library lacks a required symbol (not ncurses 6?)",
};

int curses_api_open(const char *path, struct curses_api **ret_api, const char **ret_reason) {
    return dl_table_open(&curses_spec, path, (void **)ret_api, ret_reason);
}

struct curses_api *curses_api_free(struct curses_api *api) {
    return dl_table_free(api);
}

static struct dl_lazy curses_lazy = DL_LAZY_INIT;

int curses_api_get(const struct curses_api **ret_api, const char **ret_reason) {
    return dl_table_get(&curses_lazy, &curses_spec, CURSES_LIBRARY_ENV, (const void **)ret_api,
                        ret_reason);
}
