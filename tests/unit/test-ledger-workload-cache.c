/* SPDX-License-Identifier: MIT */
/* A GPU process books to its container, pod and job through workload entries resolved once
 * and kept in the process: the same entries as a lookup would find, names that arrive
 * later still reach the workload, a changed id books to the right workload, and entries
 * dropped by the sweep are never used again (ASan would catch a stale pointer). */
#include <string.h>

#include "ledger.h"
#include "ledger_past.h"
#include "testutil.h"

#define POD_UID "6e311cce-9b94-4a94-b353-b9546b1a9c19"
#define CTR_A "65d752a38e1db784d521f48c3f1956f4f9a74ebb923377144f253f3aca9fa028"
#define CTR_B "0b0e0c2fa4bb5a6b1d2f3e4a5b6c7d8e9f00112233445566778899aabbccddee"

#define SEC UINT64_C(1000000000)

/* The workload of a kind whose id is `name`, by walking the map (not through the cache). */
static struct ledger_workload *find(struct ledger *l, enum workload_kind kind, const char *name) {
    void *v;

    for (size_t i = 0; hashmap_next(&l->workloads, &i, NULL, &v);) {
        struct ledger_workload *w = v;
        const char *id = kind == WORKLOAD_CONTAINER         ? w->id->container_id
                         : kind == WORKLOAD_POD             ? w->id->pod_uid
                         : kind == WORKLOAD_SYSTEMD_SERVICE ? w->id->systemd_unit
                                                            : w->id->slurm_job;

        if (w->kind == kind && strcmp(id, name) == 0)
            return w;
    }
    return NULL;
}

static struct ledger_process *gpu_process(struct ledger *l, uint32_t pid) {
    struct ledger_process *p;

    struct snap_identity id = {0};

    strcpy(id.process_name, "python");
    strcpy(id.pod_uid, POD_UID);
    strcpy(id.container_id, CTR_A);
    strcpy(id.slurm_job, "4242");
    assert_int_equal(ledger_process_get(l, 0, pid, 77, &id, &p), 1);
    return p;
}

/* New labels for a process, as kube_labels_fill_ledger() makes them: a new set replaces
 * the shared one, which is never changed in place. */
static void relabel(struct ledger_process *p, const char *pod, const char *ns,
                    const char *container, const char *container_id, const char *job) {
    struct snap_identity id = *p->id;

    if (pod)
        strcpy(id.pod, pod);
    if (ns)
        strcpy(id.namespace_, ns);
    if (container)
        strcpy(id.container, container);
    if (container_id)
        strcpy(id.container_id, container_id);
    if (job)
        strcpy(id.slurm_job, job);
    ASSERT_OK(ledger_labels_replace(&p->id, &id));
}

static void test_cached_entries(void **state) {
    struct ledger_process *p;
    struct ledger_workload *c, *pod, *job;
    struct ledger l;

    (void)state;
    ledger_init(&l);
    p = gpu_process(&l, 100);
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 1000, false, 1 * SEC));
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 250, true, 2 * SEC));
    assert_int_equal(l.workloads.size, 3);
    c = find(&l, WORKLOAD_CONTAINER, CTR_A);
    pod = find(&l, WORKLOAD_POD, POD_UID);
    job = find(&l, WORKLOAD_JOB, "4242");
    assert_ptr_equal(p->wl[WORKLOAD_CONTAINER], c);
    assert_ptr_equal(p->wl[WORKLOAD_POD], pod);
    assert_ptr_equal(p->wl[WORKLOAD_JOB], job);
    assert_int_equal(p->wl_gen, l.workload_gen);
    assert_int_equal(c->gpu_uj, 1250);
    assert_int_equal(pod->gpu_uj, 1250);
    assert_int_equal(job->gpu_uj, 1250);
    assert_int_equal(c->last_seen_ns, 2 * SEC);
    assert_int_equal(p->measured_uj, 1000);
    assert_int_equal(p->estimated_uj, 250);

    /* Names filled in later (kube labels) reach the workloads on the next booking. */
    relabel(p, "trainer", "ml", "pytorch", NULL, NULL);
    /* Unannounced, the change is not looked at: the cached entries are only booked to. */
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 0, false, 3 * SEC));
    assert_string_equal(c->id->pod, "");
    p->wl_fresh = false; /* as kube_labels_fill_ledger() does after filling names */
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 5, false, 3 * SEC));
    assert_string_equal(c->id->pod, "trainer");
    assert_string_equal(c->id->container, "pytorch");
    assert_string_equal(pod->id->namespace_, "ml");
    assert_string_equal(pod->id->container, ""); /* a pod names no container */
    assert_string_equal(job->id->pod, "");       /* a job names no pod */
    assert_int_equal(pod->gpu_uj, 1255);

    /* A changed id books to its own workload, not the cached one. */
    relabel(p, NULL, NULL, NULL, CTR_B, NULL);
    p->wl_fresh = false;
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 7, false, 4 * SEC));
    assert_int_equal(c->gpu_uj, 1255);
    assert_int_equal(find(&l, WORKLOAD_CONTAINER, CTR_B)->gpu_uj, 7);
    assert_ptr_equal(p->wl[WORKLOAD_CONTAINER], find(&l, WORKLOAD_CONTAINER, CTR_B));
    assert_int_equal(pod->gpu_uj, 1262);
    assert_int_equal(l.workloads.size, 4);
    ledger_done(&l);
}

