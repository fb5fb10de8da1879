/* SPDX-License-Identifier: MIT */
/* The GPU source over a backend that is not NVML: a made-up vendor defined here, as a
 * second vendor's file would define it. The source reads each device through the ops,
 * reports a lost device down and retries it with doubling backoff, passes other errors
 * as one bad tick, and describes the devices for `joulestat check`. */
#include <errno.h>
#include <string.h>

#include "gpu_backend.h"
#include "strbuf.h"
#include "testutil.h"

#define N_DEVICES 2

struct vendor {
    int open_error;
    int lost[N_DEVICES];    /* device_open and reads answer -ENODEV while set */
    int failing[N_DEVICES]; /* read_energy answers this -errno while set */
    unsigned opens[N_DEVICES], closes[N_DEVICES], reads[N_DEVICES];
    uint64_t energy_mj[N_DEVICES];
    struct gpu_process procs[1];
    bool closed;
};

static struct vendor vendor;

static int v_open(const struct gpu_source_options *o, void **ret_state, size_t *ret_n,
                  const char **ret_reason) {
    if (vendor.open_error) {
        *ret_reason = "no such vendor library";
        return vendor.open_error;
    }
    *ret_state = &vendor;
    *ret_n = N_DEVICES;
    return 0;
}

static void v_close(void *state) {
    ((struct vendor *)state)->closed = true;
}

static int v_device_open(void *state, size_t i, struct gpu_device_reading *rd) {
    struct vendor *v = state;

    v->opens[i]++;
    if (v->lost[i])
        return -ENODEV;
    strcpy(rd->uuid, i == 0 ? "VND-0" : "VND-1");
    strcpy(rd->name, "Vendor Accelerator");
    return 0;
}

static void v_device_close(void *state, size_t i) {
    ((struct vendor *)state)->closes[i]++;
}

static int v_read_energy(void *state, size_t i, uint64_t now_us, struct gpu_device_reading *rd) {
    struct vendor *v = state;

    v->reads[i]++;
    if (v->lost[i])
        return -ENODEV;
    if (v->failing[i])
        return v->failing[i];
    rd->energy_valid = true;
    rd->energy_mj = v->energy_mj[i];
    return 0;
}

static int v_read_processes(void *state, size_t i, struct gpu_device_reading *rd) {
    struct vendor *v = state;

    v->procs[0] = (struct gpu_process){.pid = 4242, .kinds = GPU_PROCESS_COMPUTE};
    rd->processes = v->procs;
    rd->n_processes = 1;
    return 0;
}

static int v_read_samples(void *state, size_t i, uint64_t now_us, struct gpu_device_reading *rd) {
    return 0; /* this vendor has no per-process utilisation */
}

static void v_describe(const void *state, size_t n, struct strbuf *out) {
    strbuf_printf(out, "Vendor: %zu accelerators\n", n);
}

static void v_describe_device(const void *state, size_t i, const struct gpu_device_reading *rd,
                              struct strbuf *out) {
    strbuf_printf(out, "GPU %zu: energy counter works\n", i);
}

static const struct gpu_backend backend_vendor = {
    .name = "vendor",
    .open = v_open,
    .close = v_close,
    .device_open = v_device_open,
    .device_close = v_device_close,
    .read_energy = v_read_energy,
    .read_processes = v_read_processes,
    .read_samples = v_read_samples,
    .describe = v_describe,
    .describe_device = v_describe_device,
};

static int setup(void **state) {
    vendor = (struct vendor){.energy_mj = {1000, 2000}};
    return 0;
}

static const struct gpu_device_reading *sample(struct gpu_source *s, uint64_t now_us) {
    const struct gpu_device_reading *d = NULL;
    size_t n = 0;

    ASSERT_OK(gpu_source_sample(s, now_us, &d, &n));
    assert_int_equal(n, N_DEVICES);
    return d;
}

