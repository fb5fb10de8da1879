/* SPDX-License-Identifier: MIT */
/* The NVML GPU source against the full fake NVML: readings, processes, utilisation, errors. */
#include <errno.h>
#include <stdlib.h>

#include "fake_nvml_client.h"
#include "gpu.h"
#include "nvml.h"
#include "strbuf.h"

#define SEC UINT64_C(1000000)
#define T0 (UINT64_C(1700000000) * SEC) /* a realistic epoch-microsecond clock */
#define MIB (UINT64_C(1) << 20)

struct fixture {
    struct fake_nvml fake;
    struct fake_nvml_state *st;
    struct gpu_source *src;
};

static void add_device(struct fake_nvml_state *st, const char *uuid, unsigned long long mj,
                       unsigned mw) {
    struct fake_device *d = &st->dev[st->n_devices++];
    (void)snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
    (void)snprintf(d->name, sizeof(d->name), "Fake GPU %s", uuid);
    d->energy_mj = mj;
    d->power_mw = mw;
}

static void add_proc(struct fake_device *d, enum fake_list l, unsigned pid,
                     unsigned long long mem) {
    d->procs[l][d->n_procs[l]++] = (struct fake_proc){pid, mem};
}

static void add_sample(struct fake_device *d, unsigned pid, uint64_t ts, unsigned sm) {
    d->samples[d->n_samples++] = (struct fake_sample){pid, ts, sm, sm / 2, 0, 0};
}

static int setup(void **state) {
    struct fixture *fx = calloc(1, sizeof(*fx));
    fake_nvml_open(&fx->fake, "full");
    fx->st = fx->fake.st;
    add_device(fx->st, "GPU-0000", 5000, 100000);
    add_device(fx->st, "GPU-1111", 7000, 200000);
    *state = fx;
    return 0;
}

static int teardown(void **state) {
    struct fixture *fx = *state;
    gpu_source_close(fx->src);
    assert_int_equal(fx->st->init_refs, 0); /* every init was shut down */
    fake_nvml_close(&fx->fake);
    free(fx);
    return 0;
}

static void open_source(struct fixture *fx) {
    struct gpu_source_options opts = {.library_path = fx->fake.path};
    const char *reason = NULL;
    ASSERT_OK(gpu_source_open(&opts, &fx->src, &reason));
}

static const struct gpu_device_reading *sample(struct fixture *fx, uint64_t now_us) {
    const struct gpu_device_reading *devs = NULL;
    size_t n = 0;
    ASSERT_OK(gpu_source_sample(fx->src, now_us, &devs, &n));
    assert_int_equal(n, fx->st->n_devices);
    return devs;
}

static void test_readings(void **state) {
    struct fixture *fx = *state;
    fx->st->dev[1].compute_mode = NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
    open_source(fx);
    assert_int_equal(fx->st->init_refs, 1);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_int_equal(d[0].index, 0);
    assert_int_equal(d[1].index, 1);
    assert_string_equal(d[0].uuid, "GPU-0000");
    assert_string_equal(d[1].name, "Fake GPU GPU-1111");
    assert_true(d[0].up);
    assert_int_equal(d[0].error, 0);
    assert_true(d[0].energy_valid);
    assert_int_equal(d[0].energy_mj, 5000);
    assert_true(d[1].power_valid);
    assert_int_equal(d[1].power_mw, 200000);
    assert_false(d[0].mig_enabled);
    assert_int_equal(d[0].compute_mode, 0);
    assert_int_equal(d[1].compute_mode, 3);
    assert_int_equal(d[0].n_processes, 0);
    assert_true(d[0].utils_supported);
    assert_int_equal(d[0].n_utils, 0);

    fx->st->dev[0].energy_mj = 6500;
    d = sample(fx, T0 + SEC);
    assert_int_equal(d[0].energy_mj, 6500);
    assert_string_equal(gpu_source_driver_version(fx->src), "550.54.14");
}

