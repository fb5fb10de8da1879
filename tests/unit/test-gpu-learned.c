/* SPDX-License-Identifier: MIT */
/*
 * The learned split as the GPU accounting runs it, on readings made from a known power
 * model: a busy-waiting process (40 W at 100 % SM) beside a trainer (450 W), both with duty
 * cycles, on a GPU with 70 W idle and a 50 W context uplift. The learned split gives each
 * its own energy where SM share gives the spinner several times its own; the intensities
 * and the split method are exported; every window conserves to the microjoule. Power of a
 * GPU without an energy counter is integrated at the poll rate.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>

#include "gpu_accounting.h"
#include "macro.h"
#include "ledger.h"

#define T0_US UINT64_C(1700000000000000)
#define SECOND_US UINT64_C(1000000)
#define PERIOD_US UINT64_C(167000)
#define IDLE_W 70.0
#define CTX_W 50.0
#define TRAINER_W 450.0
#define SPINNER_W 40.0
#define TRAINER 100
#define SPINNER 200

/* SM percent of each process at time t (µs after T0): duty cycles of different periods. */
static unsigned trainer_sm(uint64_t t) {
    return (t % (7 * SECOND_US)) < 5600 * 1000 ? 60 : 10;
}

static unsigned spinner_sm(uint64_t t) {
    return ((t + SECOND_US) % (5 * SECOND_US)) < 3 * SECOND_US ? 40 : 0;
}

static double power_w(uint64_t t) {
    return IDLE_W + CTX_W + TRAINER_W * trainer_sm(t) / 100.0 + SPINNER_W * spinner_sm(t) / 100.0;
}

struct node {
    struct gpu_accounting *acc;
    struct ledger ledger;
    struct gpu_device_reading dev;
    struct gpu_process procs[2];
    struct gpu_util_sample utils[64];
    double energy_mj;  /* the counter, exact */
    double truth_j[2]; /* each process's own energy */
};

static void node_init(struct node *n, bool sm_share_only) {
    struct gpu_accounting_options o = {
        .idle_policy = IDLE_POLICY_UNATTRIBUTED,
        .idle_power_watts = -1,
        .sm_share_only = sm_share_only,
    };

    *n = (struct node){0};
    ASSERT_OK(gpu_accounting_new(&o, &n->acc));
    ledger_init(&n->ledger);
    n->procs[0] = (struct gpu_process){.pid = TRAINER};
    n->procs[1] = (struct gpu_process){.pid = SPINNER};
    n->dev = (struct gpu_device_reading){
        .index = 0,
        .uuid = "GPU-11111111-2222-3333-4444-555555555555",
        .name = "NVIDIA H100 80GB HBM3",
        .up = true,
        .energy_valid = true,
        .utils_supported = true,
        .n_processes = 2,
        .processes = n->procs,
        .utils = n->utils,
    };
}

static void node_done(struct node *n) {
    gpu_accounting_free(n->acc);
    ledger_done(&n->ledger);
}

/* One window: the counter and the truth at 1 ms, the driver's samples (one per process
 * per period, each at its own phase, none while a process is idle), then the tick. */
static void node_window(struct node *n, uint64_t from_us, uint64_t len_us) {
    size_t k = 0;

    for (uint64_t t = from_us; t < from_us + len_us; t += 1000) {
        n->energy_mj += power_w(t); /* W x 1 ms = mJ */
        n->truth_j[0] += (TRAINER_W * trainer_sm(t) / 100.0 + CTX_W / 2) / 1000.0;
        n->truth_j[1] += (SPINNER_W * spinner_sm(t) / 100.0 + CTX_W / 2) / 1000.0;
    }
    for (uint64_t phase = 0, off = 0; phase < 2; phase++, off = 60000)
        for (uint64_t t = from_us < off ? off : ((from_us - off) / PERIOD_US + 1) * PERIOD_US + off;
             t <= from_us + len_us; t += PERIOD_US) {
            unsigned sm =
                phase == 0 ? trainer_sm(t - PERIOD_US / 2) : spinner_sm(t - PERIOD_US / 2);

            if (sm == 0 || t <= from_us)
                continue;
            n->utils[k++] = (struct gpu_util_sample){
                .pid = phase == 0 ? TRAINER : SPINNER,
                .sm_util = sm,
                .timestamp_us = T0_US + t,
            };
        }
    n->dev.n_utils = k;
    n->dev.energy_mj = (uint64_t)n->energy_mj;
    ASSERT_OK(gpu_accounting_tick(n->acc, &n->dev, 1, T0_US + from_us + len_us,
                                  (from_us + len_us) * 1000, NULL, NULL, &n->ledger, NULL));
}