/* The sweep frees a workload while a process that cached it lives on. */
static void test_swept_workload(void **state) {
    struct ledger_process *p;
    struct ledger_workload *c;
    struct ledger l;
    uint64_t gen;

    (void)state;
    ledger_init(&l);
    p = gpu_process(&l, 200);
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 1000, false, 10 * SEC));
    gen = l.workload_gen;
    find(&l, WORKLOAD_CONTAINER, CTR_A)->last_seen_ns = 0; /* long unseen */
    ledger_sweep(&l, 10 * SEC, 10 * SEC, 5 * SEC);
    assert_null(find(&l, WORKLOAD_CONTAINER, CTR_A));
    assert_int_equal(l.processes.size, 1);
    assert_int_equal(l.workload_gen, gen + 1);

    ASSERT_OK(ledger_add_gpu_energy(&l, p, 30, false, 11 * SEC));
    c = find(&l, WORKLOAD_CONTAINER, CTR_A);
    assert_non_null(c);
    /* a container id is new each time: one that comes back is not kept for (ledger_past.h) */
    assert_int_equal(c->gpu_uj, 30);
    assert_int_equal(l.past_workloads.size, 0);
    assert_ptr_equal(p->wl[WORKLOAD_CONTAINER], c);
    assert_int_equal(find(&l, WORKLOAD_POD, POD_UID)->gpu_uj, 1030);
    assert_int_equal(p->wl_gen, l.workload_gen);

    /* Nothing swept: the generation stays. */
    ledger_sweep(&l, 11 * SEC, 11 * SEC, 5 * SEC);
    assert_int_equal(l.workload_gen, gen + 1);
    ledger_done(&l);
}

/* A systemd service that comes back after retention dropped its series goes on from what it
 * had (a timer's service started again at 0 and scraped once at or above its last total
 * reads to Prometheus as grown by the difference only); one dropped more than
 * LEDGER_PAST_KEEP_NS ago starts over; at most LEDGER_PAST_MAX are kept, the oldest going
 * first, however many were dropped at one instant. */