static void test_processes_merged_by_pid(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    add_proc(g, FAKE_COMPUTE, 300, 10 * MIB);
    add_proc(g, FAKE_COMPUTE, 100, NVML_VALUE_NOT_AVAILABLE_ULL);
    add_proc(g, FAKE_GRAPHICS, 100, 12 * MIB);
    add_proc(g, FAKE_GRAPHICS, 200, 1 * MIB);
    add_proc(g, FAKE_MPS, 300, 4 * MIB);
    add_proc(g, FAKE_MPS, 400, NVML_VALUE_NOT_AVAILABLE_ULL);
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_int_equal(d[0].n_processes, 4);
    const struct gpu_process *p = d[0].processes;
    assert_int_equal(p[0].pid, 100);
    assert_int_equal(p[0].kinds, GPU_PROCESS_COMPUTE | GPU_PROCESS_GRAPHICS);
    assert_true(p[0].memory_valid);
    assert_int_equal(p[0].used_memory_bytes, 12 * MIB);
    assert_int_equal(p[1].pid, 200);
    assert_int_equal(p[1].kinds, GPU_PROCESS_GRAPHICS);
    assert_int_equal(p[1].used_memory_bytes, 1 * MIB);
    assert_int_equal(p[2].pid, 300);
    assert_int_equal(p[2].kinds, GPU_PROCESS_COMPUTE | GPU_PROCESS_MPS);
    assert_int_equal(p[2].used_memory_bytes, 10 * MIB); /* the larger report, not the sum */
    assert_int_equal(p[3].pid, 400);
    assert_int_equal(p[3].kinds, GPU_PROCESS_MPS);
    assert_false(p[3].memory_valid);
    assert_int_equal(p[3].used_memory_bytes, 0);
    assert_int_equal(d[1].n_processes, 0);
}

/* Lists in any order come out in pid order: 100 shuffled (the insertion sort), and 250
 * in descending order, past what it sorts (qsort). */
static void test_long_lists_sorted(void **state) {
    struct fixture *fx = *state;
    uint64_t seed = 3;

    for (unsigned i = 0; i < 250; i++)
        add_proc(&fx->st->dev[1], FAKE_COMPUTE, 1000 - i, MIB);
    for (unsigned i = 0; i < 100; i++)
        add_proc(&fx->st->dev[0], FAKE_COMPUTE, 10 + i, MIB);
    for (unsigned i = 99; i > 0; i--) {
        unsigned j = (unsigned)test_rand_below(&seed, i + 1);
        struct fake_proc t = fx->st->dev[0].procs[FAKE_COMPUTE][i];

        fx->st->dev[0].procs[FAKE_COMPUTE][i] = fx->st->dev[0].procs[FAKE_COMPUTE][j];
        fx->st->dev[0].procs[FAKE_COMPUTE][j] = t;
    }
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_int_equal(d[0].n_processes, 100);
    for (unsigned i = 0; i < 100; i++)
        assert_int_equal(d[0].processes[i].pid, 10 + i);
    assert_int_equal(d[1].n_processes, 250);
    for (unsigned i = 0; i < 250; i++)
        assert_int_equal(d[1].processes[i].pid, 751 + i);
}

static void test_insufficient_size_then_reuse(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    for (unsigned pid = 1; pid <= 3; pid++)
        add_proc(g, FAKE_COMPUTE, pid, MIB);
    g->grow_calls[FAKE_COMPUTE] = 1; /* 40 more processes start during the first query */
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_true(d[0].up);
    assert_int_equal(d[0].n_processes, 3 + FAKE_GROWTH);
    /* size query (answered 7) then one fill */
    assert_int_equal(fx->st->calls[0].lists[FAKE_COMPUTE], 2);
    assert_int_equal(d[0].processes[3 + FAKE_GROWTH - 1].pid,
                     FAKE_GROWN_PID_BASE + 3 + FAKE_GROWTH - 1);

    /* Same size again: one call, and the same array (no allocation in the tick). */
    const struct gpu_process *before = d[0].processes;
    d = sample(fx, T0 + SEC);
    assert_int_equal(fx->st->calls[0].lists[FAKE_COMPUTE], 3);
    assert_ptr_equal(d[0].processes, before);
    assert_int_equal(d[0].n_processes, 3 + FAKE_GROWTH);

    /* Grows past the slack: 7 once more, then a fill. */
    g->grow_calls[FAKE_COMPUTE] = 1;
    d = sample(fx, T0 + 2 * SEC);
    assert_int_equal(fx->st->calls[0].lists[FAKE_COMPUTE], 5);
    assert_int_equal(d[0].n_processes, 3 + 2 * FAKE_GROWTH);
}

