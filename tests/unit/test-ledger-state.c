/* SPDX-License-Identifier: MIT */
/*
 * The saved state (--state-dir): every counter of the ledger comes back after a restart,
 * with its labels (escaped characters included) and the GPUs' raw counter baselines;
 * restored entries are inactive until seen again, and then continue from the saved values;
 * text that is not a state is refused with its line, never half-trusted.
 */
#include "testutil.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "ledger_state.h"
#include "strbuf.h"

#define NOW_NS UINT64_C(5000000000)
#define SECOND_US UINT64_C(1000000)

/* The clocks of the save, and of the restart 3 s later on the same boot. */
static const struct state_clock saved_clock = {.boot_id = "3f1e0c6a-boot",
                                               .boot_us = 100 * SECOND_US,
                                               .wall_us = 1800000000 * SECOND_US,
                                               .mono_ns = UINT64_C(9000000000)};
static const struct state_clock now_clock = {.boot_id = "3f1e0c6a-boot",
                                             .boot_us = 103 * SECOND_US,
                                             .wall_us = 1800000003 * SECOND_US,
                                             .mono_ns = NOW_NS};

/* What the last restore said of the time down. */
static struct ledger_restart last_restart;

static int restore_at(struct ledger *l, const char *text, const struct state_clock *now,
                      struct gpu_baseline *b, unsigned *bad) {
    last_restart = (struct ledger_restart){0};
    /* A state of version 1 was written (its file's time) a second before now. */
    return ledger_state_restore(l, text, strlen(text), now, now->wall_us - SECOND_US, b,
                                &last_restart, bad);
}

static int restore(struct ledger *l, const char *text, struct gpu_baseline *b, unsigned *bad) {
    return restore_at(l, text, &now_clock, b, bad);
}

static void fill(struct ledger *l) {
    struct snap_identity pod = {.process_name = "python 3\t%x",
                                .pod_uid = "u-1",
                                .container_id = "c0ffee",
                                .pod = "train",
                                .namespace_ = "ml"};
    struct snap_identity job = {.process_name = "lmp", .slurm_job = "4242"};
    struct ledger_process *p;
    struct ledger_rapl *r;
    struct ledger_gpu *g = ledger_gpu(l, 3);

    g->present = true;
    g->index = 3;
    strcpy(g->uuid, "GPU-abc");
    strcpy(g->model, "NVIDIA H100 80GB HBM3");
    g->energy_uj = 1000000;
    g->unattributed_uj[UNATTR_IDLE] = 7;
    g->unattributed_uj[UNATTR_DOWNTIME] = 11;
    g->allocated_uj = 17;
    g->split_windows[SPLIT_LEARNED] = 13;
    ASSERT_OK(ledger_process_get(l, 3, 100, 777, &pod, &p));
    ASSERT_OK(ledger_add_gpu_energy(l, p, 600000, true, 1));
    ASSERT_OK(ledger_add_gpu_energy(l, p, 1234, false, 1));
    p->start_time_seconds = 1700000000.5;
    ASSERT_OK(ledger_process_get(l, 3, 200, 888, &job, &p));
    ASSERT_OK(ledger_add_gpu_energy(l, p, 300000, true, 1));
    p->gpu_instance = 1; /* a MIG process: its series' labels */
    p->compute_instance = 0;
    strcpy(p->mig_profile, "3g.40gb");
    ASSERT_OK(ledger_add_cpu_energy(l, &job, 55, 1));
    ASSERT_OK(ledger_add_cpu_unseen(l, &job, (uint64_t[SNAP_CPU_DOMAINS]){[1] = 5}, 1u << 1, 1));
    ASSERT_OK(ledger_add_cpu_process_energy(l, 200, 888, &job, 0, 99, 1));
    /* The pod holds GPU 3 (--gpu-idle-policy=allocation): 5000 uJ of its idle. */
    ASSERT_OK(ledger_add_allocation_energy(l, 3, "ml", "train", "u-1", 2, 5000, 1));
    ASSERT_OK(ledger_rapl_get(l, 0, "package", &r));
    r->energy_uj = 123456789;
    r->unattributed_uj[UNATTR_SYSTEM] = 42;
    r->unattributed_uj[UNATTR_DOWNTIME] = 43;
    r->downtime_unknown_us = 5000000;
    /* The counters' last readings, for the next run: a package of two dies. */
    r->raw_valid = 1u << 0 | 1u << 1;
    r->raw[0] = 4000000000;
    r->raw[1] = 7;
    r->raw_read_ns[0] = (int64_t)saved_clock.mono_ns - 2000000000; /* 2 s before the save */
    r->raw_read_ns[1] = (int64_t)saved_clock.mono_ns - 1000000000;
    r->modulus = UINT64_C(1) << 32;
    r->unit_num = 1000000;
    r->unit_den = 16384;
}