static void node_second(struct node *n, uint64_t from_us) {
    node_window(n, from_us, SECOND_US);
}

static const struct ledger_process *process(struct node *n, uint32_t pid) {
    struct ledger_process *p;

    ASSERT_OK(ledger_process_get(&n->ledger, 0, pid, 0, &(struct snap_identity){0}, &p));
    return p;
}

static double attributed_j(struct node *n, uint32_t pid) {
    const struct ledger_process *p = process(n, pid);

    return (double)(p->measured_uj + p->estimated_uj) / 1e6;
}

static void assert_conserved(struct node *n) {
    const struct ledger_gpu *g = ledger_gpu(&n->ledger, 0);
    uint64_t sum = process(n, TRAINER)->estimated_uj + process(n, TRAINER)->measured_uj +
                   process(n, SPINNER)->estimated_uj + process(n, SPINNER)->measured_uj;

    for (unsigned k = 0; k < _UNATTR_MAX; k++)
        sum += g->unattributed_uj[k];
    assert_int_equal(sum, g->energy_uj);
}

/* Runs 240 s; returns the errors of the two processes after the first minute, relative. */
static void run(struct node *n, double *ret_trainer, double *ret_spinner) {
    double a0 = 0, a1 = 0, t0 = 0, t1 = 0;

    for (uint64_t s = 0; s < 240; s++) {
        if (s == 60) {
            a0 = attributed_j(n, TRAINER);
            a1 = attributed_j(n, SPINNER);
            t0 = n->truth_j[0];
            t1 = n->truth_j[1];
        }
        node_second(n, s * SECOND_US);
        assert_conserved(n);
    }
    *ret_trainer = (attributed_j(n, TRAINER) - a0) / (n->truth_j[0] - t0) - 1;
    *ret_spinner = (attributed_j(n, SPINNER) - a1) / (n->truth_j[1] - t1) - 1;
}

static void test_busy_wait_beside_trainer(void **state _unused_) {
    struct node learned, sm;
    const struct ledger_gpu *g;
    double et, es, sm_et, sm_es;

    node_init(&learned, false);
    node_init(&sm, true);
    run(&learned, &et, &es);
    run(&sm, &sm_et, &sm_es);
    print_message("trainer %+.3f spinner %+.3f (SM share: %+.3f %+.3f)\n", et, es, sm_et, sm_es);

    /* SM share gives the spinner about twice its own and takes it from the trainer. */
    assert_true(sm_es > 0.5);
    assert_true(sm_et < -0.05);
    /* The learned split: both within 10 % of their own energy (measured: +1 %, -8 %; SM
     * share: -16 %, +112 %). */
    assert_true(et > -0.1 && et < 0.1);
    assert_true(es > -0.1 && es < 0.1);

    /* What is exported: each workload's intensity within 10 %, and the method. */
    assert_true(process(&learned, TRAINER)->intensity_valid);
    assert_true(process(&learned, SPINNER)->intensity_valid);
    assert_true(process(&learned, TRAINER)->intensity_watts > 0.9 * TRAINER_W &&
                process(&learned, TRAINER)->intensity_watts < 1.1 * TRAINER_W);
    assert_true(process(&learned, SPINNER)->intensity_watts > 0.9 * SPINNER_W &&
                process(&learned, SPINNER)->intensity_watts < 1.1 * SPINNER_W);
    g = ledger_gpu(&learned.ledger, 0);
    assert_true(g->split_valid);
    assert_true(g->split_windows[SPLIT_LEARNED] > 100); /* of 144 with both active */
    assert_false(process(&sm, TRAINER)->intensity_valid);
    assert_false(ledger_gpu(&sm.ledger, 0)->split_valid);
    node_done(&learned);
    node_done(&sm);
}

