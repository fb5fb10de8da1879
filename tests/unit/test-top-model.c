/* SPDX-License-Identifier: MIT */
/* `joulestat top`'s model (src/top/top_model.c, top_view.c): rows per level from the
 * exposition, power from counter deltas over the last window the device counters moved
 * in, counter resets, rows that come and go, intensity weighted by GPU energy, sort and
 * filter. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "top_model.h"
#include "top_view.h"

#define NEAR(a, b) (((a) - (b)) < 1e-6 && ((b) - (a)) < 1e-6)
#define ASSERT_NEAR(a, b)                                                                          \
    do {                                                                                           \
        double _a = (a), _b = (b);                                                                 \
        if (!NEAR(_a, _b))                                                                         \
            fail_msg("%s = %.9g, expected %.9g", #a, _a, _b);                                      \
    } while (0)

/* One process on the GPU (per-process family named with `prefix`). */
static int gpu_process(char *buf, size_t size, const char *prefix, unsigned pid, unsigned gpu,
                       const char *name, const char *pod, const char *uid, double joules) {
    return snprintf(buf, size,
                    "%s_energy_joules_total{pid=\"%u\",gpu=\"%u\",process_name=\"%s\",pod=\"%s\","
                    "namespace=\"ml\",container=\"c\",pod_uid=\"%s\",container_id=\"cid-%s\","
                    "energy_estimated=\"false\"} %.6f\n"
                    "%s_energy_joules_total{pid=\"%u\",gpu=\"%u\",process_name=\"%s\",pod=\"%s\","
                    "namespace=\"ml\",container=\"c\",pod_uid=\"%s\",container_id=\"cid-%s\","
                    "energy_estimated=\"true\"} 0.000000\n",
                    prefix, pid, gpu, name, pod, uid, uid, joules, prefix, pid, gpu, name, pod, uid,
                    uid);
}

struct frame {
    double t;
    double gpu_total, rapl_package, rapl_dram;
    double a_gpu, a_cpu, b_gpu, c_gpu;
    bool with_b, with_c;
};

/* A node: process a (pid 10, train, pod p1, job 77) and b (pid 11, infer, pod p2), and c
 * (pid 12, late, pod p1) when asked; their container, pod and job rows. */
static void update(struct top_model *m, const struct frame *f) {
    char text[16384];
    int n = 0;

    n += snprintf(text + n, sizeof(text) - (size_t)n,
                  "# HELP x y\njoulestat_last_sample_timestamp_seconds %.3f\n"
                  "joulestat_gpu_energy_joules_total{gpu=\"0\",uuid=\"u\",model=\"m\"} %.6f\n"
                  "joulestat_rapl_energy_joules_total{package=\"0\",domain=\"package\"} %.6f\n"
                  "joulestat_rapl_energy_joules_total{package=\"0\",domain=\"dram\"} %.6f\n"
                  "joulestat_rapl_energy_joules_total{package=\"0\",domain=\"core\"} 99999\n",
                  f->t, f->gpu_total, f->rapl_package, f->rapl_dram);
    n += gpu_process(text + n, sizeof(text) - (size_t)n, "joulestat_gpu_process", 10, 0, "train",
                     "p1", "u1", f->a_gpu);
    n += snprintf(
        text + n, sizeof(text) - (size_t)n,
        "joulestat_gpu_process_power_intensity_watts{pid=\"10\",gpu=\"0\","
        "process_name=\"train\",pod=\"p1\"} 300\n"
        "joulestat_cpu_process_energy_joules_total{pid=\"10\",process_name=\"train\","
        "pod=\"p1\",namespace=\"ml\",container=\"c\",pod_uid=\"u1\",container_id=\"cid-u1\","
        "job_id=\"77\",unit=\"\",domain=\"package\"} %.6f\n"
        "joulestat_cpu_process_energy_joules_total{pid=\"10\",process_name=\"train\","
        "pod=\"p1\",namespace=\"ml\",container=\"c\",pod_uid=\"u1\",container_id=\"cid-u1\","
        "job_id=\"77\",unit=\"\",domain=\"core\"} 5000\n"
        "joulestat_pod_energy_joules_total{namespace=\"ml\",pod=\"p1\",pod_uid=\"u1\","
        "component=\"gpu\"} %.6f\n"
        "joulestat_pod_energy_joules_total{namespace=\"ml\",pod=\"p1\",pod_uid=\"u1\","
        "component=\"cpu\"} %.6f\n"
        "joulestat_container_energy_joules_total{namespace=\"ml\",pod=\"p1\","
        "container=\"c\",container_id=\"cid-u1\",component=\"gpu\"} %.6f\n"
        "joulestat_slurm_job_energy_joules_total{job_id=\"77\",component=\"cpu\"} %.6f\n",
        f->a_cpu, f->a_gpu + f->c_gpu, f->a_cpu, f->a_gpu + f->c_gpu, f->a_cpu);
    if (f->with_b) {
        /* my-gpu-exporter's names, and its README's name of the same energy (no _total),
         * which must not count twice. */
        n += gpu_process(text + n, sizeof(text) - (size_t)n, "my_gpu_process", 11, 1, "infer", "p2",
                         "u2", f->b_gpu);
        n += snprintf(text + n, sizeof(text) - (size_t)n,
                      "my_gpu_process_energy_joules{pid=\"11\",gpu=\"1\",process_name=\"infer\","
                      "pod=\"p2\",namespace=\"ml\",container=\"c\",pod_uid=\"u2\","
                      "container_id=\"cid-u2\",energy_estimated=\"false\"} %.6f\n",
                      f->b_gpu);
        n += snprintf(text + n, sizeof(text) - (size_t)n,
                      "my_gpu_process_power_intensity_watts{pid=\"11\",gpu=\"1\","
                      "process_name=\"infer\"} 100\n"
                      "joulestat_pod_energy_joules_total{namespace=\"ml\",pod=\"p2\","
                      "pod_uid=\"u2\",component=\"gpu\"} %.6f\n",
                      f->b_gpu);
    }
    if (f->with_c) {
        n += gpu_process(text + n, sizeof(text) - (size_t)n, "joulestat_gpu_process", 12, 0, "late",
                         "p1", "u1", f->c_gpu);
        n += snprintf(text + n, sizeof(text) - (size_t)n,
                      "joulestat_gpu_process_power_intensity_watts{pid=\"12\",gpu=\"0\","
                      "process_name=\"late\"} 100\n");
    }
    assert_true((size_t)n < sizeof(text));
    ASSERT_OK(top_model_update(m, text, (size_t)n, 0));
}

