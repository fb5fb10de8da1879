/* SPDX-License-Identifier: MIT */
/* ncursesw loaded on demand for `joulestat top`: the table reaches both libncursesw and
 * libtinfo through the one handle, its variables are the library's own (setupterm and
 * newterm write them), a screen on a pseudo-terminal driven through it shows what was drawn
 * and reads keys; a missing, broken or wrong library gives -ENOENT/-ELIBBAD with the reason,
 * the missing one naming the library and the Debian package. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "curses_loader.h"
#include "testutil.h"

#define MISSING_PATH "/nonexistent-joulestat-test/libncursesw.so.6"

/* The terminfo entry used here: ncurses-base (essential in Debian) ships it. */
#define TERM_NAME "xterm"

static void test_open_and_close(void **state) {
    struct curses_api *api = NULL;
    const char *reason = NULL;

    ASSERT_OK(curses_api_open(NULL, &api, &reason));
    assert_non_null(api);
    assert_null(reason);
    assert_non_null(api->dl);
    assert_null(curses_api_free(api));
    assert_null(curses_api_free(NULL));
}

/* setupterm() (libtinfo) writes cur_term and, from the environment, LINES and COLS. */
static void test_terminal_through_table(void **state) {
    const struct curses_api *nc = NULL;
    const char *reason = NULL;
    char *cup;
    int e = -1;

    ASSERT_OK(curses_api_get(&nc, &reason));
    assert_non_null(nc);
    assert_null(*nc->cur_term_var);
    ASSERT_OK(setenv("LINES", "33", 1));
    ASSERT_OK(setenv("COLUMNS", "77", 1));
    assert_int_equal(nc->setupterm(TERM_NAME, STDERR_FILENO, &e), OK);
    assert_int_equal(e, 1);
    assert_non_null(*nc->cur_term_var);
    assert_int_equal(*nc->lines_var, 33);
    assert_int_equal(*nc->cols_var, 77);
    cup = nc->tigetstr("cup");
    assert_true(cup && cup != (char *)-1);
    assert_non_null(strstr(cup, "%p1%d"));
    /* a name that is no string capability */
    assert_ptr_equal(nc->tigetstr("joulestat"), (char *)-1);
    assert_int_equal(nc->del_curterm(*nc->cur_term_var), OK);
}

/* Everything the pseudo-terminal's master side has to read within 100 ms, appended. */
static size_t drain(int master, char *buf, size_t used, size_t size) {
    struct pollfd p = {.fd = master, .events = POLLIN};
    ssize_t n;

    while (used + 1 < size && poll(&p, 1, 100) == 1 &&
           (n = read(master, buf + used, size - 1 - used)) > 0)
        used += (size_t)n;
    buf[used] = '\0';
    return used;
}

/* A screen on a pseudo-terminal of 10 x 40: what is drawn through the table reaches the
 * terminal, keys typed there come back, the arrow key decoded (keypad). */
