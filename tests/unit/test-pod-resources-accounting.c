/* SPDX-License-Identifier: MIT */
/*
 * --gpu-idle-policy=allocation end to end inside the process: GPU readings + a pod
 * allocation table -> gpu_accounting -> ledger -> snapshot -> exposition, exact to the
 * microjoule, with per-GPU conservation checked from the exposition's own numbers.
 */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>

#include "exposition.h"
#include "gpu_accounting.h"
#include "ledger.h"
#include "pod_resources_gpu.h"
#include "strbuf.h"

#define T0_US UINT64_C(1700000000000000)
#define UUID "GPU-00000000-1111-2222-3333-444444444444"
#define SEC_US UINT64_C(1000000)

struct fixture {
    struct gpu_accounting *acc;
    struct ledger ledger;
    struct gpu_device_reading dev;
    struct gpu_process procs[2];
    struct gpu_alloc allocs[3];
    struct gpu_alloc_table table;
    uint64_t now_us;
    unsigned lookups;
};

static int lookup_uid(void *userdata, const char *namespace_, const char *pod,
                      const char **ret_uid) {
    struct fixture *f = userdata;

    f->lookups++;
    if (strcmp(namespace_, "ml") == 0 && strcmp(pod, "train-a") == 0) {
        *ret_uid = "0b0c0d0e-aaaa-bbbb-cccc-000000000001";
        return 0;
    }
    return -ENOENT;
}

static struct fixture *fixture_new(enum idle_policy policy) {
    struct gpu_accounting_options o = {.idle_policy = policy, .idle_power_watts = 50};
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    ASSERT_OK(gpu_accounting_new(&o, &f->acc));
    ledger_init(&f->ledger);
    f->dev = (struct gpu_device_reading){
        .index = 0,
        .uuid = UUID,
        .name = "Simulated H100",
        .up = true,
        .energy_valid = true,
        .power_valid = true,
        .power_mw = 100000,
        .utils_supported = true,
        .processes = f->procs,
    };
    /* sorted as gpu_alloc_table_build sorts: ml/notebook, then ml/train-a's two containers
     * (3 ids in all: two time-slicing replicas and one more) */
    f->allocs[0] = (struct gpu_alloc){.namespace_ = "ml",
                                      .pod = "notebook",
                                      .container = "jupyter",
                                      .device = UUID,
                                      .gpu_uuid = UUID,
                                      .replicas = 1};
    f->allocs[1] = (struct gpu_alloc){.namespace_ = "ml",
                                      .pod = "train-a",
                                      .container = "helper",
                                      .device = UUID,
                                      .gpu_uuid = UUID,
                                      .replicas = 1};
    f->allocs[2] = (struct gpu_alloc){.namespace_ = "ml",
                                      .pod = "train-a",
                                      .container = "trainer",
                                      .device = UUID,
                                      .gpu_uuid = UUID,
                                      .replicas = 2};
    f->table = (struct gpu_alloc_table){.n = 3, .allocs = f->allocs};
    f->now_us = T0_US;
    return f;
}

static void fixture_free(struct fixture *f) {
    gpu_accounting_free(f->acc);
    ledger_done(&f->ledger);
    free(f);
}

static struct gpu_tick_stats tick(struct fixture *f, uint64_t energy_mj) {
    struct gpu_tick_stats st;

    f->dev.energy_mj = energy_mj;
    ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, f->now_us * 1000, NULL, NULL,
                                  &f->ledger, &st));
    ledger_sweep(&f->ledger, f->now_us * 1000, f->now_us * 1000, 60 * UINT64_C(1000000000));
    f->now_us += SEC_US;
    return st;
}

static uint64_t allocation_uj(struct fixture *f, const char *pod, const char *uid) {
    void *v;

    for (size_t i = 0; hashmap_next(&f->ledger.allocations, &i, NULL, &v);) {
        const struct ledger_allocation *a = v;

        if (strcmp(a->pod, pod) == 0 && strcmp(a->pod_uid, uid) == 0)
            return a->energy_uj;
    }
    fail_msg("no allocation for %s (%s)", pod, uid);
    return 0;
}