/*
 * Windows shorter than the sample period (--sample-interval 100ms): each holds a sample of
 * one process and not the other about half the time. SM share must still give each its
 * SM time's share of the energy, as with 1 s windows; before processes were credited ahead
 * of their samples, the spinner got the trainer's power in the windows it alone was
 * sampled in (+40 % in the validation protocol's replay).
 */
static void test_windows_shorter_than_the_sample_period(void **state _unused_) {
    struct node one, tenth;
    double one_share, tenth_share;

    node_init(&one, true);
    node_init(&tenth, true);
    for (uint64_t ms = 0; ms < 120000; ms += 100) {
        if (ms % 1000 == 0)
            node_second(&one, ms * 1000);
        node_window(&tenth, ms * 1000, 100000);
        assert_conserved(&tenth);
    }
    one_share =
        attributed_j(&one, SPINNER) / (attributed_j(&one, SPINNER) + attributed_j(&one, TRAINER));
    tenth_share = attributed_j(&tenth, SPINNER) /
                  (attributed_j(&tenth, SPINNER) + attributed_j(&tenth, TRAINER));
    print_message("spinner's share: %.4f in 1 s windows, %.4f in 100 ms windows\n", one_share,
                  tenth_share);
    assert_true(fabs(tenth_share - one_share) < 0.05 * one_share);
    node_done(&one);
    node_done(&tenth);
}

/* A GPU without an energy counter: power polled every 100 ms is integrated, so a load that
 * changes within the window is counted; one trapezoid per second would miss it. */
static void test_polled_power_integration(void **state _unused_) {
    struct node n;
    const struct ledger_gpu *g;
    double exact_j = 0;

    node_init(&n, false);
    n.dev.energy_valid = false;
    n.dev.power_valid = true;
    n.dev.n_utils = 0;
    for (uint64_t ms = 0; ms <= 10000; ms += 100) {
        /* 100 W, with 400 W during the middle 500 ms of every second. */
        uint32_t mw = (ms % 1000) >= 300 && (ms % 1000) < 800 ? 400000 : 100000;
        struct gpu_poll_reading poll = {.index = 0, .power_valid = true, .power_mw = mw};

        if (ms % 1000 == 0) {
            n.dev.power_mw = mw;
            ASSERT_OK(gpu_accounting_tick(n.acc, &n.dev, 1, T0_US + ms * 1000, ms * 1000000, NULL,
                                          NULL, &n.ledger, NULL));
        } else
            gpu_accounting_poll(n.acc, &poll, 1, ms * 1000000);
    }
    /* Trapezoids between the 100 ms readings, each second: 100 W for 0.4 s, 400 W for
     * 0.4 s, two ramps of 250 W for 0.1 s = 250 J (one trapezoid a second: 100 J). */
    exact_j = 10 * (100 * 0.4 + 400 * 0.4 + 2 * 250 * 0.1);
    g = ledger_gpu(&n.ledger, 0);
    assert_int_equal(g->energy_uj, (uint64_t)(exact_j * 1e6));
    assert_true(g->energy_estimated);
    assert_conserved(&n);
    node_done(&n);
}