static void test_insufficient_size_is_bounded(void **state) {
    struct fixture *fx = *state;
    fx->st->dev[0].always_insufficient[FAKE_GRAPHICS] = true;
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_false(d[0].up);
    assert_int_equal(d[0].error, -ENOBUFS);
    assert_int_equal(fx->st->calls[0].lists[FAKE_GRAPHICS], 5); /* 1 + NVML_SIZE_RETRIES */
    assert_true(d[1].up);                                       /* the other GPU is unaffected */
    assert_int_equal(gpu_source_feature_state(fx->src, 0, GPU_FEATURE_GRAPHICS_PROCESSES),
                     GPU_FEATURE_FAILING);

    /* Transient: called again next tick, and fine once the list settles. */
    fx->st->dev[0].always_insufficient[FAKE_GRAPHICS] = false;
    d = sample(fx, T0 + SEC);
    assert_true(d[0].up);
    assert_int_equal(d[0].error, 0);
    assert_int_equal(gpu_source_feature_state(fx->src, 0, GPU_FEATURE_GRAPHICS_PROCESSES),
                     GPU_FEATURE_WORKS);
}

static void test_gpu_lost_and_back_with_backoff(void **state) {
    struct fixture *fx = *state;
    struct fake_calls *c = &fx->st->calls[1];
    open_source(fx);
    assert_int_equal(c->handle, 1);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_true(d[1].up);
    assert_int_equal(c->energy, 1);

    fx->st->dev[1].lost = true;
    d = sample(fx, T0 + 10 * SEC);
    assert_false(d[1].up);
    assert_int_equal(d[1].error, -ENODEV);
    assert_false(d[1].energy_valid);
    assert_int_equal(d[1].n_processes, 0);
    assert_true(d[0].up); /* the other GPU continues */
    assert_int_equal(d[0].energy_mj, 5000);

    /* Within the first 1 s backoff: nothing is called on the lost GPU. */
    unsigned handle_calls = c->handle, mig_calls = c->mig;
    d = sample(fx, T0 + 10 * SEC + SEC / 2);
    assert_false(d[1].up);
    assert_int_equal(d[1].error, -ENODEV);
    assert_int_equal(c->handle, handle_calls);
    assert_int_equal(c->mig, mig_calls);

    /* At 1 s: one retry, still lost, so the next wait is 2 s. */
    d = sample(fx, T0 + 11 * SEC);
    assert_int_equal(c->handle, handle_calls + 1);
    assert_false(d[1].up);
    d = sample(fx, T0 + 12 * SEC);
    assert_int_equal(c->handle, handle_calls + 1);
    d = sample(fx, T0 + 13 * SEC - 1);
    assert_int_equal(c->handle, handle_calls + 1);

    /* Back: the retry at 13 s finds it and reads it again. Its UUID cannot be read this
     * time: it keeps the one it had (an empty one would make its series new ones). */
    char uuid[sizeof(d[1].uuid)];
    memcpy(uuid, d[1].uuid, sizeof(uuid));
    assert_true(uuid[0] != '\0');
    fx->st->dev[1].lost = false;
    fx->st->dev[1].uuid_ret = NVML_ERROR_UNKNOWN;
    fx->st->dev[1].energy_mj = 9000;
    d = sample(fx, T0 + 13 * SEC);
    assert_int_equal(c->handle, handle_calls + 2);
    assert_string_equal(d[1].uuid, uuid);
    fx->st->dev[1].uuid_ret = NVML_SUCCESS;
    assert_true(d[1].up);
    assert_int_equal(d[1].error, 0);
    assert_true(d[1].energy_valid);
    assert_int_equal(d[1].energy_mj, 9000);

    /* A healthy GPU resets the backoff: lost again, retried after 1 s, not 4 s. */
    fx->st->dev[1].lost = true;
    d = sample(fx, T0 + 20 * SEC);
    assert_false(d[1].up);
    handle_calls = c->handle;
    d = sample(fx, T0 + 21 * SEC);
    assert_int_equal(c->handle, handle_calls + 1);
}

