/* SPDX-License-Identifier: MIT */
/*
 * The pod-resources decoder (protobuf-c over the code generated from
 * src/kube/pod_resources.proto) on bytes from the real protobuf encoder (fixtures encoded
 * by tests/kube/podresources/encode.py at test time, see tests/podres.cmake) and on
 * hand-built malformed and unknown-field messages.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "pod_resources_decode.h"
#include "pod_resources_gpu.h"

#define GPU0 "GPU-5f3e2a10-7c4b-4e59-9a1d-2b6c8d0e4f21"
#define GPU1 "GPU-0b7c9d2e-1a2b-4c3d-8e4f-5a6b7c8d9e0f"

/* ---- a tiny protobuf writer for hand-built messages ---------------------------------- */

struct buf {
    uint8_t *p;
    size_t n, cap;
};

static void put(struct buf *b, const void *data, size_t n) {
    if (n == 0)
        return;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 16;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void put_varint(struct buf *b, uint64_t v) {
    do {
        uint8_t byte = (uint8_t)(v & 0x7f);

        v >>= 7;
        if (v)
            byte |= 0x80;
        put(b, &byte, 1);
    } while (v);
}

static void put_tag(struct buf *b, uint32_t field, unsigned wt) {
    put_varint(b, ((uint64_t)field << 3) | wt);
}

static void put_bytes(struct buf *b, uint32_t field, const void *data, size_t n) {
    put_tag(b, field, 2);
    put_varint(b, n);
    put(b, data, n);
}

static void put_str(struct buf *b, uint32_t field, const char *s) {
    put_bytes(b, field, s, strlen(s));
}

/* Wraps inner as a length-delimited field of outer and frees inner. */
static void put_msg(struct buf *outer, uint32_t field, struct buf *inner) {
    put_bytes(outer, field, inner->p, inner->n);
    free(inner->p);
    *inner = (struct buf){0};
}

/* One unknown field of every wire type a proto3 peer can send (groups, proto2 only, are
 * refused: see test_malformed). */
static void put_unknown_fields(struct buf *b) {
    uint8_t eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};

    put_tag(b, 90, 0);
    put_varint(b, UINT64_MAX);
    put_tag(b, 91, 1);
    put(b, eight, 8);
    put_str(b, 92, "future");
    put_tag(b, 93, 5);
    put(b, eight, 4);
    /* a field number past the 2^29 - 1 limit is skipped like any unknown field */
    put_tag(b, 1U << 29, 0);
    put_varint(b, 0);
}

static struct podres_list *decode_ok(const struct buf *b) {
    struct podres_list *l = NULL;

    ASSERT_OK(podres_list_decode(b->p, b->n, &l));
    assert_non_null(l);
    return l;
}

static void expect_bad(const struct buf *b, int err) {
    struct podres_list *l = (struct podres_list *)(uintptr_t)1;

    ASSERT_ERRNO(podres_list_decode(b->p, b->n, &l), err);
    /* ret_list untouched on failure */
    assert_ptr_equal(l, (struct podres_list *)(uintptr_t)1);
}

/* ---- fixtures from the real encoder -------------------------------------------------- */

static void read_fixture(const char *name, struct buf *ret) {
    char path[4096], rel[256];
    char *data = NULL;
    size_t size = 0;

    (void)snprintf(rel, sizeof(rel), "tests/podres-pb/%s", name);
    test_binary_path(path, sizeof(path), rel);
    ASSERT_OK(read_virtual_file_at(AT_FDCWD, path, 1 << 20, &data, &size));
    *ret = (struct buf){.p = (uint8_t *)data, .n = size, .cap = size};
}

