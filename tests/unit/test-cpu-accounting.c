/* SPDX-License-Identifier: MIT */
/* CPU energy per process and per workload, with the workload cgroup's CPU time for
 * processes no scan saw. Every number below is computed by hand in the comments. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu_accounting.h"
#include "exec_watch.h"
#include "exposition.h"
#include "fileio.h"
#include "ledger.h"
#include "macro.h"

#define CID_A "aaefb9d8feed2d453b543f6d928cede7a4dbefa6a0ae7c9b990dd234c56e93b9"
#define POD_A "2fc932ce-fdcc-454b-97bd-aadfdeb4c340"
#define SCOPE_A                                                                                    \
    "kubepods.slice/kubepods-burstable.slice/"                                                     \
    "kubepods-burstable-pod2fc932ce_fdcc_454b_97bd_aadfdeb4c340.slice/cri-containerd-" CID_A       \
    ".scope"
#define JOB_DIR "system.slice/slurmstepd.scope/job_77"
#define NOW(scan) ((uint64_t)(scan)*1000000000ULL)

struct fx {
    char root[512];
    int proc_fd, sys_fd;
    struct workload_identity id_a, id_job, id_none;
    struct cpu_accounting *acc;
    struct cpu_groups groups;
    struct ledger ledger;
    struct procfs_process rows[8];
    size_t n_rows;
    struct rapl_reading rapl[2];
};

static void write_usage(struct fx *f, const char *dir, uint64_t usec) {
    char rel[512], text[128];

    (void)snprintf(rel, sizeof(rel), "sys/fs/cgroup/%s/cpu.stat", dir);
    (void)snprintf(text, sizeof(text), "usage_usec %llu\nuser_usec 0\nsystem_usec 0\n",
                   (unsigned long long)usec);
    ASSERT_OK(test_write_file(f->root, rel, text));
}

static int setup(void **state) {
    struct fx *f = calloc(1, sizeof(*f));
    struct cpu_accounting_options o = {
        .policy = IDLE_POLICY_UNATTRIBUTED, .clk_tck = 100, .process_metrics = true};
    char path[600];

    if (!f || test_mkdtemp(f->root, sizeof(f->root)) < 0)
        return -1;
    ASSERT_OK(test_write_file(f->root, "proc/101/cgroup", "0::/" SCOPE_A "\n"));
    ASSERT_OK(test_write_file(f->root, "proc/201/cgroup", "0::/" JOB_DIR "/step_0/user/task_0\n"));
    write_usage(f, SCOPE_A, 2000000);
    write_usage(f, JOB_DIR, 5000000);
    (void)snprintf(path, sizeof(path), "%s/proc", f->root);
    f->proc_fd = open_root(path);
    (void)snprintf(path, sizeof(path), "%s/sys", f->root);
    f->sys_fd = open_root(path);
    if (f->proc_fd < 0 || f->sys_fd < 0)
        return -1;
    cpu_groups_init(&f->groups, f->proc_fd, f->sys_fd);
    ASSERT_OK(cpu_accounting_new(&o, &f->acc));
    ledger_init(&f->ledger);

    f->id_a = (struct workload_identity){.kind = IDENTITY_POD, .runtime = RUNTIME_CONTAINERD};
    memcpy(f->id_a.container_id, CID_A, sizeof(CID_A));
    memcpy(f->id_a.pod_uid, POD_A, sizeof(POD_A));
    f->id_job = (struct workload_identity){.kind = IDENTITY_SLURM_JOB};
    f->id_job.slurm =
        (struct slurm_identity){.role = SLURM_ROLE_JOB, .job_id_valid = true, .job_id = 77};
    f->id_none = (struct workload_identity){.kind = IDENTITY_NONE};
    for (size_t i = 0; i < ARRAY_SIZE(f->rapl); i++)
        f->rapl[i] =
            (struct rapl_reading){.domain = i == 0 ? RAPL_DOMAIN_PACKAGE : RAPL_DOMAIN_DRAM,
                                  .valid = true,
                                  .modulus = 262143328851ULL,
                                  .unit = ENERGY_UNIT_UJ};
    *state = f;
    return 0;
}

static int teardown(void **state) {
    struct fx *f = *state;

    assert_null(cpu_accounting_free(f->acc));
    cpu_groups_done(&f->groups);
    ledger_done(&f->ledger);
    (void)close(f->proc_fd);
    (void)close(f->sys_fd);
    test_rm_rf(f->root);
    free(f);
    return 0;
}

static void row(struct fx *f, uint32_t pid, uint64_t start, const char *comm,
                const struct workload_identity *id, uint64_t delta, unsigned flags) {
    struct procfs_process *p = &f->rows[f->n_rows++];

    *p = (struct procfs_process){.pid = pid,
                                 .starttime = start,
                                 .comm = comm,
                                 .cpu_ticks_delta = delta,
                                 .identity = id,
                                 .flags = flags};
}

/* One window closed at `now`: /proc/stat's text and RAPL readings as read then. */
static int tick(struct fx *f, const struct procfs_process *rows, size_t n, const char *stat,
                const struct rapl_reading *rapl, size_t n_rapl, uint64_t now) {
    struct cpu_node_reading node = {.stat_text = stat,
                                    .stat_len = strlen(stat),
                                    .stat_ns = now,
                                    .rapl = rapl,
                                    .n_rapl = n_rapl};

    return cpu_accounting_tick(f->acc, &f->groups, rows, n, &node, now, &f->ledger);
}

/* One scan: node cpu line with `active` and `idle` ticks in total, RAPL raw values. */
static void scan(struct fx *f, unsigned n, uint64_t active, uint64_t idle, uint64_t pkg,
                 uint64_t dram) {
    char stat[256];
    int len = snprintf(stat, sizeof(stat), "cpu  %llu 0 0 %llu 0 0 0 0 0 0\nbtime 1\n",
                       (unsigned long long)active, (unsigned long long)idle);

    f->rapl[0].raw = pkg;
    f->rapl[1].raw = dram;
    ASSERT_OK(cpu_groups_track(&f->groups, f->rows, f->n_rows));
    assert_true(len > 0 && (size_t)len < sizeof(stat));
    ASSERT_OK(tick(f, f->rows, f->n_rows, stat, f->rapl, 2, NOW(n)));
    cpu_groups_finish(&f->groups);
    ledger_sweep(&f->ledger, NOW(n), NOW(n), 300 * 1000000000ULL);
    f->n_rows = 0;
}

static const struct ledger_workload *workload(struct fx *f, enum workload_kind kind) {
    static const struct ledger_workload none;
    void *v;

    for (size_t i = 0; hashmap_next(&f->ledger.workloads, &i, NULL, &v);)
        if (((struct ledger_workload *)v)->kind == kind)
            return v;
    fail_msg("no workload of kind %d", kind);
    return &none; /* not reached */
}

