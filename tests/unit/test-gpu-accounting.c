/* SPDX-License-Identifier: MIT */
/*
 * GPU accounting against hand-made NVML readings: every window's energy ends up in
 * processes or in an unattributed reason, to the microjoule, on every path (exclusive,
 * shared, idle, lost GPU, counter reset, glitch, no energy counter, pid reuse, retention).
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "macro.h"
#include "gpu_accounting.h"
#include "gpu_idle_prior.h"
#include "ledger.h"
#include "ledger_state.h"
#include "strbuf.h"

#include "gpu-accounting-fixture.h"

#include <errno.h>
#include <stdio.h>

/* Two processes sampled at the same instants with fixed SM shares. */
static void set_two_processes(struct fixture *f, uint32_t sm_a, uint32_t sm_b, uint64_t from_us,
                              uint64_t to_us, uint64_t step_us) {
    size_t n = 0;

    f->procs[0] = (struct gpu_process){.pid = 100, .kinds = GPU_PROCESS_COMPUTE};
    f->procs[1] = (struct gpu_process){.pid = 200, .kinds = GPU_PROCESS_COMPUTE};
    f->dev.n_processes = 2;
    for (uint64_t t = from_us + step_us; t <= to_us && n + 1 < 64; t += step_us) {
        f->utils[n++] = (struct gpu_util_sample){.pid = 100, .sm_util = sm_a, .timestamp_us = t};
        f->utils[n++] = (struct gpu_util_sample){.pid = 200, .sm_util = sm_b, .timestamp_us = t};
    }
    f->dev.n_utils = n;
}

static void test_exclusive_is_measured(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 60);
    uint64_t measured, estimated;

    f->procs[0] = (struct gpu_process){.pid = 100, .kinds = GPU_PROCESS_COMPUTE};
    f->dev.n_processes = 1;
    tick(f, 1000000); /* baseline */
    f->now_us += 10 * USEC_PER_SEC;
    tick(f, 1700000); /* 700 J in 10 s */
    assert_int_equal(process_total(f, 100, &measured, &estimated), 700000000);
    assert_int_equal(measured, 700000000);
    assert_int_equal(estimated, 0);
    assert_int_equal(ledger_gpu(&f->ledger, 0)->energy_uj, 700000000);
    assert_conserved(f);
    fixture_free(f);
}

static void test_shared_80_20_share_policy(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_SHARE, 30);
    uint64_t measured, estimated;

    tick(f, 0);
    set_two_processes(f, 80, 20, f->now_us, f->now_us + 10 * USEC_PER_SEC, USEC_PER_SEC / 6);
    f->now_us += 10 * USEC_PER_SEC;
    tick(f, 700000); /* 70 W for 10 s */
    assert_int_equal(process_total(f, 100, &measured, &estimated), 560000000);
    assert_int_equal(measured, 0); /* shared windows are estimates, and say so */
    assert_int_equal(process_total(f, 200, NULL, NULL), 140000000);
    assert_conserved(f);
    fixture_free(f);
}

static void test_idle_unattributed_policy(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_UNATTRIBUTED, 30);

    tick(f, 0);
    set_two_processes(f, 60, 20, f->now_us, f->now_us + 10 * USEC_PER_SEC, USEC_PER_SEC / 4);
    f->now_us += 10 * USEC_PER_SEC;
    tick(f, 700000);
    /* 300 J idle kept at device level; 400 J active split 3:1. */
    assert_int_equal(ledger_gpu(&f->ledger, 0)->unattributed_uj[UNATTR_IDLE], 300000000);
    assert_int_equal(process_total(f, 100, NULL, NULL), 300000000);
    assert_int_equal(process_total(f, 200, NULL, NULL), 100000000);
    assert_conserved(f);
    fixture_free(f);
}

static void test_no_consumers_and_learned_idle(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, -1);
    struct ledger_gpu *g;

    tick(f, 0);
    f->now_us += 2 * USEC_PER_SEC;
    tick(f, 120000); /* 60 W with nobody on the GPU */
    g = ledger_gpu(&f->ledger, 0);
    assert_int_equal(g->unattributed_uj[UNATTR_NO_CONSUMER], 120000000);
    f->now_us += 2 * USEC_PER_SEC;
    tick(f, 240000);
    assert_true(g->idle_power_valid);
    assert_true(g->idle_power_watts > 59.9 && g->idle_power_watts < 60.1);
    assert_conserved(f);
    fixture_free(f);
}

static void test_lost_gpu_energy_is_no_data(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);
    struct ledger_gpu *g;

    f->procs[0] = (struct gpu_process){.pid = 100};
    f->dev.n_processes = 1;
    tick(f, 0);
    f->now_us += USEC_PER_SEC;
    tick(f, 100000);
    f->dev.up = false; /* lost for a while */
    f->now_us += USEC_PER_SEC;
    tick(f, 0);
    f->dev.up = true;
    f->now_us += USEC_PER_SEC;
    tick(f, 350000); /* 250 J spanning the outage: nobody can be charged */
    g = ledger_gpu(&f->ledger, 0);
    assert_int_equal(g->unattributed_uj[UNATTR_NO_DATA], 250000000);
    assert_int_equal(process_total(f, 100, NULL, NULL), 100000000);
    f->now_us += USEC_PER_SEC;
    tick(f, 400000); /* back to normal */
    assert_int_equal(process_total(f, 100, NULL, NULL), 150000000);
    assert_int_equal(g->energy_uj, 400000000);
    assert_conserved(f);
    fixture_free(f);
}

