/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "exposition.h"
#include "fileio.h"
#include "http/sample-snapshot.h"
#include "labels.h"
#include "promtext.h"
#include "rapl_units.h"

static char *render(const struct snapshot *s, const char *prefix, int *ret_series) {
    struct exposition_options o = {.metric_prefix = prefix,
                                   .version = "0.1.0-test",
                                   .scrape_duration_valid = true,
                                   .scrape_duration_seconds = 0.0025};
    struct strbuf sb;
    int r;

    strbuf_init(&sb);
    r = exposition_render(s, &o, &sb);
    ASSERT_OK(r);
    if (ret_series)
        *ret_series = r;
    return strbuf_steal(&sb, NULL);
}

/* Compares with tests/http/golden/<name>; JOULESTAT_UPDATE_GOLDEN=1 rewrites it instead. */
static void check_golden(const char *text, const char *name) {
    char rel[256], path[4096];
    _cleanup_(freep) char *want = NULL;
    size_t len;

    (void)snprintf(rel, sizeof(rel), "tests/http/golden/%s", name);
    test_source_path(path, sizeof(path), rel);
    if (getenv("JOULESTAT_UPDATE_GOLDEN")) {
        ASSERT_OK(write_file_at(AT_FDCWD, path, text, strlen(text)));
        return;
    }
    ASSERT_OK(read_virtual_file_at(AT_FDCWD, path, 16 << 20, &want, &len));
    if (strcmp(want, text) != 0) {
        fprintf(stderr, "---- rendered ----\n%s---- end ----\n", text);
        fail_msg("exposition differs from %s", path);
    }
}

static void test_golden_default(void **state) {
    struct snapshot *s = sample_snapshot_new();
    _cleanup_(freep) char *text = NULL;

    assert_non_null(s);
    text = render(s, NULL, NULL);
    check_golden(text, "default.prom");
    snapshot_unref(s);
}

static void test_golden_compat(void **state) {
    struct snapshot *s = sample_snapshot_new();
    _cleanup_(freep) char *text = NULL;

    assert_non_null(s);
    text = render(s, EXPOSITION_COMPAT_PREFIX, NULL);
    check_golden(text, "my_gpu_process.prom");
    /* The names and labels my-gpu-exporter's users query (its README: no _total, pod and
     * namespace), and those it serves (its code and dashboards: _total, exported_pod,
     * exported_namespace, exported_container), energy_estimated last. */
    for (int total = 0; total < 2; total++) {
        char want[1024];

        (void)snprintf(want, sizeof(want),
                       "my_gpu_process_energy_joules%s{pid=\"4242\",gpu=\"0\","
                       "process_name=\"python\",pod=\"train-a\",namespace=\"ml\","
                       "container=\"trainer\",exported_pod=\"train-a\","
                       "exported_namespace=\"ml\",exported_container=\"trainer\","
                       "pod_uid=\"7f1c6a52-0c1e-4a4e-9d1b-1f2e3d4c5b6a\","
                       "container_id=\"containerd://0a1b2c3d\","
                       "energy_estimated=\"true\"} 1979.249999\n",
                       total ? "_total" : "");
        assert_non_null(strstr(text, want));
    }
    assert_non_null(strstr(text, "my_gpu_process_gpu_process_count{gpu=\"0\"} 3\n"));
    /* Attributed GPU energy: 2071 J minus 51.000001 J unattributed. */
    assert_non_null(
        strstr(text, "my_gpu_process_gpu_energy_joules_total{gpu=\"0\"} 2019.999999\n"));
    assert_null(strstr(text, "joulestat_gpu_process_"));
    /* What pods were given for holding the GPU (idle policy allocation) is no process's. */
    s->gpus[0].allocated_uj = 20000000;
    free(text);
    text = render(s, EXPOSITION_COMPAT_PREFIX, NULL);
    assert_non_null(
        strstr(text, "my_gpu_process_gpu_energy_joules_total{gpu=\"0\"} 1999.999999\n"));
    snapshot_unref(s);
}

/* Parses "J.uuuuuu" into µJ; the exposition promises exactly six decimals for energy. */
static uint64_t parse_micro(const char *v) {
    char *end;
    unsigned long long whole = strtoull(v, &end, 10), frac;

    assert_int_equal(*end, '.');
    v = end + 1;
    frac = strtoull(v, &end, 10);
    assert_int_equal(end - v, 6);
    return whole * 1000000 + frac;
}