static struct top_row *row(struct top_model *m, enum top_level l, const char *key) {
    for (size_t i = 0; i < m->levels[l].n; i++)
        if (strcmp(m->levels[l].rows[i].key, key) == 0)
            return &m->levels[l].rows[i];
    fail_msg("no %s row '%s'", top_level_to_string(l), key);
    return NULL;
}

static void test_frames(void **state) {
    struct top_model m;
    struct frame f = {.t = 100,
                      .gpu_total = 200,
                      .rapl_package = 100,
                      .rapl_dram = 10,
                      .a_gpu = 100,
                      .a_cpu = 5,
                      .b_gpu = 50,
                      .with_b = true};
    struct top_row *a, *b, *p1, *job;

    top_model_init(&m);
    /* Frame 1: energies, no power yet. */
    update(&m, &f);
    assert_int_equal(m.levels[TOP_LEVEL_PROCESS].n, 2);
    a = row(&m, TOP_LEVEL_PROCESS, "10 train");
    ASSERT_NEAR(a->energy_j[TOP_GPU], 100);
    ASSERT_NEAR(a->energy_j[TOP_CPU], 5); /* package + dram, never core */
    assert_string_equal(a->pod, "p1");
    assert_string_equal(a->job, "77");
    assert_int_equal(a->gpus, 1);
    assert_false(a->power_valid[TOP_GPU] || a->power_valid[TOP_CPU]);
    assert_true(a->intensity_valid);
    ASSERT_NEAR(a->intensity_w, 300);
    b = row(&m, TOP_LEVEL_PROCESS, "11 infer");
    assert_int_equal(b->gpus, 2);
    p1 = row(&m, TOP_LEVEL_POD, "u1");
    assert_string_equal(p1->name, "p1");
    assert_string_equal(p1->namespace_, "ml");
    assert_int_equal(p1->processes, 1);
    ASSERT_NEAR(top_row_energy(p1), 105);
    job = row(&m, TOP_LEVEL_JOB, "77");
    assert_int_equal(job->processes, 1);
    ASSERT_NEAR(job->intensity_w, 300); /* joined through the process's job_id */
    assert_int_equal(row(&m, TOP_LEVEL_CONTAINER, "cid-u1")->processes, 1);
    assert_false(m.node_power_valid[TOP_GPU]);

    /* Frame 2, 2 s later: the GPUs moved, RAPL did not (no scan yet). */
    f.t = 102, f.gpu_total = 450, f.a_gpu = 300;
    update(&m, &f);
    a = row(&m, TOP_LEVEL_PROCESS, "10 train");
    assert_true(a->power_valid[TOP_GPU]);
    ASSERT_NEAR(a->power_w[TOP_GPU], 100);
    assert_false(a->power_valid[TOP_CPU]);
    ASSERT_NEAR(row(&m, TOP_LEVEL_PROCESS, "11 infer")->power_w[TOP_GPU], 0);
    ASSERT_NEAR(row(&m, TOP_LEVEL_POD, "u1")->power_w[TOP_GPU], 100);
    assert_true(m.node_power_valid[TOP_GPU]);
    ASSERT_NEAR(m.node_power_w[TOP_GPU], 125);

    /* Frame 3, at 104: a CPU scan (RAPL moved: the CPU window is 100..104), the GPU
     * counters did not move (the GPU powers stay); b is gone, c is new. */
    f.t = 104, f.rapl_package = 140, f.a_cpu = 15, f.with_b = false, f.with_c = true, f.c_gpu = 20;
    update(&m, &f);
    assert_int_equal(m.levels[TOP_LEVEL_PROCESS].n, 2);
    a = row(&m, TOP_LEVEL_PROCESS, "10 train");
    ASSERT_NEAR(a->power_w[TOP_CPU], 2.5);
    ASSERT_NEAR(a->power_w[TOP_GPU], 100);
    ASSERT_NEAR(top_row_power(a), 102.5);
    ASSERT_NEAR(m.node_power_w[TOP_CPU], 10);
    /* c's counter started before the GPU counters last moved: no power yet. */
    assert_false(row(&m, TOP_LEVEL_PROCESS, "12 late")->power_valid[TOP_GPU]);
    p1 = row(&m, TOP_LEVEL_POD, "u1");
    assert_int_equal(p1->processes, 2);
    /* Weighted by GPU energy: (300 W x 300 J + 100 W x 20 J) / 320 J. */
    ASSERT_NEAR(p1->intensity_w, (300.0 * 300 + 100.0 * 20) / 320);
    for (size_t i = 0; i < m.levels[TOP_LEVEL_POD].n; i++)
        assert_string_not_equal(m.levels[TOP_LEVEL_POD].rows[i].key, "u2");

    /* Frame 4, at 105: a's counter was reset (300 -> 30): it counts from 0 again, over
     * the GPU window 102..105. */
    f.t = 105, f.gpu_total = 500, f.a_gpu = 30, f.c_gpu = 26;
    update(&m, &f);
    ASSERT_NEAR(row(&m, TOP_LEVEL_PROCESS, "10 train")->power_w[TOP_GPU], 10);
    ASSERT_NEAR(row(&m, TOP_LEVEL_PROCESS, "12 late")->power_w[TOP_GPU], 2);

    /* The same sample again (a scrape between two samples): nothing moves. */
    f.a_gpu = 33;
    update(&m, &f);
    ASSERT_NEAR(row(&m, TOP_LEVEL_PROCESS, "10 train")->power_w[TOP_GPU], 10);
    ASSERT_NEAR(row(&m, TOP_LEVEL_PROCESS, "10 train")->energy_j[TOP_GPU], 33);

    /* A pod whose own series carry no names takes them from its processes. */
    {
        static const char text[] =
            "joulestat_pod_energy_joules_total{namespace=\"\",pod=\"\",pod_uid=\"u9\","
            "component=\"gpu\"} 5\n"
            "joulestat_container_energy_joules_total{namespace=\"\",pod=\"\",container=\"\","
            "container_id=\"cid-u9\",component=\"gpu\"} 5\n"
            "g_energy_joules_total{pid=\"9\",gpu=\"0\",process_name=\"n\",pod=\"named\","
            "namespace=\"ns\",container=\"box\",pod_uid=\"u9\",container_id=\"cid-u9\","
            "energy_estimated=\"true\"} 5\n";
        struct top_model named;
        struct top_row *c;

        top_model_init(&named);
        ASSERT_OK(top_model_update(&named, text, strlen(text), 1));
        assert_string_equal(row(&named, TOP_LEVEL_POD, "u9")->name, "named");
        assert_string_equal(row(&named, TOP_LEVEL_POD, "u9")->namespace_, "ns");
        c = row(&named, TOP_LEVEL_CONTAINER, "cid-u9");
        assert_string_equal(c->name, "box");
        assert_string_equal(c->pod, "named");
        top_model_done(&named);
    }

    /* A page without samples leaves the model as it was. */
    ASSERT_ERRNO(top_model_update(&m, "<html>nope</html>\n", 18, 200), ENODATA);
    assert_int_equal(m.levels[TOP_LEVEL_PROCESS].n, 2);
    top_model_done(&m);
}