static const struct ledger_cpu_process *find_process(struct fx *f, uint32_t pid) {
    void *v;

    for (size_t i = 0; hashmap_next(&f->ledger.cpu_processes, &i, NULL, &v);)
        if (((struct ledger_cpu_process *)v)->pid == pid)
            return v;
    return NULL;
}

static const struct ledger_cpu_process *process(struct fx *f, uint32_t pid) {
    static const struct ledger_cpu_process none;
    const struct ledger_cpu_process *p = find_process(f, pid);

    if (!p)
        fail_msg("no process series for pid %u", pid);
    return p ? p : &none;
}

static const struct ledger_rapl *rapl_of(struct fx *f, const char *domain) {
    static const struct ledger_rapl none;

    for (size_t i = 0; i < f->ledger.n_rapl; i++)
        if (strcmp(f->ledger.rapl[i].domain, domain) == 0)
            return &f->ledger.rapl[i];
    fail_msg("no rapl domain %s", domain);
    return &none; /* not reached */
}

static void assert_conserved(struct fx *f, const char *domain, unsigned d) {
    const struct ledger_rapl *r = rapl_of(f, domain);
    uint64_t sum = 0;
    void *v;

    for (size_t i = 0; hashmap_next(&f->ledger.cpu_processes, &i, NULL, &v);)
        sum += ((struct ledger_cpu_process *)v)->energy_uj[d];
    for (size_t i = 0; hashmap_next(&f->ledger.workloads, &i, NULL, &v);)
        sum += ((struct ledger_workload *)v)->cpu_unseen_uj[d];
    for (unsigned k = 0; k < _UNATTR_MAX; k++)
        sum += r->unattributed_uj[k];
    assert_int_equal(sum, r->energy_uj);
}

#define PKG RAPL_DOMAIN_PACKAGE
#define DRAM RAPL_DOMAIN_DRAM

static void test_processes_unseen_clamp_reuse_exit(void **state) {
    struct fx *f = *state;
    const struct ledger_cpu_process *p;
    const struct ledger_workload *w;

    /* Scan 1: the baseline (no window): everything seen, nothing split. */
    row(f, 101, 5000, "python3", &f->id_a, 0, PROCFS_PROCESS_NEW);
    row(f, 201, 6000, "lmp", &f->id_job, 0, PROCFS_PROCESS_NEW);
    row(f, 1, 10, "systemd", &f->id_none, 0, PROCFS_PROCESS_NEW);
    scan(f, 1, 1000, 1000, 1000000, 500000);
    assert_int_equal(f->ledger.cpu_processes.size, 0);

    /* Scan 2: 100 busy + 100 idle ticks = 1 000 000 us busy. Seen: 101 20 ticks (200 000
     * us), 201 30 ticks (300 000 us), systemd 10 ticks. Container cgroup +500 000 us ->
     * unseen 300 000 us; job cgroup +300 000 us = seen -> unseen 0. System: 1 000 000 -
     * 800 000 = 200 000 us. Package 2 000 000 uJ: 1 000 000 active, split 1:1 by us;
     * DRAM 100 000 uJ: 50 000 active -> 10 000 / 15 000 / 15 000 / 10 000 (system). */
    write_usage(f, SCOPE_A, 2500000);
    write_usage(f, JOB_DIR, 5300000);
    row(f, 101, 5000, "python3", &f->id_a, 20, 0);
    row(f, 201, 6000, "lmp", &f->id_job, 30, 0);
    row(f, 1, 10, "systemd", &f->id_none, 10, 0);
    scan(f, 2, 1100, 1100, 3000000, 600000);
    p = process(f, 101);
    assert_int_equal(p->energy_uj[PKG], 200000);
    assert_int_equal(p->energy_uj[DRAM], 10000);
    assert_int_equal(process(f, 201)->energy_uj[PKG], 300000);
    assert_int_equal(process(f, 201)->energy_uj[DRAM], 15000);
    assert_null(find_process(f, 1)); /* no workload: "system", no series */
    w = workload(f, WORKLOAD_CONTAINER);
    assert_true(w->cpu_unseen_valid);
    assert_int_equal(w->cpu_unseen_uj[PKG], 300000);
    assert_int_equal(w->cpu_unseen_uj[DRAM], 15000);
    assert_int_equal(w->cpu_uj, 525000);
    assert_int_equal(workload(f, WORKLOAD_POD)->cpu_uj, 525000);
    assert_int_equal(workload(f, WORKLOAD_JOB)->cpu_uj, 315000);
    assert_int_equal(workload(f, WORKLOAD_JOB)->cpu_unseen_uj[PKG], 0);
    assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_SYSTEM], 200000);
    assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_IDLE], 1000000);
    assert_int_equal(rapl_of(f, "dram")->unattributed_uj[UNATTR_SYSTEM], 10000);
    assert_conserved(f, "package", PKG);
    assert_conserved(f, "dram", DRAM);

    /* Scan 3: pid 101 exited and a new python3 got pid 101 (same labels: the series goes
     * on). 50 busy ticks = 500 000 us; seen 50 000 + 200 000 us -> cap 250 000 us. Unseen
     * wanted: container 450 000 - 50 000 = 400 000, job 400 000 - 200 000 = 200 000;
     * scaled by 250 000 / 600 000: 166 666 and 83 333; 1 us left for "system". Package
     * 1 000 000 uJ -> 500 000 active, one uJ per us. DRAM does not move. */
    write_usage(f, SCOPE_A, 2950000);
    write_usage(f, JOB_DIR, 5700000);
    row(f, 101, 7000, "python3", &f->id_a, 5, PROCFS_PROCESS_NEW);
    row(f, 201, 6000, "lmp", &f->id_job, 20, 0);
    row(f, 101, 5000, "python3", &f->id_a, 0, PROCFS_PROCESS_EXITED);
    scan(f, 3, 1150, 1150, 4000000, 600000);
    p = process(f, 101);
    assert_int_equal(p->energy_uj[PKG], 250000);
    assert_int_equal(p->start_ticks, 7000);
    assert_true(p->active); /* the old process's exit does not end the new one */
    w = workload(f, WORKLOAD_CONTAINER);
    assert_int_equal(w->cpu_unseen_uj[PKG], 466666);
    assert_int_equal(w->cpu_uj, 741666);
    /* workload == its processes + unseen, summed over package and dram */
    assert_int_equal(w->cpu_uj, p->energy_uj[PKG] + p->energy_uj[DRAM] + w->cpu_unseen_uj[PKG] +
                                    w->cpu_unseen_uj[DRAM]);
    w = workload(f, WORKLOAD_JOB);
    assert_int_equal(w->cpu_unseen_uj[PKG], 83333);
    assert_int_equal(w->cpu_uj, 598333);
    assert_int_equal(process(f, 201)->energy_uj[PKG], 500000);
    assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_SYSTEM], 200001);
    assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_IDLE], 1500000);
    assert_conserved(f, "package", PKG);

    /* Scan 4: both processes exit; the container's cgroup is removed, the job's stays and
     * grows 100 000 us from processes that lived between scans: 10 busy ticks = 100 000 us
     * (cap 100 000), so the job's unseen part takes all 200 000 uJ of active energy. */
    {
        char dir[1024];

        (void)snprintf(dir, sizeof(dir), "%s/sys/fs/cgroup/%s", f->root, SCOPE_A);
        test_rm_rf(dir);
    }
    write_usage(f, JOB_DIR, 5800000);
    row(f, 101, 7000, "python3", &f->id_a, 0, PROCFS_PROCESS_EXITED);
    row(f, 201, 6000, "lmp", &f->id_job, 0, PROCFS_PROCESS_EXITED);
    scan(f, 4, 1160, 1160, 4400000, 600000);
    assert_false(process(f, 101)->active);
    assert_false(process(f, 201)->active);
    w = workload(f, WORKLOAD_JOB);
    assert_int_equal(w->cpu_unseen_uj[PKG], 283333);
    assert_int_equal(w->cpu_uj, 798333);
    assert_true(w->active); /* its cgroup still exists */
    assert_false(workload(f, WORKLOAD_CONTAINER)->active);
    assert_conserved(f, "package", PKG);
    assert_conserved(f, "dram", DRAM);

    /* Retention: exited process series go after 300 s. */
    ledger_sweep(&f->ledger, NOW(400), NOW(400), 300 * 1000000000ULL);
    assert_int_equal(f->ledger.cpu_processes.size, 0);
}

