/* SPDX-License-Identifier: MIT */
/* The NVML source against libraries that lack optional symbols, and the driver-535 break. */
#include <errno.h>
#include <stdlib.h>

#include "fake_nvml_client.h"
#include "gpu.h"
#include "nvml.h"
#include "strbuf.h"

#define SEC UINT64_C(1000000)
#define T0 (UINT64_C(1700000000) * SEC)
#define MIB (UINT64_C(1) << 20)

static struct gpu_source *open_source(const struct fake_nvml *f) {
    struct gpu_source_options opts = {.library_path = f->path};
    struct gpu_source *s = NULL;
    const char *reason = NULL;
    ASSERT_OK(gpu_source_open(&opts, &s, &reason));
    return s;
}

static const struct gpu_device_reading *sample(struct gpu_source *s, uint64_t now_us) {
    const struct gpu_device_reading *devs = NULL;
    size_t n = 0;
    ASSERT_OK(gpu_source_sample(s, now_us, &devs, &n));
    assert_int_equal(n, 1);
    return devs;
}

static struct fake_device *one_device(struct fake_nvml_state *st) {
    st->n_devices = 1;
    struct fake_device *d = &st->dev[0];
    (void)snprintf(d->uuid, sizeof(d->uuid), "GPU-old");
    d->power_mw = 65000;
    d->energy_mj = 1234;
    return d;
}

static void test_minimal_library(void **state) {
    struct fake_nvml f;
    fake_nvml_open(&f, "minimal");
    struct fake_device *g = one_device(f.st);
    g->procs[FAKE_COMPUTE][g->n_procs[FAKE_COMPUTE]++] = (struct fake_proc){500, 3 * MIB};
    g->procs[FAKE_GRAPHICS][g->n_procs[FAKE_GRAPHICS]++] = (struct fake_proc){501, MIB};
    struct gpu_source *s = open_source(&f);

    const struct gpu_device_reading *d = sample(s, T0);
    assert_true(d[0].up);
    /* No energy symbol: not valid, and power carries the measurement. */
    assert_false(d[0].energy_valid);
    assert_true(d[0].power_valid);
    assert_int_equal(d[0].power_mw, 65000);
    /* _v2 lists, no MPS list at all. */
    assert_int_equal(d[0].n_processes, 2);
    assert_int_equal(d[0].processes[0].pid, 500);
    assert_int_equal(d[0].processes[0].kinds, GPU_PROCESS_COMPUTE);
    assert_int_equal(d[0].processes[0].used_memory_bytes, 3 * MIB);
    assert_int_equal(d[0].processes[1].pid, 501);
    assert_int_equal(d[0].processes[1].kinds, GPU_PROCESS_GRAPHICS);
    assert_int_equal(gpu_source_feature_state(s, 0, GPU_FEATURE_ENERGY), GPU_FEATURE_ABSENT);
    assert_int_equal(gpu_source_feature_state(s, 0, GPU_FEATURE_MPS_PROCESSES), GPU_FEATURE_ABSENT);
    assert_int_equal(gpu_source_feature_state(s, 0, GPU_FEATURE_UTILIZATION_INFO),
                     GPU_FEATURE_ABSENT);
    /* Legacy utilisation is used, and answers NOT_FOUND on an idle GPU. */
    assert_true(d[0].utils_supported);
    assert_int_equal(d[0].n_utils, 0);
    assert_int_equal(gpu_source_feature_state(s, 0, GPU_FEATURE_UTILIZATION_LEGACY),
                     GPU_FEATURE_WORKS);

    struct strbuf sb;
    strbuf_init(&sb);
    gpu_source_describe(s, &sb);
    assert_non_null(strstr(sb.buf, "GPU 0: energy counter: not provided by this NVML library "
                                   "(update the NVIDIA driver); energy is integrated from "
                                   "power readings\n"));
    assert_non_null(strstr(sb.buf, "GPU 0: per-process utilisation (legacy API): works\n"));
    strbuf_done(&sb);

    gpu_source_close(s);
    assert_int_equal(f.st->init_refs, 0);
    fake_nvml_close(&f);
}