static uint64_t process_uj(struct fixture *f, uint32_t pid) {
    struct ledger_process *p;

    ASSERT_OK(ledger_process_get(&f->ledger, 0, pid, 0, &(struct snap_identity){0}, &p));
    return p->measured_uj + p->estimated_uj;
}

static void test_idle_to_holders(void **state) {
    struct fixture *f = fixture_new(IDLE_POLICY_ALLOCATION);
    struct ledger_gpu *g;
    struct gpu_tick_stats st;
    struct ledger_workload *w = NULL;
    void *v;

    gpu_accounting_set_allocations(f->acc, &f->table, lookup_uid, f);
    tick(f, 1000000); /* baseline */

    /* 1 s, nobody runs, 60 J: all of it to the holders, 1 : 3 */
    st = tick(f, 1060000);
    assert_int_equal(st.allocation_fallbacks, 0);
    assert_int_equal(allocation_uj(f, "notebook", ""), 15000000);
    assert_int_equal(allocation_uj(f, "train-a", "0b0c0d0e-aaaa-bbbb-cccc-000000000001"), 45000000);

    /* 1 s, pid 100 alone, 200 J: 50 J idle (50 W) to the holders, 150 J to the process */
    f->procs[0] = (struct gpu_process){.pid = 100};
    f->dev.n_processes = 1;
    tick(f, 1260000);
    assert_int_equal(process_uj(f, 100), 150000000);
    {
        struct ledger_process *p;

        ASSERT_OK(ledger_process_get(&f->ledger, 0, 100, 0, &(struct snap_identity){0}, &p));
        assert_int_equal(p->estimated_uj, 150000000); /* the idle cut is an estimate */
    }
    assert_int_equal(allocation_uj(f, "notebook", ""), 27500000);
    assert_int_equal(allocation_uj(f, "train-a", "0b0c0d0e-aaaa-bbbb-cccc-000000000001"), 82500000);

    g = ledger_gpu(&f->ledger, 0);
    assert_int_equal(g->energy_uj, 260000000);
    for (int k = 0; k < _UNATTR_MAX; k++)
        assert_int_equal(g->unattributed_uj[k], 0);

    /* the pod with a known UID carries its allocation energy as GPU energy */
    for (size_t i = 0; hashmap_next(&f->ledger.workloads, &i, NULL, &v);)
        if (((struct ledger_workload *)v)->kind == WORKLOAD_POD)
            w = v;
    assert_non_null(w);
    assert_string_equal(w->id->pod, "train-a");
    assert_string_equal(w->id->namespace_, "ml");
    assert_int_equal(w->gpu_uj, 82500000);
    assert_true(f->lookups >= 4);
    fixture_free(f);
}