/* Without --cpu-process-metrics no process series exist, workloads get the same energy. */
static void test_no_process_metrics(void **state) {
    struct fx *f = *state;
    struct cpu_accounting_options o = {.policy = IDLE_POLICY_UNATTRIBUTED, .clk_tck = 100};

    assert_null(cpu_accounting_free(f->acc));
    ASSERT_OK(cpu_accounting_new(&o, &f->acc));
    cpu_groups_done(&f->groups);
    cpu_groups_init(&f->groups, -1, -1); /* no cgroup reads */
    row(f, 101, 5000, "python3", &f->id_a, 0, PROCFS_PROCESS_NEW);
    scan(f, 1, 100, 100, 0, 0);
    /* 60 busy of 80 ticks; the container used 40 ticks: 3/4 of 600 000 uJ active =
     * 450 000, of which 40/60 = 300 000 to the container, 150 000 system. */
    row(f, 101, 5000, "python3", &f->id_a, 40, 0);
    scan(f, 2, 160, 120, 600000, 0);
    assert_int_equal(f->ledger.cpu_processes.size, 0);
    assert_int_equal(workload(f, WORKLOAD_CONTAINER)->cpu_uj, 300000);
    assert_false(workload(f, WORKLOAD_CONTAINER)->cpu_unseen_valid); /* no cgroup read */
    assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_SYSTEM], 150000);
    assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_IDLE], 150000);
}

/* The exposition of scan 2 of the first test: the families and their exact lines. */
/* The step workload of job 77 named step, or NULL. */
static const struct ledger_workload *step_workload(struct fx *f, const char *step) {
    void *v;

    for (size_t i = 0; hashmap_next(&f->ledger.workloads, &i, NULL, &v);) {
        const struct ledger_workload *w = v;

        if (w->kind == WORKLOAD_STEP && strcmp(w->id->slurm_step, step) == 0)
            return w;
    }
    return NULL;
}

/* One window in which the SLURM watch saw the step of key end (its cgroup gone). */
static void scan_step_ended(struct fx *f, unsigned n, uint64_t key, uint64_t pkg) {
    size_t k = cpu_groups_find(&f->groups, key);

    assert_true(k != SIZE_MAX);
    cpu_groups_prepare(&f->groups); /* the scan's tracking then keeps what is set here */
    f->groups.v[k].watched = f->groups.v[k].ended = true;
    f->groups.v[k].cgroup = cgroup_cpu_free(f->groups.v[k].cgroup);
    scan(f, n, 100 * n, 100, pkg, 0);
}

/* A job's steps end one by one: each step turns inactive as the watch sees it go, and the
 * job once no step is left, even while the last steps' processes are still counted alive
 * (their exit is seen a scan later). */
static void test_steps_end_with_their_job(void **state) {
    struct fx *f = *state;
    struct workload_identity batch = f->id_job, step0 = f->id_job;

    memcpy(batch.slurm.step, "batch", 6);
    memcpy(step0.slurm.step, "0", 2);
    ASSERT_OK(
        test_write_file(f->root, "proc/301/cgroup", "0::/" JOB_DIR "/step_batch/user/task_0\n"));
    ASSERT_OK(test_write_file(f->root, "proc/302/cgroup", "0::/" JOB_DIR "/step_0/user/task_0\n"));
    write_usage(f, JOB_DIR "/step_batch", 1000000);
    write_usage(f, JOB_DIR "/step_0", 1000000);
    row(f, 301, 1, "bash", &batch, 10, PROCFS_PROCESS_NEW);
    row(f, 302, 2, "lmp", &step0, 10, PROCFS_PROCESS_NEW);
    scan(f, 1, 100, 100, 1000000, 0);
    row(f, 301, 1, "bash", &batch, 50, 0);
    row(f, 302, 2, "lmp", &step0, 50, 0);
    scan(f, 2, 200, 200, 2000000, 0);
    assert_true(step_workload(f, "0")->active && workload(f, WORKLOAD_JOB)->active);

    /* step 0 ends; the batch step goes on: the job with it */
    row(f, 301, 1, "bash", &batch, 50, 0);
    scan_step_ended(f, 3, workload_group_key(&step0), 3000000);
    assert_false(step_workload(f, "0")->active);
    assert_true(step_workload(f, "batch")->active);
    assert_true(workload(f, WORKLOAD_JOB)->active);

    /* the batch step ends; step 0's process is still counted (its exit not yet scanned) */
    scan_step_ended(f, 4, workload_group_key(&batch), 4000000);
    assert_false(step_workload(f, "batch")->active);
    assert_false(workload(f, WORKLOAD_JOB)->active);
    /* and the steps add up to the job */
    assert_int_equal(step_workload(f, "0")->cpu_uj + step_workload(f, "batch")->cpu_uj,
                     workload(f, WORKLOAD_JOB)->cpu_uj);
}