static void test_decode_node_fixture(void **state) {
    struct buf b;
    struct podres_list *l;
    const V1__PodResources *p;
    const V1__ContainerResources *c;

    read_fixture("node.pb", &b);
    l = decode_ok(&b);
    assert_int_equal(l->response->n_pod_resources, 6);

    p = l->response->pod_resources[0];
    assert_string_equal(p->name, "train-a");
    assert_string_equal(p->namespace_, "ml");
    assert_int_equal(p->n_containers, 1);
    c = p->containers[0];
    assert_string_equal(c->name, "trainer");
    assert_int_equal(c->n_devices, 1);
    assert_string_equal(c->devices[0]->resource_name, "nvidia.com/gpu");
    assert_int_equal(c->devices[0]->n_device_ids, 2);
    assert_string_equal(c->devices[0]->device_ids[0], GPU0 "::0");
    assert_string_equal(c->devices[0]->device_ids[1], GPU0 "::1");
    assert_int_equal(c->devices[0]->topology->n_nodes, 1);
    assert_int_equal(c->devices[0]->topology->nodes[0]->id, 0);
    /* cpu_ids came packed from the encoder; -1 is a ten-byte varint */
    assert_int_equal(c->n_cpu_ids, 3);
    assert_int_equal(c->cpu_ids[0], 2);
    assert_int_equal(c->cpu_ids[1], 3);
    assert_true(c->cpu_ids[2] == -1);
    assert_int_equal(c->n_memory, 1);
    assert_string_equal(c->memory[0]->memory_type, "memory");
    assert_int_equal(c->memory[0]->size, 1073741824);
    assert_int_equal(c->memory[0]->topology->n_nodes, 2);
    assert_int_equal(c->memory[0]->topology->nodes[1]->id, 1);

    p = l->response->pod_resources[3];
    assert_string_equal(p->name, "infer");
    assert_int_equal(p->n_containers, 2);
    assert_int_equal(p->containers[0]->n_devices, 2);
    assert_string_equal(p->containers[0]->devices[1]->resource_name, "example.com/fpga");
    assert_string_equal(p->containers[1]->name, "sidecar");
    assert_int_equal(p->containers[1]->n_devices, 0);

    p = l->response->pod_resources[5];
    c = p->containers[0];
    assert_int_equal(c->n_dynamic_resources, 1);
    assert_string_equal(c->dynamic_resources[0]->claim_name, "gpu-claim");
    assert_string_equal(c->dynamic_resources[0]->claim_namespace, "default");
    assert_int_equal(c->dynamic_resources[0]->n_claim_resources, 1);
    {
        const V1__ClaimResource *cr = c->dynamic_resources[0]->claim_resources[0];

        assert_int_equal(cr->n_cdi_devices, 2);
        assert_string_equal(cr->cdi_devices[1]->name, "nvidia.com/gpu=1");
        assert_string_equal(cr->driver_name, "gpu.nvidia.com");
        assert_string_equal(cr->pool_name, "node-a");
        assert_string_equal(cr->device_name, "gpu-0");
    }

    podres_list_free(l);
    free(b.p);
}

static void test_decode_empty(void **state) {
    struct buf b;
    struct podres_list *l;

    read_fixture("empty.pb", &b);
    assert_int_equal(b.n, 0);
    l = decode_ok(&b);
    assert_int_equal(l->response->n_pod_resources, 0);
    podres_list_free(l);
    free(b.p);

    /* NULL with length 0 is an empty message; NULL with a length is a caller bug */
    ASSERT_OK(podres_list_decode(NULL, 0, &l));
    assert_int_equal(l->response->n_pod_resources, 0);
    podres_list_free(l);
    ASSERT_ERRNO(podres_list_decode(NULL, 3, &l), EINVAL);
    assert_null(podres_list_free(NULL));
}

/* Every strict prefix of a real message is either a valid message or -EBADMSG. */
static void test_prefixes(void **state) {
    struct buf b;
    size_t ok = 0, bad = 0;

    read_fixture("node.pb", &b);
    for (size_t n = 0; n < b.n; n++) {
        struct podres_list *l = NULL;
        /* an exact-size copy so ASan catches a read past the end */
        uint8_t *copy = malloc(n ? n : 1);
        int r;

        memcpy(copy, b.p, n);
        r = podres_list_decode(copy, n, &l);
        if (r == 0)
            ok++;
        else {
            assert_int_equal(r, -EBADMSG);
            bad++;
        }
        podres_list_free(l);
        free(copy);
    }
    /* only the cuts between top-level pods are valid: 0 bytes and after pods 1..5 */
    assert_int_equal(ok, 6);
    assert_int_equal(bad, b.n - 6);
    free(b.p);
}

