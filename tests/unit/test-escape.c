/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <locale.h>

#include "escape.h"

static void check(const char *in, const char *want) {
    char buf[ESCAPED_SIZE(64)];

    assert_string_equal(escape_terminal(in, buf, sizeof(buf)), want);
}

static void test_escape(void **state) {
    check("python3", "python3");
    check("", "");
    check(NULL, "");
    /* A name that would set the terminal's title and clear the screen. */
    check("evil\x1b]0;pwn\x07\x1b[2J", "evil\\x1b]0;pwn\\x07\\x1b[2J");
    check("tab\there\nnl\r\x7f", "tab\\x09here\\x0anl\\x0d\\x7f");
    check("back\\slash", "back\\\\slash");
    /* Well-formed UTF-8 stays; C1 controls in UTF-8 (U+009B, CSI) and stray bytes do not. */
    check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");
    check("a\xc2\x9b"
          "31m",
          "a\\xc2\\x9b31m");
    check("\x9b"
          "31m",
          "\\x9b31m");
    check("\xc3", "\\xc3");
    check("\xc0\xaf", "\\xc0\\xaf");          /* overlong '/' */
    check("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
}

static void test_cut(void **state) {
    char buf[8];

    /* Cut at an escape's boundary, never inside one. */
    assert_string_equal(escape_terminal("ab\x1b\x1b", buf, sizeof(buf)), "ab\\x1b");
    assert_string_equal(escape_terminal("abcdefghij", buf, sizeof(buf)), "abcdefg");
    assert_string_equal(escape_terminal("abcdef\xc3\xa9", buf, sizeof(buf)), "abcdef");
    assert_string_equal(escape_terminal("x", buf, 1), "");
}

static void fits(const char *s, int cols, size_t want_bytes, int want_used) {
    int used = -1;

    assert_int_equal(terminal_fit_columns(s, cols, &used), want_bytes);
    assert_int_equal(used, want_used);
}

/* A name in a column of top: a CJK character takes two columns, a combining accent none,
 * and a wide character that does not fit whole is left out. */
static void test_columns(void **state) {
    if (!setlocale(LC_CTYPE, "C.UTF-8"))
        skip();
    fits("python3", 4, 4, 4);
    fits("python3", 20, 7, 7);
    fits("\xe6\x97\xa5\xe6\x9c\xac", 4, 6, 4); /* two CJK characters */
    fits("\xe6\x97\xa5\xe6\x9c\xac", 3, 3, 2); /* the second would need a fourth column */
    fits("a\xe6\x97\xa5", 2, 1, 1);
    fits("e\xcc\x81x", 2, 4, 2);        /* e + U+0301 COMBINING ACUTE, then x */
    fits("\xf0\x9f\x94\xa5!", 3, 5, 3); /* an emoji: two columns */
    fits("caf\xc3\xa9", 4, 5, 4);
    fits("", 4, 0, 0);
    /* Outside a UTF-8 locale every character is one column, as before. */
    assert_non_null(setlocale(LC_CTYPE, "C"));
    fits("\xe6\x97\xa5\xe6\x9c\xac", 3, 6, 2);
}

static void made_valid(const char *in, size_t size, const char *want) {
    char buf[64];

    assert_true(strlen(in) < sizeof(buf));
    strcpy(buf, in);
    utf8_make_valid(buf, size);
    assert_string_equal(buf, want);
}

/* Label values made valid UTF-8 where they are read: what is not UTF-8 becomes U+FFFD, as
 * the exposition prints it, so two names printed alike are one. */
static void test_make_valid(void **state) {
    made_valid("python3", 16, "python3");
    made_valid("caf\xc3\xa9", 16, "caf\xc3\xa9");
    made_valid("a\xff", 16, "a\xef\xbf\xbd");
    made_valid("a\xfe", 16, "a\xef\xbf\xbd");
    made_valid("\xc3(x", 16, "\xef\xbf\xbd(x"); /* a sequence cut short */
    made_valid("\xed\xa0\x80", 16, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* surrogate */
    /* cut to the buffer at a character's boundary: "ab" + U+FFFD needs 6 bytes */
    made_valid("ab\xff\xff", 6, "ab\xef\xbf\xbd");
    made_valid("abcd\xff", 6, "abcd");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_cut),
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_make_valid),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
