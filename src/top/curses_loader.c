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

/* The name as a string if the slot's type is a pointer to the symbol's type, otherwise a
 * void expression that cannot initialise a name, so a mismatch does not compile. */
#define SYMBOL(field, sym)                                                                         \
    {                                                                                              \
        offsetof(struct curses_api, field), true, {                                                \
            __builtin_choose_expr(                                                                 \
                __builtin_types_compatible_p(__typeof__(((struct curses_api *)NULL)->field),       \
                                             __typeof__(&sym)),                                    \
                #sym, (void)0)                                                                     \
        }                                                                                          \
    }

_Static_assert(sizeof(void *) == sizeof(&wmove), "dlsym results fit a function pointer");

static const struct dl_symbol curses_symbols[] = {
    SYMBOL(newterm, newterm),
    SYMBOL(set_term, set_term),
    SYMBOL(delscreen, delscreen),
    SYMBOL(endwin, endwin),
    SYMBOL(noecho, noecho),
    SYMBOL(nonl, nonl),
    SYMBOL(set_escdelay, set_escdelay),
    SYMBOL(waddnstr, waddnstr),
    SYMBOL(wattr_on, wattr_on),
    SYMBOL(wattr_off, wattr_off),
    SYMBOL(werase, werase),
    SYMBOL(wgetch, wgetch),
    SYMBOL(whline, whline),
    SYMBOL(wmove, wmove),
    SYMBOL(wrefresh, wrefresh),
    SYMBOL(cbreak, cbreak),
    SYMBOL(curs_set, curs_set),
    SYMBOL(keypad, keypad),
    SYMBOL(wtimeout, wtimeout),
    SYMBOL(tigetstr, tigetstr),
    SYMBOL(setupterm, setupterm),
    SYMBOL(del_curterm, del_curterm),
    SYMBOL(lines_var, LINES),
    SYMBOL(cols_var, COLS),
    SYMBOL(stdscr_var, stdscr),
    SYMBOL(cur_term_var, cur_term),
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