/* A step that ends in a scan where no RAPL counter reads (the zone reloading): the scan
 * still books it, with no energy, and says it ended (the watch reports a step's end once:
 * left to a later scan, its group was gone, and the job never had a series). What the
 * counters moved meanwhile is no data at the next reading. */
static void test_step_ends_while_rapl_unread(void **state) {
    struct fx *f = *state;
    struct workload_identity batch = f->id_job;

    memcpy(batch.slurm.step, "batch", 6);
    ASSERT_OK(
        test_write_file(f->root, "proc/301/cgroup", "0::/" JOB_DIR "/step_batch/user/task_0\n"));
    write_usage(f, JOB_DIR "/step_batch", 1000000);
    row(f, 301, 1, "bash", &batch, 10, PROCFS_PROCESS_NEW);
    scan(f, 1, 100, 100, 1000000, 0);
    row(f, 301, 1, "bash", &batch, 50, 0);
    scan(f, 2, 200, 200, 2000000, 0);
    assert_true(step_workload(f, "batch")->active);

    f->rapl[0].valid = f->rapl[1].valid = false;
    scan_step_ended(f, 3, workload_group_key(&batch), 3000000);
    assert_false(step_workload(f, "batch")->active);
    assert_false(workload(f, WORKLOAD_JOB)->active);
    f->rapl[0].valid = f->rapl[1].valid = true;
    scan(f, 4, 400, 400, 4000000, 0);
    assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_NO_DATA], 2000000);
    assert_conserved(f, "package", PKG);
}

static void test_render(void **state) {
    struct fx *f = *state;
    struct snapshot *snap;
    struct strbuf out;

    row(f, 101, 5000, "python3", &f->id_a, 0, PROCFS_PROCESS_NEW);
    row(f, 201, 6000, "lmp", &f->id_job, 0, PROCFS_PROCESS_NEW);
    scan(f, 1, 1000, 1000, 1000000, 500000);
    write_usage(f, SCOPE_A, 2500000);
    write_usage(f, JOB_DIR, 5300000);
    row(f, 101, 5000, "python3", &f->id_a, 20, 0);
    row(f, 201, 6000, "lmp", &f->id_job, 30, 0);
    scan(f, 2, 1100, 1100, 3000000, 600000);
    snap = ledger_snapshot(&f->ledger, NULL);
    assert_non_null(snap);
    strbuf_init(&out);
    ASSERT_OK(exposition_render(snap, NULL, &out));
    assert_non_null(
        strstr(out.buf,
               "joulestat_cpu_process_energy_joules_total{pid=\"101\",process_name=\"python3\","
               "pod=\"\",namespace=\"\",container=\"\",pod_uid=\"" POD_A "\",container_id=\"" CID_A
               "\",job_id=\"\",unit=\"\",domain=\"package\"} 0.200000\n"));
    assert_non_null(strstr(
        out.buf,
        "joulestat_cpu_process_energy_joules_total{pid=\"201\",process_name=\"lmp\",pod="
        "\"\",namespace=\"\",container=\"\",pod_uid=\"\",container_id=\"\",job_id=\"77\",unit=\"\","
        "domain=\"dram\"} 0.015000\n"));
    assert_non_null(strstr(out.buf, "joulestat_cpu_process_active{pid=\"201\",process_name=\"lmp\","
                                    "pod=\"\",namespace=\"\",container=\"\",pod_uid=\"\","
                                    "container_id=\"\",job_id=\"77\",unit=\"\"} 1\n"));
    /* The container's unseen part: 300 000 us of 1 000 000 busy us -> 0.3 J of package. */
    assert_non_null(strstr(out.buf,
                           "joulestat_cpu_unseen_energy_joules_total{domain=\"package\","
                           "pod=\"\",namespace=\"\",container=\"\",pod_uid=\"" POD_A
                           "\",container_id=\"" CID_A "\",job_id=\"\",unit=\"\"} 0.300000\n"));
    assert_non_null(strstr(out.buf, "joulestat_cpu_unseen_energy_joules_total{domain=\"dram\","
                                    "pod=\"\",namespace=\"\",container=\"\",pod_uid=\"\","
                                    "container_id=\"\",job_id=\"77\",unit=\"\"} 0.000000\n"));
    /* The pod is not a CPU group of its own (its container is): no unseen series. */
    assert_null(strstr(out.buf, "joulestat_cpu_unseen_energy_joules_total{domain=\"package\","
                                "pod=\"\",namespace=\"\",container=\"\",pod_uid=\"" POD_A
                                "\",container_id=\"\""));
    strbuf_done(&out);
    assert_null(snapshot_unref(snap));
}

/* One scan of pid 101 (workload A), prepared (cgroups read first) when asked. */
static void scan_a(struct fx *f, unsigned n, bool prepare) {
    if (prepare)
        cpu_groups_prepare(&f->groups);
    row(f, 101, 5000, "python3", &f->id_a, 0, n == 1 ? PROCFS_PROCESS_NEW : 0);
    scan(f, n, 1000 + 100 * n, 1000 + 100 * n, 1000000 + 1000 * n, 500000 + 100 * n);
}

/* What the scanner is told of a workload (cpu_groups_unchanged_fn): unchanged only once
 * two reads made before scans found the same usage (the baseline taken when the workload
 * is first met comes after the processes were read, so it does not count), for as many
 * scans as the reads agree; a moved usage, a workload with no group or no cgroup left,
 * and a window already accounted all say "read it". */
static void test_unchanged_workloads(void **state) {
    struct fx *f = *state;
    char path[1024];

    assert_false(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 1)); /* no group yet */
    scan_a(f, 1, true); /* creates A with its baseline (2 000 000 us) */
    assert_false(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 1)); /* not prepared */
    cpu_groups_prepare(&f->groups);
    assert_false(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 1)); /* only the baseline before */
    scan_a(f, 2, false);
    assert_false(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 1)); /* window over */

    cpu_groups_prepare(&f->groups);
    assert_true(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 1));
    assert_false(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 2));
    {
        /* Same group, but its job found from the environment: may run outside it. */
        struct workload_identity env = f->id_a;

        env.slurm.from_environ = true;
        assert_false(cpu_groups_unchanged_fn(&f->groups, &env, 1));
    }
    assert_false(cpu_groups_unchanged_fn(&f->groups, &f->id_job, 1)); /* no group */
    assert_false(cpu_groups_unchanged_fn(&f->groups, &f->id_none, 1));
    scan_a(f, 3, false);
    cpu_groups_prepare(&f->groups);
    assert_true(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 2));
    assert_false(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 3));
    scan_a(f, 4, false);

    write_usage(f, SCOPE_A, 2500000);
    cpu_groups_prepare(&f->groups);
    assert_false(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 1));
    scan_a(f, 5, false);
    /* 500 000 us that no process was seen using: A's unseen part, from the prepared read,
     * half the node's active time -> half of the 500 uJ active package energy. */
    assert_int_equal(workload(f, WORKLOAD_CONTAINER)->cpu_unseen_uj[PKG], 250);
    cpu_groups_prepare(&f->groups);
    assert_true(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 1));
    scan_a(f, 6, false);

    (void)snprintf(path, sizeof(path), "%s/sys/fs/cgroup/%s", f->root, SCOPE_A);
    test_rm_rf(path); /* the container ended */
    cpu_groups_prepare(&f->groups);
    assert_false(cpu_groups_unchanged_fn(&f->groups, &f->id_a, 1));
}

