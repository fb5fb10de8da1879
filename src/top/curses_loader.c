/* SPDX-License-Identifier: MIT */
#include "curses_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <term.h> /* after the table's header: its capability macros (lines, ...) stay here */

#include "dl_symbols.h"
#include "macro.h"

_Static_assert(sizeof(void *) == sizeof(&wmove), "dlsym results fit a function pointer");

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

int curses_api_open(const char *path, struct curses_api **ret_api, const char **ret_reason) {
    static const char *const sonames[] = {CURSES_LIBRARY_SONAME};
    _cleanup_(freep) struct curses_api *api = NULL;
    int r;

    api = calloc(1, sizeof(*api));
    if (!api) {
        *ret_reason = "out of memory";
        return -ENOMEM;
    }

    /* dlsym() on the handle searches the library, then what it needs: libtinfo.so.6. */
    api->dl = dl_open("ncursesw", path, sonames, ARRAY_SIZE(sonames), &r);
    if (!api->dl) {
        *ret_reason = r == -ELIBBAD ? "the ncursesw library exists but cannot be loaded"
                                    : CURSES_LIBRARY_MISSING;
        return r;
    }

    r = dl_resolve(api->dl, "ncursesw", curses_symbols, ARRAY_SIZE(curses_symbols), api);
    if (r < 0) {
        dlclose(api->dl);
        *ret_reason = "the ncursesw library lacks a required symbol (not ncurses 6?)";
        return r;
    }

    *ret_api = TAKE_PTR(api);
    return 0;
}

struct curses_api *curses_api_free(struct curses_api *api) {
    if (!api)
        return NULL;
    if (api->dl)
        dlclose(api->dl);
    free(api);
    return NULL;
}

/* Written once under pthread_once, read-only afterwards. */
static pthread_once_t curses_once = PTHREAD_ONCE_INIT;
static struct curses_api *curses_loaded;
static int curses_load_error;
static const char *curses_load_reason;

static void load_once(void) {
    const char *path = getenv(CURSES_LIBRARY_ENV);

    curses_load_error =
        curses_api_open(path && path[0] ? path : NULL, &curses_loaded, &curses_load_reason);
}

int curses_api_get(const struct curses_api **ret_api, const char **ret_reason) {
    (void)pthread_once(&curses_once, load_once);
    if (curses_load_error < 0) {
        *ret_reason = curses_load_reason;
        return curses_load_error;
    }
    *ret_api = curses_loaded;
    return 0;
}