static void test_energy_not_supported(void **state) {
    struct fixture *fx = *state;
    fx->st->dev[0].energy_ret = NVML_ERROR_NOT_SUPPORTED;
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_true(d[0].up);
    assert_false(d[0].energy_valid);
    assert_true(d[0].power_valid); /* the sampler integrates this instead */
    assert_int_equal(d[0].power_mw, 100000);
    assert_true(d[1].energy_valid);
    assert_int_equal(gpu_source_feature_state(fx->src, 0, GPU_FEATURE_ENERGY),
                     GPU_FEATURE_UNSUPPORTED);

    d = sample(fx, T0 + SEC);
    assert_int_equal(fx->st->calls[0].energy, 1); /* never asked again */
    assert_int_equal(fx->st->calls[0].power, 2);
    assert_false(d[0].energy_valid);

    struct strbuf sb;
    strbuf_init(&sb);
    gpu_source_describe(fx->src, &sb);
    ASSERT_OK(strbuf_error(&sb));
    assert_non_null(strstr(sb.buf, "GPU 0: energy counter: not supported; energy is integrated "
                                   "from power readings\n"));
    assert_non_null(strstr(sb.buf, "GPU 1: energy counter: works\n"));
    strbuf_done(&sb);
}

static void test_no_permission_disables_one_feature(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    add_proc(g, FAKE_COMPUTE, 42, MIB);
    g->list_ret[FAKE_GRAPHICS] = NVML_ERROR_NO_PERMISSION;
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_true(d[0].up);
    assert_int_equal(d[0].n_processes, 1);
    assert_int_equal(d[0].processes[0].pid, 42);
    d = sample(fx, T0 + SEC);
    assert_int_equal(fx->st->calls[0].lists[FAKE_GRAPHICS], 1);
    /* size query + fill on the first tick, one call on the second */
    assert_int_equal(fx->st->calls[0].lists[FAKE_COMPUTE], 3);
    assert_int_equal(fx->st->calls[1].lists[FAKE_GRAPHICS], 2); /* other GPU still asked */
    assert_int_equal(gpu_source_feature_state(fx->src, 0, GPU_FEATURE_GRAPHICS_PROCESSES),
                     GPU_FEATURE_NO_PERMISSION);

    struct strbuf sb;
    strbuf_init(&sb);
    gpu_source_describe(fx->src, &sb);
    assert_non_null(strstr(sb.buf, "GPU 0: graphics process list: no permission (run joulestat "
                                   "as root"));
    assert_non_null(strstr(sb.buf, "GPU 1: graphics process list: works\n"));
    strbuf_done(&sb);
}

static void test_transient_energy_error_fails_tick(void **state) {
    struct fixture *fx = *state;
    fx->st->dev[0].energy_ret = NVML_ERROR_UNKNOWN;
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_false(d[0].up);
    assert_int_equal(d[0].error, -EIO);
    assert_int_equal(gpu_source_feature_state(fx->src, 0, GPU_FEATURE_ENERGY), GPU_FEATURE_FAILING);

    struct strbuf sb;
    strbuf_init(&sb);
    gpu_source_describe(fx->src, &sb);
    assert_non_null(strstr(sb.buf, "GPU 0: GPU-0000 Fake GPU GPU-0000: down (Input/output "
                                   "error)"));
    strbuf_done(&sb);

    /* Not a backoff case: the next tick asks again right away. */
    fx->st->dev[0].energy_ret = NVML_SUCCESS;
    d = sample(fx, T0 + 1);
    assert_true(d[0].up);
    assert_int_equal(d[0].energy_mj, 5000);
    assert_int_equal(fx->st->calls[0].energy, 2);
}

