/* SPDX-License-Identifier: MIT */
/*
 * DCGM's profiling samples of MIG GPU instances on the simulated node (sim/dcgm_engine.c,
 * model_profiling.c), read through joulestat's client (src/gpu/dcgm.c) as on a node that
 * runs nv-hostengine: the engine's own entity numbering mapped through its hierarchy, the
 * first window without samples, then each instance's mean SM activity over the window.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "dcgm.h"
#include "dcgm_abi.h"
#include "test-sim-common.h"

#define MS 1000ull
#define SEC 1000000ull
#define GPU_UUID "GPU-d0000000-0000-4000-8000-000000000000"

/* Instance 1 busy 70 % all along; instance 2 at 60 % in the first second of every two,
 * its two compute instances' processes each on their own half of the instance. */
#define SCENARIO(engine)                                                                           \
    "scenario duration=30s sample-period=167ms " engine "\n"                                       \
    "gpu 0 uuid=" GPU_UUID " name=\"NVIDIA A100-SXM4-40GB\" idle=50W max=400W mig=on\n"            \
    "mig gpu=0 gi=1 ci=0 uuid=MIG-d1 name=\"NVIDIA A100-SXM4-40GB MIG 3g.20gb\"\n"                 \
    "mig gpu=0 gi=2 ci=0 uuid=MIG-d2 name=\"NVIDIA A100-SXM4-40GB MIG 1c.4g.20gb\"\n"              \
    "mig gpu=0 gi=2 ci=1 uuid=MIG-d3 name=\"NVIDIA A100-SXM4-40GB MIG 1c.4g.20gb\"\n"              \
    "process 21 gpu=0 gi=1 ci=0 name=a sm=70 coef=150W\n"                                          \
    "process 22 gpu=0 gi=2 ci=0 name=b sm=duty level=60 period=2s on=1s coef=120W\n"               \
    "process 23 gpu=0 gi=2 ci=1 name=c sm=duty level=60 period=2s on=1s coef=120W\n"

static const char *library(void) {
    return getenv("JOULESTAT_SIM_LIBRARY");
}

static void test_no_engine(void **state) {
    struct dcgm_client *c = NULL;
    const char *reason = NULL;
    double a;

    (void)state;
    sim_start(SCENARIO("dcgm=off"));
    sim_at(1 * SEC);
    ASSERT_OK(dcgm_client_open(library(), NULL, &c, &reason));
    assert_false(dcgm_client_connected(c));
    assert_int_equal(dcgm_client_connect(c, &reason), -ECONNREFUSED);
    assert_non_null(strstr(reason, "nv-hostengine"));
    assert_int_equal(dcgm_client_update(c, JOULESTAT_SIM_EPOCH_US + 1 * SEC), -ENOTCONN);
    assert_false(dcgm_client_instance_activity(c, GPU_UUID, 1, JOULESTAT_SIM_EPOCH_US, &a));
    assert_non_null(strstr(dcgm_client_error(c), "(-21)"));
    dcgm_client_free(c);
    sim_stop();
}

static void test_no_library(void **state) {
    struct dcgm_client *c = NULL;
    const char *reason = NULL;

    (void)state;
    assert_int_equal(dcgm_client_open("/nonexistent/libdcgm.so.4", NULL, &c, &reason), -ENOENT);
    assert_null(c);
    assert_non_null(strstr(reason, "DCGM"));
}

static bool activity(struct dcgm_client *c, uint32_t gi, uint64_t t, double *ret) {
    return dcgm_client_instance_activity(c, GPU_UUID, gi, JOULESTAT_SIM_EPOCH_US + t, ret);
}

static void tick(struct dcgm_client *c, uint64_t t) {
    sim_at(t);
    ASSERT_OK(dcgm_client_update(c, JOULESTAT_SIM_EPOCH_US + t));
}

