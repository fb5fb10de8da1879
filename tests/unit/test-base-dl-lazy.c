/* SPDX-License-Identifier: MIT */
/* dl_lazy_load(): the first call loads and fills the table, every later one answers as it
 * did; a missing library and a missing function are told apart. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "dl_symbols.h"
#include "macro.h"

struct libc_api {
    __typeof__(strlen) *length;
    __typeof__(strchr) *find;
};

static const struct dl_symbol libc_symbols[] = {
    DL_SYMBOL(struct libc_api, length, strlen),
    DL_SYMBOL(struct libc_api, find, strchr),
};

static void test_loads_once_and_keeps_the_answer(void **state) {
    static const char *const sonames[] = {"libjoulestat-none.so.0", "libc.so.6"};
    struct dl_lazy lazy = DL_LAZY_INIT;
    struct libc_api api = {0};
    const char *reason = "untouched";

    ASSERT_OK(dl_lazy_load(&lazy, "libc", sonames, ARRAY_SIZE(sonames), libc_symbols,
                           ARRAY_SIZE(libc_symbols), &api, "missing", &reason));
    assert_string_equal(reason, "untouched");
    assert_int_equal(api.length("joule"), 5);
    /* A second call does not load again: the table is as the first call left it. */
    api.length = NULL;
    ASSERT_OK(dl_lazy_load(&lazy, "libc", sonames, ARRAY_SIZE(sonames), libc_symbols,
                           ARRAY_SIZE(libc_symbols), &api, "missing", &reason));
    assert_null(api.length);
}

static void test_missing_library_and_function(void **state) {
    static const char *const none[] = {"libjoulestat-none.so.0"};
    static const char *const libc[] = {"libc.so.6"};
    static const struct dl_symbol absent[] = {
        {offsetof(struct libc_api, length), true, {"joulestat_no_such_function", NULL}},
    };
    struct dl_lazy missing = DL_LAZY_INIT, lacking = DL_LAZY_INIT;
    struct libc_api api = {0};
    const char *reason = NULL;

    for (int call = 0; call < 2; call++) {
        reason = NULL;
        assert_int_equal(dl_lazy_load(&missing, "libnone", none, 1, libc_symbols,
                                      ARRAY_SIZE(libc_symbols), &api, "install libnone", &reason),
                         -ENOENT);
        assert_string_equal(reason, "install libnone");
        reason = NULL;
        assert_int_equal(dl_lazy_load(&lacking, "libc", libc, 1, absent, 1, &api, "x", &reason),
                         -ELIBBAD);
        assert_string_equal(reason, "libc lacks a required function (too old?)");
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_once_and_keeps_the_answer),
        cmocka_unit_test(test_missing_library_and_function),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