/* The GPU energy of the pod "train"'s workload. */
static uint64_t pod_gpu_uj(struct ledger *l) {
    void *v;

    for (size_t i = 0; hashmap_next(&l->workloads, &i, NULL, &v);) {
        const struct ledger_workload *w = v;

        if (w->kind == WORKLOAD_POD && strcmp(w->id->pod_uid, "u-1") == 0)
            return w->gpu_uj;
    }
    fail_msg("no pod workload");
    return 0;
}

static char *format_at(const struct ledger *l, const struct gpu_baseline *b,
                       const struct state_clock *now) {
    struct strbuf out;
    char *s;

    strbuf_init(&out);
    ledger_state_format(l, b, now, &out);
    ASSERT_OK(strbuf_error(&out));
    s = strndup(out.buf, out.len);
    assert_non_null(s);
    strbuf_done(&out);
    return s;
}

static char *format(const struct ledger *l, const struct gpu_baseline *b) {
    return format_at(l, b, &saved_clock);
}

static void test_round_trip(void **state _unused_) {
    struct gpu_baseline saved[LEDGER_MAX_GPUS] = {0}, got[LEDGER_MAX_GPUS] = {0};
    struct ledger a, b;
    struct ledger_process *p;
    char *text, *again;
    unsigned bad = 0;
    int n;

    ledger_init(&a);
    ledger_init(&b);
    fill(&a);
    /* its window began 0.4 s before the save */
    saved[3] = (struct gpu_baseline){
        .valid = true, .raw_mj = 987654321, .at_us = saved_clock.wall_us - 400000};
    saved[3].n_idle = 3;
    saved[3].idle_mw[0] = 41000;
    saved[3].idle_mw[1] = 39500;
    saved[3].idle_mw[2] = 5000000; /* the most a board may idle at */
    text = format(&a, saved);
    n = restore(&b, text, got, &bad);
    /* One GPU, one RAPL domain, two GPU processes, one CPU series, the pod's allocation,
     * the container, pod and job. */
    assert_int_equal(n, 9);
    /* Field by field: the padding of a struct assigned from a compound literal is not
     * defined (it differed under clang -O0 with AddressSanitizer). */
    assert_true(got[3].valid);
    assert_int_equal(got[3].raw_mj, saved[3].raw_mj);
    /* the same instant: 3 s down by the boot clock */
    assert_int_equal(got[3].at_us, now_clock.wall_us - 3 * SECOND_US - 400000);
    assert_int_equal(last_restart.downtime_us, 3 * SECOND_US);
    assert_true(last_restart.counting);
    assert_int_equal(got[3].n_idle, 3);
    assert_int_equal(got[3].idle_mw[0], 41000);
    assert_int_equal(got[3].idle_mw[1], 39500);
    assert_int_equal(got[3].idle_mw[2], 5000000);
    assert_string_equal(got[3].uuid, ledger_gpu(&a, 3)->uuid);
    assert_false(got[0].valid);

    /* The same text back: every counter and label survived. */
    again = format_at(&b, got, &now_clock);
    assert_int_equal(strlen(again), strlen(text));
    assert_int_equal(ledger_gpu(&b, 3)->unattributed_uj[UNATTR_DOWNTIME], 11);
    assert_int_equal(ledger_gpu(&b, 3)->split_windows[SPLIT_LEARNED], 13);
    assert_int_equal(ledger_gpu(&b, 3)->allocated_uj, 17);
    {
        struct ledger_rapl *r;

        ASSERT_OK(ledger_rapl_get(&b, 0, "package", &r));
        assert_int_equal(r->raw_valid, 3);
        assert_int_equal(r->restored, 3);
        assert_int_equal(r->raw[0], 4000000000);
        assert_int_equal(r->raw[1], 7);
        assert_int_equal(r->modulus, UINT64_C(1) << 32);
        assert_int_equal(r->unit_den, 16384);
        assert_int_equal(r->downtime_unknown_us, 5000000);
        assert_int_equal(r->unattributed_uj[UNATTR_DOWNTIME], 43);
        /* read 2 s and 1 s before the save, 3 s before now */
        assert_int_equal(r->raw_read_ns[0], (int64_t)NOW_NS - 5000000000);
        assert_int_equal(r->raw_read_ns[1], (int64_t)NOW_NS - 4000000000);
    }
    {
        struct ledger_process *q;

        ASSERT_OK(ledger_process_get(&b, 3, 200, 888, &(struct snap_identity){0}, &q));
        assert_int_equal(q->gpu_instance, 1);
        assert_int_equal(q->compute_instance, 0);
        assert_string_equal(q->mig_profile, "3g.40gb");
        ASSERT_OK(ledger_process_get(&b, 3, 100, 777, &(struct snap_identity){0}, &q));
        assert_int_equal(q->gpu_instance, LEDGER_NO_INSTANCE);
    }

    /* The allocation is restored inactive with its energy, which its pod's workload holds
     * once (its own saved counter), not twice; charged again, it continues. */
    assert_int_equal(pod_gpu_uj(&b), pod_gpu_uj(&a));
    assert_int_equal(pod_gpu_uj(&b), 600000 + 1234 + 5000);
    {
        struct snapshot snap = {0};

        ASSERT_OK(ledger_snapshot_allocations(&b, &snap));
        assert_int_equal(snap.n_gpu_allocations, 1);
        assert_int_equal(snap.gpu_allocations[0].gpu, 3);
        assert_int_equal(snap.gpu_allocations[0].energy_uj, 5000);
        assert_int_equal(snap.gpu_allocations[0].replicas, 2);
        assert_false(snap.gpu_allocations[0].active);
        assert_string_equal(snap.gpu_allocations[0].pod, "train");
        assert_string_equal(snap.gpu_allocations[0].pod_uid, "u-1");
        free(snap.gpu_allocations);
    }
    ASSERT_OK(ledger_add_allocation_energy(&b, 3, "ml", "train", "u-1", 2, 1, NOW_NS));
    assert_int_equal(pod_gpu_uj(&b), 600000 + 1234 + 5001);

    /* Restored inactive; seen again, the process continues from its saved counters. */
    ASSERT_OK(ledger_process_get(&b, 3, 100, 777, &(struct snap_identity){0}, &p));
    assert_false(p->active);
    assert_int_equal(p->last_seen_ns, NOW_NS);
    assert_int_equal(p->estimated_uj, 600000);
    assert_int_equal(p->measured_uj, 1234);
    assert_string_equal(p->id->process_name, "python 3\t%x");
    assert_string_equal(p->id->namespace_, "ml");
    assert_true(p->start_time_seconds > 1700000000.4 && p->start_time_seconds < 1700000000.6);
    ASSERT_OK(ledger_add_gpu_energy(&b, p, 1, true, NOW_NS));
    assert_int_equal(p->estimated_uj, 600001);
    free(text);
    free(again);
    ledger_done(&a);
    ledger_done(&b);
}