static void test_reads_through_the_ops(void **state) {
    struct gpu_source *s = NULL;
    const struct gpu_device_reading *d;
    const char *reason = NULL;

    ASSERT_OK(gpu_source_open_backend(&backend_vendor, NULL, &s, &reason));
    assert_null(gpu_source_backend_state(s, &gpu_backend_nvml)); /* not an NVML source */
    assert_ptr_equal(gpu_source_backend_state(s, &backend_vendor), &vendor);
    d = sample(s, 1000000);
    for (unsigned i = 0; i < N_DEVICES; i++) {
        assert_true(d[i].up);
        assert_int_equal(d[i].index, i);
        assert_true(d[i].energy_valid);
        assert_int_equal(d[i].energy_mj, vendor.energy_mj[i]);
        assert_int_equal(d[i].n_processes, 1);
        assert_int_equal(d[i].processes[0].pid, 4242);
        assert_false(d[i].utils_supported);
    }
    assert_string_equal(d[1].uuid, "VND-1");
    assert_null(gpu_source_close(s));
    assert_true(vendor.closed);
}

/* Lost: down at once, handle released, retried after 1 s, then 2 s, and up again. */
static void test_lost_device_backoff(void **state) {
    struct gpu_source *s = NULL;
    const struct gpu_device_reading *d;
    const char *reason = NULL;
    uint64_t t = 10000000;

    ASSERT_OK(gpu_source_open_backend(&backend_vendor, NULL, &s, &reason));
    vendor.lost[1] = 1;
    d = sample(s, t);
    assert_true(d[0].up);
    assert_false(d[1].up);
    assert_int_equal(d[1].error, -ENODEV);
    assert_false(d[1].energy_valid);
    assert_int_equal(vendor.closes[1], 1);
    assert_int_equal(vendor.opens[1], 1); /* at open only */

    d = sample(s, t + 500000); /* within the first backoff: not even tried */
    assert_false(d[1].up);
    assert_int_equal(vendor.opens[1], 1);
    d = sample(s, t + 1000000); /* tried, still lost: next wait is 2 s */
    assert_int_equal(vendor.opens[1], 2);
    d = sample(s, t + 2500000);
    assert_int_equal(vendor.opens[1], 2);
    vendor.lost[1] = 0;
    d = sample(s, t + 3000000);
    assert_int_equal(vendor.opens[1], 3);
    assert_true(d[1].up);
    assert_int_equal(d[1].energy_mj, 2000);
    assert_null(gpu_source_close(s));
}

/* Another error spoils one tick of one device; it is read again at the next. */
static void test_failing_read(void **state) {
    struct gpu_source *s = NULL;
    const struct gpu_device_reading *d;
    const char *reason = NULL;
    struct strbuf sb;

    ASSERT_OK(gpu_source_open_backend(&backend_vendor, NULL, &s, &reason));
    vendor.failing[0] = -EIO;
    d = sample(s, 1000000);
    assert_false(d[0].up);
    assert_int_equal(d[0].error, -EIO);
    assert_int_equal(vendor.closes[0], 0);
    strbuf_init(&sb);
    gpu_source_describe(s, &sb);
    assert_non_null(strstr(sb.buf, "Vendor: 2 accelerators\n"));
    assert_non_null(strstr(sb.buf, "GPU 0: VND-0 Vendor Accelerator: down (Input/output error)"));
    assert_non_null(strstr(sb.buf, "GPU 1: VND-1 Vendor Accelerator: up\n"
                                   "GPU 1: energy counter works\n"));
    strbuf_done(&sb);
    vendor.failing[0] = 0;
    d = sample(s, 2000000);
    assert_true(d[0].up);
    assert_null(gpu_source_close(s));
}

static void test_open_failure(void **state) {
    struct gpu_source *s = NULL;
    const char *reason = NULL;

    vendor.open_error = -ENOENT;
    ASSERT_ERRNO(gpu_source_open_backend(&backend_vendor, NULL, &s, &reason), ENOENT);
    assert_null(s);
    assert_string_equal(reason, "no such vendor library");
    assert_false(vendor.closed);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_reads_through_the_ops, setup),
        cmocka_unit_test_setup(test_lost_device_backoff, setup),
        cmocka_unit_test_setup(test_failing_read, setup),
        cmocka_unit_test_setup(test_open_failure, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