/* One window of pid 101 (workload A) running 10 ticks (100 000 us), A's cgroup having
 * grown by that and by unseen_us more; the reads selected (cpu_groups_select_reads()),
 * with an exit of A announced when asked. Returns whether A's cgroup was read. */
static bool selected_window(struct fx *f, unsigned n, uint64_t *usage, uint64_t unseen_us,
                            bool exit) {
    size_t k = cpu_groups_find(&f->groups, workload_group_key(&f->id_a));
    bool read;

    *usage += 100000 + unseen_us;
    write_usage(f, SCOPE_A, *usage);
    cpu_groups_select_reads(&f->groups);
    if (exit)
        cpu_groups_mark_exit(&f->groups, workload_group_key(&f->id_a));
    cpu_groups_prepare(&f->groups);
    read = !f->groups.v[k].read_skipped;
    row(f, 101, 5000, "python3", &f->id_a, 10, 0);
    scan(f, n, 1000 + 100 * n, 1000 + 100 * n, 1000000 + 1000 * n, 500000 + 100 * n);
    return read;
}

/* With every exit known, a workload's cgroup is read only after an exit of it, or once in
 * CPU_GROUPS_FULL_READ_SCANS reads; the time its processes were seen using in the windows
 * left out is not taken for unseen time, and what an unseen process used is given in full
 * at the next read. Each window: 1 000 000 us active on the node, 500 uJ of active
 * package energy, so 100 000 unseen us are 50 uJ. */
static void test_reads_left_out_until_an_exit(void **state) {
    struct fx *f = *state;
    uint64_t usage = 2000000;
    unsigned reads = 0, window = 3;

    scan_a(f, 1, true); /* A with its baseline (2 000 000 us) */
    scan_a(f, 2, true);
    /* A process of A ran 300 000 us unseen in window 3; no exit was announced. */
    for (bool read = false; !read; window++) {
        read = selected_window(f, window, &usage, window == 3 ? 300000 : 0, false);
        assert_int_equal(workload(f, WORKLOAD_CONTAINER)->cpu_unseen_uj[PKG], read ? 150 : 0);
        assert_true(window < 3 + CPU_GROUPS_FULL_READ_SCANS); /* the periodic read came */
    }
    /* Windows without an exit read A again only when it is due; an exit reads it at once. */
    for (unsigned i = 0; i < CPU_GROUPS_FULL_READ_SCANS; i++)
        reads += selected_window(f, window++, &usage, 0, false);
    assert_int_equal(reads, 1);
    assert_int_equal(workload(f, WORKLOAD_CONTAINER)->cpu_unseen_uj[PKG], 150);
    assert_true(selected_window(f, window++, &usage, 200000, true));
    assert_int_equal(workload(f, WORKLOAD_CONTAINER)->cpu_unseen_uj[PKG], 250);
    assert_conserved(f, "package", PKG);
    /* Without a selection (exits not known), every read happens. */
    usage += 100000;
    write_usage(f, SCOPE_A, usage);
    cpu_groups_prepare(&f->groups);
    assert_false(
        f->groups.v[cpu_groups_find(&f->groups, workload_group_key(&f->id_a))].read_skipped);
}

/* What the sources know of each pid, for cpu_groups_place_exits(). */
struct known_pid {
    uint32_t pid;
    uint64_t key;
};

static bool lookup_known(void *userdata, uint32_t pid, uint64_t *ret_key) {
    for (const struct known_pid *k = userdata; k->pid; k++)
        if (k->pid == pid) {
            *ret_key = k->key;
            return true;
        }
    return false;
}

/* Each exit is placed by its own pid, else by its parent's; one placed by neither leaves
 * nothing selected, so that every cgroup is read; a process of no workload marks none. */
static void test_exits_placed(void **state) {
    struct fx *f = *state;
    uint64_t key_a = workload_group_key(&f->id_a);
    struct known_pid known[] = {{101, key_a}, {400, 0}, {0, 0}};
    size_t k;
    bool due;

    scan_a(f, 1, true);
    k = cpu_groups_find(&f->groups, key_a);
    assert_true(k != SIZE_MAX);

    /* Gone before any scan saw it: placed by its parent 101, in A. */
    assert_true(cpu_groups_place_exits(&f->groups, (struct exec_exit[]){{300, 101}}, 1,
                                       lookup_known, known));
    assert_true(f->groups.read_selected);
    assert_true(f->groups.v[k].exited);
    cpu_groups_prepare(&f->groups);
    assert_false(f->groups.v[k].read_skipped); /* read because of the exit */
    assert_false(f->groups.v[k].exited);
    scan_a(f, 2, false);

    /* A process of no workload: the selection stands, A is not marked. */
    assert_true(
        cpu_groups_place_exits(&f->groups, (struct exec_exit[]){{400, 1}}, 1, lookup_known, known));
    assert_true(f->groups.read_selected);
    assert_false(f->groups.v[k].exited);
    due = (f->groups.reads + key_a) % CPU_GROUPS_FULL_READ_SCANS == 0;
    cpu_groups_prepare(&f->groups);
    assert_int_equal(f->groups.v[k].read_skipped, !due); /* left out unless due */
    scan_a(f, 3, false);
    /* No exit at all: selected, nothing marked. */
    f->groups.read_selected = false;
    assert_true(cpu_groups_place_exits(&f->groups, NULL, 0, lookup_known, known));
    assert_true(f->groups.read_selected);
    assert_false(f->groups.v[k].exited);

    /* One exit that neither it nor its parent places: nothing selected, every cgroup read. */
    f->groups.read_selected = false;
    assert_false(cpu_groups_place_exits(&f->groups, (struct exec_exit[]){{101, 1}, {500, 501}}, 2,
                                        lookup_known, known));
    assert_false(f->groups.read_selected);
    cpu_groups_prepare(&f->groups);
    assert_false(f->groups.v[k].read_skipped);
}

/* Two packages: each one's split books the workload's unseen part, and the series sums
 * them (as its process series and the workload's CPU energy do). */