/* Sums the values of all lines starting with `head` (name and label prefix). */
static uint64_t sum_lines(const char *text, const char *head, unsigned *ret_count) {
    uint64_t sum = 0;
    unsigned count = 0;

    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, head, strlen(head)) != 0)
            continue;
        sum += parse_micro(strstr(l, "} ") + 2);
        count++;
    }
    *ret_count = count;
    return sum;
}

static void test_conservation_visible_in_text(void **state) {
    struct snapshot *s = sample_snapshot_new();
    _cleanup_(freep) char *text = NULL;
    unsigned n;
    uint64_t procs0, unattr0, gpu0, procs1, unattr1, gpu1;

    assert_non_null(s);
    text = render(s, NULL, NULL);
    procs0 = sum_lines(text, "joulestat_gpu_process_energy_joules_total{pid=\"4", &n);
    assert_int_equal(n, 6); /* three processes on GPU 0, two series each */
    unattr0 = sum_lines(text, "joulestat_gpu_unattributed_energy_joules_total{gpu=\"0\"", &n);
    assert_int_equal(n, _UNATTR_MAX - 1); /* one per reason; "system" is CPU only */
    gpu0 = sum_lines(text, "joulestat_gpu_energy_joules_total{gpu=\"0\"", &n);
    assert_int_equal(n, 1);
    assert_int_equal(gpu0, SAMPLE_GPU0_ENERGY_UJ);
    assert_int_equal(procs0 + unattr0, gpu0);
    assert_int_equal(procs0, 2019999999);

    procs1 = sum_lines(text, "joulestat_gpu_process_energy_joules_total{pid=\"5151\"", &n);
    assert_int_equal(n, 2);
    unattr1 = sum_lines(text, "joulestat_gpu_unattributed_energy_joules_total{gpu=\"1\"", &n);
    gpu1 = sum_lines(text, "joulestat_gpu_energy_joules_total{gpu=\"1\"", &n);
    assert_int_equal(procs1 + unattr1, gpu1);
    snapshot_unref(s);
}

/* Every sample belongs to the family whose HELP and TYPE precede it; no family twice;
 * the return value and joulestat_series both count the sample lines. */
static void test_structure(void **state) {
    struct snapshot *s = sample_snapshot_new();
    _cleanup_(freep) char *text = NULL;
    char families[64][96], current[96] = "";
    unsigned n_families = 0, samples = 0, helps = 0;
    int series;

    assert_non_null(s);
    text = render(s, NULL, &series);
    for (char *l = text; *l;) {
        char *nl = strchr(l, '\n'), name[96];

        assert_non_null(nl);
        *nl = '\0';
        if (strncmp(l, "# HELP ", 7) == 0) {
            helps++;
        } else if (strncmp(l, "# TYPE ", 7) == 0) {
            assert_int_equal(sscanf(l + 7, "%95s", current), 1);
            for (unsigned i = 0; i < n_families; i++)
                assert_string_not_equal(families[i], current);
            assert_true(n_families < 64);
            strcpy(families[n_families++], current);
        } else {
            size_t len = strcspn(l, "{ ");

            assert_true(len < sizeof(name));
            memcpy(name, l, len);
            name[len] = '\0';
            assert_string_equal(name, current);
            samples++;
        }
        l = nl + 1;
    }
    assert_int_equal(helps, n_families);
    assert_int_equal(samples, (unsigned)series);
    snapshot_unref(s);
    /* The last line is joulestat_series with that same count. */
    {
        _cleanup_(freep) char *again = NULL;
        char want[64];
        struct snapshot *s2 = sample_snapshot_new();

        again = render(s2, NULL, &series);
        (void)snprintf(want, sizeof(want), "\njoulestat_series %d\n", series);
        assert_int_equal(strcmp(again + strlen(again) - strlen(want), want), 0);
        snapshot_unref(s2);
    }
}