static void test_past_services(void **state) {
    struct snap_identity svc = {.process_name = "fwupd", .systemd_unit = "fwupd-refresh.service"};
    struct ledger_workload *w;
    struct ledger_process *p;
    struct ledger l;

    (void)state;
    ledger_init(&l);
    ASSERT_OK(ledger_process_get(&l, 0, 300, 10, &svc, &p));
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 1000, false, 10 * SEC));
    ledger_sweep(&l, 400 * SEC, 400 * SEC, 5 * SEC);
    assert_null(find(&l, WORKLOAD_SYSTEMD_SERVICE, "fwupd-refresh.service"));
    assert_int_equal(l.past_workloads.size, 1);
    ASSERT_OK(ledger_process_get(&l, 0, 301, 20, &svc, &p));
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 30, false, 500 * SEC));
    w = find(&l, WORKLOAD_SYSTEMD_SERVICE, "fwupd-refresh.service");
    assert_non_null(w);
    assert_int_equal(w->gpu_uj, 1030); /* went on */
    assert_int_equal(l.past_workloads.size, 0);

    /* dropped again; back after more than a week: a new series */
    ledger_sweep(&l, 900 * SEC, 900 * SEC, 5 * SEC);
    assert_int_equal(l.past_workloads.size, 1);
    ASSERT_OK(ledger_process_get(&l, 0, 302, 30, &svc, &p));
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 7, false, 901 * SEC + LEDGER_PAST_KEEP_NS));
    assert_int_equal(find(&l, WORKLOAD_SYSTEMD_SERVICE, "fwupd-refresh.service")->gpu_uj, 7);
    ledger_done(&l);

    /* Full, all dropped at one instant: one goes per one kept, not all of them. */
    ledger_init(&l);
    for (unsigned i = 0; i < LEDGER_PAST_MAX + 3; i++) {
        struct ledger_workload gone = {.key = 1000 + i, .kind = WORKLOAD_SYSTEMD_SERVICE};

        ledger_past_keep(&l, &gone, 5 * SEC);
    }
    assert_int_equal(l.past_workloads.size, LEDGER_PAST_MAX);
    assert_non_null(hashmap_get(&l.past_workloads, 1000 + LEDGER_PAST_MAX + 2));
    /* a kind not kept (a pod) is not */
    ledger_past_keep(&l, &(struct ledger_workload){.key = 1, .kind = WORKLOAD_POD}, 6 * SEC);
    assert_null(hashmap_get(&l.past_workloads, 1));
    /* a week later none is left to save (the state file's iteration leaves them out) */
    {
        struct ledger_workload kept;
        uint64_t age_us;
        size_t i = 0;

        assert_true(ledger_past_next(&l, &i, 5 * SEC + LEDGER_PAST_KEEP_NS, &kept, &age_us));
        i = 0;
        assert_false(ledger_past_next(&l, &i, 6 * SEC + LEDGER_PAST_KEEP_NS, &kept, &age_us));
    }
    ledger_done(&l);
}

/* A process without container, pod or job books to no workload, cached or not. */
static void test_no_workload(void **state) {
    struct ledger_process *p;
    struct ledger l;

    (void)state;
    ledger_init(&l);
    assert_int_equal(
        ledger_process_get(&l, 1, 300, 5, &(struct snap_identity){.process_name = "sshd"}, &p), 1);
    for (int i = 0; i < 3; i++)
        ASSERT_OK(ledger_add_gpu_energy(&l, p, 10, false, (uint64_t)(i + 1) * SEC));
    assert_int_equal(l.workloads.size, 0);
    assert_int_equal(p->measured_uj, 30);
    /* A job id that shows up later is booked from then on. */
    relabel(p, NULL, NULL, NULL, NULL, "17");
    p->wl_fresh = false;
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 10, false, 4 * SEC));
    assert_int_equal(find(&l, WORKLOAD_JOB, "17")->gpu_uj, 10);
    ledger_done(&l);
}

/* The API server's names, as kube_labels_labeler() gives them: only empty names filled. */
static void name_pod(void *userdata, struct snap_identity *id) {
    (void)userdata;
    if (strcmp(id->pod_uid, POD_UID) == 0 && !id->pod[0]) {
        strcpy(id->pod, "train-0");
        strcpy(id->namespace_, "ml");
    }
}

/* The CPU side books from bare ids (no names): the pod keeps the names it was given, and
 * a pod the CPU side alone books gets them from the labeler too. */
static void test_cpu_booking_keeps_names(void **state) {
    struct ledger l;
    struct ledger_process *p;
    struct snap_identity bare = {0};
    struct ledger_workload *w;

    (void)state;
    ledger_init(&l);
    strcpy(bare.pod_uid, POD_UID);
    strcpy(bare.container_id, CTR_A);
    ASSERT_OK(ledger_add_cpu_energy(&l, &bare, 5, 1 * SEC)); /* before names are known */
    assert_string_equal(find(&l, WORKLOAD_POD, POD_UID)->id->pod, "");

    ledger_set_labeler(&l, name_pod, NULL);
    p = gpu_process(&l, 100);
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 10, true, 2 * SEC));
    ASSERT_OK(ledger_add_cpu_energy(&l, &bare, 5, 3 * SEC));
    w = find(&l, WORKLOAD_POD, POD_UID);
    assert_string_equal(w->id->pod, "train-0");
    assert_string_equal(w->id->namespace_, "ml");
    assert_int_equal(w->gpu_uj, 10);
    assert_int_equal(w->cpu_uj, 10);
    ledger_done(&l);
}

