/* SPDX-License-Identifier: MIT */
/* The exposition parser (src/parse/prom_parse.c) that `joulestat top` reads /metrics with:
 * table-driven lines, and joulestat's own golden expositions read back whole. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "prom_parse.h"

static int parse(const char *line, struct prom_sample *s) {
    return prom_parse_line(line, strlen(line), s);
}

static void test_lines(void **state) {
    struct prom_sample s;

    assert_int_equal(parse("up 1", &s), 1);
    assert_string_equal(s.name, "up");
    assert_int_equal(s.n_labels, 0);
    assert_true(s.value > 0.999 && s.value < 1.001);
    assert_false(s.has_timestamp);

    /* Labels, blanks around them, a trailing comma, a timestamp, CRLF. */
    assert_int_equal(parse("a:b_c{ x = \"1\" ,y=\"two\",} 2.5e3 1700000000000\r", &s), 1);
    assert_string_equal(s.name, "a:b_c");
    assert_int_equal(s.n_labels, 2);
    assert_string_equal(s.labels[0].name, "x");
    assert_string_equal(s.labels[0].value, "1");
    assert_string_equal(prom_sample_label(&s, "y"), "two");
    assert_null(prom_sample_label(&s, "z"));
    assert_true(s.value > 2499.999 && s.value < 2500.001);
    assert_true(s.has_timestamp);
    assert_true(s.timestamp_ms == 1700000000000LL);

    /* Escapes: \\, \" and \n are unescaped; others are kept as written. */
    assert_int_equal(parse("m{v=\"a\\\\b\\\"c\\nd\\te\"} 0", &s), 1);
    assert_string_equal(prom_sample_label(&s, "v"), "a\\b\"c\nd\\te");
    /* A '}' or ',' inside a value is a value. */
    assert_int_equal(parse("m{v=\"}{,=\"} 3", &s), 1);
    assert_string_equal(prom_sample_label(&s, "v"), "}{,=");
    assert_int_equal(parse("m{} -1", &s), 1);
    assert_true(s.value < -0.999 && s.value > -1.001);

    /* The format's special values. */
    assert_int_equal(parse("m NaN", &s), 1);
    assert_true(isnan(s.value));
    assert_int_equal(parse("m +Inf", &s), 1);
    assert_true(isinf(s.value) && s.value > 0);
    assert_int_equal(parse("m -Inf", &s), 1);
    assert_true(isinf(s.value) && s.value < 0);

    /* Comments and blank lines are no sample, and leave *s alone. */
    strcpy(s.name, "kept");
    assert_int_equal(parse("# HELP m a help text", &s), 0);
    assert_int_equal(parse("# TYPE m counter", &s), 0);
    assert_int_equal(parse("", &s), 0);
    assert_int_equal(parse("   \t", &s), 0);
    assert_string_equal(s.name, "kept");
}

static void test_bad_lines(void **state) {
    static const char *const bad[] = {
        "m",                    /* no value */
        "m{",                   /* unterminated labels */
        "m{a=\"1\"",            /* no closing brace */
        "m{a=\"1} 1",           /* unterminated value */
        "m{a=1} 1",             /* unquoted value */
        "m{a\"1\"} 1",          /* no '=' */
        "m{a=\"1\" b=\"2\"} 1", /* no comma */
        "m{1a=\"1\"} 1",        /* a label name starting with a digit */
        "m{a:b=\"1\"} 1",       /* a colon in a label name */
        "1m 1",                 /* a metric name starting with a digit */
        "m one",                /* not a number */
        "m 1x",                 /* trailing garbage in the value */
        "m 1 2 3",              /* more than a timestamp */
        "m 1 1.5",              /* a timestamp with a fraction */
        "m{a=\"1\"}1",          /* no blank before the value */
        "m 1e999",              /* out of range */
    };
    struct prom_sample s;

    strcpy(s.name, "kept");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (parse(bad[i], &s) != -EBADMSG)
            fail_msg("accepted: '%s'", bad[i]);
    assert_string_equal(s.name, "kept");
}

