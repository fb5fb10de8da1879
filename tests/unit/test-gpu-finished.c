/* SPDX-License-Identifier: MIT */
/*
 * Accounting mode (nvidia-smi -am 1) in the GPU accounting: processes the driver reports
 * finished, or running without a sample yet, are split with the others, credited ahead of
 * their samples, never counted twice, and every window's energy is conserved exactly.
 */
#include <stdlib.h>
#include <string.h>

#include "macro.h"

#include "gpu-accounting-fixture.h"

/* Accounting mode: a process that finished leaving no sample (pid 300: 50 % for 200 ms)
 * is a consumer with its lifetime utilisation x active time; one that was sampled (pid 200)
 * is split by its samples only, never counted twice. */
static void test_finished_without_samples(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_UNATTRIBUTED, 0);
    struct gpu_finished_process fin[2];
    struct ledger_process *p;
    size_t n = 0;

    tick(f, 0);
    f->procs[0] = (struct gpu_process){.pid = 100, .kinds = GPU_PROCESS_COMPUTE};
    f->dev.n_processes = 1;
    for (uint64_t t = 1; t <= 10; t++) { /* 100 at 40 %, 200 at 10 % in its short life */
        f->utils[n++] = (struct gpu_util_sample){
            .pid = 100, .sm_util = 40, .timestamp_us = f->now_us + t * 100000};
        if (t <= 2)
            f->utils[n++] = (struct gpu_util_sample){
                .pid = 200, .sm_util = 10, .timestamp_us = f->now_us + t * 100000};
    }
    f->dev.n_utils = n;
    fin[0] = (struct gpu_finished_process){
        .pid = 200, .start_us = f->now_us, .active_us = 200000, .gpu_util = 10};
    fin[1] = (struct gpu_finished_process){.pid = 300,
                                           .start_us = f->now_us + 300000,
                                           .active_us = 200000,
                                           .gpu_util = 50,
                                           .max_memory_bytes = 1 << 20};
    f->dev.accounting = true;
    f->dev.n_finished = 2;
    f->dev.finished = fin;
    f->now_us += USEC_PER_SEC;
    /* 60 J by activity (percent-µs; a process's first sample counts the default period,
     * 1/6 s): 100: 40 x (166667 + 9 x 100000), 200: 10 x (166667 + 100000), 300: 50 x
     * 200000 from the accounting record alone */
    tick(f, 60000);
    assert_true(llabs((long long)process_total(f, 100, NULL, NULL) - 46265583) <= 1);
    assert_true(llabs((long long)process_total(f, 200, NULL, NULL) - 2894309) <= 1);
    assert_true(llabs((long long)process_total(f, 300, NULL, NULL) - 10840108) <= 1);
    ASSERT_OK(ledger_process_get(&f->ledger, 0, 300, 0, &(struct snap_identity){0}, &p));
    assert_true(p->start_time_seconds > 1.7e9); /* the driver's start time */
    assert_conserved(f);
    fixture_free(f);
}

/* pid's samples at util every 100 ms, the k-th at t0 + k x 100 ms for k in [from, to]. */
static void add_samples(struct fixture *f, size_t *n, uint32_t pid, uint32_t util, uint64_t t0,
                        uint64_t from, uint64_t to) {
    for (uint64_t k = from; k <= to; k++)
        f->utils[(*n)++] =
            (struct gpu_util_sample){.pid = pid, .sm_util = util, .timestamp_us = t0 + k * 100000};
}

/* The first window of the accounting-mode tests: a baseline tick, then pid 100 running at
 * 40 %, sampled every 100 ms for a second, in accounting mode. Returns the window's start. */
static uint64_t steady_first_window(struct fixture *f, size_t *n) {
    uint64_t t0;

    tick(f, 0);
    t0 = f->now_us;
    f->procs[0] = (struct gpu_process){.pid = 100, .kinds = GPU_PROCESS_COMPUTE};
    f->dev.n_processes = 1;
    f->dev.accounting = true;
    add_samples(f, n, 100, 40, t0, 1, 10);
    return t0;
}

/* The second tick's readings: pid 300 gone from the list and reported finished as *fin,
 * pid 100 sampled on through the second second. */
static void second_tick_finished(struct fixture *f, uint64_t t0,
                                 const struct gpu_finished_process *fin) {
    size_t n = 0;

    f->dev.n_processes = 1;
    f->dev.n_unsampled = 0;
    add_samples(f, &n, 100, 40, t0, 11, 20);
    f->dev.n_utils = n;
    f->dev.n_finished = 1;
    f->dev.finished = fin;
    f->now_us += USEC_PER_SEC;
}

/* /proc's process at a pid, named "bash" in another pod, started 10 s after the reading's
 * time: for a pid the driver reports finished, a process that took the pid since. */