static void test_unseen_summed_over_packages(void **state) {
    struct fx *f = *state;
    struct rapl_reading two[2] = {f->rapl[0], f->rapl[0]};
    const char *stat1 = "cpu  1000 0 0 1000 0 0 0 0 0 0\nbtime 1\n";
    const char *stat2 = "cpu  1100 0 0 1100 0 0 0 0 0 0\nbtime 1\n";
    const struct ledger_workload *w;
    uint64_t measured = 0, booked = 0;
    void *v;

    two[1].package = 1;
    for (unsigned scan_no = 1; scan_no <= 2; scan_no++) {
        const char *stat = scan_no == 1 ? stat1 : stat2;

        if (scan_no == 2)
            write_usage(f, SCOPE_A, 2500000);
        row(f, 101, 5000, "python3", &f->id_a, scan_no == 1 ? 0 : 20,
            scan_no == 1 ? PROCFS_PROCESS_NEW : 0);
        two[0].raw = scan_no == 1 ? 1000000 : 3000000;
        two[1].raw = scan_no == 1 ? 7000000 : 9000000;
        ASSERT_OK(cpu_groups_track(&f->groups, f->rows, f->n_rows));
        ASSERT_OK(tick(f, f->rows, f->n_rows, stat, two, 2, NOW(scan_no)));
        cpu_groups_finish(&f->groups);
        f->n_rows = 0;
    }
    /* Per package: 1 000 000 uJ active over 1 000 000 busy us; the container's cgroup ran
     * 500 000 us, its seen process 200 000: 300 000 uJ unseen of each package. */
    w = workload(f, WORKLOAD_CONTAINER);
    assert_int_equal(w->cpu_unseen_uj[PKG], 600000);
    assert_int_equal(process(f, 101)->energy_uj[PKG], 400000);
    assert_int_equal(w->cpu_uj, process(f, 101)->energy_uj[PKG] + w->cpu_unseen_uj[PKG]);
    for (size_t i = 0; i < f->ledger.n_rapl; i++) {
        measured += f->ledger.rapl[i].energy_uj;
        for (unsigned k = 0; k < _UNATTR_MAX; k++)
            booked += f->ledger.rapl[i].unattributed_uj[k];
    }
    for (size_t i = 0; hashmap_next(&f->ledger.cpu_processes, &i, NULL, &v);)
        booked += ((struct ledger_cpu_process *)v)->energy_uj[PKG];
    booked += w->cpu_unseen_uj[PKG];
    assert_int_equal(measured, 4000000);
    assert_int_equal(booked, measured);
}

/* More consumers than a split takes (a pod of 70 000 busy processes): the window is
 * booked as no_data, every joule accounted, and the scan goes on (it failed at 65 537). */
static void test_more_consumers_than_a_split(void **state) {
    struct fx *f = *state;
    const size_t n = 70000;
    struct procfs_process *rows = calloc(n, sizeof(*rows));
    const char *stat1 = "cpu  1000 0 0 1000 0 0 0 0 0 0\nbtime 1\n";
    const char *stat2 = "cpu  100000 0 0 1100 0 0 0 0 0 0\nbtime 1\n";
    uint64_t booked = 0;

    assert_non_null(rows);
    for (unsigned scan_no = 1; scan_no <= 2; scan_no++) {
        const char *stat = scan_no == 1 ? stat1 : stat2;

        for (size_t i = 0; i < n; i++)
            rows[i] = (struct procfs_process){.pid = (uint32_t)(1000 + i),
                                              .starttime = 1,
                                              .comm = "busy",
                                              .cpu_ticks_delta = scan_no == 1 ? 0 : 1,
                                              .identity = &f->id_a,
                                              .flags = scan_no == 1 ? PROCFS_PROCESS_NEW : 0};
        f->rapl[0].raw = scan_no == 1 ? 1000000 : 3000000;
        f->rapl[1].raw = scan_no == 1 ? 1000 : 2000;
        ASSERT_OK(cpu_groups_track(&f->groups, rows, n));
        ASSERT_OK(tick(f, rows, n, stat, f->rapl, 2, NOW(scan_no)));
        cpu_groups_finish(&f->groups);
    }
    for (size_t i = 0; i < f->ledger.n_rapl; i++) {
        const struct ledger_rapl *r = &f->ledger.rapl[i];

        booked = 0;
        for (unsigned k = 0; k < _UNATTR_MAX; k++)
            booked += r->unattributed_uj[k];
        assert_true(r->energy_uj > 0);
        assert_int_equal(r->unattributed_uj[UNATTR_NO_DATA], r->energy_uj);
        assert_int_equal(booked, r->energy_uj);
    }
    free(rows);
}

/* The busy fraction comes from /proc/stat's ticks, the busy time from the clock: a virtual
 * machine that loses ticks (its host took the CPUs without reporting steal) must not give
 * its consumers more energy per CPU-second. */
static void test_busy_time_from_the_clock(void **state) {
    struct fx *f = *state;
    /* 2 CPUs; 1 s later all busy, but only 180 of the 200 ticks were counted. */
    const char *stat1 = "cpu  1000 0 0 1000 0 0 0 0 0 0\ncpu0 500 0 0 500 0 0 0 0 0 0\n"
                        "cpu1 500 0 0 500 0 0 0 0 0 0\nbtime 1\n";
    const char *stat2 = "cpu  1180 0 0 1000 0 0 0 0 0 0\ncpu0 590 0 0 500 0 0 0 0 0 0\n"
                        "cpu1 590 0 0 500 0 0 0 0 0 0\nbtime 1\n";
    /* Then one CPU is left: the count changed, the ticks are the time (90 = 900 000 us). */
    const char *stat3 = "cpu  1270 0 0 1000 0 0 0 0 0 0\ncpu0 680 0 0 500 0 0 0 0 0 0\nbtime 1\n";
    const char *stats[] = {stat1, stat2, stat3};

    for (unsigned scan_no = 1; scan_no <= 3; scan_no++) {
        if (scan_no == 2)
            write_usage(f, SCOPE_A, 3000000); /* = what the scan saw: nothing unseen */
        if (scan_no == 3)
            write_usage(f, SCOPE_A, 3500000);
        row(f, 101, 5000, "python3", &f->id_a,
            scan_no == 1   ? 0
            : scan_no == 2 ? 100
                           : 50,
            scan_no == 1 ? PROCFS_PROCESS_NEW : 0);
        f->rapl[0].raw = scan_no == 1 ? 1000000 : scan_no == 2 ? 3000000 : 3900000;
        f->rapl[1].raw = 1000;
        ASSERT_OK(cpu_groups_track(&f->groups, f->rows, f->n_rows));
        ASSERT_OK(tick(f, f->rows, f->n_rows, stats[scan_no - 1], f->rapl, 2, NOW(scan_no)));
        cpu_groups_finish(&f->groups);
        f->n_rows = 0;
        if (scan_no == 2) {
            /* One CPU of two for the whole second: half of 2 000 000 uJ (the ticks alone
             * said 1 000 000 of 1 800 000 us busy: 1 111 111 uJ). */
            assert_int_equal(process(f, 101)->energy_uj[PKG], 1000000);
            assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_SYSTEM], 1000000);
        }
    }
    /* 500 000 of 900 000 us busy by the ticks: 500 000 of the 900 000 uJ. */
    assert_int_equal(process(f, 101)->energy_uj[PKG], 1500000);
    assert_conserved(f, "package", PKG);
}