static void test_invalid_values_not_emitted(void **state) {
    struct snapshot *s = sample_snapshot_new();
    _cleanup_(freep) char *text = NULL;

    assert_non_null(s);
    s->gpus[0].power_watts = (double)NAN;                 /* valid flag set, value not finite */
    s->gpu_processes[0].sm_util_ratio = (double)INFINITY; /* util gauges for pid 4242 go */
    s->last_sample_duration_seconds = (double)NAN;
    text = render(s, NULL, NULL);
    assert_null(strstr(text, "joulestat_gpu_power_watts{"));
    assert_null(strstr(text, "# TYPE joulestat_gpu_power_watts"));
    assert_null(strstr(text, "sm_utilization_ratio{pid=\"4242\""));
    assert_non_null(strstr(text, "sm_utilization_ratio{pid=\"4343\""));
    assert_null(strstr(text, "joulestat_sample_duration_seconds"));
    /* util_valid=false and memory_valid=false and start 0 for pid 4444 */
    assert_null(strstr(text, "utilization_ratio{pid=\"4444\""));
    assert_null(strstr(text, "memory_used_bytes{pid=\"4444\""));
    assert_null(strstr(text, "start_time_seconds{pid=\"4444\""));
    assert_non_null(strstr(text, "joulestat_gpu_process_active{pid=\"4444\""));
    snapshot_unref(s);
}

static void test_empty_snapshot(void **state) {
    struct snapshot *s = snapshot_new();
    _cleanup_(freep) char *text = NULL;
    int series;

    assert_non_null(s);
    text = render(s, NULL, &series);
    /* build_info, sample_duration (0), samples_total, scrape_duration, series */
    assert_int_equal(series, 5);
    assert_string_equal(text,
                        "# HELP joulestat_build_info Always 1; the version is in the label.\n"
                        "# TYPE joulestat_build_info gauge\n"
                        "joulestat_build_info{version=\"0.1.0-test\"} 1\n"
                        "# HELP joulestat_sample_duration_seconds Duration of the last sampler "
                        "tick in seconds.\n"
                        "# TYPE joulestat_sample_duration_seconds gauge\n"
                        "joulestat_sample_duration_seconds 0\n"
                        "# HELP joulestat_samples_total Sampler ticks since start.\n"
                        "# TYPE joulestat_samples_total counter\n"
                        "joulestat_samples_total 0\n"
                        "# HELP joulestat_scrape_duration_seconds Time the previous scrape took "
                        "to render, in seconds.\n"
                        "# TYPE joulestat_scrape_duration_seconds gauge\n"
                        "joulestat_scrape_duration_seconds 0.0025\n"
                        "# HELP joulestat_series Number of series in this exposition, this one "
                        "included.\n"
                        "# TYPE joulestat_series gauge\n"
                        "joulestat_series 5\n");
    snapshot_unref(s);
}

static void test_errors(void **state) {
    struct snapshot *s = sample_snapshot_new();
    struct exposition_options o = {.metric_prefix = "bad-prefix"};
    struct strbuf sb;

    assert_non_null(s);
    strbuf_init(&sb);
    ASSERT_ERRNO(exposition_render(s, &o, &sb), EINVAL);
    assert_int_equal(sb.len, 0);
    o.metric_prefix = "9lives";
    ASSERT_ERRNO(exposition_render(s, &o, &sb), EINVAL);
    o.metric_prefix = "";
    ASSERT_ERRNO(exposition_render(s, &o, &sb), EINVAL);
    ASSERT_ERRNO(exposition_render(NULL, NULL, &sb), EINVAL);
    ASSERT_ERRNO(exposition_render(s, NULL, NULL), EINVAL);
    /* The snapshot's prefix is used when the options have none. */
    s->metric_prefix = "custom_prefix";
    ASSERT_OK(exposition_render(s, NULL, &sb));
    assert_non_null(strstr(sb.buf, "\ncustom_prefix_active{pid=\"4242\""));
    /* A buffer that already failed reports -ENOMEM rather than a truncated render. */
    strbuf_reset(&sb);
    sb.error = -ENOMEM;
    ASSERT_ERRNO(exposition_render(s, NULL, &sb), ENOMEM);
    strbuf_done(&sb);
    snapshot_unref(s);
}

static void check_escape(const char *in, size_t max, const char *want) {
    struct strbuf sb;

    strbuf_init(&sb);
    promtext_put_label_value(&sb, in, max);
    assert_int_equal(strbuf_error(&sb), 0);
    assert_string_equal(sb.buf ? sb.buf : "", want);
    strbuf_done(&sb);
}