/* The exposition shows every part, and they add up to the GPU's energy exactly. */
static void test_exposition_conserves(void **state) {
    struct fixture *f = fixture_new(IDLE_POLICY_ALLOCATION);
    struct snapshot *snap;
    struct strbuf out;

    gpu_accounting_set_allocations(f->acc, &f->table, NULL, NULL);
    tick(f, 1000000);
    tick(f, 1060001); /* 60.001 J without processes: 15.000250 J and 45.000750 J */
    f->procs[0] = (struct gpu_process){.pid = 100};
    f->dev.n_processes = 1;
    tick(f, 1260000);
    snap = ledger_snapshot(&f->ledger, NULL);
    assert_non_null(snap);
    assert_int_equal(snap->n_gpu_allocations, 2);
    assert_int_equal(snap->gpu_allocations[0].replicas, 1);
    assert_int_equal(snap->gpu_allocations[1].replicas, 3);
    assert_true(snap->gpu_allocations[1].active);
    strbuf_init(&out);
    assert_true(exposition_render(snap, NULL, &out) > 0);
    assert_non_null(strstr(out.buf, "# TYPE joulestat_gpu_allocation_energy_joules_total counter\n"
                                    "joulestat_gpu_allocation_energy_joules_total{gpu=\"0\","
                                    "namespace=\"ml\",pod=\"notebook\",pod_uid=\"\"} 27.500250\n"
                                    "joulestat_gpu_allocation_energy_joules_total{gpu=\"0\","
                                    "namespace=\"ml\",pod=\"train-a\",pod_uid=\"\"} 82.500750\n"));
    assert_non_null(strstr(out.buf, "joulestat_gpu_energy_joules_total{gpu=\"0\",uuid=\"" UUID
                                    "\",model=\"Simulated H100\"} 260.000000\n"));
    /* then 199.999 J: 50 J idle to the holders, process 149.999 J; 149.999 + 27.50025 +
     * 82.50075 = 260 */
    assert_non_null(strstr(out.buf, "pid=\"100\""));
    assert_int_equal(snap->gpu_processes[0].energy_estimated_uj, 149999000);
    strbuf_done(&out);
    snapshot_unref(snap);
    fixture_free(f);
}

/* No table, or a GPU nobody holds: even, counted as a fallback; and a pod that gives the
 * GPU back turns inactive but keeps its counter. */
static void test_fallback_and_release(void **state) {
    struct fixture *f = fixture_new(IDLE_POLICY_ALLOCATION);
    struct gpu_tick_stats st;
    struct ledger_gpu *g;
    void *v;

    tick(f, 1000);
    st = tick(f, 2000); /* nobody, no table: unattributed no_consumer */
    assert_int_equal(st.allocation_fallbacks, 1);
    g = ledger_gpu(&f->ledger, 0);
    assert_int_equal(g->unattributed_uj[UNATTR_NO_CONSUMER], 1000000);
    f->procs[0] = (struct gpu_process){.pid = 7};
    f->procs[1] = (struct gpu_process){.pid = 8};
    f->dev.n_processes = 2;
    st = tick(f, 3000);
    assert_int_equal(st.allocation_fallbacks, 1);
    assert_int_equal(process_uj(f, 7) + process_uj(f, 8), 1000000);

    gpu_accounting_set_allocations(f->acc, &f->table, NULL, NULL);
    f->dev.n_processes = 0;
    tick(f, 4000);
    assert_int_equal(allocation_uj(f, "notebook", ""), 250000);
    /* the pods give the GPU back */
    f->table.n = 0;
    tick(f, 5000);
    assert_int_equal(g->unattributed_uj[UNATTR_NO_CONSUMER], 2000000);
    for (size_t i = 0; hashmap_next(&f->ledger.allocations, &i, NULL, &v);)
        assert_false(((struct ledger_allocation *)v)->active);
    assert_int_equal(allocation_uj(f, "notebook", ""), 250000);
    assert_int_equal(g->energy_uj, 4000000);
    fixture_free(f);
}

/* A pod the API says has finished (the kubelet still lists its GPU) holds nothing: the
 * idle energy goes to the pod that still runs. What pods were given is kept per GPU. */
static int lookup_notebook_finished(void *userdata, const char *namespace_, const char *pod,
                                    const char **ret_uid) {
    if (strcmp(pod, "notebook") == 0)
        return -ESRCH;
    return lookup_uid(userdata, namespace_, pod, ret_uid);
}