/* A GPU whose handle is refused from the start (a device cgroup hides it): no series, and
 * not counted as a GPU down; one refused after it was read is down as any other. */
static void test_refused_gpu_is_not_ours(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);
    struct gpu_tick_stats stats;

    f->dev.up = false;
    f->dev.error = -EACCES;
    ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, f->now_us * 1000, NULL, NULL,
                                  &f->ledger, &stats));
    assert_int_equal(stats.devices_down, 0);
    assert_false(ledger_gpu(&f->ledger, 0)->present);
    f->dev.up = true;
    f->dev.error = 0;
    f->now_us += USEC_PER_SEC;
    tick(f, 1000);
    assert_true(ledger_gpu(&f->ledger, 0)->present);
    f->dev.up = false;
    f->dev.error = -EACCES;
    f->now_us += USEC_PER_SEC;
    ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, f->now_us * 1000, NULL, NULL,
                                  &f->ledger, &stats));
    assert_int_equal(stats.devices_down, 1);
    fixture_free(f);
}

static void test_counter_reset_and_glitch(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);
    struct ledger_gpu *g;

    f->procs[0] = (struct gpu_process){.pid = 100};
    f->dev.n_processes = 1;
    tick(f, 5000000);
    f->now_us += USEC_PER_SEC;
    tick(f, 5100000);
    f->now_us += USEC_PER_SEC;
    tick(f, 40000); /* driver reload: counts from zero again */
    assert_int_equal(process_total(f, 100, NULL, NULL), 140000000);
    f->now_us += USEC_PER_SEC;
    tick(f, 40000 + (UINT64_C(1) << 40)); /* a petajoule in a second: a glitch */
    f->now_us += USEC_PER_SEC;
    tick(f, (40000 + (UINT64_C(1) << 40)) + 100000);
    g = ledger_gpu(&f->ledger, 0);
    assert_int_equal(process_total(f, 100, NULL, NULL), 240000000);
    assert_int_equal(g->energy_uj, 240000000);
    assert_conserved(f);
    fixture_free(f);
}

/* A counter that stops answering (NOT_SUPPORTED from then on): the window it leaves open
 * is integrated from the last power reading, not dropped, and estimated from there. */
static void test_counter_stops_answering(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);
    struct ledger_gpu *g;

    f->procs[0] = (struct gpu_process){.pid = 100};
    f->dev.n_processes = 1;
    tick(f, 1000000);
    f->now_us += USEC_PER_SEC;
    tick(f, 1150000); /* 150 J measured */
    f->dev.energy_valid = false;
    f->now_us += USEC_PER_SEC;
    tick(f, 0); /* 100 W at both ends: 100 J */
    g = ledger_gpu(&f->ledger, 0);
    assert_int_equal(g->energy_uj, 250000000);
    assert_true(g->energy_estimated);
    assert_int_equal(process_total(f, 100, NULL, NULL), 250000000);
    assert_conserved(f);
    /* It answers again: its first reading's window is still the power's (100 J), and the
     * counter's delta counts from there. */
    f->dev.energy_valid = true;
    f->now_us += USEC_PER_SEC;
    tick(f, 7000000);
    assert_int_equal(g->energy_uj, 350000000);
    f->now_us += USEC_PER_SEC;
    tick(f, 7120000);
    assert_int_equal(g->energy_uj, 470000000);
    assert_int_equal(process_total(f, 100, NULL, NULL), 470000000);
    assert_conserved(f);
    fixture_free(f);
}

/* Another board at an index read before (lost, and another enumerated in its place): its
 * counter is not continued from the other's (a delta between two boards' counters is no
 * energy), and its energy counts from its first reading. */
static void test_another_board_at_the_index(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);
    struct ledger_gpu *g;

    f->procs[0] = (struct gpu_process){.pid = 100};
    f->dev.n_processes = 1;
    tick(f, 9000000);
    f->now_us += USEC_PER_SEC;
    tick(f, 9100000); /* 100 J */
    g = ledger_gpu(&f->ledger, 0);
    assert_int_equal(g->energy_uj, 100000000);
    f->dev.up = false; /* lost */
    f->now_us += USEC_PER_SEC;
    tick(f, 9100000);
    f->dev.up = true; /* back: another board, its counter far below the other's */
    strcpy(f->dev.uuid, "GPU-99999999-1111-2222-3333-444444444444");
    f->now_us += USEC_PER_SEC;
    tick(f, 4000000);
    assert_int_equal(g->energy_uj, 100000000);
    f->now_us += USEC_PER_SEC;
    tick(f, 4070000); /* 70 J of the new board */
    assert_int_equal(g->energy_uj, 170000000);
    assert_string_equal(g->uuid, "GPU-99999999-1111-2222-3333-444444444444");
    assert_conserved(f);
    fixture_free(f);
}