/* Without joulestat_last_sample_timestamp_seconds or device counters: the caller's clock,
 * every frame a window. */
static void test_plain_clock(void **state) {
    static const char f1[] = "x_energy_joules_total{pid=\"1\",gpu=\"0\",process_name=\"p\","
                             "energy_estimated=\"true\"} 10\n";
    static const char f2[] = "x_energy_joules_total{pid=\"1\",gpu=\"0\",process_name=\"p\","
                             "energy_estimated=\"true\"} 14\n";
    struct top_model m;

    top_model_init(&m);
    ASSERT_OK(top_model_update(&m, f1, strlen(f1), 50));
    ASSERT_OK(top_model_update(&m, f2, strlen(f2), 52));
    ASSERT_NEAR(row(&m, TOP_LEVEL_PROCESS, "1 p")->power_w[TOP_GPU], 2);
    assert_false(m.node_valid[TOP_GPU]);
    /* The clock steps back an hour: that frame starts again, the next has a rate. */
    ASSERT_OK(top_model_update(&m, f1, strlen(f1), 52 - 3600));
    assert_false(row(&m, TOP_LEVEL_PROCESS, "1 p")->power_valid[TOP_GPU]);
    ASSERT_OK(top_model_update(&m, f2, strlen(f2), 54 - 3600));
    assert_true(row(&m, TOP_LEVEL_PROCESS, "1 p")->power_valid[TOP_GPU]);
    ASSERT_NEAR(row(&m, TOP_LEVEL_PROCESS, "1 p")->power_w[TOP_GPU], 2);
    top_model_done(&m);
}