static int resolve_taken_again(void *userdata, uint32_t pid _unused_, struct process_info *ret) {
    const struct fixture *f = userdata;

    *ret = (struct process_info){.start_ticks = 999,
                                 .start_time_seconds = (double)f->now_us / 1e6 + 10};
    strcpy(ret->id.process_name, "bash");
    strcpy(ret->id.pod_uid, "someone-else");
    return 0;
}

/* One more second, 60 J of it, ticked with the given /proc resolver. */
static void tick_resolved(struct fixture *f, process_resolve_fn resolve) {
    f->now_us += USEC_PER_SEC;
    f->dev.energy_mj += 60000;
    ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, f->now_us * 1000, resolve, f,
                                  &f->ledger, NULL));
}

/* A job that finished between two readings, whose pid another process took before the
 * reading: the job's energy keeps the job's own record (what the driver says of it), not
 * the newcomer's name and pod. A process the driver does not report finished keeps what
 * /proc says. */
static void test_finished_pid_taken_again(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_UNATTRIBUTED, 0);
    struct gpu_finished_process fin;
    struct ledger_process *p;
    size_t n = 0;

    tick(f, 0);
    f->procs[0] = (struct gpu_process){.pid = 100, .kinds = GPU_PROCESS_COMPUTE};
    f->dev.n_processes = 1;
    add_samples(f, &n, 100, 40, f->now_us, 1, 10);
    f->dev.n_utils = n;
    fin = (struct gpu_finished_process){
        .pid = 300, .start_us = f->now_us + 300000, .active_us = 200000, .gpu_util = 50};
    f->dev.accounting = true;
    f->dev.n_finished = 1;
    f->dev.finished = &fin;
    tick_resolved(f, resolve_taken_again);
    ASSERT_OK(ledger_process_get(&f->ledger, 0, 300, 0, &(struct snap_identity){0}, &p));
    assert_string_equal(p->id->pod_uid, "");
    assert_string_equal(p->id->process_name, "");
    assert_true(p->estimated_uj + p->measured_uj > 0);
    ASSERT_OK(ledger_process_get(&f->ledger, 0, 100, 999, &(struct snap_identity){0}, &p));
    assert_string_equal(p->id->pod_uid, "someone-else");
    assert_conserved(f);
    fixture_free(f);
}

/* /proc's process at a pid: started 5 s before the reading, in pod "first". */
static int resolve_first(void *userdata, uint32_t pid _unused_, struct process_info *ret) {
    const struct fixture *f = userdata;

    *ret = (struct process_info){.start_ticks = 111,
                                 .start_time_seconds = (double)f->now_us / 1e6 - 5};
    strcpy(ret->id.pod_uid, "first");
    return 0;
}

/* A baseline tick, then a second in which pid 300 (pod "first", resolve_first()) runs at
 * 40 %, sampled every 100 ms, in accounting mode. Returns the second's start. */
static uint64_t first_window_of_300(struct fixture *f) {
    uint64_t t0;
    size_t n = 0;

    tick(f, 0);
    t0 = f->now_us;
    f->procs[0] = (struct gpu_process){.pid = 300, .kinds = GPU_PROCESS_COMPUTE};
    f->dev.n_processes = 1;
    f->dev.accounting = true;
    add_samples(f, &n, 300, 40, t0, 1, 10);
    f->dev.n_utils = n;
    tick_resolved(f, resolve_first);
    return t0;
}

/* A process seen running, then reported finished: its last window is its own, with the
 * identity the first window resolved (it has left /proc by then). */
static void test_finished_keeps_its_identity(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_UNATTRIBUTED, 0);
    struct gpu_finished_process fin;
    struct ledger_process *p;
    uint64_t t0, first;
    size_t n = 0;

    t0 = first_window_of_300(f);
    ASSERT_OK(ledger_process_get(&f->ledger, 0, 300, 111, &(struct snap_identity){0}, &p));
    first = p->estimated_uj + p->measured_uj;

    n = 0;
    add_samples(f, &n, 300, 40, t0, 11, 15); /* its last half second */
    f->dev.n_utils = n;
    f->dev.n_processes = 0;
    fin = (struct gpu_finished_process){
        .pid = 300, .start_us = t0 - 5 * USEC_PER_SEC, .active_us = 6500000, .gpu_util = 40};
    f->dev.n_finished = 1;
    f->dev.finished = &fin;
    tick_resolved(f, NULL); /* gone from /proc */
    assert_string_equal(p->id->pod_uid, "first");
    assert_true(p->estimated_uj + p->measured_uj > first);
    assert_conserved(f);
    fixture_free(f);
}

/* A process that finished, and a new one running at its pid by the next reading (the pid
 * reused within a window): the running one is the newcomer, resolved anew, not the last
 * window's process at that pid, nor a process with no identity. */