static void test_bad_text(void **state _unused_) {
    static const struct {
        const char *text;
        unsigned line;
    } cases[] = {
        {"", 1},
        {"joulestat-state 2\n", 1},
        {"# not a state\n", 1},
        {"joulestat-state 1\ngpu\tindex=0\tuuid=x\tenergy_uj=12x\n", 2},
        {"joulestat-state 1\ngpu\tindex=99\tuuid=x\tenergy_uj=1\n", 2},
        {"joulestat-state 1\nrapl\tpackage=0\tdomain=package\tenergy_uj=1\nnonsense\n", 3},
        {"joulestat-state 1\nworkload\tkind=ray_job\tgpu_uj=1\tcpu_uj=1\n", 2},
        {"joulestat-state 1\nprocess\tgpu=0\tpid=1\tstart_ticks=1\tmeasured_uj=1\n", 2},
        {"joulestat-state 1\nprocess\tgpu=0\tpid=1\tstart_ticks=1\tprocess_name=%zz\n", 2},
        {"joulestat-state 1\ngpu\tindex=0\tuuid=x\tenergy_uj=1\tidle_mw=1,,2\n", 2},
        {"joulestat-state 1\ngpu\tindex=0\tuuid=x\tenergy_uj=1\tidle_mw=1,2,\n", 2},
        {"joulestat-state 1\ngpu\tindex=0\tuuid=x\tenergy_uj=1\tidle_mw=18446744073709551616\n", 2},
        {"joulestat-state 1\ngpu\tindex=0\tuuid=x\tenergy_uj=1\tidle_mw=5000001\n", 2},
        {"joulestat-state 1\nallocation\tgpu=64\tpod=p\treplicas=1\tenergy_uj=1\n", 2},
        {"joulestat-state 1\nallocation\tgpu=0\tpod=p\treplicas=1\n", 2},
        {"joulestat-state 1\nallocation\tgpu=0\tpod=p\treplicas=4294967296\tenergy_uj=1\n", 2},
        {"joulestat-state 1\ngpu\tindex=0\tuuid=x\tenergy_uj=1\tidle_mw=7W\n", 2},
        {"joulestat-state 1\nrapl\tpackage=0\tdomain=package\tenergy_uj=1\traw_die1=9\t"
         "modulus=8\tunit_num=1\tunit_den=1\n",
         2},
        {"joulestat-state 1\nrapl\tpackage=0\tdomain=package\tenergy_uj=1\traw_die1=1\n", 2},
        /* a reading older than a century */
        {"joulestat-state 1\nrapl\tpackage=0\tdomain=package\tenergy_uj=1\traw=1\t"
         "raw_age_us=18446744073709551615\tmodulus=8\tunit_num=1\tunit_den=1\n",
         2},
    };

    /* More idle observations than a state ever holds. */
    {
        char text[1024] = "joulestat-state 1\ngpu\tindex=0\tuuid=x\tenergy_uj=1\tidle_mw=1";
        struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
        struct ledger l;
        unsigned bad = 0;

        for (int k = 1; k <= GPU_BASELINE_IDLE_MAX; k++)
            strcat(text, ",1");
        strcat(text, "\n");
        ledger_init(&l);
        assert_int_equal(restore(&l, text, b, &bad), -EBADMSG);
        assert_int_equal(bad, 2);
        ledger_done(&l);
    }
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
        struct ledger l;
        unsigned bad = 0;

        ledger_init(&l);
        assert_int_equal(restore(&l, cases[i].text, b, &bad), -EBADMSG);
        assert_int_equal(bad, cases[i].line);
        ledger_done(&l);
    }
}