/* Another board enumerated at the index while joulestat runs (an H100 lost, an L4 in its
 * place): what was learned of the H100 (its 70 W typical idle, its model) is not the L4's.
 * Carried over, the L4's whole 40 W went to idle for ever, and its processes got nothing. */
static void test_swapped_board_learns_again(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_UNATTRIBUTED, -1); /* idle learned */
    struct ledger_gpu *g = ledger_gpu(&f->ledger, 0);
    uint64_t energy = 5000000, idle_before, procs_before;
    double watts = 0;

    strcpy(f->dev.name, "NVIDIA H100 80GB HBM3");
    tick(f, energy);
    for (int w = 0; w < 60; w++) { /* 400 W, two processes at 60 and 40 % */
        set_two_processes(f, 60, 40, f->now_us, f->now_us + USEC_PER_SEC, USEC_PER_SEC / 6);
        f->now_us += USEC_PER_SEC;
        tick(f, energy += 400000);
    }
    strcpy(f->dev.uuid, "GPU-99999999-1111-2222-3333-444444444444");
    strcpy(f->dev.name, "NVIDIA L4");
    energy = 1000000;
    f->now_us += USEC_PER_SEC;
    tick(f, energy);
    idle_before = g->unattributed_uj[UNATTR_IDLE];
    procs_before = process_total(f, 100, NULL, NULL) + process_total(f, 200, NULL, NULL);
    for (int w = 0; w < 20; w++) { /* 40 W: the L4's 16 W typical idle, 24 W of work */
        set_two_processes(f, 60, 40, f->now_us, f->now_us + USEC_PER_SEC, USEC_PER_SEC / 6);
        f->now_us += USEC_PER_SEC;
        tick(f, energy += 40000);
    }
    /* 20 s at 16 W idle: 320 J; the rest, 480 J, the processes' (to a millijoule: the
     * windows' lengths are the sample clock's). Carried over: 800 J idle, 0 J theirs. */
    assert_true(llabs((long long)(g->unattributed_uj[UNATTR_IDLE] - idle_before) - 320000000) <
                1000);
    assert_true(llabs((long long)(process_total(f, 100, NULL, NULL) +
                                  process_total(f, 200, NULL, NULL) - procs_before) -
                      480000000) < 1000);
    assert_conserved(f);
    fixture_free(f);
    /* The typical idle by name, in whatever case NVML writes "PCIe". */
    assert_true(gpu_typical_idle_watts("NVIDIA A100 80GB PCIe", &watts));
    assert_true(fabs(watts - 40) < 1e-9);
    assert_true(gpu_typical_idle_watts("NVIDIA A100-PCIE-40GB", &watts));
    assert_true(fabs(watts - 40) < 1e-9);
    assert_true(gpu_typical_idle_watts("NVIDIA A100-SXM4-80GB", &watts));
    assert_true(fabs(watts - 55) < 1e-9);
}

/* A name not read this time (the board just reopened) leaves the model label as it was: an
 * empty one would change every series of the GPU. */
static void test_name_not_read(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);

    tick(f, 1000);
    assert_string_equal(ledger_gpu(&f->ledger, 0)->model, "Simulated H100");
    f->dev.name[0] = '\0';
    f->now_us += USEC_PER_SEC;
    tick(f, 2000);
    assert_string_equal(ledger_gpu(&f->ledger, 0)->model, "Simulated H100");
    fixture_free(f);
}

/* A counter step in a short window (the tick after a late one) is energy, not a glitch: it
 * holds what was drawn since the step before. A spike between two good readings loses
 * nothing: the baseline stays, and the reading after it counts both windows, at device
 * level. */
static void test_short_window_and_spike(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);
    struct ledger_gpu *g;

    f->procs[0] = (struct gpu_process){.pid = 100};
    f->dev.n_processes = 1;
    tick(f, 1000000);
    f->now_us += USEC_PER_SEC;
    tick(f, 1000000); /* the counter has not moved yet */
    f->now_us += 10000;
    tick(f, 1070000); /* 70 J in 10 ms: a step of 700 W over the last 100 ms, and more */
    g = ledger_gpu(&f->ledger, 0);
    assert_int_equal(g->energy_uj, 70000000);
    f->now_us += USEC_PER_SEC;
    tick(f, 1070000 + (UINT64_C(1) << 40)); /* garbage */
    f->now_us += USEC_PER_SEC;
    tick(f, 1070000 + 1400000); /* 1400 J in 2 s from the last good reading */
    assert_int_equal(g->energy_uj, 1470000000);
    /* Whose the two windows' energy was, their samples cannot say: no_data. */
    assert_int_equal(g->unattributed_uj[UNATTR_NO_DATA], 1400000000);
    assert_int_equal(process_total(f, 100, NULL, NULL), 70000000);
    assert_conserved(f);
    fixture_free(f);
}