static void test_mig_enabled(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    g->mig_mode = NVML_DEVICE_MIG_ENABLE;
    add_proc(g, FAKE_COMPUTE, 77, 2 * MIB);
    add_sample(g, 77, T0 - SEC, 50);
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_true(d[0].up);
    assert_true(d[0].mig_enabled);
    assert_false(d[0].utils_supported);
    assert_int_equal(d[0].n_utils, 0);
    assert_int_equal(d[0].n_processes, 1);
    assert_true(d[0].energy_valid);
    assert_int_equal(fx->st->calls[0].util_info, 0);
    assert_int_equal(fx->st->calls[0].util_legacy, 0);
    assert_false(d[1].mig_enabled);
    assert_true(d[1].utils_supported);

    struct strbuf sb;
    strbuf_init(&sb);
    gpu_source_describe(fx->src, &sb);
    assert_non_null(strstr(sb.buf, "GPU 0: per-process utilisation (legacy API): not available "
                                   "while MIG is enabled"));
    strbuf_done(&sb);

    /* The modes are asked for once per refresh interval, not every tick. */
    assert_int_equal(fx->st->calls[0].mig, 1);
    assert_int_equal(fx->st->calls[0].compute_mode, 1);
    g->mig_mode = NVML_DEVICE_MIG_DISABLE;
    d = sample(fx, T0 + SEC);
    assert_true(d[0].mig_enabled);
    assert_int_equal(fx->st->calls[0].mig, 1);
    assert_int_equal(fx->st->calls[0].compute_mode, 1);

    /* MIG turned off: seen at the next refresh, and utilisation is asked for again. */
    d = sample(fx, T0 + 11 * SEC);
    assert_int_equal(fx->st->calls[0].mig, 2);
    assert_int_equal(fx->st->calls[0].compute_mode, 2);
    assert_false(d[0].mig_enabled);
    assert_true(d[0].utils_supported);
    assert_int_equal(d[0].n_utils, 1);
}

/* MIG switched on between two reads of the modes: utilisation, which worked, says "not
 * supported". That is the mode, not the driver: the modes are read again at once, and
 * once MIG is off again utilisation is asked for as before (it was given up for good). */
static void test_mig_switched_on_between_mode_reads(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    const struct gpu_device_reading *d;

    add_sample(g, 77, T0 - SEC, 50);
    open_source(fx);
    d = sample(fx, T0);
    assert_true(d[0].utils_supported);
    assert_int_equal(fx->st->calls[0].mig, 1);

    g->mig_mode = NVML_DEVICE_MIG_ENABLE;
    g->util_info_ret = g->util_ret = NVML_ERROR_NOT_SUPPORTED;
    d = sample(fx, T0 + SEC);
    assert_false(d[0].utils_supported);
    d = sample(fx, T0 + 2 * SEC); /* the modes read again, not 10 s later */
    assert_int_equal(fx->st->calls[0].mig, 2);
    assert_true(d[0].mig_enabled);

    g->mig_mode = NVML_DEVICE_MIG_DISABLE;
    g->util_info_ret = g->util_ret = NVML_SUCCESS;
    add_sample(g, 77, T0 + 12 * SEC, 60);
    d = sample(fx, T0 + 13 * SEC);
    assert_false(d[0].mig_enabled);
    assert_true(d[0].utils_supported);
    assert_int_equal(d[0].n_utils, 1);
    assert_int_equal(d[0].utils[0].sm_util, 60);
}

static void test_compute_mode_unknown(void **state) {
    struct fixture *fx = *state;
    fx->st->dev[0].compute_mode_ret = NVML_ERROR_NOT_SUPPORTED;
    fx->st->dev[1].compute_mode = 7; /* not a mode we know */
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_true(d[0].up);
    assert_int_equal(d[0].compute_mode, -1);
    assert_int_equal(d[1].compute_mode, -1);
}

/* A GPU lost and back within the mode refresh interval (a reset) has its modes read again
 * with the new handle, not 10 s later. */
static void test_modes_read_after_reset(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_false(d[0].mig_enabled);
    assert_int_equal(fx->st->calls[0].mig, 1);
    g->lost = true;
    d = sample(fx, T0 + SEC);
    assert_false(d[0].up);
    assert_int_equal(fx->st->calls[0].mig, 1); /* the energy read found it lost */
    g->lost = false;
    g->mig_mode = NVML_DEVICE_MIG_ENABLE;
    d = sample(fx, T0 + 2 * SEC); /* the first retry, after 1 s */
    assert_true(d[0].up);
    assert_int_equal(fx->st->calls[0].mig, 2);
    assert_true(d[0].mig_enabled);
}

