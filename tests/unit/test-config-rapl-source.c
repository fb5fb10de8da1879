/* SPDX-License-Identifier: MIT */
/*
 * --rapl-source takes exactly the names the RAPL source knows: a part of one ("aut",
 * "ow") used to pass the check and reach the sampler as an invalid mode (rapl "down" with
 * no reason).
 */
#include "testutil.h"

#include <stdio.h>

#include "config.h"
#include "macro.h"
#include "rapl.h"

/* The config keeps pointers into argv, so the value lives in the caller's buffer. */
static int parse_rapl_source(char *value, struct config *ret) {
    char a0[] = "joulestat", a1[] = "check", a2[] = "--rapl-source";
    char *argv[] = {a0, a1, a2, value, NULL};

    return config_parse(4, argv, ret);
}

static void test_every_mode_name_is_taken(void **state) {
    static const char *const names[] = {"auto", "powercap", "msr", "perf", "off"};
    struct config cfg;
    char arg[64];

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        (void)snprintf(arg, sizeof(arg), "%s", names[i]);
        ASSERT_OK(parse_rapl_source(arg, &cfg));
        assert_string_equal(cfg.rapl_source, names[i]);
        assert_true(rapl_mode_from_string(cfg.rapl_source) >= 0);
    }
}

static void test_parts_and_unknown_names_are_refused(void **state) {
    static const char *const bad[] = {"aut", "ow", "power", "sr", "", "auto|off", "MSR", "offf"};
    struct config cfg = {.rapl_source = "untouched"};
    char arg[64];

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        (void)snprintf(arg, sizeof(arg), "%s", bad[i]);
        ASSERT_ERRNO(parse_rapl_source(arg, &cfg), EINVAL);
        assert_string_equal(cfg.rapl_source, "untouched"); /* written only on success */
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_mode_name_is_taken),
        cmocka_unit_test(test_parts_and_unknown_names_are_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