static void test_unknown_fields_skipped(void **state) {
    struct buf b, with = {0}, pod = {0}, ctr = {0}, dev = {0};
    struct podres_list *l1, *l2;
    const V1__ContainerDevices *d;

    /* The real fixture with unknown fields appended at top level (a merge, on the wire). */
    read_fixture("node.pb", &b);
    put(&with, b.p, b.n);
    put_unknown_fields(&with);
    l1 = decode_ok(&with);
    assert_int_equal(l1->response->n_pod_resources, 6);
    assert_string_equal(l1->response->pod_resources[5]->name, "dra-pod");
    podres_list_free(l1);
    free(with.p);
    with = (struct buf){0};

    /* Unknown fields inside every known message level. */
    put_unknown_fields(&dev);
    put_str(&dev, 1, "nvidia.com/gpu");
    put_unknown_fields(&dev);
    put_str(&dev, 2, GPU1);
    put_str(&ctr, 1, "c");
    put_unknown_fields(&ctr);
    put_msg(&ctr, 2, &dev);
    put_str(&pod, 1, "p");
    put_unknown_fields(&pod);
    put_str(&pod, 2, "ns");
    put_msg(&pod, 3, &ctr);
    put_msg(&with, 1, &pod);
    l2 = decode_ok(&with);
    assert_int_equal(l2->response->n_pod_resources, 1);
    assert_string_equal(l2->response->pod_resources[0]->name, "p");
    assert_string_equal(l2->response->pod_resources[0]->namespace_, "ns");
    d = l2->response->pod_resources[0]->containers[0]->devices[0];
    assert_string_equal(d->resource_name, "nvidia.com/gpu");
    assert_int_equal(d->n_device_ids, 1);
    assert_string_equal(d->device_ids[0], GPU1);
    podres_list_free(l2);
    free(with.p);
    free(b.p);
}

static void test_unpacked_and_last_wins(void **state) {
    struct buf top = {0}, pod = {0}, ctr = {0}, packed = {0};
    struct podres_list *l;
    const V1__ContainerResources *c;

    put_str(&pod, 1, "first");
    put_str(&pod, 1, "second"); /* a repeated singular string: the last one wins */
    put_tag(&ctr, 3, 0);        /* cpu_ids unpacked ... */
    put_varint(&ctr, 5);
    put_varint(&packed, 6); /* ... then packed, then unpacked again */
    put_varint(&packed, 300);
    put_msg(&ctr, 3, &packed);
    put_tag(&ctr, 3, 0);
    put_varint(&ctr, 7);
    put_str(&ctr, 4, ""); /* an empty ContainerMemory */
    put_msg(&pod, 3, &ctr);
    put_msg(&top, 1, &pod);
    l = decode_ok(&top);
    assert_string_equal(l->response->pod_resources[0]->name, "second");
    assert_string_equal(l->response->pod_resources[0]->namespace_, ""); /* absent */
    c = l->response->pod_resources[0]->containers[0];
    assert_string_equal(c->name, "");
    assert_int_equal(c->n_cpu_ids, 4);
    assert_int_equal(c->cpu_ids[0], 5);
    assert_int_equal(c->cpu_ids[1], 6);
    assert_int_equal(c->cpu_ids[2], 300);
    assert_int_equal(c->cpu_ids[3], 7);
    assert_int_equal(c->n_memory, 1);
    assert_string_equal(c->memory[0]->memory_type, "");
    assert_int_equal(c->memory[0]->size, 0);
    assert_null(c->memory[0]->topology);
    podres_list_free(l);
    free(top.p);
}

static void test_malformed(void **state) {
    struct buf b = {0}, pod = {0};
    static const uint8_t cases[][12] = {
        {0x0e},             /* wire type 6 */
        {0x0f},             /* wire type 7 */
        {0x00, 0x00},       /* field 0 */
        {0x0c},             /* end group, no start */
        {0x0b},             /* group never ends */
        {0x0b, 0x14},       /* group 1 ended by 2 */
        {0x08, 0x01},       /* pod_resources varint */
        {0x0a, 0x05, 0x0a}, /* length past the end */
        {0x0a},             /* length missing */
        {0x09, 1, 2, 3},    /* fixed64 cut short */
        {0x0d, 1},          /* fixed32 cut short */
        {0x10, 0x80},       /* varint cut short */
        {0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, /* 11 bytes */
        {0x5b, 0x5c}, /* an unknown group, even a well-formed one (proto2 only) */
    };
    static const size_t lens[] = {1, 1, 2, 1, 1, 2, 2, 3, 1, 4, 2, 2, 12, 2};

    assert_int_equal(ARRAY_SIZE(cases), ARRAY_SIZE(lens));
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct buf one = {(uint8_t *)(uintptr_t)cases[i], lens[i], lens[i]};

        expect_bad(&one, EBADMSG);
    }

    /* a known string field sent as a varint, deep inside */
    put_tag(&pod, 2, 0);
    put_varint(&pod, 1);
    put_msg(&b, 1, &pod);
    expect_bad(&b, EBADMSG);
    free(b.p);
    b = (struct buf){0};

    /* packed cpu_ids with a truncated varint inside the run */
    {
        struct buf ctr = {0}, run = {0};
        uint8_t cut = 0x80;

        put(&run, &cut, 1);
        put_msg(&ctr, 3, &run);
        put_msg(&pod, 3, &ctr);
        put_msg(&b, 1, &pod);
        expect_bad(&b, EBADMSG);
        free(b.p);
        b = (struct buf){0};
    }

    /* a string holding a NUL byte reads up to it: never past the buffer */
    put_bytes(&pod, 1, "a\0b", 3);
    put_msg(&b, 1, &pod);
    {
        struct podres_list *l = decode_ok(&b);

        assert_string_equal(l->response->pod_resources[0]->name, "a");
        podres_list_free(l);
    }
    free(b.p);
}