/* A transient failure is asked again at the next tick, not after the refresh interval. */
static void test_mode_transient_error(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    g->mig_ret = NVML_ERROR_UNKNOWN;
    g->compute_mode = NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_true(d[0].up);
    assert_false(d[0].mig_enabled);
    assert_int_equal(d[0].compute_mode, NVML_COMPUTEMODE_EXCLUSIVE_PROCESS);
    g->mig_ret = NVML_SUCCESS;
    g->mig_mode = NVML_DEVICE_MIG_ENABLE;
    d = sample(fx, T0 + SEC / 10);
    assert_int_equal(fx->st->calls[0].mig, 2);
    assert_true(d[0].mig_enabled);
    d = sample(fx, T0 + 2 * SEC / 10);
    assert_int_equal(fx->st->calls[0].mig, 2); /* complete now: cached */
    assert_true(d[0].mig_enabled);
}

static void test_utilization_since_last_seen(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    add_sample(g, 11, T0 - 3 * SEC, 30);
    add_sample(g, 12, T0 - 2 * SEC, 60);
    add_sample(g, 11, T0 - 1 * SEC, 40);
    add_sample(g, 0, T0 - 1 * SEC, 10);     /* pid 0: garbage */
    add_sample(g, 13, T0 - 1 * SEC, 101);   /* over 100 %: garbage */
    add_sample(g, 14, T0 + 3600 * SEC, 20); /* far future: garbage */
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_true(d[0].utils_supported);
    assert_int_equal(d[0].n_utils, 3);
    assert_int_equal(g->last_seen_arg, 0);
    assert_int_equal(d[0].utils[0].pid, 11);
    assert_int_equal(d[0].utils[0].sm_util, 30);
    assert_int_equal(d[0].utils[0].mem_util, 15);
    assert_int_equal(d[0].utils[0].timestamp_us, T0 - 3 * SEC);
    assert_int_equal(d[0].utils[1].pid, 12);
    assert_int_equal(d[0].utils[2].timestamp_us, T0 - SEC);
    assert_int_equal(fx->st->calls[0].util_legacy, 0); /* the 550+ API was enough */

    /* Next tick passes the newest accepted timestamp, not the future garbage one. */
    d = sample(fx, T0 + SEC);
    assert_int_equal(g->last_seen_arg, T0 - SEC);
    assert_int_equal(d[0].n_utils, 0);

    add_sample(g, 12, T0 + SEC / 2, 70);
    d = sample(fx, T0 + 2 * SEC);
    assert_int_equal(d[0].n_utils, 1);
    assert_int_equal(d[0].utils[0].pid, 12);
    assert_int_equal(d[0].utils[0].sm_util, 70);

    /* No newer samples: NOT_FOUND is "nothing new", not a failure. */
    d = sample(fx, T0 + 3 * SEC);
    assert_true(d[0].up);
    assert_true(d[0].utils_supported);
    assert_int_equal(d[0].n_utils, 0);
    assert_int_equal(g->last_seen_arg, T0 + SEC / 2);
    assert_int_equal(gpu_source_feature_state(fx->src, 0, GPU_FEATURE_UTILIZATION_INFO),
                     GPU_FEATURE_WORKS);
}

/* The wall clock went back an hour: the samples stamped by it from then on are read at
 * once, not when it has caught up with the last one seen. */
static void test_utilization_after_the_clock_went_back(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    const struct gpu_device_reading *d;

    add_sample(g, 11, T0 - SEC, 40);
    open_source(fx);
    d = sample(fx, T0);
    assert_int_equal(d[0].n_utils, 1);
    add_sample(g, 11, T0 - 3600 * SEC + SEC / 2, 60);
    d = sample(fx, T0 - 3600 * SEC + SEC);
    assert_int_equal(g->last_seen_arg, 0);
    assert_int_equal(d[0].n_utils, 1);
    assert_int_equal(d[0].utils[0].sm_util, 60);
    d = sample(fx, T0 - 3600 * SEC + 2 * SEC);
    assert_int_equal(g->last_seen_arg, T0 - 3600 * SEC + SEC / 2);
    assert_int_equal(d[0].n_utils, 0);
}