/* A newer version may add fields: unknown ones are ignored. */
static void test_unknown_fields(void **state _unused_) {
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    struct ledger l;
    unsigned bad = 0;

    ledger_init(&l);
    assert_int_equal(restore(&l,
                             "joulestat-state 1\n"
                             "gpu\tindex=1\tuuid=GPU-1\tenergy_uj=5\tfuture=9\n",
                             b, &bad),
                     1);
    assert_int_equal(ledger_gpu(&l, 1)->energy_uj, 5);
    assert_false(b[1].valid);
    ledger_done(&l);
}

/* A pod's process's CPU series saved with the names the Kubernetes API filled in: booked
 * after a restart from its ids alone (the names come back later), it is the same series,
 * going on from its saved value, not a second one from zero. */
static void test_cpu_series_goes_on_without_names(void **state _unused_) {
    struct snap_identity named = {.process_name = "python3",
                                  .pod_uid = "u-1",
                                  .container_id = "c0ffee",
                                  .pod = "train",
                                  .namespace_ = "ml",
                                  .container = "trainer"};
    struct snap_identity bare = named;
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    struct ledger a, r;
    unsigned bad = 0;
    char *text;
    void *v;

    bare.pod[0] = bare.namespace_[0] = bare.container[0] = '\0';
    ledger_init(&a);
    ASSERT_OK(ledger_add_cpu_process_energy(&a, 300, 999, &named, 0, 5000, 1));
    text = format(&a, b);
    ledger_init(&r);
    assert_true(restore(&r, text, b, &bad) > 0);
    ASSERT_OK(ledger_add_cpu_process_energy(&r, 300, 999, &bare, 0, 7, NOW_NS));
    assert_int_equal(r.cpu_processes.size, 1);
    for (size_t i = 0; hashmap_next(&r.cpu_processes, &i, NULL, &v);)
        assert_int_equal(((struct ledger_cpu_process *)v)->energy_uj[0], 5007);
    free(text);
    ledger_done(&a);
    ledger_done(&r);
}

/* A pod name longer than a label keeps (Kubernetes allows 253 characters): charged again
 * after a restart, its allocation goes on from the restored one. */