static void test_instance_activity(void **state) {
    struct dcgm_client *c = NULL;
    const char *reason = NULL;
    double a1 = -1, a2 = -1, a3 = -1;

    (void)state;
    sim_start(SCENARIO("dcgm=on"));
    sim_at(500 * MS);
    ASSERT_OK(dcgm_client_open(library(), "127.0.0.1:5555", &c, &reason));
    ASSERT_OK(dcgm_client_connect(c, &reason));
    tick(c, 1 * SEC);
    /* Known from the hierarchy only now: watched from the next update on. */
    assert_false(activity(c, 1, 1 * SEC, &a1));
    assert_false(activity(c, 2, 1 * SEC, &a2));
    assert_false(activity(c, 3, 1 * SEC, &a3)); /* no such instance */
    tick(c, 2 * SEC);                           /* the watch starts: its first samples come later */
    assert_false(activity(c, 1, 2 * SEC, &a1));
    tick(c, 3 * SEC); /* (2, 3]: b and c on, each on its own compute instance */
    assert_true(activity(c, 1, 3 * SEC, &a1));
    assert_true(activity(c, 2, 3 * SEC, &a2));
    assert_true(fabs(a1 - 0.70) < 1e-9);
    assert_true(fabs(a2 - 0.60) < 1e-9);
    tick(c, 4 * SEC); /* (3, 4]: off */
    assert_true(activity(c, 2, 4 * SEC, &a2));
    assert_true(fabs(a2) < 1e-9);
    tick(c, 5500 * MS); /* (4, 5.5]: on for 1 s of the 1.5 s */
    assert_true(activity(c, 2, 5500 * MS, &a2));
    assert_true(fabs(a2 - 0.40) < 1e-9);
    /* A second update at the same instant reads nothing new and keeps the window's. */
    ASSERT_OK(dcgm_client_update(c, JOULESTAT_SIM_EPOCH_US + 5500 * MS));
    assert_true(activity(c, 2, 5500 * MS, &a2));
    assert_true(fabs(a2 - 0.40) < 1e-9);
    /* Nothing sampled since: no activity rather than a stale one. */
    tick(c, 5550 * MS);
    assert_false(activity(c, 1, 5550 * MS, &a1));
    assert_string_equal(dcgm_client_error(c), "");
    dcgm_client_free(c);
    sim_stop();
}

/* An administrator destroys instance 2 and makes a 7g instance 3 in its place: within the
 * minute the client reads the hierarchy again, watches the new set, and instance 1 goes
 * on being measured. */
static void test_instances_made_anew(void **state) {
    struct dcgm_client *c = NULL;
    const char *reason = NULL;
    double a = -1;
    char err[512];

    (void)state;
    sim_start(SCENARIO("dcgm=on"));
    sim_at(500 * MS);
    ASSERT_OK(dcgm_client_open(library(), NULL, &c, &reason));
    ASSERT_OK(dcgm_client_connect(c, &reason));
    tick(c, 1 * SEC);
    assert_false(activity(c, 1, 1 * SEC, &a));
    tick(c, 2 * SEC);
    tick(c, 3 * SEC);
    assert_true(activity(c, 1, 3 * SEC, &a));

    /* The same GPU, instance 1 as before, instance 2 gone, instance 3 new (the model starts
     * over: the clock is moved past where it was). */
    if (sim.joulestat_sim_load_string(
            "scenario duration=300s sample-period=167ms dcgm=on\n"
            "gpu 0 uuid=" GPU_UUID " name=\"NVIDIA A100-SXM4-40GB\" idle=50W max=400W mig=on\n"
            "mig gpu=0 gi=1 ci=0 uuid=MIG-d1 name=\"NVIDIA A100-SXM4-40GB MIG 3g.20gb\"\n"
            "mig gpu=0 gi=3 ci=0 uuid=MIG-d4 name=\"NVIDIA A100-SXM4-40GB MIG 4g.20gb\"\n"
            "process 21 gpu=0 gi=1 ci=0 name=a sm=50 coef=150W\n"
            "process 24 gpu=0 gi=3 ci=0 name=d sm=20 coef=100W\n",
            "anew.scn") < 0) {
        sim.joulestat_sim_last_error(err, sizeof err);
        fail_msg("scenario did not load: %s", err);
    }
    for (uint64_t t = 4; t <= 70; t++) {
        tick(c, t * SEC);
        (void)activity(c, 1, t * SEC, &a);
        (void)activity(c, 3, t * SEC, &a);
    }
    assert_true(activity(c, 1, 70 * SEC, &a));
    assert_true(fabs(a - 0.50) < 1e-9);
    assert_true(activity(c, 3, 70 * SEC, &a));
    assert_true(fabs(a - 0.20) < 1e-9);
    assert_false(activity(c, 2, 70 * SEC, &a));
    dcgm_client_free(c);
    sim_stop();
}

/* The engine goes away (the node's DCGM restarted, or stopped): the next update says so
 * and leaves the client disconnected; once it answers again, a connect starts over with
 * the hierarchy and a new watch, and the instances are measured again. */