static void test_utilization_info_unsupported_falls_back(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    g->util_info_ret = NVML_ERROR_NOT_SUPPORTED;
    fx->st->dev[1].util_info_ret = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    add_sample(g, 21, T0 - SEC, 55);
    add_sample(&fx->st->dev[1], 22, T0 - SEC, 66);
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    for (int i = 0; i < 2; i++) {
        assert_true(d[i].utils_supported);
        assert_int_equal(d[i].n_utils, 1);
        assert_int_equal(gpu_source_feature_state(fx->src, (size_t)i, GPU_FEATURE_UTILIZATION_INFO),
                         GPU_FEATURE_UNSUPPORTED);
        assert_int_equal(
            gpu_source_feature_state(fx->src, (size_t)i, GPU_FEATURE_UTILIZATION_LEGACY),
            GPU_FEATURE_WORKS);
    }
    assert_int_equal(d[0].utils[0].sm_util, 55);
    assert_int_equal(d[1].utils[0].sm_util, 66);

    d = sample(fx, T0 + SEC);
    assert_int_equal(fx->st->calls[0].util_info, 1);
    assert_int_equal(fx->st->calls[0].util_legacy, 3); /* size query + fill, then one call */

    /* Both APIs unsupported: no utilisation, but the GPU is fine. Having worked, the
     * legacy API is asked once more after the modes are read again (MIG may have been
     * switched on), then no more. */
    g->util_ret = NVML_ERROR_NOT_SUPPORTED;
    d = sample(fx, T0 + 2 * SEC);
    assert_true(d[0].up);
    assert_false(d[0].utils_supported);
    assert_int_equal(gpu_source_feature_state(fx->src, 0, GPU_FEATURE_UTILIZATION_LEGACY),
                     GPU_FEATURE_WORKS);
    d = sample(fx, T0 + 3 * SEC);
    assert_int_equal(fx->st->calls[0].util_legacy, 5);
    assert_int_equal(gpu_source_feature_state(fx->src, 0, GPU_FEATURE_UTILIZATION_LEGACY),
                     GPU_FEATURE_UNSUPPORTED);
    d = sample(fx, T0 + 4 * SEC);
    assert_int_equal(fx->st->calls[0].util_legacy, 5);
}

static size_t poll(struct fixture *fx, uint64_t now_us, const struct gpu_poll_reading **ret) {
    size_t n = 0;

    gpu_source_poll(fx->src, now_us, ret, &n);
    return n;
}

/* Polls between two readings keep the samples for the next reading (the driver answers with
 * the newest only); they read power only where there is no energy counter; a GPU lost in a
 * poll is found by the next reading and its kept samples are dropped. */
static void test_polls_keep_samples(void **state) {
    struct fixture *fx = *state;
    struct fake_device *g = &fx->st->dev[0];
    const struct gpu_poll_reading *p;
    const struct gpu_device_reading *d;

    fx->st->dev[1].energy_ret = NVML_ERROR_NOT_SUPPORTED;
    open_source(fx);
    d = sample(fx, T0);
    assert_int_equal(d[0].n_utils, 0);

    add_sample(g, 11, T0 + SEC / 5, 30);
    assert_int_equal(poll(fx, T0 + 3 * SEC / 10, &p), 2);
    assert_false(p[0].power_valid); /* GPU 0 has an energy counter */
    assert_true(p[1].power_valid);
    assert_int_equal(p[1].power_mw, 200000);
    add_sample(g, 11, T0 + SEC / 2, 40);
    (void)poll(fx, T0 + 6 * SEC / 10, &p);
    assert_int_equal(g->last_seen_arg, T0 + SEC / 5);

    d = sample(fx, T0 + SEC);
    assert_int_equal(d[0].n_utils, 2);
    assert_int_equal(d[0].utils[0].sm_util, 30);
    assert_int_equal(d[0].utils[1].sm_util, 40);
    d = sample(fx, T0 + 2 * SEC);
    assert_int_equal(d[0].n_utils, 0); /* handed over once */

    add_sample(g, 11, T0 + 5 * SEC / 2, 50);
    (void)poll(fx, T0 + 26 * SEC / 10, &p);
    g->lost = true;
    assert_int_equal(poll(fx, T0 + 27 * SEC / 10, &p), 1); /* the error waits for the reading */
    d = sample(fx, T0 + 3 * SEC);
    assert_false(d[0].up);
    g->lost = false;
    d = sample(fx, T0 + 5 * SEC); /* after the first backoff (1 s) */
    assert_true(d[0].up);
    assert_int_equal(d[0].n_utils, 0); /* what the lost handle kept is gone with it */
}