static void test_power_integration_is_estimated(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);
    uint64_t measured, estimated;

    f->dev.energy_valid = false;
    f->procs[0] = (struct gpu_process){.pid = 100};
    f->dev.n_processes = 1;
    f->dev.power_mw = 100000;
    tick(f, 0);
    f->dev.power_mw = 200000;
    f->now_us += 2 * USEC_PER_SEC;
    tick(f, 0); /* trapezoid: (100 + 200) / 2 W * 2 s = 300 J */
    assert_int_equal(process_total(f, 100, &measured, &estimated), 300000000);
    assert_int_equal(measured, 0);
    assert_true(ledger_gpu(&f->ledger, 0)->energy_estimated);
    assert_conserved(f);
    /* A reading no board draws (4.3 MW) is no power: the next good one integrates over it. */
    f->dev.power_mw = UINT32_MAX;
    f->now_us += USEC_PER_SEC;
    tick(f, 0);
    assert_int_equal(ledger_gpu(&f->ledger, 0)->energy_uj, 300000000);
    f->dev.power_mw = 200000;
    f->now_us += USEC_PER_SEC;
    tick(f, 0); /* 200 W for 2 s */
    assert_int_equal(ledger_gpu(&f->ledger, 0)->energy_uj, 700000000);
    assert_conserved(f);
    fixture_free(f);
}

/* The process at the pid: started at *userdata, its command named after its start (a pid
 * reused by the same command in the same container is one series on /metrics, and goes on
 * from the old one's counters: test-ledger-workload-cache). */
static int resolve_with_start(void *userdata, uint32_t pid _unused_, struct process_info *ret) {
    uint64_t start = *(uint64_t *)userdata;

    *ret = (struct process_info){.start_ticks = start};
    (void)snprintf(ret->id.process_name, sizeof(ret->id.process_name), "job-%llu",
                   (unsigned long long)start);
    return 0;
}

static void test_pid_reuse_is_a_new_process(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);
    struct ledger_process *first, *second;
    uint64_t start = 1000;

    f->procs[0] = (struct gpu_process){.pid = 100};
    f->dev.n_processes = 1;
    f->dev.energy_mj = 0;
    ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, f->now_us * 1000,
                                  resolve_with_start, &start, &f->ledger, NULL));
    f->now_us += USEC_PER_SEC;
    f->dev.energy_mj = 100000;
    ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, f->now_us * 1000,
                                  resolve_with_start, &start, &f->ledger, NULL));
    /* The first process exits; a window without it; then the pid is reused. (A pid seen in
     * the previous window is taken to be the same process without reading /proc again.) */
    f->dev.n_processes = 0;
    f->now_us += USEC_PER_SEC;
    f->dev.energy_mj = 120000;
    ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, f->now_us * 1000,
                                  resolve_with_start, &start, &f->ledger, NULL));
    f->dev.n_processes = 1;
    start = 5000; /* same pid, started later: another process */
    f->now_us += USEC_PER_SEC;
    f->dev.energy_mj = 170000;
    ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, f->now_us * 1000,
                                  resolve_with_start, &start, &f->ledger, NULL));
    assert_int_equal(
        ledger_process_get(&f->ledger, 0, 100, 1000, &(struct snap_identity){0}, &first), 0);
    assert_int_equal(
        ledger_process_get(&f->ledger, 0, 100, 5000, &(struct snap_identity){0}, &second), 0);
    assert_string_equal(first->id->process_name, "job-1000");
    assert_int_equal(first->measured_uj, 100000000);
    assert_int_equal(second->measured_uj, 50000000);
    fixture_free(f);
}

/* The wall clock stepped back an hour, later forward two: each window over a step is
 * no_data (counted, not split), and the windows after split as before, the samples stamped
 * by the stepped clock included. */
static void test_wall_clock_steps(void **state _unused_) {
    struct fixture *f = fixture_new_with(
        &(struct gpu_accounting_options){.idle_policy = IDLE_POLICY_SHARE, .sm_share_only = true});
    const int64_t step_s[] = {0, 0, -3600, 0, 7200, 0};
    uint64_t mono_ns = NSEC_PER_SEC, steps = 0;

    for (size_t w = 0; w < ARRAY_SIZE(step_s); w++) {
        struct gpu_tick_stats stats;

        f->now_us += (uint64_t)((int64_t)USEC_PER_SEC + step_s[w] * (int64_t)USEC_PER_SEC);
        mono_ns += NSEC_PER_SEC;
        set_two_processes(f, 75, 25, f->now_us - USEC_PER_SEC, f->now_us, 200000);
        f->dev.energy_mj = w * 100000; /* 100 J a window */
        ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, mono_ns, NULL, NULL,
                                      &f->ledger, &stats));
        steps += stats.clock_steps;
    }
    assert_int_equal(steps, 2);
    assert_int_equal(ledger_gpu(&f->ledger, 0)->energy_uj, 500000000);
    assert_int_equal(ledger_gpu(&f->ledger, 0)->unattributed_uj[UNATTR_NO_DATA], 200000000);
    assert_int_equal(process_total(f, 100, NULL, NULL), 225000000);
    assert_int_equal(process_total(f, 200, NULL, NULL), 75000000);
    assert_conserved(f);
    fixture_free(f);
}

/* A GPU without an energy counter: its power is integrated over monotonic time, so a wall
 * clock step an hour forward is not an hour of energy. */