/* A process on two GPUs whose series of one of them ages out: its sum falls, but that is a
 * series gone, not a counter reset: no power for that window, not its whole energy over
 * one. A reset (as many series, a smaller sum) still counts from 0. */
static void test_series_gone_is_no_spike(void **state) {
    static const char f1[] = "x_energy_joules_total{pid=\"1\",gpu=\"0\",process_name=\"p\","
                             "energy_estimated=\"true\"} 10\n"
                             "x_energy_joules_total{pid=\"1\",gpu=\"1\",process_name=\"p\","
                             "energy_estimated=\"true\"} 3600000\n";
    static const char f2[] = "x_energy_joules_total{pid=\"1\",gpu=\"0\",process_name=\"p\","
                             "energy_estimated=\"true\"} 14\n";
    static const char f3[] = "x_energy_joules_total{pid=\"1\",gpu=\"0\",process_name=\"p\","
                             "energy_estimated=\"true\"} 20\n";
    static const char f4[] = "x_energy_joules_total{pid=\"1\",gpu=\"0\",process_name=\"p\","
                             "energy_estimated=\"true\"} 4\n";
    struct top_model m;

    (void)state;
    top_model_init(&m);
    ASSERT_OK(top_model_update(&m, f1, strlen(f1), 50));
    ASSERT_OK(top_model_update(&m, f2, strlen(f2), 51));
    assert_false(row(&m, TOP_LEVEL_PROCESS, "1 p")->power_valid[TOP_GPU]);
    ASSERT_OK(top_model_update(&m, f3, strlen(f3), 52));
    ASSERT_NEAR(row(&m, TOP_LEVEL_PROCESS, "1 p")->power_w[TOP_GPU], 6);
    ASSERT_OK(top_model_update(&m, f4, strlen(f4), 54));
    ASSERT_NEAR(row(&m, TOP_LEVEL_PROCESS, "1 p")->power_w[TOP_GPU], 2);
    top_model_done(&m);
}

/* Twenty thousand processes on one page, twice: each keeps its one row (rows are found by
 * their key's hash, never by scanning the others: a page of a million series stays a
 * million look-ups). */
static void test_many_rows(void **state) {
    const size_t n = 20000;
    size_t cap = n * 96, len = 0;
    char *text = malloc(cap);
    struct top_model m;

    (void)state;
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "x_energy_joules_total{pid=\"%zu\",gpu=\"0\",process_name=\"p\","
                                "energy_estimated=\"true\"} %zu\n",
                                i + 1, i);
    assert_true(len < cap);
    top_model_init(&m);
    ASSERT_OK(top_model_update(&m, text, len, 50));
    ASSERT_OK(top_model_update(&m, text, len, 51));
    assert_int_equal(m.levels[TOP_LEVEL_PROCESS].n, n);
    ASSERT_NEAR(row(&m, TOP_LEVEL_PROCESS, "20000 p")->energy_j[TOP_GPU], 19999);
    top_model_done(&m);
    free(text);
}