static void test_escaping(void **state) {
    check_escape("plain", SIZE_MAX, "plain");
    check_escape("", SIZE_MAX, "");
    check_escape("a\\b", SIZE_MAX, "a\\\\b");
    check_escape("say \"hi\"", SIZE_MAX, "say \\\"hi\\\"");
    check_escape("two\nlines\n", SIZE_MAX, "two\\nlines\\n");
    check_escape("tab\there", SIZE_MAX, "tab\there");
    check_escape("caf\xc3\xa9", SIZE_MAX, "caf\xc3\xa9");             /* é stays */
    check_escape("\xe2\x82\xac", SIZE_MAX, "\xe2\x82\xac");           /* € stays */
    check_escape("\xf0\x9f\x98\x80!", SIZE_MAX, "\xf0\x9f\x98\x80!"); /* 4-byte stays */
    check_escape("a\xff"
                 "b",
                 SIZE_MAX,
                 "a\xef\xbf\xbd"
                 "b");                                              /* stray byte */
    check_escape("\xc0\x80", SIZE_MAX, "\xef\xbf\xbd\xef\xbf\xbd"); /* overlong NUL */
    check_escape("\xe0\x80\xaf", SIZE_MAX, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    check_escape("\xed\xa0\x80", SIZE_MAX, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* surrogate */
    check_escape("\xf4\x90\x80\x80", SIZE_MAX,
                 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* > U+10FFFF */
    check_escape("x\xe2\x82", SIZE_MAX, "x\xef\xbf\xbd\xef\xbf\xbd"); /* truncated */
    /* max bounds the read: a cut multi-byte sequence is replaced, not over-read. */
    check_escape("\xe2\x82\xac", 2, "\xef\xbf\xbd\xef\xbf\xbd");
    check_escape("abcdef", 3, "abc");
}

/* Fixed-size fields (max their size) are scanned a word at a time: what comes after the
 * NUL never shows, and a byte needing work is found wherever it sits in a word. */
static void test_escaping_fields(void **state) {
    char field[40];

    memset(field, 'x', sizeof(field));
    memcpy(field, "0123456789abcdef", 17);
    check_escape(field, sizeof(field), "0123456789abcdef");
    for (size_t at = 0; at < 23; at++) {
        char want[64];

        memset(field, 'y', sizeof(field));
        memcpy(field, "abcdefghijklmnopqrstuvw", 24);
        field[at] = '"';
        (void)snprintf(want, sizeof(want), "%.*s\\\"%s", (int)at, field, field + at + 1);
        check_escape(field, sizeof(field), want);
        field[at] = '\n';
        (void)snprintf(want, sizeof(want), "%.*s\\n%s", (int)at, field, field + at + 1);
        check_escape(field, sizeof(field), want);
        field[at] = '\xff';
        (void)snprintf(want, sizeof(want), "%.*s\xef\xbf\xbd%s", (int)at, field, field + at + 1);
        check_escape(field, sizeof(field), want);
    }
    memset(field, 'z', sizeof(field)); /* no NUL at all: max ends it */
    check_escape(field, sizeof(field), "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
}

static void check_double(double v, const char *want) {
    struct strbuf sb;

    strbuf_init(&sb);
    promtext_put_double(&sb, v);
    assert_string_equal(sb.buf, want);
    strbuf_done(&sb);
}

static void test_doubles(void **state) {
    uint64_t seed = 7;

    check_double(0, "0");
    check_double(1, "1");
    check_double(-3, "-3");
    check_double(0.39, "0.39");
    check_double(70.5, "70.5");
    check_double(-0.000731, "-0.000731");
    check_double(1700000000.25, "1700000000.25");
    check_double(8589934592.0, "8589934592");
    check_double(1e-9, "1e-09");
    check_double(0.1 + 0.2, "0.30000000000000004");
    check_double(1e20, "1e+20");
    /* Whatever the path, the text reads back to the same double. */
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = test_rand_next(&seed);
        double v;
        struct strbuf sb;

        memcpy(&v, &bits, sizeof(v));
        if (!isfinite(v))
            continue;
        if (i % 2)
            v = (double)(bits % 100000000) / 1000.0; /* many short decimals */
        strbuf_init(&sb);
        promtext_put_double(&sb, v);
        /* -0 prints as "0", the one value that does not keep its bits. */
        if (!(v < 0) && !(v > 0))
            assert_string_equal(sb.buf, "0");
        else
            assert_memory_equal(&(double){strtod(sb.buf, NULL)}, &v, sizeof(v));
        strbuf_done(&sb);
    }
}

static void test_names(void **state) {
    assert_true(promtext_name_valid("joulestat_gpu_process"));
    assert_true(promtext_name_valid("my_gpu_process"));
    assert_true(promtext_name_valid("_x:y9"));
    assert_false(promtext_name_valid(""));
    assert_false(promtext_name_valid(NULL));
    assert_false(promtext_name_valid("9abc"));
    assert_false(promtext_name_valid("a-b"));
    assert_false(promtext_name_valid("a b"));
    assert_false(promtext_name_valid("é"));
}

/* Lines of text that start with prefix, in order. */
static char *lines_with(const char *text, const char *prefix) {
    struct strbuf sb;

    strbuf_init(&sb);
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);

        if (strncmp(p, prefix, strlen(prefix)) == 0)
            strbuf_append(&sb, p, n);
        p += n;
    }
    return strbuf_steal(&sb, NULL);
}

/* Per-domain CPU series cover the domains some package measures (package and dram here;
 * two packages give one series, an unknown name none), for processes and unseen time. */
static void test_cpu_domains(void **state) {
    static const char *const names[] = {"package", "package", "dram", "bogus"};
    struct snapshot *s = snapshot_new();
    _cleanup_(freep) char *text = NULL, *proc = NULL, *unseen = NULL;

    assert_non_null(s);
    s->rapl = calloc(ARRAY_SIZE(names), sizeof(*s->rapl));
    s->cpu_processes = calloc(1, sizeof(*s->cpu_processes));
    s->workloads = calloc(1, sizeof(*s->workloads));
    assert_true(s->rapl && s->cpu_processes && s->workloads);
    assert_int_equal(snapshot_rapl_domains(s), 0);
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        s->rapl[i].package = i == 1;
        strcpy(s->rapl[i].domain, names[i]);
    }
    s->n_rapl = ARRAY_SIZE(names);
    assert_int_equal(snapshot_rapl_domains(s),
                     (1U << RAPL_DOMAIN_PACKAGE) | (1U << RAPL_DOMAIN_DRAM));

    s->cpu_processes[0] =
        (struct snap_cpu_process){.pid = 7, .energy_uj = {1000000, 2, 3, 4000, 5}, .active = true};
    s->cpu_processes[0].id = labels_new(&(struct snap_identity){.process_name = "worker"});
    s->n_cpu_processes = 1;
    s->workloads[0] = (struct snap_workload){.kind = WORKLOAD_JOB,
                                             .cpu_unseen_valid = true,
                                             .cpu_unseen_uj = {1500000, 6, 7, 250000, 8}};
    s->workloads[0].id = labels_new(&(struct snap_identity){.slurm_job = "42"});
    s->n_workloads = 1;

    text = render(s, NULL, NULL);
    proc = lines_with(text, "joulestat_cpu_process_energy_joules_total{");
    unseen = lines_with(text, "joulestat_cpu_unseen_energy_joules_total{");
    assert_string_equal(proc,
                        "joulestat_cpu_process_energy_joules_total{pid=\"7\","
                        "process_name=\"worker\",pod=\"\",namespace=\"\",container=\"\","
                        "pod_uid=\"\",container_id=\"\",job_id=\"\",unit=\"\",domain=\"package\"} "
                        "1.000000\n"
                        "joulestat_cpu_process_energy_joules_total{pid=\"7\","
                        "process_name=\"worker\",pod=\"\",namespace=\"\",container=\"\","
                        "pod_uid=\"\",container_id=\"\",job_id=\"\",unit=\"\",domain=\"dram\"} "
                        "0.004000\n");
    assert_string_equal(unseen, "joulestat_cpu_unseen_energy_joules_total{domain=\"package\","
                                "pod=\"\",namespace=\"\",container=\"\",pod_uid=\"\","
                                "container_id=\"\",job_id=\"42\",unit=\"\"} 1.500000\n"
                                "joulestat_cpu_unseen_energy_joules_total{domain=\"dram\","
                                "pod=\"\",namespace=\"\",container=\"\",pod_uid=\"\","
                                "container_id=\"\",job_id=\"42\",unit=\"\"} 0.250000\n");
    snapshot_unref(s);
}