/* A process that execs under another name books to a second series; the first ends there
 * (it would otherwise stay active for ever, its exit looked up by the new name), and both
 * are swept once the process has exited and the retention passed. */
static void test_renamed_process_ends_its_old_series(void **state) {
    struct snap_identity sh = {.process_name = "sh", .container_id = CTR_A};
    struct snap_identity app = sh;
    struct ledger l;
    unsigned active = 0;
    void *v;

    (void)state;
    strcpy(app.process_name, "app");
    ledger_init(&l);
    ASSERT_OK(ledger_add_cpu_process_energy(&l, 400, 17, &sh, 0, 100, 1 * SEC));
    ASSERT_OK(ledger_add_cpu_process_energy(&l, 400, 17, &app, 0, 200, 2 * SEC));
    assert_int_equal(l.cpu_processes.size, 2);
    for (size_t i = 0; hashmap_next(&l.cpu_processes, &i, NULL, &v);)
        active += ((struct ledger_cpu_process *)v)->active;
    assert_int_equal(active, 1);
    ledger_cpu_process_exited(&l, 400, 17, &app, 3 * SEC);
    ledger_sweep(&l, 400 * SEC, 400 * SEC, 300 * SEC);
    assert_int_equal(l.cpu_processes.size, 0);
    assert_int_equal(l.cpu_latest.size, 0);
    ledger_done(&l);

    /* It exec'd as "app" but used no CPU after: its exit comes under a name it never booked
     * under, and ends the series it booked to last ("sh" stayed active for ever). A newer
     * process on the pid keeps its own. */
    ledger_init(&l);
    ASSERT_OK(ledger_add_cpu_process_energy(&l, 400, 17, &sh, 0, 100, 1 * SEC));
    ledger_cpu_process_exited(&l, 400, 17, &app, 3 * SEC);
    ledger_sweep(&l, 400 * SEC, 400 * SEC, 300 * SEC);
    assert_int_equal(l.cpu_processes.size, 0);
    ASSERT_OK(ledger_add_cpu_process_energy(&l, 400, 99, &sh, 0, 100, 500 * SEC));
    ledger_cpu_process_exited(&l, 400, 17, &app, 501 * SEC);
    ledger_sweep(&l, 900 * SEC, 900 * SEC, 300 * SEC);
    assert_int_equal(l.cpu_processes.size, 1);
    ledger_done(&l);

    /* "sh", then "app", then renamed back to "sh" with no CPU after: its exit names the
     * first series, but the one it booked to last ("app") ends too. */
    ledger_init(&l);
    ASSERT_OK(ledger_add_cpu_process_energy(&l, 400, 17, &sh, 0, 100, 1 * SEC));
    ASSERT_OK(ledger_add_cpu_process_energy(&l, 400, 17, &app, 0, 200, 2 * SEC));
    ledger_cpu_process_exited(&l, 400, 17, &sh, 3 * SEC);
    ledger_sweep(&l, 400 * SEC, 400 * SEC, 300 * SEC);
    assert_int_equal(l.cpu_processes.size, 0);
    ledger_done(&l);
}

/* Two names that are not UTF-8 and that the exposition prints alike ("a\xff" and "a\xfe"
 * both as "a" U+FFFD) are one label value: a pid given again to the second goes on from the
 * first's series, where two entries printed one series twice on /metrics. */
static void test_names_not_utf8_are_one_series(void **state) {
    struct snap_identity first = {.process_name = "a\xff"}, second = {.process_name = "a\xfe"};
    struct ledger_process *p;
    struct ledger l;

    (void)state;
    ledger_init(&l);
    ASSERT_OK(ledger_process_get(&l, 0, 500, 10, &first, &p));
    assert_string_equal(p->id->process_name, "a\xef\xbf\xbd");
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 1000, false, 1 * SEC));
    ledger_sweep(&l, 5 * SEC, 5 * SEC, 300 * SEC);
    assert_int_equal(ledger_process_get(&l, 0, 500, 20, &second, &p), 1);
    assert_int_equal(p->measured_uj, 1000);
    assert_int_equal(l.processes.size, 1);
    ledger_done(&l);
}

/* A GPU pid given again to a process of the same labels is one series: the new process
 * goes on from the ended one's counters, which leaves the ledger, whether or not a sweep
 * has marked it inactive yet. Other labels keep two. The labels are those its series
 * carry. */