static void test_power_integration_ignores_wall_steps(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_SHARE, 0);
    uint64_t mono_ns = NSEC_PER_SEC;

    f->dev.energy_valid = false;
    f->dev.power_mw = 100000;
    f->procs[0] = (struct gpu_process){.pid = 100, .kinds = GPU_PROCESS_COMPUTE};
    f->dev.n_processes = 1;
    ASSERT_OK(
        gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, mono_ns, NULL, NULL, &f->ledger, NULL));
    for (int w = 0; w < 2; w++) {
        struct gpu_poll_reading poll = {.index = 0, .power_valid = true, .power_mw = 100000};

        for (int k = 1; k < 10; k++)
            gpu_accounting_poll(f->acc, &poll, 1, mono_ns + (uint64_t)k * 100 * NSEC_PER_MSEC);
        f->now_us += USEC_PER_SEC + (w == 0 ? 3600 * USEC_PER_SEC : 0);
        mono_ns += NSEC_PER_SEC;
        ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, mono_ns, NULL, NULL,
                                      &f->ledger, NULL));
    }
    /* 100 W for 2 s; the stepped window's 100 J is no_data */
    assert_int_equal(ledger_gpu(&f->ledger, 0)->energy_uj, 200000000);
    assert_int_equal(ledger_gpu(&f->ledger, 0)->unattributed_uj[UNATTR_NO_DATA], 100000000);
    assert_int_equal(process_total(f, 100, NULL, NULL), 100000000);
    assert_conserved(f);
    fixture_free(f);
}

static int resolve_counting(void *userdata, uint32_t pid _unused_, struct process_info *ret) {
    (*(unsigned *)userdata)++;
    *ret = (struct process_info){.start_ticks = 7};
    return 0;
}

/* /proc is read for a pid when it first shows up, not at every tick. */
static void test_known_pids_are_not_resolved_again(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);
    unsigned calls = 0;

    set_two_processes(f, 50, 50, f->now_us, f->now_us, 1);
    for (int w = 0; w < 10; w++) {
        f->dev.energy_mj = (uint64_t)w * 1000;
        ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, f->now_us * 1000,
                                      resolve_counting, &calls, &f->ledger, NULL));
        f->now_us += USEC_PER_SEC;
    }
    assert_int_equal(calls, 2);
    assert_conserved(f);
    fixture_free(f);
}

static void test_retention_keeps_then_drops(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);
    uint64_t retention = 300 * NSEC_PER_SEC;
    struct ledger_process *p;

    f->procs[0] = (struct gpu_process){.pid = 100};
    f->dev.n_processes = 1;
    tick(f, 0);
    f->now_us += USEC_PER_SEC;
    tick(f, 100000);
    ledger_sweep(&f->ledger, f->now_us * 1000, f->now_us * 1000, retention);
    assert_int_equal(f->ledger.processes.size, 1);
    f->dev.n_processes = 0; /* exited */
    f->now_us += USEC_PER_SEC;
    tick(f, 110000);
    ledger_sweep(&f->ledger, f->now_us * 1000, f->now_us * 1000, retention);
    assert_int_equal(f->ledger.processes.size, 1);
    assert_int_equal(ledger_process_get(&f->ledger, 0, 100, 0, &(struct snap_identity){0}, &p), 0);
    assert_false(p->active);
    assert_int_equal(p->measured_uj, 100000000);
    f->now_us += 301 * USEC_PER_SEC;
    ledger_sweep(&f->ledger, f->now_us * 1000, f->now_us * 1000, retention);
    assert_int_equal(f->ledger.processes.size, 0);
    fixture_free(f);
}

/* A shared GPU with 100 processes over many windows, random shares: exact every tick. */
static void test_many_windows_conserve(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 40);
    uint64_t rng = 42, energy = 0;

    tick(f, 0);
    for (int w = 0; w < 200; w++) {
        size_t n = 0;

        f->dev.n_processes = 0;
        for (uint32_t pid = 1; pid <= 5; pid++)
            f->procs[f->dev.n_processes++] =
                (struct gpu_process){.pid = pid, .memory_valid = true, .used_memory_bytes = pid};
        for (uint64_t t = 1; t <= 6; t++)
            for (uint32_t pid = 1; pid <= 5 && n < 64; pid++)
                f->utils[n++] = (struct gpu_util_sample){
                    .pid = pid + (uint32_t)test_rand_below(&rng, 3), /* some pids not listed */
                    .sm_util = (uint32_t)test_rand_below(&rng, 120), /* some invalid */
                    .timestamp_us = f->now_us + t * 100000,
                };
        f->dev.n_utils = n;
        f->now_us += 600000;
        energy += test_rand_below(&rng, 500000);
        tick(f, energy);
        assert_conserved(f);
    }
    assert_int_equal(ledger_gpu(&f->ledger, 0)->energy_uj, energy * 1000);
    fixture_free(f);
}

/* Windows with the same consumers book to the entries the last window found, until a
 * sweep frees entries: then they are looked up again, never booked to freed memory (ASan;
 * without it the window's energy would vanish from the ledger). */