static void test_long_pod_name_allocation_goes_on(void **state _unused_) {
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    char pod[254];
    struct ledger a, r;
    unsigned bad = 0;
    char *text;
    void *v;

    memset(pod, 'p', sizeof(pod) - 1);
    pod[sizeof(pod) - 1] = '\0';
    ledger_init(&a);
    ASSERT_OK(ledger_add_allocation_energy(&a, 0, "ml", pod, "", 1, 5000, 1));
    text = format(&a, b);
    ledger_init(&r);
    assert_true(restore(&r, text, b, &bad) > 0);
    ASSERT_OK(ledger_add_allocation_energy(&r, 0, "ml", pod, "", 1, 7, NOW_NS));
    assert_int_equal(r.allocations.size, 1);
    for (size_t i = 0; hashmap_next(&r.allocations, &i, NULL, &v);)
        assert_int_equal(((struct ledger_allocation *)v)->energy_uj, 5007);
    free(text);
    ledger_done(&a);
    ledger_done(&r);
}

/* A state written before dies were told apart: its one raw reading is die 0's. */
static void test_raw_of_older_states_is_die_0(void **state _unused_) {
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    struct ledger_rapl *r;
    struct ledger l;
    unsigned bad = 0;

    ledger_init(&l);
    assert_int_equal(restore(&l,
                             "joulestat-state 1\n"
                             "rapl\tpackage=1\tdomain=dram\tenergy_uj=5\traw=44\t"
                             "modulus=4294967296\tunit_num=1000000\tunit_den=16384\n",
                             b, &bad),
                     1);
    ASSERT_OK(ledger_rapl_get(&l, 1, "dram", &r));
    assert_int_equal(r->raw_valid, 1);
    assert_int_equal(r->restored, 1);
    assert_int_equal(r->raw[0], 44);
    /* no boot id: the file's time says 1 s down, and its counters go on */
    assert_int_equal(last_restart.downtime_us, SECOND_US);
    assert_true(last_restart.counting);
    assert_int_equal(r->raw_read_ns[0], (int64_t)NOW_NS - 1000000000);
    ledger_done(&l);
}

/* A GPU's saved state at the given clocks, restored now. */
static void restore_gpu_saved_at(const struct state_clock *saved, const struct state_clock *now,
                                 struct ledger *l, struct gpu_baseline *got) {
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    struct ledger a;
    unsigned bad = 0;
    char *text;

    ledger_init(&a);
    ledger_gpu(&a, 0)->present = true;
    strcpy(ledger_gpu(&a, 0)->uuid, "GPU-0");
    b[0] = (struct gpu_baseline){.valid = true, .raw_mj = 5000000, .at_us = saved->wall_us};
    text = format_at(&a, b, saved);
    ledger_init(l);
    assert_int_equal(restore_at(l, text, now, got, &bad), 1);
    free(text);
    ledger_done(&a);
}

/* The wall clock stepped back an hour while joulestat was down (NTP, a resumed VM): the
 * boot clock says 3 s, the GPU's window starts 3 s ago, and its counters go on. */
static void test_downtime_by_the_boot_clock(void **state _unused_) {
    struct state_clock now = now_clock;
    struct gpu_baseline got[LEDGER_MAX_GPUS] = {0};
    struct ledger l;

    now.wall_us = saved_clock.wall_us - 3600 * SECOND_US;
    restore_gpu_saved_at(&saved_clock, &now, &l, got);
    assert_int_equal(last_restart.downtime_us, 3 * SECOND_US);
    assert_true(last_restart.counting);
    assert_int_equal(got[0].raw_mj, 5000000);
    assert_int_equal(got[0].at_us, now.wall_us - 3 * SECOND_US);
    ledger_done(&l);
}

/* Another boot: RAPL's counters and the GPUs' were reset, so none is bridged, and the
 * GPU's counter now holds what it drew since the driver loaded, all while down. */
static void test_after_a_reboot(void **state _unused_) {
    struct state_clock now = now_clock;
    struct gpu_baseline got[LEDGER_MAX_GPUS] = {0};
    struct ledger l;

    strcpy(now.boot_id, "9a77-another-boot");
    now.boot_us = 40 * SECOND_US; /* booted 40 s ago; the wall clock says 3 s since */
    restore_gpu_saved_at(&saved_clock, &now, &l, got);
    assert_false(last_restart.counting);
    assert_int_equal(last_restart.downtime_us, 40 * SECOND_US);
    assert_true(got[0].valid);
    assert_int_equal(got[0].raw_mj, 0);
    assert_int_equal(got[0].at_us, now.wall_us - 40 * SECOND_US);
    ledger_done(&l);
}

/* No boot id, and a wall clock behind the save: the time down is unknown, and nothing is
 * bridged over it. */