/* A small message cannot make the decoder allocate without bound: 4 Mi packed cpu ids
 * (one byte each on the wire, eight in memory) pass PODRES_MAX_DECODED. */
static void test_memory_bound(void **state) {
    struct buf b = {0}, pod = {0}, ctr = {0}, run = {0};
    size_t n_ids = PODRES_MAX_DECODED / sizeof(int64_t);

    for (size_t n = 0; n < n_ids / 4; n++)
        put_varint(&run, 1);
    put_msg(&ctr, 3, &run);
    put_msg(&pod, 3, &ctr);
    put_msg(&b, 1, &pod);
    {
        struct podres_list *l = decode_ok(&b);

        assert_int_equal(l->response->pod_resources[0]->containers[0]->n_cpu_ids, n_ids / 4);
        podres_list_free(l);
    }
    free(b.p);
    b = (struct buf){0};
    for (size_t n = 0; n < n_ids; n++)
        put_varint(&run, 1);
    put_msg(&ctr, 3, &run);
    put_msg(&pod, 3, &ctr);
    put_msg(&b, 1, &pod);
    expect_bad(&b, E2BIG);
    free(b.p);
}

/* ---- GPU allocations ------------------------------------------------------------------ */

static void test_gpu_id_parse(void **state) {
    struct podres_gpu_id g;

    ASSERT_OK(podres_gpu_id_parse(GPU0, &g));
    assert_string_equal(g.device, GPU0);
    assert_string_equal(g.gpu_uuid, GPU0);
    assert_false(g.mig);
    assert_false(g.replica);

    ASSERT_OK(podres_gpu_id_parse(GPU0 "::17", &g));
    assert_string_equal(g.device, GPU0);
    assert_string_equal(g.gpu_uuid, GPU0);
    assert_true(g.replica);

    ASSERT_OK(podres_gpu_id_parse("MIG-9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d::4", &g));
    assert_string_equal(g.device, "MIG-9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d");
    assert_string_equal(g.gpu_uuid, "");
    assert_true(g.mig);
    assert_true(g.replica);

    ASSERT_OK(podres_gpu_id_parse("MIG-" GPU1 "/1/0", &g));
    assert_string_equal(g.device, "MIG-" GPU1 "/1/0");
    assert_string_equal(g.gpu_uuid, GPU1);
    assert_true(g.mig);

    g.device[0] = 'Z';
    ASSERT_ERRNO(podres_gpu_id_parse("nvidia0", &g), EINVAL);
    ASSERT_ERRNO(podres_gpu_id_parse("GPU-", &g), EINVAL);
    ASSERT_ERRNO(podres_gpu_id_parse("GPU-xyz", &g), EINVAL);
    ASSERT_ERRNO(podres_gpu_id_parse(GPU0 "::", &g), EINVAL);
    ASSERT_ERRNO(podres_gpu_id_parse(GPU0 "::a", &g), EINVAL);
    ASSERT_ERRNO(podres_gpu_id_parse("MIG-GPU-"
                                     "abc/1",
                                     &g),
                 EINVAL);
    ASSERT_ERRNO(podres_gpu_id_parse("MIG-GPU-"
                                     "abc/x/0",
                                     &g),
                 EINVAL);
    ASSERT_ERRNO(podres_gpu_id_parse("MIG-GPU-"
                                     "/1/0",
                                     &g),
                 EINVAL);
    ASSERT_ERRNO(podres_gpu_id_parse("GPU-"
                                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                     &g),
                 EINVAL);
    ASSERT_ERRNO(podres_gpu_id_parse(NULL, &g), EINVAL);
    assert_int_equal(g.device[0], 'Z'); /* untouched on failure */

    assert_true(podres_is_gpu_resource("nvidia.com/gpu"));
    assert_true(podres_is_gpu_resource("nvidia.com/gpu.shared"));
    assert_true(podres_is_gpu_resource("nvidia.com/mig-1g.5gb"));
    assert_false(podres_is_gpu_resource("nvidia.com/mig-"));
    assert_false(podres_is_gpu_resource("nvidia.com/gpus"));
    assert_false(podres_is_gpu_resource("example.com/fpga"));
    assert_false(podres_is_gpu_resource(NULL));
}