static void test_engine_comes_back(void **state) {
    struct dcgm_client *c = NULL;
    const char *reason = NULL;
    double a = -1;

    (void)state;
    sim_start(SCENARIO("dcgm=on"));
    sim_at(500 * MS);
    ASSERT_OK(dcgm_client_open(library(), NULL, &c, &reason));
    ASSERT_OK(dcgm_client_connect(c, &reason));
    for (uint64_t t = 1; t <= 3; t++) {
        tick(c, t * SEC);
        (void)activity(c, 1, t * SEC, &a);
    }
    assert_true(activity(c, 1, 3 * SEC, &a));

    ASSERT_OK(sim.joulestat_sim_load_string(SCENARIO("dcgm=off"), "gone.scn"));
    sim_at(4 * SEC);
    assert_int_equal(dcgm_client_update(c, JOULESTAT_SIM_EPOCH_US + 4 * SEC), -ECONNRESET);
    assert_false(dcgm_client_connected(c));
    assert_false(activity(c, 1, 4 * SEC, &a));
    assert_int_equal(dcgm_client_connect(c, &reason), -ECONNREFUSED);

    ASSERT_OK(sim.joulestat_sim_load_string(SCENARIO("dcgm=on"), "back.scn"));
    sim_at(5 * SEC);
    ASSERT_OK(dcgm_client_connect(c, &reason));
    for (uint64_t t = 5; t <= 8; t++) {
        tick(c, t * SEC);
        (void)activity(c, 1, t * SEC, &a);
    }
    assert_true(activity(c, 1, 8 * SEC, &a));
    assert_true(fabs(a - 0.70) < 1e-9);
    dcgm_client_free(c);
    sim_stop();
}

/* The engine's hierarchy as the ABI lays it out: GPU instances with the GPU's UUID, and
 * their compute instances under them; a wrong struct version is refused. */
static void test_hierarchy(void **state) {
    dcgmInit_fn *init = (dcgmInit_fn *)dlsym(sim.dl, "dcgmInit");
    dcgmShutdown_fn *shutdown = (dcgmShutdown_fn *)dlsym(sim.dl, "dcgmShutdown");
    dcgmConnect_v2_fn *connect = (dcgmConnect_v2_fn *)dlsym(sim.dl, "dcgmConnect_v2");
    dcgmGetGpuInstanceHierarchy_fn *hierarchy =
        (dcgmGetGpuInstanceHierarchy_fn *)dlsym(sim.dl, "dcgmGetGpuInstanceHierarchy");
    dcgmConnectV2Params_t params = {.version = dcgmConnectV2Params_version};
    static dcgmMigHierarchy_v2 h;
    dcgmHandle_t handle = 0;
    unsigned gi = 0, ci = 0;

    (void)state;
    assert_non_null(init);
    assert_non_null(shutdown);
    assert_non_null(connect);
    assert_non_null(hierarchy);
    sim_start(SCENARIO("dcgm=on"));
    assert_int_equal(init(), DCGM_ST_OK);
    assert_int_equal(connect("127.0.0.1", &params, &handle), DCGM_ST_OK);
    h.version = dcgmMigHierarchy_version2 + 1;
    assert_int_equal(hierarchy(handle, &h), DCGM_ST_VER_MISMATCH);
    h.version = dcgmMigHierarchy_version2;
    assert_int_equal(hierarchy(handle, &h), DCGM_ST_OK);
    assert_int_equal(h.count, 5);
    for (unsigned i = 0; i < h.count; i++) {
        const dcgmMigHierarchyInfo_v2 *e = &h.entityList[i];

        assert_string_equal(e->info.gpuUuid, GPU_UUID);
        if (e->entity.entityGroupId == DCGM_FE_GPU_I) {
            gi++;
            assert_int_equal(e->parent.entityGroupId, DCGM_FE_GPU);
            assert_int_not_equal(e->entity.entityId, e->info.nvmlInstanceId);
        } else {
            ci++;
            assert_int_equal(e->entity.entityGroupId, DCGM_FE_GPU_CI);
            assert_int_equal(e->parent.entityGroupId, DCGM_FE_GPU_I);
        }
    }
    assert_int_equal(gi, 2);
    assert_int_equal(ci, 3);
    assert_int_equal(shutdown(), DCGM_ST_OK);
    sim_stop();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_engine),         cmocka_unit_test(test_no_library),
        cmocka_unit_test(test_instance_activity), cmocka_unit_test(test_instances_made_anew),
        cmocka_unit_test(test_engine_comes_back), cmocka_unit_test(test_hierarchy),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}