static void test_unknown_time_is_not_bridged(void **state _unused_) {
    struct state_clock saved = saved_clock, now = now_clock;
    struct gpu_baseline got[LEDGER_MAX_GPUS] = {0};
    struct ledger l;

    saved.boot_id[0] = now.boot_id[0] = '\0';
    now.wall_us = saved.wall_us - 60 * SECOND_US;
    restore_gpu_saved_at(&saved, &now, &l, got);
    assert_false(last_restart.counting);
    assert_int_equal(last_restart.downtime_us, 0);
    assert_false(got[0].valid); /* the GPU's counter starts over, as RAPL's */
    assert_string_equal(got[0].uuid, ledger_gpu(&l, 0)->uuid); /* its board still known */
    ledger_done(&l);
}

/* A reading saved before a reboot, not read in the boot after (RAPL unreadable for that
 * run), is saved again by it: a restart later in the same boot must not bridge it, for it
 * counts from nothing since the reboot. */
static void test_stale_reading_stays_stale(void **state _unused_) {
    struct state_clock rebooted = now_clock, later = now_clock;
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    struct ledger a, l1, l2;
    struct ledger_rapl *r;
    unsigned bad = 0;
    char *text, *again;

    strcpy(rebooted.boot_id, "9a77-another-boot");
    rebooted.boot_us = 40 * SECOND_US;
    later = rebooted;
    later.boot_us += 10 * SECOND_US;
    later.wall_us += 10 * SECOND_US;
    later.mono_ns += 10 * UINT64_C(1000000000);
    ledger_init(&a);
    fill(&a);
    text = format(&a, b);
    ledger_init(&l1);
    assert_true(restore_at(&l1, text, &rebooted, b, &bad) > 0);
    assert_false(last_restart.counting);
    again = format_at(&l1, b, &rebooted); /* saved in the new boot, RAPL never read */
    ledger_init(&l2);
    assert_true(restore_at(&l2, again, &later, b, &bad) > 0);
    assert_true(last_restart.counting); /* the same boot as the save */
    ASSERT_OK(ledger_rapl_get(&l2, 0, "package", &r));
    assert_int_equal(r->raw_valid, 3);
    assert_int_equal(r->raw_stale, 3);
    free(text);
    free(again);
    ledger_done(&a);
    ledger_done(&l1);
    ledger_done(&l2);
}

/* A state cut short (a full disk, a copy interrupted) or with anything after its end is
 * not a whole state: refused, never half-trusted. */
static void test_cut_short(void **state _unused_) {
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    struct ledger a, l;
    unsigned bad = 0;
    char *text, *cut;
    size_t len;

    ledger_init(&a);
    fill(&a);
    text = format(&a, b);
    len = strlen(text);
    ledger_init(&l);
    assert_int_equal(restore(&l, text, b, &bad), 9);
    ledger_done(&l);
    /* without its end line; in the middle of a line; with a line more after the end */
    cut = strdup(text);
    assert_non_null(cut);
    cut[strstr(cut, "end\t") - cut] = '\0';
    ledger_init(&l);
    assert_int_equal(restore(&l, cut, b, &bad), -EBADMSG);
    ledger_done(&l);
    cut[len / 2] = '\0';
    ledger_init(&l);
    assert_int_equal(restore(&l, cut, b, &bad), -EBADMSG);
    ledger_done(&l);
    free(cut);
    cut = malloc(len + 64);
    assert_non_null(cut);
    strcpy(cut, text);
    strcat(cut, "gpu\tindex=9\tuuid=x\tenergy_uj=1\n");
    ledger_init(&l);
    assert_int_equal(restore(&l, cut, b, &bad), -EBADMSG);
    ledger_done(&l);
    /* an end line that counts other entries than those read */
    strcpy(cut, text);
    *strstr(cut, "entries=9") = '\0';
    strcat(cut, "entries=8\n");
    ledger_init(&l);
    assert_int_equal(restore(&l, cut, b, &bad), -EBADMSG);
    ledger_done(&l);
    /* a NUL inside: the size read is larger than the text */
    ledger_init(&l);
    assert_int_equal(ledger_state_restore(&l, text, len + 1, &now_clock, 0, b, NULL, &bad),
                     -EBADMSG);
    ledger_done(&l);
    free(cut);
    free(text);
    ledger_done(&a);
}

/* A digit changed on disk, or a line repeated with the count mended, fails the end line's
 * sum; a state written before the sum (no sum field) is still read. */