/* n workloads of each kind, each with unseen CPU time in both measured domains: series
 * that repeat a label set (labels_put), with flushes between them in a streamed render. */
static struct snapshot *workloads_snapshot_new(size_t n) {
    struct snapshot *s = snapshot_new();

    assert_non_null(s);
    s->rapl = calloc(2, sizeof(*s->rapl));
    s->workloads = calloc(3 * n, sizeof(*s->workloads));
    assert_true(s->rapl && s->workloads);
    strcpy(s->rapl[0].domain, "package");
    s->rapl[0].package = true;
    strcpy(s->rapl[1].domain, "dram");
    s->n_rapl = 2;
    for (size_t i = 0; i < 3 * n; i++) {
        struct snap_workload *w = &s->workloads[i];
        struct snap_identity id = {0};

        w->kind = (enum workload_kind)(i % 3);
        w->active = i % 2;
        w->gpu_energy_uj = 1000003 * i;
        w->cpu_energy_uj = 7 * i;
        w->cpu_unseen_valid = i % 5 != 0;
        w->cpu_unseen_uj[RAPL_DOMAIN_PACKAGE] = 11 * i;
        w->cpu_unseen_uj[RAPL_DOMAIN_DRAM] = 13 * i;
        (void)snprintf(id.namespace_, sizeof(id.namespace_), "ns-%zu", i % 7);
        (void)snprintf(id.pod, sizeof(id.pod), "pod-\"%zu\"", i);
        (void)snprintf(id.container, sizeof(id.container), "c%zu", i);
        (void)snprintf(id.pod_uid, sizeof(id.pod_uid), "uid-%zu", i / 3);
        (void)snprintf(id.container_id, sizeof(id.container_id), "%064zx", i * 977);
        (void)snprintf(id.slurm_job, sizeof(id.slurm_job), "%zu", 1000 + i);
        w->id = labels_new(&id);
        assert_non_null(w->id);
    }
    s->n_workloads = 3 * n;
    return s;
}