/* Every RAPL reading is counted, however many (a 48-socket node: 96 package and DRAM
 * zones; the readings past the 64th were left out). */
static void test_many_packages(void **state) {
    struct fx *f = *state;
    struct rapl_reading many[96];
    const char *stat1 = "cpu  1000 0 0 1000 0 0 0 0 0 0\nbtime 1\n";
    const char *stat2 = "cpu  1100 0 0 1100 0 0 0 0 0 0\nbtime 1\n";

    for (unsigned scan_no = 1; scan_no <= 2; scan_no++) {
        for (size_t i = 0; i < ARRAY_SIZE(many); i++) {
            many[i] = f->rapl[i % 2];
            many[i].package = (uint32_t)(i / 2);
            many[i].raw = scan_no == 1 ? 5000 : 6000 + i;
        }
        row(f, 101, 5000, "python3", &f->id_a, scan_no == 1 ? 0 : 50,
            scan_no == 1 ? PROCFS_PROCESS_NEW : 0);
        ASSERT_OK(cpu_groups_track(&f->groups, f->rows, f->n_rows));
        ASSERT_OK(tick(f, f->rows, f->n_rows, scan_no == 1 ? stat1 : stat2, many, ARRAY_SIZE(many),
                       NOW(scan_no)));
        cpu_groups_finish(&f->groups);
        f->n_rows = 0;
    }
    assert_int_equal(f->ledger.n_rapl, ARRAY_SIZE(many));
    for (size_t i = 0; i < f->ledger.n_rapl; i++) {
        const struct ledger_rapl *r = &f->ledger.rapl[i];
        uint64_t unattributed = 0;

        assert_int_equal(r->energy_uj, 1000 + 2 * r->package + (strcmp(r->domain, "dram") == 0));
        for (unsigned k = 0; k < _UNATTR_MAX; k++)
            unattributed += r->unattributed_uj[k];
        assert_true(unattributed < r->energy_uj); /* the process had its part of each */
    }
}

/* Package counter in uJ, range 262 143 J: 262 s at the 1000 W bound. A reading 300 s after
 * the one before (joulestat stalled, the VM paused) may be short by whole ranges: its time
 * is booked as of unknown energy, and it is the new baseline. */
static void test_gap_longer_than_the_range(void **state) {
    struct fx *f = *state;
    static const uint64_t at_s[] = {1, 2, 302, 303}, raw[] = {5000, 6000, 7000, 9000};
    char stat[128];

    for (size_t k = 0; k < ARRAY_SIZE(at_s); k++) {
        struct rapl_reading rd = f->rapl[0];

        rd.raw = raw[k];
        (void)snprintf(stat, sizeof(stat), "cpu  %llu 0 0 %llu 0 0 0 0 0 0\nbtime 1\n",
                       (unsigned long long)(1000 + 100 * at_s[k]),
                       (unsigned long long)(1000 + 100 * at_s[k]));
        row(f, 101, 5000, "python3", &f->id_a, k == 0 ? 0 : 50, k == 0 ? PROCFS_PROCESS_NEW : 0);
        ASSERT_OK(cpu_groups_track(&f->groups, f->rows, f->n_rows));
        ASSERT_OK(tick(f, f->rows, f->n_rows, stat, &rd, 1, NOW(at_s[k])));
        cpu_groups_finish(&f->groups);
        f->n_rows = 0;
        assert_int_equal(f->ledger.n_rapl, 1);
        if (k == 1 || k == 2) /* the 1000 uJ of the first window; nothing over the gap */
            assert_int_equal(f->ledger.rapl[0].energy_uj, 1000);
    }
    assert_int_equal(f->ledger.rapl[0].downtime_unknown_us, 300 * 1000000ULL);
    assert_int_equal(f->ledger.rapl[0].energy_uj, 3000); /* and the 2000 uJ after it */
}

/* A counter that steps back without wrapping (reset at a resume from suspend, which the
 * monotonic clock does not count; a bogus reading) looks like a wrap of nearly its whole
 * range: 262 kJ in a second. Not booked: the second is of unknown energy, the reading the
 * new baseline, and what follows is booked as before. */
static void test_counter_stepping_back(void **state) {
    struct fx *f = *state;
    static const uint64_t raw[] = {200000000000, 200000001000, 5000, 7000};
    static const uint64_t booked[] = {0, 1000, 1000, 3000};
    char stat[128];

    for (size_t k = 0; k < ARRAY_SIZE(raw); k++) {
        struct rapl_reading rd = f->rapl[0];

        rd.raw = raw[k];
        (void)snprintf(stat, sizeof(stat), "cpu  %llu 0 0 %llu 0 0 0 0 0 0\nbtime 1\n",
                       (unsigned long long)(1000 + 100 * k), (unsigned long long)(1000 + 100 * k));
        row(f, 101, 5000, "python3", &f->id_a, k == 0 ? 0 : 50, k == 0 ? PROCFS_PROCESS_NEW : 0);
        ASSERT_OK(cpu_groups_track(&f->groups, f->rows, f->n_rows));
        ASSERT_OK(tick(f, f->rows, f->n_rows, stat, &rd, 1, NOW(k + 1)));
        cpu_groups_finish(&f->groups);
        f->n_rows = 0;
        assert_int_equal(f->ledger.rapl[0].energy_uj, booked[k]);
    }
    assert_int_equal(f->ledger.rapl[0].downtime_unknown_us, 1000000);
    assert_conserved(f, "package", 0);
}

/* The counters closed and opened again (none read for a while: a driver reload), their
 * readings now in the other order: each goes on from its own last reading, what it moved
 * meanwhile is no data (the DRAM counter's too, unreadable at the first scan after), and
 * the next window is split as before. */