static void test_cut(void **state) {
    char line[2 * PROM_VALUE_MAX + 64], name[2 * PROM_NAME_MAX];
    struct prom_sample s;
    int n;

    /* A value longer than its slot is cut, not refused. */
    n = snprintf(line, sizeof(line), "m{v=\"");
    for (int i = 0; i < PROM_VALUE_MAX + 10; i++)
        line[n++] = 'x';
    (void)snprintf(line + n, sizeof(line) - (size_t)n, "\",w=\"ok\"} 7");
    assert_int_equal(parse(line, &s), 1);
    assert_int_equal(strlen(prom_sample_label(&s, "v")), PROM_VALUE_MAX - 1);
    assert_string_equal(prom_sample_label(&s, "w"), "ok");
    memset(name, 'n', sizeof(name) - 4);
    strcpy(name + sizeof(name) - 4, " 1");
    assert_int_equal(parse(name, &s), 1);
    assert_int_equal(strlen(s.name), PROM_NAME_MAX - 1);

    /* More labels than slots: the first ones are kept. */
    n = snprintf(line, sizeof(line), "m{");
    for (int i = 0; i < PROM_LABELS_MAX + 3; i++)
        n += snprintf(line + n, sizeof(line) - (size_t)n, "l%d=\"%d\",", i, i);
    (void)snprintf(line + n, sizeof(line) - (size_t)n, "} 1");
    assert_int_equal(parse(line, &s), 1);
    assert_int_equal(s.n_labels, PROM_LABELS_MAX);
    assert_string_equal(prom_sample_label(&s, "l0"), "0");
}

struct collected {
    size_t n;
    double sum_gpu_energy;
    bool saw_weird_name;
    size_t stop_after;
};

static int collect(const struct prom_sample *s, void *userdata) {
    struct collected *c = userdata;
    const char *name = prom_sample_label(s, "process_name");

    c->n++;
    if (strcmp(s->name, "joulestat_gpu_energy_joules_total") == 0)
        c->sum_gpu_energy += s->value;
    /* The golden name: we"ird\na<newline>me and U+FFFD, read back as it was made. */
    if (name && strcmp(name, "we\"ird\\na\nme\xEF\xBF\xBD") == 0)
        c->saw_weird_name = true;
    return c->stop_after && c->n == c->stop_after ? -ECANCELED : 0;
}

static char *read_golden(const char *name, size_t *ret_len) {
    char path[512], rel[128];
    FILE *f;
    char *text;
    long len;

    (void)snprintf(rel, sizeof(rel), "tests/http/golden/%s", name);
    f = fopen(test_source_path(path, sizeof(path), rel), "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    len = ftell(f);
    rewind(f);
    text = malloc((size_t)len + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    text[len] = '\0';
    fclose(f);
    *ret_len = (size_t)len;
    return text;
}

/* Every line joulestat serves reads back: no bad line, every sample, the values. */
static void test_golden(void **state) {
    static const char *const files[] = {"default.prom", "my_gpu_process.prom"};

    for (size_t i = 0; i < 2; i++) {
        struct collected c = {0};
        size_t len, bad = 99, samples = 0;
        char *text = read_golden(files[i], &len);

        for (const char *p = text; *p; p++)
            if ((p == text || p[-1] == '\n') && *p != '#' && *p != '\n')
                samples++;
        assert_int_equal(prom_parse_text(text, len, collect, &c, &bad), (int)samples);
        assert_int_equal(bad, 0);
        assert_int_equal(c.n, samples);
        assert_true(c.saw_weird_name);
        assert_true(c.sum_gpu_energy > 2170.999 && c.sum_gpu_energy < 2171.001);

        /* The callback's error ends the walk and comes back. */
        c = (struct collected){.stop_after = 3};
        assert_int_equal(prom_parse_text(text, len, collect, &c, NULL), -ECANCELED);
        assert_int_equal(c.n, 3);
        free(text);
    }
}

static void test_text(void **state) {
    static const char text[] = "# TYPE a counter\na 1\nbroken{\n\nb{x=\"y\"} 2\nc 3";
    struct collected c = {0};
    size_t bad = 0;

    /* The last line needs no newline; a broken line is counted and skipped. */
    assert_int_equal(prom_parse_text(text, strlen(text), collect, &c, &bad), 3);
    assert_int_equal(bad, 1);
    assert_int_equal(prom_parse_text("", 0, collect, &c, &bad), 0);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),  cmocka_unit_test(test_bad_lines), cmocka_unit_test(test_cut),
        cmocka_unit_test(test_golden), cmocka_unit_test(test_text),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