static void test_utilization_lost(void **state) {
    struct fixture *fx = *state;
    fx->st->dev[0].util_info_ret = NVML_ERROR_GPU_IS_LOST;
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_false(d[0].up);
    assert_int_equal(d[0].error, -ENODEV);
    assert_true(d[1].up);
}

static void test_open_failures(void **state) {
    struct fixture *fx = *state;
    struct gpu_source_options opts = {.library_path = fx->fake.path};
    struct gpu_source *s = NULL;
    const char *reason = NULL;

    fx->st->init_ret = NVML_ERROR_DRIVER_NOT_LOADED;
    ASSERT_ERRNO(gpu_source_open(&opts, &s, &reason), ENXIO);
    assert_string_equal(reason, "the NVIDIA kernel driver is not loaded");
    fx->st->init_ret = NVML_ERROR_NO_PERMISSION;
    ASSERT_ERRNO(gpu_source_open(&opts, &s, &reason), ENXIO);
    assert_non_null(strstr(reason, "no permission"));
    fx->st->init_ret = NVML_ERROR_LIB_RM_VERSION_MISMATCH;
    ASSERT_ERRNO(gpu_source_open(&opts, &s, &reason), ENXIO);
    assert_non_null(strstr(reason, "versions differ"));
    fx->st->init_ret = NVML_ERROR_UNKNOWN;
    ASSERT_ERRNO(gpu_source_open(&opts, &s, &reason), ENXIO);
    assert_string_equal(reason, "nvmlInit failed");
    fx->st->init_ret = NVML_SUCCESS;

    fx->st->count_ret = NVML_ERROR_UNKNOWN;
    ASSERT_ERRNO(gpu_source_open(&opts, &s, &reason), ENXIO);
    assert_string_equal(reason, "NVML could not count the GPUs");
    assert_int_equal(fx->st->init_refs, 0); /* shut down again */
    fx->st->count_ret = NVML_SUCCESS;

    fx->st->n_devices = 0;
    ASSERT_ERRNO(gpu_source_open(&opts, &s, &reason), ENODEV);
    assert_string_equal(reason, "no NVIDIA GPU found");
    assert_int_equal(fx->st->init_refs, 0);
    assert_null(s);
}

static void test_handle_refused_at_open(void **state) {
    struct fixture *fx = *state;
    fx->st->dev[1].handle_ret = NVML_ERROR_NO_PERMISSION;
    open_source(fx);

    const struct gpu_device_reading *d = sample(fx, T0);
    assert_true(d[0].up);
    assert_false(d[1].up);
    assert_int_equal(d[1].error, -EACCES);
    assert_int_equal(fx->st->calls[1].handle, 2); /* open, then the first sample */

    /* Allowed later: picked up at the next retry (1 s backoff). */
    fx->st->dev[1].handle_ret = NVML_SUCCESS;
    d = sample(fx, T0 + SEC / 2);
    assert_false(d[1].up);
    d = sample(fx, T0 + SEC);
    assert_true(d[1].up);
    assert_string_equal(d[1].uuid, "GPU-1111");
    assert_int_equal(d[1].energy_mj, 7000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_readings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_processes_merged_by_pid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_lists_sorted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_insufficient_size_then_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_insufficient_size_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpu_lost_and_back_with_backoff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_energy_not_supported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_permission_disables_one_feature, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transient_energy_error_fails_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mig_enabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mig_switched_on_between_mode_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compute_mode_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mode_transient_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_modes_read_after_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_utilization_since_last_seen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_utilization_after_the_clock_went_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_utilization_info_unsupported_falls_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_polls_keep_samples, setup, teardown),
        cmocka_unit_test_setup_teardown(test_utilization_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handle_refused_at_open, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
