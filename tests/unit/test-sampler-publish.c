/* SPDX-License-Identifier: MIT */
/*
 * How often the sampler publishes a snapshot: sampler_tick() (replay, ps, serve's first
 * tick) every time; the background thread at most once a second between process scans,
 * while it keeps ticking at --sample-interval (docs/PERFORMANCE.md: building a snapshot on
 * every 10 Hz tick cost more than the attribution).
 */
#include "testutil.h"

#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "macro.h"
#include "sampler.h"
#include "snapshot.h"

struct node {
    char root[256], proc[300], sys[300];
    char argv[16][320];
    struct config cfg;
    struct snapshot_slot *slot;
    struct sampler *sampler;
};

/* A procfs with no process and a sysfs without RAPL: ticks do nothing but count. */
static void node_up(struct node *n, const char *scan_interval) {
    const char *args[] = {
        "joulestat",
        "serve",
        "--no-gpu",
        "--rapl-source",
        "off",
        "--kubernetes-enabled=false",
        "--sample-interval",
        "100ms",
        "--process-scan-interval",
        scan_interval,
        "--path.procfs",
        n->proc,
        "--path.sysfs",
        n->sys,
        "--path.dev",
        n->root,
    };
    char *argv[ARRAY_SIZE(args) + 1];

    ASSERT_OK(test_mkdtemp(n->root, sizeof(n->root)));
    (void)snprintf(n->proc, sizeof(n->proc), "%s/proc", n->root);
    (void)snprintf(n->sys, sizeof(n->sys), "%s/sys", n->root);
    ASSERT_OK(
        test_write_file(n->root, "proc/stat", "cpu  1 0 1 100 0 0 0 0 0 0\nbtime 1700000000\n"));
    ASSERT_OK(test_write_file(n->root, "proc/uptime", "100.00 190.00\n"));
    ASSERT_OK(test_write_file(n->root, "sys/class/.keep", ""));
    /* config_parse() takes argv as main() gets it; these strings outlive the config. */
    for (size_t i = 0; i < ARRAY_SIZE(args); i++)
        argv[i] = n->argv[i];
    argv[ARRAY_SIZE(args)] = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(args); i++)
        (void)snprintf(n->argv[i], sizeof(n->argv[i]), "%s", args[i]);
    ASSERT_OK(config_parse((int)ARRAY_SIZE(args), argv, &n->cfg));
    n->slot = snapshot_slot_new();
    assert_non_null(n->slot);
    ASSERT_OK(sampler_new(&n->cfg, n->slot, &n->sampler));
}

static void node_down(struct node *n) {
    n->sampler = sampler_free(n->sampler);
    n->slot = snapshot_slot_free(n->slot);
    test_rm_rf(n->root);
}

static struct snapshot *latest(struct node *n) {
    struct snapshot *s = snapshot_slot_get(n->slot);

    assert_non_null(s);
    return s;
}

static void sleep_ms(long ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L};

    (void)nanosleep(&ts, NULL);
}

static void test_tick_publishes_every_time(void **state) {
    struct node n = {0};

    node_up(&n, "1h");
    for (uint64_t i = 1; i <= 5; i++) {
        struct tick_time t = sampler_now();
        struct snapshot *s;

        ASSERT_OK(sampler_tick(n.sampler, &t));
        s = latest(&n);
        assert_int_equal(s->generation, i);
        assert_int_equal(s->samples_total, i);
        snapshot_unref(s);
    }
    node_down(&n);
}

/* Waits (up to 10 s) until the published generation reaches `gen`; returns that snapshot. */
static struct snapshot *wait_generation(struct node *n, uint64_t gen) {
    uint64_t deadline = clock_monotonic_ns() + 10 * NSEC_PER_SEC;

    for (;;) {
        struct snapshot *s = latest(n);

        if (s->generation >= gen)
            return s;
        snapshot_unref(s);
        assert_true(clock_monotonic_ns() < deadline);
        sleep_ms(20);
    }
}

static void test_thread_publishes_once_a_second(void **state) {
    struct node n = {0};
    struct snapshot *a, *b;
    struct tick_time t;

    node_up(&n, "1h");
    t = sampler_now();
    ASSERT_OK(sampler_tick(n.sampler, &t)); /* as serve does: generation 1, the scan */
    ASSERT_OK(sampler_start(n.sampler));
    a = wait_generation(&n, 2);
    b = wait_generation(&n, 3);
    sampler_stop(n.sampler);

    assert_int_equal(a->generation, 2);
    assert_int_equal(b->generation, 3);
    /* A second apart on the tick clock, so about 10 ticks between them, not one. */
    assert_true(b->timestamp_seconds - a->timestamp_seconds >= 0.99);
    assert_true(b->samples_total >= a->samples_total + 2);
    assert_true(b->samples_total > b->generation);
    snapshot_unref(a);
    snapshot_unref(b);
    node_down(&n);
}

static void test_thread_publishes_after_every_scan(void **state) {
    struct node n = {0};
    struct snapshot *s;
    struct tick_time t;

    /* Scans every tick (a scan interval below the sample interval): every tick publishes. */
    node_up(&n, "10ms");
    t = sampler_now();
    ASSERT_OK(sampler_tick(n.sampler, &t));
    sleep_ms(50); /* so that the thread's first tick, right away, is due for a scan too */
    ASSERT_OK(sampler_start(n.sampler));
    s = wait_generation(&n, 4);
    sampler_stop(n.sampler);
    snapshot_unref(s);
    s = latest(&n);
    assert_int_equal(s->generation, s->samples_total);
    snapshot_unref(s);
    node_down(&n);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tick_publishes_every_time),
        cmocka_unit_test(test_thread_publishes_once_a_second),
        cmocka_unit_test(test_thread_publishes_after_every_scan),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
