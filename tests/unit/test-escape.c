/* SPDX-License-Identifier: MIT */
#include "testutil.h"

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_cut),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