static void test_same_consumers_after_sweep(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 0);

    set_two_processes(f, 60, 40, f->now_us, f->now_us + 3 * USEC_PER_SEC, USEC_PER_SEC);
    tick(f, 0);
    for (int w = 1; w <= 3; w++) { /* the same two pids every window */
        f->now_us += USEC_PER_SEC;
        tick(f, (uint64_t)w * 100000);
        assert_conserved(f);
    }
    assert_int_equal(process_total(f, 100, NULL, NULL) + process_total(f, 200, NULL, NULL),
                     300000000);
    /* Retention 0 and a sweep after their last booking: both entries are freed. */
    ledger_sweep(&f->ledger, f->now_us * 1000 + 1, f->now_us * 1000 + 1, 0);
    assert_int_equal(f->ledger.processes.size, 0);
    f->now_us += USEC_PER_SEC;
    tick(f, 400000); /* the same pids again: new entries get the window */
    assert_int_equal(f->ledger.processes.size, 2);
    /* (The freed entries took their 300 J with them: that is what retention 0 asks.) */
    assert_int_equal(process_total(f, 100, NULL, NULL) + process_total(f, 200, NULL, NULL),
                     100000000);
    for (int r = 0; r < _UNATTR_MAX; r++)
        assert_int_equal(ledger_gpu(&f->ledger, 0)->unattributed_uj[r], 0);
    fixture_free(f);
}

/* Running processes in pid order (as the NVML source lists them) are indexed by
 * bisection, in any other order through a pid map: the split is the same. Samples also
 * name a pid that is not running (400). */