static void test_sum_catches_changes(void **state _unused_) {
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    struct ledger a, l;
    unsigned bad = 0;
    char *text, *changed, *line, *end, *p;
    size_t len;

    ledger_init(&a);
    fill(&a);
    text = format(&a, b);
    len = strlen(text);
    changed = malloc(2 * len + 1);
    assert_non_null(changed);

    /* 600000 becomes 900000 */
    strcpy(changed, text);
    p = strstr(changed, "estimated_uj=600000");
    assert_non_null(p);
    p[strlen("estimated_uj=")] = '9';
    ledger_init(&l);
    assert_int_equal(restore(&l, changed, b, &bad), -EBADMSG);
    ledger_done(&l);

    /* the first process line twice, and the end line counting ten entries */
    line = strstr(text, "\nprocess\t") + 1;
    end = strchr(line, '\n') + 1;
    memcpy(changed, text, (size_t)(end - text));
    memcpy(changed + (end - text), line, (size_t)(end - line));
    strcpy(changed + (end - text) + (end - line), end);
    p = strstr(changed, "entries=9");
    assert_non_null(p);
    memcpy(p, "entries=X", 9);
    *strchr(p, '\t') = '\0';
    p[strlen("entries=")] = '\0';
    strcat(changed, "10\t");
    strcat(changed, strstr(text, "\tsum=") + 1);
    ledger_init(&l);
    assert_int_equal(restore(&l, changed, b, &bad), -EBADMSG);
    ledger_done(&l);

    /* the same file without its sum: as a version without sums wrote it */
    strcpy(changed, text);
    *strstr(changed, "\tsum=") = '\0';
    strcat(changed, "\n");
    ledger_init(&l);
    assert_int_equal(restore(&l, changed, b, &bad), 9);
    assert_int_equal(ledger_gpu(&l, 3)->energy_uj, 1000000);
    ledger_done(&l);

    /* a sum that is not 16 hex digits */
    strcpy(changed, text);
    strcpy(strstr(changed, "\tsum=") + strlen("\tsum="), "12\n");
    ledger_init(&l);
    assert_int_equal(restore(&l, changed, b, &bad), -EBADMSG);
    ledger_done(&l);

    free(changed);
    free(text);
    ledger_done(&a);
}

/* FNV-1a of the text before its end line, and that line written again with it: a file as
 * a joulestat that adds a sum writes it, after lines were added to it. */