static void test_legacy_count_query_quirk(void **state) {
    struct fake_nvml f;
    fake_nvml_open(&f, "minimal");
    struct fake_device *g = one_device(f.st);
    g->legacy_garbage = true; /* pid 0, smUtil 37100 and a far-future stamp in every fill */
    for (unsigned k = 0; k < 5; k++)
        g->samples[g->n_samples++] =
            (struct fake_sample){600 + k, T0 - (5 - k) * SEC, 10 * k, 5, 1, 2};
    struct gpu_source *s = open_source(&f);

    const struct gpu_device_reading *d = sample(s, T0);
    /* size query (7, "100") then one fill into the 100-entry buffer */
    assert_int_equal(f.st->calls[0].util_legacy, 2);
    assert_int_equal(d[0].n_utils, 5);
    for (unsigned k = 0; k < 5; k++) {
        assert_int_equal(d[0].utils[k].pid, 600 + k);
        assert_int_equal(d[0].utils[k].sm_util, 10 * k);
        assert_int_equal(d[0].utils[k].enc_util, 1);
        assert_int_equal(d[0].utils[k].dec_util, 2);
        assert_int_equal(d[0].utils[k].timestamp_us, T0 - (5 - k) * SEC);
    }

    /* The far-future garbage did not move last-seen: the next call asks from T0 - 1 s. */
    g->samples[g->n_samples++] = (struct fake_sample){700, T0 + SEC / 2, 90, 0, 0, 0};
    d = sample(s, T0 + SEC);
    assert_int_equal(g->last_seen_arg, T0 - SEC);
    assert_int_equal(f.st->calls[0].util_legacy, 3); /* buffer reused: no size query */
    assert_int_equal(d[0].n_utils, 1);
    assert_int_equal(d[0].utils[0].pid, 700);
    assert_int_equal(d[0].utils[0].sm_util, 90);

    gpu_source_close(s);
    fake_nvml_close(&f);
}

static void test_legacy_small_capacity_grows(void **state) {
    struct fake_nvml f;
    fake_nvml_open(&f, "minimal");
    struct fake_device *g = one_device(f.st);
    g->legacy_capacity = 2; /* the size query undercounts: the fill must retry larger */
    for (unsigned k = 0; k < 20; k++)
        g->samples[g->n_samples++] = (struct fake_sample){800 + k, T0 - SEC + k, 3, 0, 0, 0};
    struct gpu_source *s = open_source(&f);

    const struct gpu_device_reading *d = sample(s, T0);
    assert_int_equal(d[0].n_utils, 20);
    assert_int_equal(d[0].utils[19].pid, 819);
    assert_int_equal(f.st->calls[0].util_legacy, 3); /* size query, too small, fill */

    gpu_source_close(s);
    fake_nvml_close(&f);
}

static void check_four_processes(struct gpu_source *s) {
    const struct gpu_device_reading *d = sample(s, T0);
    assert_true(d[0].up);
    assert_int_equal(d[0].n_processes, 4);
    for (unsigned k = 0; k < 4; k++) {
        assert_int_equal(d[0].processes[k].pid, 1000 + k);
        assert_true(d[0].processes[k].memory_valid);
        assert_int_equal(d[0].processes[k].used_memory_bytes, (k + 1) * MIB);
    }
}

static void add_four_processes(struct fake_device *g) {
    for (unsigned k = 0; k < 4; k++)
        g->procs[FAKE_COMPUTE][g->n_procs[FAKE_COMPUTE]++] =
            (struct fake_proc){1000 + k, (k + 1) * MIB};
}

/* Drivers 535.43-535.86 wrote 32-byte entries from _v3: only _v3 there means a 32-byte stride. */
static void test_driver_535_wide_entries_v3_only(void **state) {
    struct fake_nvml f;
    fake_nvml_open(&f, "v3only");
    struct fake_device *g = one_device(f.st);
    add_four_processes(g);

    (void)snprintf(f.st->driver_version, sizeof(f.st->driver_version), "535.54.03");
    struct gpu_source *s = open_source(&f);
    check_four_processes(s);
    gpu_source_close(s);

    /* The releases around the break write 24-byte entries. */
    static const char *const normal[] = {"535.104.05", "530.41.03", "550.54.14", "535"};
    for (size_t i = 0; i < sizeof(normal) / sizeof(normal[0]); i++) {
        (void)snprintf(f.st->driver_version, sizeof(f.st->driver_version), "%s", normal[i]);
        s = open_source(&f);
        check_four_processes(s);
        gpu_source_close(s);
    }
    fake_nvml_close(&f);
}

/* With both versions present on a 535.43-535.86 driver, _v2 (24 bytes) is used. */
static void test_driver_535_prefers_v2(void **state) {
    struct fake_nvml f;
    fake_nvml_open(&f, "full");
    struct fake_device *g = one_device(f.st);
    add_four_processes(g);
    (void)snprintf(f.st->driver_version, sizeof(f.st->driver_version), "535.86.05");
    struct gpu_source *s = open_source(&f);
    check_four_processes(s);
    assert_string_equal(gpu_source_driver_version(s), "535.86.05");
    gpu_source_close(s);
    fake_nvml_close(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimal_library),
        cmocka_unit_test(test_legacy_count_query_quirk),
        cmocka_unit_test(test_legacy_small_capacity_grows),
        cmocka_unit_test(test_driver_535_wide_entries_v3_only),
        cmocka_unit_test(test_driver_535_prefers_v2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