/* A page with more processes than top keeps: the first TOP_ROWS_MAX are kept, the rest
 * dropped and counted, and the frame is taken all the same (its pods too). */
static void test_rows_capped(void **state) {
    const size_t n = TOP_ROWS_MAX + 500;
    size_t cap = n * 96 + 256, len = 0;
    char *text = malloc(cap);
    struct top_model m;

    (void)state;
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "x_energy_joules_total{pid=\"%zu\",gpu=\"0\",process_name=\"p\","
                                "energy_estimated=\"true\"} 1\n",
                                i + 1);
    len += (size_t)snprintf(text + len, cap - len,
                            "joulestat_pod_energy_joules_total{namespace=\"n\",pod=\"a\","
                            "pod_uid=\"u\",component=\"gpu\"} 5\n");
    assert_true(len < cap);
    top_model_init(&m);
    ASSERT_OK(top_model_update(&m, text, len, 50));
    assert_int_equal(m.levels[TOP_LEVEL_PROCESS].n, TOP_ROWS_MAX);
    assert_int_equal(m.levels[TOP_LEVEL_PROCESS].dropped, 500);
    assert_int_equal(m.levels[TOP_LEVEL_POD].n, 1);
    assert_int_equal(m.levels[TOP_LEVEL_POD].dropped, 0);
    top_model_done(&m);
    free(text);
}

static void test_view(void **state) {
    struct frame f = {.t = 1,
                      .gpu_total = 1,
                      .rapl_package = 1,
                      .a_gpu = 100,
                      .a_cpu = 1,
                      .b_gpu = 50,
                      .with_b = true,
                      .with_c = true,
                      .c_gpu = 70};
    struct top_view v = {.level = TOP_LEVEL_PROCESS, .sort = TOP_SORT_ENERGY};
    const struct top_row **rows;
    struct top_model m;
    size_t n;

    top_model_init(&m);
    update(&m, &f);
    ASSERT_OK(top_view_rows(&m, &v, &rows, &n));
    assert_int_equal(n, 3);
    assert_int_equal(rows[0]->pid, 10); /* 101 J */
    assert_int_equal(rows[1]->pid, 12); /* 70 J */
    assert_int_equal(rows[2]->pid, 11); /* 50 J */
    free(rows);
    v.reverse = true;
    ASSERT_OK(top_view_rows(&m, &v, &rows, &n));
    assert_int_equal(rows[0]->pid, 11);
    free(rows);
    v = (struct top_view){.level = TOP_LEVEL_PROCESS, .sort = TOP_SORT_NAME};
    ASSERT_OK(top_view_rows(&m, &v, &rows, &n));
    assert_string_equal(rows[0]->name, "infer");
    assert_string_equal(rows[2]->name, "train");
    free(rows);
    /* The filter: any text of the row, any case; the pid. */
    strcpy(v.filter, "INF");
    ASSERT_OK(top_view_rows(&m, &v, &rows, &n));
    assert_int_equal(n, 1);
    assert_int_equal(rows[0]->pid, 11);
    free(rows);
    strcpy(v.filter, "p1");
    ASSERT_OK(top_view_rows(&m, &v, &rows, &n));
    assert_int_equal(n, 2);
    free(rows);
    strcpy(v.filter, "12");
    ASSERT_OK(top_view_rows(&m, &v, &rows, &n));
    assert_int_equal(n, 1);
    assert_string_equal(rows[0]->name, "late");
    free(rows);
    strcpy(v.filter, "nothing-like-it");
    ASSERT_OK(top_view_rows(&m, &v, &rows, &n));
    assert_int_equal(n, 0);
    free(rows);
    /* Another level, by intensity: p1 (300 W and 100 W) above p2 (100 W). */
    v = (struct top_view){.level = TOP_LEVEL_POD, .sort = TOP_SORT_INTENSITY};
    ASSERT_OK(top_view_rows(&m, &v, &rows, &n));
    assert_int_equal(n, 2);
    assert_string_equal(rows[0]->name, "p1");
    free(rows);
    assert_string_equal(top_sort_to_string(TOP_SORT_GPU_ENERGY), "GPU_J");
    assert_string_equal(top_level_plural(TOP_LEVEL_JOB), "jobs");
    top_model_done(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frames),
        cmocka_unit_test(test_plain_clock),
        cmocka_unit_test(test_series_gone_is_no_spike),
        cmocka_unit_test(test_many_rows),
        cmocka_unit_test(test_rows_capped),
        cmocka_unit_test(test_view),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