static void test_gpu_table_from_fixture(void **state) {
    struct gpu_alloc_table *t;
    const struct gpu_alloc *a;
    struct podres_list *l;
    struct buf b;
    size_t n;

    read_fixture("node.pb", &b);
    l = decode_ok(&b);
    ASSERT_OK(gpu_alloc_table_build(l, &t));
    /* train-a (2 replicas), notebook (1) on GPU0; idle-holder and legacy-mig on GPU1;
     * infer's new-form MIG device has no parent; fpga0 is not a GPU resource */
    assert_int_equal(t->n, 5);
    assert_int_equal(t->n_unplaced_mig, 1);
    assert_int_equal(t->n_skipped, 0);

    /* sorted by GPU uuid: "" (unplaced) first */
    assert_string_equal(t->allocs[0].pod, "infer");
    assert_string_equal(t->allocs[0].container, "server");
    assert_string_equal(t->allocs[0].gpu_uuid, "");
    assert_true(t->allocs[0].mig);
    assert_int_equal(t->allocs[0].replicas, 1);

    n = gpu_alloc_table_find(t, GPU0, &a);
    assert_int_equal(n, 2);
    assert_string_equal(a[0].namespace_, "ml");
    assert_string_equal(a[0].pod, "notebook");
    assert_string_equal(a[0].container, "jupyter");
    assert_int_equal(a[0].replicas, 1);
    assert_string_equal(a[1].pod, "train-a");
    assert_string_equal(a[1].device, GPU0);
    assert_int_equal(a[1].replicas, 2);

    n = gpu_alloc_table_find(t, GPU1, &a);
    assert_int_equal(n, 2);
    assert_string_equal(a[0].namespace_, "batch");
    assert_string_equal(a[0].pod, "idle-holder");
    assert_false(a[0].mig);
    assert_string_equal(a[1].pod, "legacy-mig");
    assert_true(a[1].mig);
    assert_string_equal(a[1].device, "MIG-" GPU1 "/1/0");

    assert_int_equal(gpu_alloc_table_find(t, "GPU-00000000-0000-0000-0000-000000000000", &a), 0);
    assert_int_equal(gpu_alloc_table_find(t, "", &a), 0);
    assert_int_equal(gpu_alloc_table_find(NULL, GPU0, &a), 0);

    gpu_alloc_table_free(t);
    podres_list_free(l);
    free(b.p);
}

static void test_gpu_table_skips(void **state) {
    struct buf top = {0}, pod = {0}, ctr = {0}, dev = {0};
    struct gpu_alloc_table *t;
    struct podres_list *l;
    char long_name[300];

    memset(long_name, 'p', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    put_str(&dev, 1, "nvidia.com/gpu");
    put_str(&dev, 2, "nvidia0"); /* GKE-style id: not ours to map */
    put_str(&dev, 2, GPU0 "::0");
    put_str(&dev, 2, GPU0 "::1");
    put_str(&dev, 2, GPU0 "::2");
    put_str(&ctr, 1, "c");
    put_msg(&ctr, 2, &dev);
    put_str(&pod, 1, long_name);
    put_str(&pod, 2, "ns");
    put_msg(&pod, 3, &ctr);
    put_msg(&top, 1, &pod);
    /* a second pod with a NULL container name and no namespace */
    put_str(&dev, 1, "nvidia.com/gpu");
    put_str(&dev, 2, GPU0 "::3");
    put_msg(&ctr, 2, &dev);
    put_str(&pod, 1, "p2");
    put_msg(&pod, 3, &ctr);
    put_msg(&top, 1, &pod);

    l = decode_ok(&top);
    ASSERT_OK(gpu_alloc_table_build(l, &t));
    assert_int_equal(t->n, 1);
    assert_int_equal(t->n_skipped, 4); /* nvidia0 + the three ids of the long-named pod */
    assert_string_equal(t->allocs[0].pod, "p2");
    assert_string_equal(t->allocs[0].namespace_, "");
    assert_string_equal(t->allocs[0].container, "");
    gpu_alloc_table_free(t);
    podres_list_free(l);
    free(top.p);

    /* an empty list gives an empty table */
    ASSERT_OK(gpu_alloc_table_build(NULL, &t));
    assert_int_equal(t->n, 0);
    assert_null(gpu_alloc_table_free(t));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_node_fixture),
        cmocka_unit_test(test_decode_empty),
        cmocka_unit_test(test_prefixes),
        cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_unpacked_and_last_wins),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_memory_bound),
        cmocka_unit_test(test_gpu_id_parse),
        cmocka_unit_test(test_gpu_table_from_fixture),
        cmocka_unit_test(test_gpu_table_skips),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