static void reseal(char *text) {
    char *end = strstr(text, "\nend\t") + 1, *sum = strstr(end, "\tsum=") + strlen("\tsum=");
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    for (const char *p = text; p < end; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(0x100000001b3);
    (void)sprintf(sum, "%016" PRIx64 "\n", h);
}

/* Rolled back past a version that added a kind of entry (or of workload): those are
 * skipped and everything else restored, where the file has a sum; without one (written
 * before sums) an unknown kind is not known to be a newer version's, and refused. */
static void test_newer_kinds_skipped(void **state _unused_) {
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    struct ledger a, l;
    unsigned bad = 0;
    char *text, *newer, *end;

    ledger_init(&a);
    fill(&a);
    text = format(&a, b);
    newer = malloc(strlen(text) + 256);
    assert_non_null(newer);
    end = strstr(text, "\nend\t") + 1;
    memcpy(newer, text, (size_t)(end - text));
    strcpy(newer + (end - text), "tenant\tname=x\tenergy_uj=5\n"
                                 "workload\tkind=ray_job\tgpu_uj=1\tcpu_uj=1\n");
    strcat(newer, "end\tentries=11\tsum=0000000000000000\n");
    reseal(newer);
    ledger_init(&l);
    assert_int_equal(restore(&l, newer, b, &bad), 11);
    assert_int_equal(ledger_gpu(&l, 3)->energy_uj, 1000000);
    assert_int_equal(pod_gpu_uj(&l), pod_gpu_uj(&a));
    ledger_done(&l);
    /* the same without a sum */
    *strstr(newer, "\tsum=") = '\0';
    strcat(newer, "\n");
    ledger_init(&l);
    assert_int_equal(restore(&l, newer, b, &bad), -EBADMSG);
    assert_int_equal(bad, 12); /* the tenant line, after the magic, host and 9 entries */
    ledger_done(&l);
    free(newer);
    free(text);
    ledger_done(&a);
}

/* After a reboot a process of the new boot may have a saved one's pid and start tick (an
 * early service): it is not the saved one, and does not take its entry or its labels. */
static void test_saved_process_not_this_boots(void **state _unused_) {
    struct state_clock now = now_clock;
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    struct snap_identity other = {.process_name = "nvidia-smi"};
    struct ledger a, l;
    struct ledger_process *p;
    unsigned bad = 0;
    char *text;

    ledger_init(&a);
    fill(&a);
    text = format(&a, b);
    strcpy(now.boot_id, "9a77-another-boot");
    now.boot_us = 40 * SECOND_US;
    ledger_init(&l);
    assert_true(restore_at(&l, text, &now, b, &bad) > 0);
    assert_false(last_restart.counting);
    /* pid 100, start 777 on GPU 3, as the saved "python 3" */
    ASSERT_OK(ledger_process_get(&l, 3, 100, 777, &other, &p));
    assert_string_equal(p->id->process_name, "nvidia-smi");
    assert_int_equal(p->estimated_uj + p->measured_uj, 0);
    ledger_done(&l);
    /* the same boot: it is the saved one */
    ledger_init(&l);
    assert_true(restore(&l, text, b, &bad) > 0);
    ASSERT_OK(ledger_process_get(&l, 3, 100, 777, &other, &p));
    assert_int_equal(p->estimated_uj, 600000);
    ledger_done(&l);
    free(text);
    ledger_done(&a);
}

/* systemd services that retention dropped are saved with their age: restored, one that
 * comes back goes on from its counters; one whose age, with the time down, passed a week
 * is not kept. */
static void test_past_services_saved(void **state _unused_) {
    struct gpu_baseline b[LEDGER_MAX_GPUS] = {0};
    struct snap_identity svc = {.process_name = "fwupd", .systemd_unit = "fwupd-refresh.service"};
    struct state_clock save_at = saved_clock, later = now_clock;
    struct ledger a, l;
    struct ledger_process *p;
    unsigned bad = 0;
    char *text, *text_old;
    void *v;

    ledger_init(&a);
    fill(&a);
    ASSERT_OK(ledger_process_get(&a, 0, 300, 10, &svc, &p));
    ASSERT_OK(ledger_add_gpu_energy(&a, p, 4000, false, 1));
    ledger_sweep(&a, saved_clock.mono_ns, saved_clock.mono_ns, 1);
    assert_int_equal(a.workloads.size, 0);
    assert_int_equal(a.past_workloads.size, 1); /* the service alone: pods, jobs are not */
    text = format(&a, b);
    assert_non_null(strstr(text, "\tpast_age_us=0\t"));
    ledger_init(&l);
    assert_true(restore(&l, text, b, &bad) > 0);
    assert_int_equal(l.past_workloads.size, 1);
    ASSERT_OK(ledger_process_get(&l, 0, 301, 20, &svc, &p));
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 5, false, NOW_NS));
    for (size_t i = 0; hashmap_next(&l.workloads, &i, NULL, &v);)
        if (((struct ledger_workload *)v)->kind == WORKLOAD_SYSTEMD_SERVICE)
            assert_int_equal(((struct ledger_workload *)v)->gpu_uj, 4005);
    ledger_done(&l);

    /* saved 6 days after it was dropped, restored 2 days later: past the week */
    save_at.mono_ns += UINT64_C(6) * 86400 * 1000000000;
    text_old = format_at(&a, b, &save_at);
    later.boot_us = save_at.boot_us + UINT64_C(2) * 86400 * SECOND_US;
    later.wall_us = save_at.wall_us + UINT64_C(2) * 86400 * SECOND_US;
    ledger_init(&l);
    assert_true(restore_at(&l, text_old, &later, b, &bad) > 0);
    assert_int_equal(l.past_workloads.size, 0);
    ledger_done(&l);
    free(text_old);
    free(text);
    ledger_done(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_bad_text),
        cmocka_unit_test(test_unknown_fields),
        cmocka_unit_test(test_raw_of_older_states_is_die_0),
        cmocka_unit_test(test_downtime_by_the_boot_clock),
        cmocka_unit_test(test_after_a_reboot),
        cmocka_unit_test(test_unknown_time_is_not_bridged),
        cmocka_unit_test(test_stale_reading_stays_stale),
        cmocka_unit_test(test_cut_short),
        cmocka_unit_test(test_sum_catches_changes),
        cmocka_unit_test(test_newer_kinds_skipped),
        cmocka_unit_test(test_saved_process_not_this_boots),
        cmocka_unit_test(test_past_services_saved),
        cmocka_unit_test(test_cpu_series_goes_on_without_names),
        cmocka_unit_test(test_long_pod_name_allocation_goes_on),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