static void test_reopened(void **state) {
    struct fx *f = *state;
    struct rapl_reading swapped[2];
    uint64_t before_split = 0;

    row(f, 101, 5000, "python3", &f->id_a, 0, PROCFS_PROCESS_NEW);
    scan(f, 1, 1000, 1000, 5000, 9000);
    row(f, 101, 5000, "python3", &f->id_a, 50, 0);
    scan(f, 2, 1100, 1100, 6000, 9500);
    assert_int_equal(rapl_of(f, "package")->energy_uj, 1000);
    assert_int_equal(rapl_of(f, "dram")->energy_uj, 500);

    cpu_accounting_rapl_reopened(f->acc, &f->ledger);
    for (unsigned n = 3; n <= 4; n++) {
        char stat[128];

        swapped[0] = f->rapl[1];
        swapped[0].raw = 10000;
        swapped[0].valid = n == 4;
        swapped[1] = f->rapl[0];
        swapped[1].raw = n == 3 ? 6700 : 7700;
        (void)snprintf(stat, sizeof(stat), "cpu  %u 0 0 %u 0 0 0 0 0 0\nbtime 1\n", 1000 + 100 * n,
                       1000 + 100 * n);
        row(f, 101, 5000, "python3", &f->id_a, 50, 0);
        ASSERT_OK(cpu_groups_track(&f->groups, f->rows, f->n_rows));
        ASSERT_OK(tick(f, f->rows, f->n_rows, stat, swapped, 2, NOW(n)));
        cpu_groups_finish(&f->groups);
        f->n_rows = 0;
        if (n == 3) { /* the 700 uJ moved unread: nobody's it can tell */
            assert_int_equal(rapl_of(f, "package")->energy_uj, 1700);
            assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_NO_DATA], 700);
            assert_int_equal(rapl_of(f, "dram")->energy_uj, 500);
            before_split = process(f, 101)->energy_uj[PKG];
        }
    }
    /* Then split by CPU time again: the process had half of the node's busy window. */
    assert_int_equal(rapl_of(f, "package")->energy_uj, 2700);
    assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_NO_DATA], 700);
    assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_DOWNTIME], 0);
    assert_int_equal(rapl_of(f, "dram")->energy_uj, 1000);
    assert_int_equal(rapl_of(f, "dram")->unattributed_uj[UNATTR_NO_DATA], 500);
    assert_int_equal(rapl_of(f, "dram")->unattributed_uj[UNATTR_DOWNTIME], 0);
    assert_true(process(f, 101)->energy_uj[PKG] > before_split);
    assert_conserved(f, "package", PKG);
    assert_conserved(f, "dram", DRAM);
}

/* A counter that did not read at a scan (its zone gone with its package's CPUs) and reads
 * again: what it moved since its last reading was drawn over windows it did not see, so it
 * is no data, not the reading window's to split. The other counter is split as before. */
static void test_counter_missed_a_scan(void **state) {
    struct fx *f = *state;
    uint64_t pkg_before, dram_before;

    row(f, 101, 5000, "python3", &f->id_a, 0, PROCFS_PROCESS_NEW);
    scan(f, 1, 1000, 1000, 5000, 9000);
    row(f, 101, 5000, "python3", &f->id_a, 50, 0);
    scan(f, 2, 1100, 1100, 6000, 9500);
    pkg_before = process(f, 101)->energy_uj[PKG];
    dram_before = process(f, 101)->energy_uj[DRAM];
    assert_true(pkg_before > 0 && dram_before > 0);

    f->rapl[1].valid = false; /* dram unread at scan 3 */
    row(f, 101, 5000, "python3", &f->id_a, 50, 0);
    scan(f, 3, 1200, 1200, 7000, 9999);
    f->rapl[1].valid = true;
    row(f, 101, 5000, "python3", &f->id_a, 50, 0);
    scan(f, 4, 1300, 1300, 8000, 10500);
    assert_int_equal(rapl_of(f, "dram")->energy_uj, 1500);
    assert_int_equal(rapl_of(f, "dram")->unattributed_uj[UNATTR_NO_DATA], 1000);
    assert_int_equal(process(f, 101)->energy_uj[DRAM], dram_before);
    assert_true(process(f, 101)->energy_uj[PKG] > pkg_before);
    assert_int_equal(rapl_of(f, "package")->unattributed_uj[UNATTR_NO_DATA], 0);

    /* Read at every scan again: split again. */
    row(f, 101, 5000, "python3", &f->id_a, 50, 0);
    scan(f, 5, 1400, 1400, 9000, 11000);
    assert_true(process(f, 101)->energy_uj[DRAM] > dram_before);
    assert_int_equal(rapl_of(f, "dram")->unattributed_uj[UNATTR_NO_DATA], 1000);
    assert_conserved(f, "package", PKG);
    assert_conserved(f, "dram", DRAM);
}

/* Processes that exit while no RAPL counter reads (no tick to split): the scan says each
 * exit once, and their series end all the same, so retention lets them go. */
static void test_exit_without_readings(void **state) {
    struct fx *f = *state;

    row(f, 101, 5000, "python3", &f->id_a, 0, PROCFS_PROCESS_NEW);
    scan(f, 1, 1000, 1000, 5000, 9000);
    row(f, 101, 5000, "python3", &f->id_a, 50, 0);
    scan(f, 2, 1100, 1100, 6000, 9500);
    assert_true(process(f, 101)->active);
    row(f, 101, 5000, "python3", &f->id_a, 0, PROCFS_PROCESS_EXITED);
    cpu_accounting_exits(f->acc, f->rows, f->n_rows, NOW(3), &f->ledger);
    f->n_rows = 0;
    assert_false(process(f, 101)->active);
    ledger_sweep(&f->ledger, NOW(400), NOW(400), 300 * 1000000000ULL);
    assert_int_equal(f->ledger.cpu_processes.size, 0);
}

static void test_errors(void **state) {
    struct cpu_accounting *c = NULL;
    struct cpu_accounting_options o = {.policy = IDLE_POLICY_MEMORY, .clk_tck = 100};

    ASSERT_ERRNO(cpu_accounting_new(&o, &c), EINVAL);
    /* The tick length comes from the caller (sysconf): accounting reads no system state. */
    o = (struct cpu_accounting_options){.policy = IDLE_POLICY_UNATTRIBUTED};
    ASSERT_ERRNO(cpu_accounting_new(&o, &c), EINVAL);
    ASSERT_ERRNO(cpu_accounting_new(NULL, &c), EINVAL);
    assert_null(c);
    assert_null(cpu_accounting_free(NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_processes_unseen_clamp_reuse_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_process_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_render, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steps_end_with_their_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unchanged_workloads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_left_out_until_an_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exits_placed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unseen_summed_over_packages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_more_consumers_than_a_split, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_time_from_the_clock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_packages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_longer_than_the_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counter_stepping_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopened, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counter_missed_a_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_without_readings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_step_ends_while_rapl_unread, setup, teardown),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