static void test_finished_pod_holds_nothing(void **state) {
    struct fixture *f = fixture_new(IDLE_POLICY_ALLOCATION);
    void *v;

    gpu_accounting_set_allocations(f->acc, &f->table, lookup_notebook_finished, f);
    tick(f, 1000000);
    tick(f, 1060000); /* 60 J, nobody runs */
    assert_int_equal(allocation_uj(f, "train-a", "0b0c0d0e-aaaa-bbbb-cccc-000000000001"), 60000000);
    for (size_t i = 0; hashmap_next(&f->ledger.allocations, &i, NULL, &v);)
        assert_string_not_equal(((struct ledger_allocation *)v)->pod, "notebook");
    assert_int_equal(ledger_gpu(&f->ledger, 0)->allocated_uj, 60000000);
    fixture_free(f);
}

/* Other policies never consult the table. */
static void test_other_policy_ignores_table(void **state) {
    struct fixture *f = fixture_new(IDLE_POLICY_EVEN);

    gpu_accounting_set_allocations(f->acc, &f->table, lookup_uid, f);
    tick(f, 1000);
    tick(f, 2000);
    assert_int_equal(f->ledger.allocations.size, 0);
    assert_int_equal(f->lookups, 0);
    assert_int_equal(ledger_gpu(&f->ledger, 0)->unattributed_uj[UNATTR_NO_CONSUMER], 1000000);
    fixture_free(f);
}

/* A MIG device the kubelet names by its own UUID (MIG-<uuid>, no parent in the id) is
 * charged to the GPU that lists that instance, beside the pods naming the GPU itself; one
 * naming an instance of no GPU stays uncharged. */
static void test_mig_instance_ids(void **state) {
    struct fixture *f = fixture_new(IDLE_POLICY_ALLOCATION);
    struct gpu_alloc allocs[4];
    struct gpu_mig_instance mig[1] = {
        {.gpu_instance = 1, .uuid = "MIG-5a1d0e77-0001-4000-8000-000000000001", .slices = 3}};

    (void)state;
    /* as gpu_alloc_table_build sorts: the unplaced MIG entries ("" parent) first */
    allocs[0] = (struct gpu_alloc){.namespace_ = "ml",
                                   .pod = "infer-mig",
                                   .container = "server",
                                   .device = "MIG-5a1d0e77-0001-4000-8000-000000000001",
                                   .replicas = 1,
                                   .mig = true};
    allocs[1] = (struct gpu_alloc){.namespace_ = "ml",
                                   .pod = "stranger",
                                   .container = "x",
                                   .device = "MIG-99999999-0001-4000-8000-000000000001",
                                   .replicas = 1,
                                   .mig = true};
    memcpy(&allocs[2], &f->allocs[0], sizeof(allocs[2]));
    memcpy(&allocs[3], &f->allocs[1], sizeof(allocs[3]));
    f->table = (struct gpu_alloc_table){.n = 4, .allocs = allocs, .n_unplaced_mig = 2};
    f->dev.mig_enabled = true;
    f->dev.utils_supported = false;
    f->dev.n_mig = 1;
    f->dev.mig = mig;
    gpu_accounting_set_allocations(f->acc, &f->table, lookup_uid, f);
    tick(f, 1000000);
    tick(f, 1030000); /* 30 J, nobody runs: 10 J to each of the three holders */
    assert_int_equal(allocation_uj(f, "infer-mig", ""), 10000000);
    assert_int_equal(allocation_uj(f, "notebook", ""), 10000000);
    assert_int_equal(allocation_uj(f, "train-a", "0b0c0d0e-aaaa-bbbb-cccc-000000000001"), 10000000);
    for (size_t i = 0; i < f->ledger.allocations.size; i++) {
        void *v;
        size_t it = 0;
        while (hashmap_next(&f->ledger.allocations, &it, NULL, &v))
            assert_string_not_equal(((struct ledger_allocation *)v)->pod, "stranger");
    }
    fixture_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_to_holders),
        cmocka_unit_test(test_exposition_conserves),
        cmocka_unit_test(test_fallback_and_release),
        cmocka_unit_test(test_other_policy_ignores_table),
        cmocka_unit_test(test_finished_pod_holds_nothing),
        cmocka_unit_test(test_mig_instance_ids),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