static void test_process_order_does_not_matter(void **state _unused_) {
    static const uint32_t orders[2][3] = {{100, 200, 300}, {300, 100, 200}};
    uint64_t totals[2][4];

    for (int o = 0; o < 2; o++) {
        struct fixture *f = fixture_new(IDLE_POLICY_EVEN, 30);
        size_t n = 0;

        for (int i = 0; i < 3; i++)
            f->procs[i] = (struct gpu_process){.pid = orders[o][i]};
        f->dev.n_processes = 3;
        for (uint64_t t = 1; t <= 5; t++)
            for (uint32_t pid = 100; pid <= 400; pid += 100)
                f->utils[n++] = (struct gpu_util_sample){
                    .pid = pid, .sm_util = pid / 10, .timestamp_us = f->now_us + t * 100000};
        f->dev.n_utils = n;
        tick(f, 0);
        f->now_us += 600000;
        tick(f, 150000);
        assert_conserved(f);
        for (uint32_t pid = 100; pid <= 400; pid += 100)
            totals[o][pid / 100 - 1] = process_total(f, pid, NULL, NULL);
        fixture_free(f);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(totals[0][i], totals[1][i]);
    assert_true(totals[0][3] > 0 && totals[0][2] > totals[0][0]);
}

/* MIG: instances weighted by GPM activity x size (3g at 80 %, 1g at 20 %, 2g at 50 %),
 * the 2g instance's two processes by memory (3:1); without GPM by size alone (3:1:2). */
static void test_mig_instances(void **state _unused_) {
    static const struct gpu_mig_instance with_gpm[3] = {
        {.gpu_instance = 1,
         .slices = 3,
         .profile = "3g.40gb",
         .activity_valid = true,
         .sm_activity = 0.8},
        {.gpu_instance = 2,
         .slices = 1,
         .profile = "1g.10gb",
         .activity_valid = true,
         .sm_activity = 0.2},
        {.gpu_instance = 5,
         .slices = 2,
         .profile = "2g.20gb",
         .activity_valid = true,
         .sm_activity = 0.5},
    };
    /* 400 J active: 2.4 : 0.2 : 1.0 of 3.6, and 3 : 1 : 2 of 6 */
    static const uint64_t want[2][4] = {{266666667, 22222222, 83333333, 27777778},
                                        {200000000, 66666667, 100000000, 33333333}};

    for (int gpm = 1; gpm >= 0; gpm--) {
        struct fixture *f = fixture_new(IDLE_POLICY_UNATTRIBUTED, 30);
        struct gpu_mig_instance mig[3];
        struct ledger_process *p;

        memcpy(mig, with_gpm, sizeof(mig));
        for (int k = 0; k < 3; k++)
            mig[k].activity_valid = gpm;
        f->procs[0] = (struct gpu_process){.pid = 100, .gpu_instance = 1, .compute_instance = 0};
        f->procs[1] = (struct gpu_process){.pid = 200, .gpu_instance = 2, .compute_instance = 0};
        f->procs[2] = (struct gpu_process){.pid = 300,
                                           .gpu_instance = 5,
                                           .compute_instance = 0,
                                           .memory_valid = true,
                                           .used_memory_bytes = 3 << 20};
        f->procs[3] = (struct gpu_process){.pid = 400,
                                           .gpu_instance = 5,
                                           .compute_instance = 0,
                                           .memory_valid = true,
                                           .used_memory_bytes = 1 << 20};
        f->dev.n_processes = 4;
        f->dev.mig_enabled = true;
        f->dev.utils_supported = false;
        f->dev.n_mig = 3;
        f->dev.mig = mig;
        tick(f, 0);
        f->now_us += 10 * USEC_PER_SEC;
        tick(f, 700000);
        for (uint32_t pid = 100; pid <= 400; pid += 100) {
            int64_t got = (int64_t)process_total(f, pid, NULL, NULL);
            assert_true(llabs(got - (int64_t)want[gpm ? 0 : 1][pid / 100 - 1]) <= 1);
        }
        assert_conserved(f);
        ASSERT_OK(ledger_process_get(&f->ledger, 0, 300, 0, &(struct snap_identity){0}, &p));
        assert_int_equal(p->gpu_instance, 5);
        assert_string_equal(p->mig_profile, "2g.20gb");
        assert_int_equal(ledger_gpu(&f->ledger, 0)->sharing, SHARING_MIG);
        fixture_free(f);
    }
}

/* f's state through the state file's text into a new fixture of the same options, as a
 * restart does; the new fixture's device reads the same counter. */
static struct fixture *restarted(struct fixture *f, enum idle_policy policy) {
    struct gpu_baseline saved[LEDGER_MAX_GPUS], got[LEDGER_MAX_GPUS] = {0};
    struct fixture *g = fixture_new(policy, -1);
    /* Restarted at once, on the same boot: the downtime is the time the test moves on. */
    struct state_clock clock = {.boot_id = "b", .boot_us = 1, .wall_us = f->now_us};
    struct strbuf text;
    unsigned bad = 0;

    gpu_accounting_baselines(f->acc, saved);
    strbuf_init(&text);
    ledger_state_format(&f->ledger, saved, &clock, &text);
    ASSERT_OK(strbuf_error(&text));
    assert_true(ledger_state_restore(&g->ledger, text.buf, text.len, &clock, 0, got, NULL, &bad) >
                0);
    strbuf_done(&text);
    gpu_accounting_restore_baselines(g->acc, got);
    g->now_us = f->now_us;
    return g;
}

/* The idle a GPU showed survives a restart: on a GPU busy from then on, whose idle could
 * not be learned again, the process pays above the 60 W it was seen to idle at, not above
 * an H100's typical 70 W. Another board at that index (another UUID) gets neither the
 * idle nor a downtime delta between two boards' counters. */
static void test_restart_keeps_the_idle_of_the_same_gpu(void **state _unused_) {
    struct fixture *f = fixture_new(IDLE_POLICY_UNATTRIBUTED, -1), *g, *h;
    struct gpu_tick_stats stats;
    struct ledger_gpu *lg;

    tick(f, 1000);
    f->now_us += 4 * USEC_PER_SEC;
    tick(f, 241000); /* 60 W with nobody on the GPU */
    f->now_us += 2 * USEC_PER_SEC;
    tick(f, 361000);
    assert_true(ledger_gpu(&f->ledger, 0)->idle_power_valid);

    g = restarted(f, IDLE_POLICY_UNATTRIBUTED);
    g->procs[0] = (struct gpu_process){.pid = 100, .kinds = GPU_PROCESS_COMPUTE};
    g->dev.n_processes = 1;
    g->now_us += 10 * USEC_PER_SEC;
    tick(g, 1361000); /* 1000 J while joulestat was down */
    lg = ledger_gpu(&g->ledger, 0);
    assert_int_equal(lg->unattributed_uj[UNATTR_DOWNTIME], 1000000000);
    assert_true(lg->idle_power_valid && fabs(lg->idle_power_watts - 60.0) < 1e-9);
    g->now_us += USEC_PER_SEC;
    tick(g, 1461000); /* 100 W: 60 W idle, 40 W the process's */
    assert_true(llabs((int64_t)lg->unattributed_uj[UNATTR_IDLE] - 60000000) <= 1000000);
    assert_true(llabs((int64_t)process_total(g, 100, NULL, NULL) - 40000000) <= 1000000);
    assert_conserved(g);

    h = restarted(f, IDLE_POLICY_UNATTRIBUTED);
    strcpy(h->dev.uuid, "GPU-99999999-1111-2222-3333-444444444444");
    h->dev.energy_mj = 5000;
    h->now_us += 10 * USEC_PER_SEC;
    ASSERT_OK(gpu_accounting_tick(h->acc, &h->dev, 1, h->now_us, h->now_us * 1000, NULL, NULL,
                                  &h->ledger, &stats));
    assert_int_equal(stats.replaced_gpus, 1);
    lg = ledger_gpu(&h->ledger, 0);
    assert_false(lg->idle_power_valid);
    assert_int_equal(lg->unattributed_uj[UNATTR_DOWNTIME], 0);
    h->now_us += USEC_PER_SEC;
    ASSERT_OK(gpu_accounting_tick(h->acc, &h->dev, 1, h->now_us, h->now_us * 1000, NULL, NULL,
                                  &h->ledger, &stats));
    assert_int_equal(stats.replaced_gpus, 0); /* said once */

    /* The replaced board could not be read at first (no UUID yet): the check waits. */
    fixture_free(h);
    h = restarted(f, IDLE_POLICY_UNATTRIBUTED);
    h->dev.up = false;
    h->dev.uuid[0] = '\0';
    h->now_us += 10 * USEC_PER_SEC;
    ASSERT_OK(gpu_accounting_tick(h->acc, &h->dev, 1, h->now_us, h->now_us * 1000, NULL, NULL,
                                  &h->ledger, &stats));
    assert_int_equal(stats.replaced_gpus, 0);
    h->dev.up = true;
    strcpy(h->dev.uuid, "GPU-99999999-1111-2222-3333-444444444444");
    h->dev.energy_mj = 5000;
    h->now_us += USEC_PER_SEC;
    ASSERT_OK(gpu_accounting_tick(h->acc, &h->dev, 1, h->now_us, h->now_us * 1000, NULL, NULL,
                                  &h->ledger, &stats));
    assert_int_equal(stats.replaced_gpus, 1);
    assert_int_equal(ledger_gpu(&h->ledger, 0)->unattributed_uj[UNATTR_DOWNTIME], 0);

    fixture_free(f);
    fixture_free(g);
    fixture_free(h);
}

/* One tick of a restarted fixture, seconds later, the board reading uuid ("" unread) and
 * its counter at energy_mj. */
static void tick_named(struct fixture *h, uint64_t seconds, const char *uuid, uint64_t energy_mj,
                       struct gpu_tick_stats *stats) {
    (void)snprintf(h->dev.uuid, sizeof(h->dev.uuid), "%s", uuid);
    h->dev.energy_mj = energy_mj;
    h->now_us += seconds * USEC_PER_SEC;
    ASSERT_OK(gpu_accounting_tick(h->acc, &h->dev, 1, h->now_us, h->now_us * 1000, NULL, NULL,
                                  &h->ledger, stats));
}

/* A board up but not named yet after a restart (its UUID unread): nothing is bridged from
 * the saved counter before the UUID says which board it is, and the GPU's uuid label stays
 * what it was; a board that stays unnamed is taken as another after a while, and counted
 * from there. */
static void test_restart_waits_for_the_board_name(void **state _unused_) {
    static const char *other = "GPU-99999999-1111-2222-3333-444444444444";
    struct fixture *f = fixture_new(IDLE_POLICY_UNATTRIBUTED, -1), *h;
    struct gpu_tick_stats stats;
    uint64_t restored_uj;

    tick(f, 1000);
    f->now_us += 4 * USEC_PER_SEC;
    tick(f, 241000);
    h = restarted(f, IDLE_POLICY_UNATTRIBUTED);
    tick_named(h, 10, "", 5000, &stats);
    assert_int_equal(ledger_gpu(&h->ledger, 0)->unattributed_uj[UNATTR_DOWNTIME], 0);
    assert_string_not_equal(ledger_gpu(&h->ledger, 0)->uuid, "");
    tick_named(h, 1, other, 5100, &stats);
    assert_int_equal(stats.replaced_gpus, 1);
    assert_int_equal(ledger_gpu(&h->ledger, 0)->unattributed_uj[UNATTR_DOWNTIME], 0);
    fixture_free(h);

    h = restarted(f, IDLE_POLICY_UNATTRIBUTED);
    restored_uj = ledger_gpu(&h->ledger, 0)->energy_uj;
    for (uint64_t i = 1; i <= 40; i++)
        tick_named(h, 1, "", 5000 + i * 100, &stats);
    assert_int_equal(ledger_gpu(&h->ledger, 0)->unattributed_uj[UNATTR_DOWNTIME], 0);
    assert_true(ledger_gpu(&h->ledger, 0)->energy_uj > restored_uj);
    fixture_free(f);
    fixture_free(h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exclusive_is_measured),
        cmocka_unit_test(test_shared_80_20_share_policy),
        cmocka_unit_test(test_idle_unattributed_policy),
        cmocka_unit_test(test_no_consumers_and_learned_idle),
        cmocka_unit_test(test_lost_gpu_energy_is_no_data),
        cmocka_unit_test(test_refused_gpu_is_not_ours),
        cmocka_unit_test(test_counter_reset_and_glitch),
        cmocka_unit_test(test_short_window_and_spike),
        cmocka_unit_test(test_name_not_read),
        cmocka_unit_test(test_counter_stops_answering),
        cmocka_unit_test(test_another_board_at_the_index),
        cmocka_unit_test(test_swapped_board_learns_again),
        cmocka_unit_test(test_power_integration_is_estimated),
        cmocka_unit_test(test_pid_reuse_is_a_new_process),
        cmocka_unit_test(test_known_pids_are_not_resolved_again),
        cmocka_unit_test(test_wall_clock_steps),
        cmocka_unit_test(test_power_integration_ignores_wall_steps),
        cmocka_unit_test(test_retention_keeps_then_drops),
        cmocka_unit_test(test_many_windows_conserve),
        cmocka_unit_test(test_same_consumers_after_sweep),
        cmocka_unit_test(test_process_order_does_not_matter),
        cmocka_unit_test(test_mig_instances),
        cmocka_unit_test(test_restart_keeps_the_idle_of_the_same_gpu),
        cmocka_unit_test(test_restart_waits_for_the_board_name),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
