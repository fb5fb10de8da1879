/* SPDX-License-Identifier: MIT */
/*
 * The command-line table: every name getopt accepts is documented once, --help and the
 * man page list every documented option (hidden ones in neither), and each option and its
 * alias parse to the same setting.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "macro.h"
#include "options.h"

/* What a print function writes, as a string (free() it). */
static char *render(void (*print)(FILE *f)) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    print(f);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void print_help(FILE *f) {
    options_print_help(f, "joulestat");
}

/* "--name" as a whole word of text: not followed by more of an option name ("." before a
 * letter goes on, as in web.config.file; in roff a hyphen is "\-", and "\fR" ends it). */
static bool mentions(const char *text, const char *prefix, const char *name) {
    char want[96];
    size_t n = (size_t)snprintf(want, sizeof(want), "%s%s", prefix, name);

    for (const char *p = strstr(text, want); p; p = strstr(p + 1, want)) {
        char next = p[n];
        bool goes_on = (next >= 'a' && next <= 'z') || next == '-' ||
                       (next == '.' && p[n + 1] >= 'a' && p[n + 1] <= 'z') ||
                       (next == '\\' && p[n + 1] == '-');

        if (!goes_on)
            return true;
    }
    return false;
}

static void test_getopt_table_is_the_documented_names(void **state) {
    size_t n = options_getopt_size();
    struct option *longopts = calloc(n, sizeof(*longopts));

    (void)state;
    assert_non_null(longopts);
    options_getopt_fill(longopts);
    assert_null(longopts[n - 1].name);
    for (size_t i = 0; i + 1 < n; i++) {
        const struct option_doc *d = option_doc_find(longopts[i].val);

        assert_non_null(d);
        assert_true(strcmp(longopts[i].name, d->name) == 0 ||
                    (d->alias && strcmp(longopts[i].name, d->alias) == 0));
        assert_int_equal(longopts[i].has_arg, d->has_arg);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(longopts[i].name, longopts[j].name);
    }
    for (size_t i = 0; i < n_option_docs; i++) {
        assert_true(option_docs[i].help && option_docs[i].help[0]);
        assert_true((option_docs[i].arg != NULL) == (option_docs[i].has_arg != no_argument));
    }
    free(longopts);
}

static void test_help_and_man_list_every_option(void **state) {
    char *help = render(print_help), *man = render(options_print_man);

    (void)state;
    for (size_t i = 0; i < n_option_docs; i++) {
        const struct option_doc *d = &option_docs[i];
        char roff[96], *q = roff;

        /* The man page writes each '-' as "\-". */
        for (const char *p = d->name; *p && q < roff + sizeof(roff) - 3; p++) {
            if (*p == '-')
                *q++ = '\\';
            *q++ = *p;
        }
        *q = '\0';
        assert_int_equal(mentions(help, "--", d->name), !d->hidden);
        assert_int_equal(mentions(man, "\\-\\-", roff), !d->hidden);
        if (d->alias)
            assert_true(mentions(help, "--", d->alias));
    }
    for (size_t i = 0; i < n_command_docs; i++) {
        char line[64];

        (void)snprintf(line, sizeof(line), "\n  %s", command_docs[i].name);
        assert_non_null(strstr(help, line));
        (void)snprintf(line, sizeof(line), ".TP\n\\fB%s\\fR", command_docs[i].name);
        assert_non_null(strstr(man, line));
    }
    free(help);
    free(man);
}

static void test_alias_sets_the_same_value(void **state) {
    char a0[] = "joulestat", a1[] = "version", a2[] = "--dcgm-update-frequency=3s",
         a3[] = "--web.listen-address=:9400", a4[] = "-log.level=debug";
    char *argv[] = {a0, a1, a2, a3, a4, NULL};
    struct config cfg;

    (void)state;
    ASSERT_OK(config_parse(5, argv, &cfg));
    assert_int_equal(cfg.sample_interval_ns, 3000000000ULL);
    assert_string_equal(cfg.listen_address, ":9400");
    assert_int_equal(cfg.log_level, LOG_LEVEL_DEBUG);
}

static void test_default_port_is_joulestats_own(void **state) {
    char a0[] = "joulestat";
    char *argv[] = {a0, NULL};
    struct config cfg;

    (void)state;
    ASSERT_OK(config_parse(1, argv, &cfg));
    /* Not dcgm-exporter's 9400, which nodes often run beside joulestat. */
    assert_string_equal(cfg.listen_address, ":19400");
}

static void test_help_man_is_hidden_but_accepted(void **state) {
    char a0[] = "joulestat", a1[] = "--help-man";
    char *argv[] = {a0, a1, NULL};
    struct config cfg;

    (void)state;
    ASSERT_OK(config_parse(2, argv, &cfg));
    assert_int_equal(cfg.command, COMMAND_HELP_MAN);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_getopt_table_is_the_documented_names),
        cmocka_unit_test(test_help_and_man_list_every_option),
        cmocka_unit_test(test_alias_sets_the_same_value),
        cmocka_unit_test(test_default_port_is_joulestats_own),
        cmocka_unit_test(test_help_man_is_hidden_but_accepted),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