static void test_reused_pid_is_one_series(void **state) {
    struct snap_identity id = {.process_name = "infer", .container_id = CTR_A};
    struct snap_identity other = {.process_name = "train", .container_id = CTR_A};
    struct ledger_process *old, *p;
    struct ledger l;

    (void)state;
    ledger_init(&l);
    ASSERT_OK(ledger_process_get(&l, 0, 500, 10, &id, &old));
    ASSERT_OK(ledger_add_gpu_energy(&l, old, 50000000, false, 1 * SEC));
    /* another process on the pid, with other labels: kept apart */
    ledger_sweep(&l, 1 * SEC, 1 * SEC, 300 * SEC);
    assert_int_equal(ledger_process_get(&l, 0, 500, 20, &other, &p), 1);
    assert_int_equal(p->measured_uj, 0);
    assert_int_equal(l.processes.size, 2);
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 7000000, false, 2 * SEC));
    /* both ended; "train" comes back on the pid: it goes on from the "train" entry */
    ledger_sweep(&l, 5 * SEC, 5 * SEC, 300 * SEC);
    assert_int_equal(ledger_process_get(&l, 0, 500, 30, &other, &p), 1);
    assert_int_equal(p->measured_uj, 7000000);
    assert_int_equal(l.processes.size, 2);
    assert_int_equal(ledger_process_get(&l, 0, 501, 40, &id, &p), 1);
    assert_int_equal(l.processes.size, 3); /* another pid: its own series */
    /* "infer" on the pid again: its newest entry is "train", but the older "infer" one
     * behind it is the same series, and is gone on from (two entries were one series
     * twice on /metrics) */
    ledger_sweep(&l, 6 * SEC, 6 * SEC, 300 * SEC);
    assert_int_equal(ledger_process_get(&l, 0, 500, 50, &id, &p), 1);
    assert_int_equal(p->measured_uj, 50000000);
    assert_int_equal(l.processes.size, 3);
    ledger_done(&l);

    /* Two SLURM jobs' processes that differ by their job alone: GPU series do not carry
     * the job, so they are one series. */
    ledger_init(&l);
    {
        struct snap_identity job1 = {.process_name = "python", .slurm_job = "100"};
        struct snap_identity job2 = {.process_name = "python", .slurm_job = "101"};

        ASSERT_OK(ledger_process_get(&l, 0, 700, 10, &job1, &old));
        ASSERT_OK(ledger_add_gpu_energy(&l, old, 3000000, false, 1 * SEC));
        ledger_sweep(&l, 5 * SEC, 5 * SEC, 300 * SEC);
        assert_int_equal(ledger_process_get(&l, 0, 700, 20, &job2, &p), 1);
        assert_int_equal(p->measured_uj, 3000000);
        assert_int_equal(l.processes.size, 1);
    }
    ledger_done(&l);

    ledger_init(&l);
    ASSERT_OK(ledger_process_get(&l, 0, 500, 10, &id, &old));
    ASSERT_OK(ledger_add_gpu_energy(&l, old, 50000000, false, 1 * SEC));
    ledger_sweep(&l, 5 * SEC, 5 * SEC, 300 * SEC);
    assert_int_equal(ledger_process_get(&l, 0, 500, 20, &id, &p), 1);
    assert_int_equal(p->measured_uj, 50000000);
    assert_int_equal(l.processes.size, 1);
    /* Again before any sweep (they run at publish, seconds apart): the entry just booked
     * is still marked active, and is one series with the new one all the same. */
    ASSERT_OK(ledger_add_gpu_energy(&l, p, 1000000, false, 6 * SEC));
    assert_int_equal(ledger_process_get(&l, 0, 500, 30, &id, &p), 1);
    assert_int_equal(p->measured_uj, 51000000);
    assert_int_equal(l.processes.size, 1);
    ledger_done(&l);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_entries),
        cmocka_unit_test(test_swept_workload),
        cmocka_unit_test(test_past_services),
        cmocka_unit_test(test_no_workload),
        cmocka_unit_test(test_cpu_booking_keeps_names),
        cmocka_unit_test(test_renamed_process_ends_its_old_series),
        cmocka_unit_test(test_reused_pid_is_one_series),
        cmocka_unit_test(test_names_not_utf8_are_one_series),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
