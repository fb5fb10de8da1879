/* SPDX-License-Identifier: MIT */
/* dl_table_get(): the first call loads and fills the table, every later one answers as it
 * did; a missing library, one that does not load and a missing function are told apart, and
 * the environment's path wins over the sonames. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dl_symbols.h"
#include "macro.h"

struct libc_api {
    void *dl;
    __typeof__(strlen) *length;
    __typeof__(strchr) *find;
};

static const struct dl_symbol libc_symbols[] = {
    DL_SYMBOL(struct libc_api, length, strlen),
    DL_SYMBOL(struct libc_api, find, strchr),
};

static const struct dl_symbol absent_symbols[] = {
    {offsetof(struct libc_api, length), true, {"joulestat_no_such_function", NULL}},
};

static const char *const libc_sonames[] = {"libjoulestat-none.so.0", "libc.so.6"};
static const char *const no_sonames[] = {"libjoulestat-none.so.0"};

#define TEST_ENV "JOULESTAT_TEST_DL_LIBRARY"

static struct dl_table_spec spec_of(const char *const *sonames, size_t n,
                                    const struct dl_symbol *symbols, size_t n_symbols) {
    return (struct dl_table_spec){
        .library = "libc",
        .sonames = sonames,
        .n_sonames = n,
        .symbols = symbols,
        .n_symbols = n_symbols,
        .size = sizeof(struct libc_api),
        .missing = "install libc",
        .unloadable = "libc does not load",
        .lacking = "libc lacks a required function",
    };
}

static void test_loads_once_and_keeps_the_answer(void **state) {
    struct dl_table_spec spec =
        spec_of(libc_sonames, ARRAY_SIZE(libc_sonames), libc_symbols, ARRAY_SIZE(libc_symbols));
    struct dl_lazy lazy = DL_LAZY_INIT;
    const struct libc_api *api = NULL, *again = NULL;
    const char *reason = "untouched";

    ASSERT_OK(dl_table_get(&lazy, &spec, NULL, (const void **)&api, &reason));
    assert_string_equal(reason, "untouched");
    assert_non_null(api->dl);
    assert_int_equal(api->length("joule"), 5);
    /* A second call does not load again, even with sonames that would not load. */
    spec.sonames = no_sonames;
    spec.n_sonames = 1;
    ASSERT_OK(dl_table_get(&lazy, &spec, NULL, (const void **)&again, &reason));
    assert_ptr_equal(again, api);
    dl_table_free(lazy.dl);
}

static void test_missing_unloadable_and_lacking(void **state) {
    struct dl_table_spec none = spec_of(no_sonames, 1, libc_symbols, ARRAY_SIZE(libc_symbols));
    struct dl_table_spec lacking =
        spec_of(libc_sonames, ARRAY_SIZE(libc_sonames), absent_symbols, ARRAY_SIZE(absent_symbols));
    struct dl_lazy missing_lazy = DL_LAZY_INIT, lacking_lazy = DL_LAZY_INIT;
    struct dl_lazy unloadable_lazy = DL_LAZY_INIT;
    const struct libc_api *api = NULL;
    const char *reason = NULL;

    for (int call = 0; call < 2; call++) {
        reason = NULL;
        assert_int_equal(dl_table_get(&missing_lazy, &none, NULL, (const void **)&api, &reason),
                         -ENOENT);
        assert_string_equal(reason, "install libc");
        reason = NULL;
        assert_int_equal(dl_table_get(&lacking_lazy, &lacking, NULL, (const void **)&api, &reason),
                         -ELIBBAD);
        assert_string_equal(reason, "libc lacks a required function");
    }
    /* The environment names a file that exists but is no library. */
    assert_int_equal(setenv(TEST_ENV, "/proc/self/status", 1), 0);
    assert_int_equal(dl_table_get(&unloadable_lazy, &none, TEST_ENV, (const void **)&api, &reason),
                     -ELIBBAD);
    assert_string_equal(reason, "libc does not load");
    assert_null(api);
    assert_int_equal(unsetenv(TEST_ENV), 0);
}

static void test_environment_path_wins(void **state) {
    struct dl_table_spec none = spec_of(no_sonames, 1, libc_symbols, ARRAY_SIZE(libc_symbols));
    struct dl_lazy lazy = DL_LAZY_INIT, empty_lazy = DL_LAZY_INIT;
    const struct libc_api *api = NULL;
    const char *reason = NULL;

    /* The sonames name nothing that loads; the environment's path does. */
    assert_int_equal(setenv(TEST_ENV, "libc.so.6", 1), 0);
    ASSERT_OK(dl_table_get(&lazy, &none, TEST_ENV, (const void **)&api, &reason));
    assert_non_null(api->find("joule", 'u'));
    dl_table_free(lazy.dl);
    /* Set but empty: the sonames. */
    assert_int_equal(setenv(TEST_ENV, "", 1), 0);
    assert_int_equal(dl_table_get(&empty_lazy, &none, TEST_ENV, (const void **)&api, &reason),
                     -ENOENT);
    assert_int_equal(unsetenv(TEST_ENV), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_once_and_keeps_the_answer),
        cmocka_unit_test(test_missing_unloadable_and_lacking),
        cmocka_unit_test(test_environment_path_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