static void test_pid_running_again_after_finishing(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_UNATTRIBUTED, 0);
    struct gpu_finished_process fin;
    struct ledger_process *p;
    uint64_t t0;
    size_t n = 0;

    t0 = first_window_of_300(f);

    n = 0;
    add_samples(f, &n, 300, 40, t0, 11, 20);
    f->dev.n_utils = n;
    fin = (struct gpu_finished_process){
        .pid = 300, .start_us = t0 - 5 * USEC_PER_SEC, .active_us = 6000000, .gpu_util = 40};
    f->dev.n_finished = 1;
    f->dev.finished = &fin;
    tick_resolved(f, resolve_taken_again);
    ASSERT_OK(ledger_process_get(&f->ledger, 0, 300, 999, &(struct snap_identity){0}, &p));
    assert_string_equal(p->id->pod_uid, "someone-else");
    assert_true(p->estimated_uj + p->measured_uj > 0);
    assert_conserved(f);
    fixture_free(f);
}

/* Accounting mode: a job that ended within the last sample period (pid 300: 50 % for
 * 100 ms, ending 50 ms before the tick) drew its energy in this window, though its one
 * sample will come in the next: it is credited here, ahead of that sample, which then
 * counts nothing more (its 30 % over the 1/6 s period is what was credited). */
static void test_finished_just_now_is_credited_ahead(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_UNATTRIBUTED, 0);
    struct gpu_finished_process fin;
    uint64_t first, t0;
    size_t n = 0;

    t0 = steady_first_window(f, &n);
    f->dev.n_utils = n;
    fin = (struct gpu_finished_process){
        .pid = 300, .start_us = t0 + 850000, .active_us = 100000, .gpu_util = 50};
    f->dev.n_finished = 1;
    f->dev.finished = &fin;
    f->now_us += USEC_PER_SEC;
    tick(f, 60000);
    first = process_total(f, 300, NULL, NULL);
    /* 50 x 100000 of 40 x (166667 + 900000) + 50 x 100000: 6.3 J of the 60 */
    assert_true(llabs((long long)first - 6291946) <= 1);
    assert_conserved(f);

    /* Its late sample, stamped after the tick; 100 goes on at 40 %. */
    n = 0;
    f->utils[n++] = (struct gpu_util_sample){
        .pid = 300, .sm_util = 30, .timestamp_us = t0 + USEC_PER_SEC + 50000};
    add_samples(f, &n, 100, 40, t0, 11, 20);
    f->dev.n_utils = n;
    f->dev.n_finished = 0;
    f->now_us += USEC_PER_SEC;
    tick(f, 120000);
    assert_true(process_total(f, 300, NULL, NULL) - first <= 1);
    assert_conserved(f);
    fixture_free(f);
}

/* The same for a job that was sampled: pid 300 at 60 %, last sampled at 0.9 s, ends at
 * 1.95 s, 50 ms before the second tick: the 1.05 s since that sample is credited at its
 * lifetime 60 % in the second window, and its late sample then counts nothing more. Split
 * by SM share, so that the activity credited shows in the energy as it is: ten times the
 * activity of its one earlier sample, it counts as new to the learned split, which would
 * weigh it by what the window's energy leaves (test-intensity.c). */
static void test_finished_tail_is_credited_ahead(void **state _unused_) {
    struct fixture *f = fixture_new_with(&(struct gpu_accounting_options){
        .idle_policy = IDLE_POLICY_UNATTRIBUTED, .sm_share_only = true});
    struct gpu_finished_process fin;
    uint64_t first, t0;
    size_t n = 0;

    t0 = steady_first_window(f, &n);
    f->procs[1] = (struct gpu_process){.pid = 300, .kinds = GPU_PROCESS_COMPUTE};
    f->dev.n_processes = 2;
    f->utils[n++] =
        (struct gpu_util_sample){.pid = 300, .sm_util = 60, .timestamp_us = t0 + 900000};
    f->dev.n_utils = n;
    f->now_us += USEC_PER_SEC;
    tick(f, 60000);

    /* At the next tick it has finished, its last sample still to come. */
    fin = (struct gpu_finished_process){
        .pid = 300, .start_us = t0 + 700000, .active_us = 1250000, .gpu_util = 60};
    second_tick_finished(f, t0, &fin);
    first = process_total(f, 300, NULL, NULL);
    tick(f, 120000);
    /* 60 x 1050000 of 40 x 1000000 + 60 x 1050000: 36.7 J of the 60 */
    assert_true(llabs((long long)(process_total(f, 300, NULL, NULL) - first) - 36699029) <= 1);
    assert_conserved(f);

    /* Its late sample: nothing more. */
    first = process_total(f, 300, NULL, NULL);
    n = 0;
    f->utils[n++] = (struct gpu_util_sample){
        .pid = 300, .sm_util = 60, .timestamp_us = t0 + 2 * USEC_PER_SEC + 50000};
    add_samples(f, &n, 100, 40, t0, 21, 30);
    f->dev.n_utils = n;
    f->dev.n_finished = 0;
    f->now_us += USEC_PER_SEC;
    tick(f, 180000);
    assert_true(process_total(f, 300, NULL, NULL) - first <= 1);
    assert_conserved(f);
    fixture_free(f);
}