struct pieces {
    struct strbuf text;
    size_t count, largest;
    size_t fail_at; /* the call that fails with -EIO; 0: none */
};

static int collect_piece(void *userdata, const char *data, size_t len) {
    struct pieces *p = userdata;

    if (++p->count == p->fail_at)
        return -EIO;
    p->largest = MAX(p->largest, len);
    strbuf_append(&p->text, data, len);
    return 0;
}

/* Rendered through a sink in pieces of any size, the text is exactly the whole render, and
 * no piece (nor what is left at the end) holds much more than a chunk. */
static void test_streamed_render(void **state) {
    static const size_t chunks[] = {0, 1, 37, 200, 4096, 1 << 20};
    struct snapshot *snaps[] = {sample_snapshot_new(), workloads_snapshot_new(40)};

    for (size_t k = 0; k < ARRAY_SIZE(snaps); k++) {
        _cleanup_(freep) char *whole = NULL;
        int series = 0;

        assert_non_null(snaps[k]);
        whole = render(snaps[k], NULL, &series);
        for (size_t c = 0; c < ARRAY_SIZE(chunks); c++) {
            struct exposition_options o = {.version = "0.1.0-test",
                                           .scrape_duration_valid = true,
                                           .scrape_duration_seconds = 0.0025};
            struct pieces p = {0};
            struct exposition_sink sink = {collect_piece, &p, chunks[c]};
            struct strbuf out;

            strbuf_init(&p.text);
            strbuf_init(&out);
            assert_int_equal(exposition_render_to(snaps[k], &o, &out, &sink), series);
            /* One series is at most ~400 bytes here. */
            assert_true(out.len <= chunks[c] + 1024);
            assert_true(p.largest <= chunks[c] + 1024);
            if (chunks[c] < 1000)
                assert_true(p.count > 10);
            strbuf_append(&p.text, out.buf, out.len);
            ASSERT_OK(strbuf_error(&p.text));
            assert_string_equal(p.text.buf, whole);
            strbuf_done(&p.text);
            strbuf_done(&out);
        }
        snapshot_unref(snaps[k]);
    }
}

/* A sink's error ends the render and is what it returns. */
static void test_sink_error(void **state) {
    struct snapshot *s = workloads_snapshot_new(10);
    struct pieces p = {.fail_at = 3};
    struct exposition_sink sink = {collect_piece, &p, 100};
    struct strbuf out;

    strbuf_init(&out);
    strbuf_init(&p.text);
    assert_int_equal(exposition_render_to(s, NULL, &out, &sink), -EIO);
    assert_int_equal(p.count, 3); /* nothing offered after the failure */
    strbuf_done(&out);
    strbuf_done(&p.text);
    snapshot_unref(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_default),
        cmocka_unit_test(test_golden_compat),
        cmocka_unit_test(test_conservation_visible_in_text),
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_invalid_values_not_emitted),
        cmocka_unit_test(test_empty_snapshot),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_escaping_fields),
        cmocka_unit_test(test_doubles),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_cpu_domains),
        cmocka_unit_test(test_streamed_render),
        cmocka_unit_test(test_sink_error),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