static void test_screen_through_table(void **state) {
    struct winsize size = {.ws_row = 10, .ws_col = 40};
    const struct curses_api *nc = NULL;
    const char *reason = NULL;
    char text[16384];
    int master, slave;
    FILE *out, *in;
    SCREEN *screen;
    WINDOW *win;
    size_t n;

    ASSERT_OK(curses_api_get(&nc, &reason));
    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    assert_true(master >= 0);
    ASSERT_OK(grantpt(master));
    ASSERT_OK(unlockpt(master));
    slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    assert_true(slave >= 0);
    ASSERT_OK(ioctl(slave, TIOCSWINSZ, &size));
    out = fdopen(dup(slave), "w");
    in = fdopen(slave, "r");
    assert_true(out && in);
    /* the size from the terminal, not from the previous test's variables */
    ASSERT_OK(unsetenv("LINES"));
    ASSERT_OK(unsetenv("COLUMNS"));

    screen = nc->newterm(TERM_NAME, out, in);
    assert_non_null(screen);
    assert_ptr_equal(nc->set_term(screen), screen);
    win = *nc->stdscr_var;
    assert_non_null(win);
    assert_int_equal(*nc->lines_var, 10);
    assert_int_equal(*nc->cols_var, 40);
    assert_int_equal(nc->cbreak(), OK);
    assert_int_equal(nc->noecho(), OK);
    assert_int_equal(nc->nonl(), OK);
    assert_int_equal(nc->keypad(win, TRUE), OK);
    assert_int_not_equal(nc->curs_set(0), ERR);
    assert_int_equal(nc->set_escdelay(25), OK);
    assert_int_equal(nc->werase(win), OK);
    assert_int_equal(nc->wattr_on(win, A_BOLD, NULL), OK);
    assert_int_equal(nc->wmove(win, 3, 5), OK);
    assert_int_equal(nc->waddnstr(win, "joulestat-top-cell and no more", 18), OK);
    assert_int_equal(nc->wattr_off(win, A_BOLD, NULL), OK);
    assert_int_equal(nc->wmove(win, 5, 0), OK);
    assert_int_equal(nc->whline(win, '=', 12), OK);
    /* off the screen: ERR, which the macros' wmove() == ERR checks rely on */
    assert_int_equal(nc->wmove(win, 10, 0), ERR);
    assert_int_equal(nc->wrefresh(win), OK);
    n = drain(master, text, 0, sizeof(text));
    assert_non_null(strstr(text, "joulestat-top-cell"));
    assert_null(strstr(text, "and no more"));
    assert_non_null(strstr(text, "="));

    /* nothing typed: ERR after the timeout; then a key, and the up arrow as KEY_UP */
    nc->wtimeout(win, 10);
    assert_int_equal(nc->wgetch(win), ERR);
    nc->wtimeout(win, 5000);
    assert_int_equal(write(master, "q", 1), 1);
    assert_int_equal(nc->wgetch(win), 'q');
    assert_int_equal(write(master, "\033OA", 3), 3);
    assert_int_equal(nc->wgetch(win), KEY_UP);

    assert_int_equal(nc->endwin(), OK);
    nc->delscreen(screen);
    (void)drain(master, text, n, sizeof(text));
    assert_int_equal(fclose(out), 0);
    assert_int_equal(fclose(in), 0);
    assert_int_equal(close(master), 0);
}

static void test_open_errors(void **state) {
    struct curses_api *sentinel = (struct curses_api *)&sentinel, *api = sentinel;
    const char *reason = NULL;
    char dir[256], path[512];

    /* not there, by path or by soname: the library and the package to install */
    ASSERT_ERRNO(curses_api_open(MISSING_PATH, &api, &reason), ENOENT);
    assert_string_equal(reason, CURSES_LIBRARY_MISSING);
    assert_non_null(strstr(reason, "libncursesw.so.6"));
    assert_non_null(strstr(reason, "install libncursesw6"));
    assert_ptr_equal(api, sentinel);
    reason = NULL;
    ASSERT_ERRNO(curses_api_open("libjoulestat-no-such-ncursesw.so.6", &api, &reason), ENOENT);
    assert_string_equal(reason, CURSES_LIBRARY_MISSING);

    /* a file that is not a shared library */
    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    ASSERT_OK(test_write_file(dir, "libncursesw.so.6", "not an ELF file\n"));
    (void)snprintf(path, sizeof(path), "%s/libncursesw.so.6", dir);
    ASSERT_ERRNO(curses_api_open(path, &api, &reason), ELIBBAD);
    assert_string_equal(reason, "the ncursesw library exists but cannot be loaded");
    test_rm_rf(dir);

    /* a real library without ncurses: libtinfo alone lacks the screen half */
    ASSERT_ERRNO(curses_api_open("libm.so.6", &api, &reason), ELIBBAD);
    assert_string_equal(reason, "the ncursesw library lacks a required symbol (not ncurses 6?)");
    ASSERT_ERRNO(curses_api_open("libtinfo.so.6", &api, &reason), ELIBBAD);
    assert_ptr_equal(api, sentinel);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_and_close),
        cmocka_unit_test(test_terminal_through_table),
        cmocka_unit_test(test_screen_through_table),
        cmocka_unit_test(test_open_errors),
    };

    /* The process-wide load takes the default soname. */
    (void)unsetenv(CURSES_LIBRARY_ENV);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