/* SM share alone: the second window's split is the activity's, not what the learned model
 * makes of a newcomer beside a known process (its energy alone would say it drew nothing). */
static struct fixture *fixture_sm_share(void) {
    return fixture_new_with(&(struct gpu_accounting_options){
        .idle_policy = IDLE_POLICY_UNATTRIBUTED, .sm_share_only = true});
}

/* pid 300 running at the first tick with no sample yet (started 100 ms before it, 50 % so
 * far) beside pid 100's steady first window. Returns what pid 300 was given; *ret_t0 the
 * window's start. */
static uint64_t unsampled_first_window(struct fixture *f, struct gpu_unsampled_process *run,
                                       uint64_t *ret_t0) {
    uint64_t t0, first;
    size_t n = 0;

    t0 = steady_first_window(f, &n);
    f->procs[1] = (struct gpu_process){.pid = 300, .kinds = GPU_PROCESS_COMPUTE};
    f->dev.n_processes = 2;
    f->dev.n_utils = n;
    *run = (struct gpu_unsampled_process){.pid = 300, .start_us = t0 + 900000, .gpu_util = 50};
    f->dev.n_unsampled = 1;
    f->dev.unsampled = run;
    f->now_us += USEC_PER_SEC;
    tick(f, 60000);
    first = process_total(f, 300, NULL, NULL);
    /* 50 x 100000 of 40 x (166667 + 900000) + 50 x 100000: 6.3 J of the 60 */
    assert_true(llabs((long long)first - 6291946) <= 1);
    assert_conserved(f);
    *ret_t0 = t0;
    return first;
}

/* A job running at a reading with no sample yet (pid 300: started 100 ms before the first
 * tick, 50 % so far) drew its energy in that window: its activity so far, as the driver
 * reports it for a running process, is credited there. When it finishes unsampled at
 * 150 ms (lifetime 50 %), the next window gets only the 50 ms not credited yet. */
static void test_unsampled_running_is_credited_so_far(void **state _unused_) {
    struct fixture *f = fixture_sm_share();
    struct gpu_unsampled_process run;
    struct gpu_finished_process fin;
    uint64_t first, t0;

    first = unsampled_first_window(f, &run, &t0);

    /* Finished at 1.05 s, never sampled: 50 x 50000 of 40 x 1000000 + 50 x 50000. */
    fin = (struct gpu_finished_process){
        .pid = 300, .start_us = t0 + 900000, .active_us = 150000, .gpu_util = 50};
    second_tick_finished(f, t0, &fin);
    tick(f, 120000);
    assert_true(llabs((long long)(process_total(f, 300, NULL, NULL) - first) - 3529412) <= 1);
    assert_conserved(f);
    fixture_free(f);
}

/* Credited while running unsampled, then sampled: its first sample counts only what was
 * not credited. */
static void test_unsampled_credit_is_taken_by_samples(void **state _unused_) {
    struct fixture *f = fixture_sm_share();
    struct gpu_unsampled_process run;
    uint64_t first, t0;
    size_t n = 0;

    first = unsampled_first_window(f, &run, &t0);

    /* Its first samples, at 1.1 and 1.2 s, a period (by now 100 ms, learned from pid 100)
     * each: the first was credited. */
    f->dev.n_unsampled = 0;
    n = 0;
    add_samples(f, &n, 300, 50, t0, 11, 12);
    add_samples(f, &n, 100, 40, t0, 11, 20);
    f->dev.n_utils = n;
    f->now_us += USEC_PER_SEC;
    tick(f, 120000);
    /* 50 x 100000 of 40 x 1000000 + 50 x 100000: 6.7 J of the 60 */
    assert_true(llabs((long long)(process_total(f, 300, NULL, NULL) - first) - 6666667) <= 1);
    assert_conserved(f);
    fixture_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finished_without_samples),
        cmocka_unit_test(test_finished_pid_taken_again),
        cmocka_unit_test(test_pid_running_again_after_finishing),
        cmocka_unit_test(test_finished_keeps_its_identity),
        cmocka_unit_test(test_finished_just_now_is_credited_ahead),
        cmocka_unit_test(test_finished_tail_is_credited_ahead),
        cmocka_unit_test(test_unsampled_running_is_credited_so_far),
        cmocka_unit_test(test_unsampled_credit_is_taken_by_samples),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