/*
 * A job that starts on a tick, beside a trainer learned by then. Its first sample is the
 * driver's average over a whole period, which reaches back past the tick; the job drew
 * nothing before its start, so all of that sample is the new window's. Placed before the
 * tick, it made the last window's row hold activity without its energy, and the job no
 * longer counted as new in its own window: it got 11.2 J of its 9 J (now 8.5 J).
 */
#define JOB 300
#define JOB_W 200.0
#define JOB_SM 90U
#define JOB_START_US (41 * SECOND_US) /* the trainer is at 10 % then: no time-slicing */
#define JOB_LEN_US UINT64_C(50000)
#define JOB_PHASE_US UINT64_C(125000) /* its first sample comes 40 ms after the tick */
#define JOB_START_TICKS 4100

static int resolve_start(void *userdata _unused_, uint32_t pid, struct process_info *ret) {
    *ret = (struct process_info){
        .start_ticks = pid == JOB ? JOB_START_TICKS : 0,
        .start_time_seconds = (double)(T0_US + (pid == JOB ? JOB_START_US : 0)) / 1e6,
    };
    return 0;
}

static void test_job_started_on_the_tick(void **state _unused_) {
    struct node n;
    struct gpu_process procs[2] = {{.pid = TRAINER}, {.pid = JOB}};
    double job_truth_j = JOB_W * JOB_SM / 100.0 * (double)JOB_LEN_US / 1e6, got;
    struct ledger_process *entry;

    node_init(&n, false);
    n.dev.processes = procs;
    for (uint64_t s = 0; s < 45; s++) {
        uint64_t from = s * SECOND_US, to = from + SECOND_US;
        size_t k = 0;

        for (uint64_t t = from; t < to; t += 1000) {
            bool job = t >= JOB_START_US && t < JOB_START_US + JOB_LEN_US;

            n.energy_mj +=
                IDLE_W + TRAINER_W * trainer_sm(t) / 100.0 + (job ? JOB_W * JOB_SM / 100.0 : 0);
        }
        for (uint64_t t = (from / PERIOD_US + 1) * PERIOD_US; t <= to; t += PERIOD_US)
            n.utils[k++] = (struct gpu_util_sample){.pid = TRAINER,
                                                    .sm_util = trainer_sm(t - PERIOD_US / 2),
                                                    .timestamp_us = T0_US + t};
        /* The job's samples at its own phase: its SM percent over each period. */
        for (uint64_t t = (from / PERIOD_US) * PERIOD_US + JOB_PHASE_US; t <= to; t += PERIOD_US) {
            uint64_t lo = MAX(t - PERIOD_US, JOB_START_US), hi = MIN(t, JOB_START_US + JOB_LEN_US);

            if (t > from && hi > lo)
                n.utils[k++] =
                    (struct gpu_util_sample){.pid = JOB,
                                             .sm_util = (uint32_t)(JOB_SM * (hi - lo) / PERIOD_US),
                                             .timestamp_us = T0_US + t};
        }
        /* Listed at the tick it starts on; gone by the next one. */
        n.dev.n_processes = to == JOB_START_US ? 2 : 1;
        n.dev.n_utils = k;
        n.dev.energy_mj = (uint64_t)n.energy_mj;
        ASSERT_OK(gpu_accounting_tick(n.acc, &n.dev, 1, T0_US + to, to * 1000, resolve_start, NULL,
                                      &n.ledger, NULL));
    }
    ASSERT_OK(
        ledger_process_get(&n.ledger, 0, JOB, JOB_START_TICKS, &(struct snap_identity){0}, &entry));
    got = (double)(entry->measured_uj + entry->estimated_uj) / 1e6;
    print_message("job: %.3f J of %.3f J\n", got, job_truth_j);
    assert_true(fabs(got - job_truth_j) < 0.1 * job_truth_j);
    node_done(&n);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busy_wait_beside_trainer),
        cmocka_unit_test(test_job_started_on_the_tick),
        cmocka_unit_test(test_polled_power_integration),
        cmocka_unit_test(test_windows_shorter_than_the_sample_period),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
