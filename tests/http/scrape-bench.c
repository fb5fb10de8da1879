/* SPDX-License-Identifier: MIT */
/*
 * Scrape latency with ~10 000 series over loopback, plain and gzip, against the targets in
 * perf-anchors (p99 < 10 ms plain, < 15 ms gzip):
 *   http-scrape-bench [SCRAPES [PLAIN_MS GZIP_MS]]
 * Prints series, bytes, p50/p99/max per mode; with limits, exits 1 if a p99 exceeds one.
 * CTest passes 10x the targets as a regression guard that a busy machine still meets.
 * Each timed scrape gets a new snapshot (published before the clock starts), so each one
 * renders, as when Prometheus scrapes less often than the sampler publishes; "shared" then
 * times scrapes of one snapshot, which all serve the body the first one rendered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "httpclient.h"
#include "labels.h"
#include "server.h"

#define PROCESSES 1420 /* 7 series each, plus per-GPU and self-metrics: ~10 000 */

static struct snapshot *big_snapshot(void) {
    struct snapshot *s = snapshot_new();

    if (!s)
        return NULL;
    s->gpu_processes = calloc(PROCESSES, sizeof(*s->gpu_processes));
    s->gpus = calloc(8, sizeof(*s->gpus));
    if (!s->gpu_processes || !s->gpus)
        return snapshot_unref(s);
    s->n_gpu_processes = PROCESSES;
    s->n_gpus = 8;
    for (unsigned i = 0; i < PROCESSES; i++) {
        struct snap_gpu_process *p = &s->gpu_processes[i];

        *p = (struct snap_gpu_process){.pid = 100000 + i,
                                       .gpu = i % 8,
                                       .energy_measured_uj = 123456789012ull + i,
                                       .energy_estimated_uj = 987654321ull * i,
                                       .util_valid = true,
                                       .sm_util_ratio = (i % 100) / 100.0,
                                       .mem_util_ratio = (i % 37) / 100.0,
                                       .memory_valid = true,
                                       .memory_used_bytes = 1ull << 30,
                                       .start_time_seconds = 1700000000 + i,
                                       .active = true};
        struct snap_identity id = {0};

        (void)snprintf(id.process_name, sizeof(id.process_name), "python3");
        (void)snprintf(id.pod, sizeof(id.pod), "train-job-%u-abcde", i);
        (void)snprintf(id.namespace_, sizeof(id.namespace_), "ml-team");
        (void)snprintf(id.container, sizeof(id.container), "trainer");
        (void)snprintf(id.pod_uid, sizeof(id.pod_uid), "7f1c6a52-0c1e-4a4e-9d1b-%012u", i);
        (void)snprintf(id.container_id, sizeof(id.container_id), "%064x", i);
        p->id = labels_new(&id);
    }
    for (unsigned g = 0; g < 8; g++)
        s->gpus[g] = (struct snap_gpu){.index = g,
                                       .up = true,
                                       .energy_uj = 1000000000ull * g,
                                       .power_valid = true,
                                       .power_watts = 250.5,
                                       .process_count = PROCESSES / 8};
    return s;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Runs n scrapes, prints the distribution, returns the p99 in µs (or -errno). */
static long run(struct snapshot_slot *slot, int port, int n, const char *headers,
                const char *label) {
    uint64_t *t = calloc((size_t)n, sizeof(*t));
    size_t bytes = 0;
    long p99;

    if (!t)
        return -ENOMEM;
    for (int i = 0; i < n; i++) {
        struct http_reply r;
        uint64_t t0;
        int e;

        if (slot)
            snapshot_slot_publish(slot, big_snapshot());
        t0 = clock_monotonic_ns();
        e = http_simple(port, "GET", "/metrics", headers, &r);

        if (e < 0 || r.status != 200) {
            free(t);
            return e < 0 ? e : -EPROTO;
        }
        t[i] = clock_monotonic_ns() - t0;
        bytes = r.body_len;
        if (i == n - 1 && !headers) {
            const char *d = strstr(r.body, "\njoulestat_scrape_duration_seconds ");

            if (d)
                printf("server-side render time of a scrape: %.2f ms\n",
                       strtod(d + 35, NULL) * 1e3);
        }
        http_reply_done(&r);
    }
    qsort(t, (size_t)n, sizeof(*t), cmp_u64);
    p99 = (long)(t[(size_t)n * 99 / 100] / 1000);
    printf("%-6s %d scrapes, %zu bytes: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", label, n, bytes,
           (double)t[n / 2] / 1e6, (double)p99 / 1e3, (double)t[n - 1] / 1e6);
    free(t);
    return p99;
}

int main(int argc, char **argv) {
    struct http_server_options o = {.listen_address = "127.0.0.1:0"};
    int n = argc > 1 ? atoi(argv[1]) : 200;
    long plain_limit_ms = argc > 3 ? atol(argv[2]) : 0, gz_limit_ms = argc > 3 ? atol(argv[3]) : 0;
    struct snapshot_slot *slot = snapshot_slot_new();
    struct http_server *srv = NULL;
    struct http_reply r;
    long plain, gz;
    char *series;

    if (!slot || n < 1 || http_server_start(&o, slot, &srv) < 0)
        return 1;
    snapshot_slot_publish(slot, big_snapshot());
    if (http_simple(http_server_port(srv), "GET", "/metrics", NULL, &r) < 0)
        return 1;
    series = strstr(r.body, "\njoulestat_series ");
    printf("series %ld\n", series ? strtol(series + 18, NULL, 10) : -1L);
    http_reply_done(&r);
    plain = run(slot, http_server_port(srv), n, NULL, "plain");
    gz = run(slot, http_server_port(srv), n, "Accept-Encoding: gzip\r\n", "gzip");
    (void)run(NULL, http_server_port(srv), n, "Accept-Encoding: gzip\r\n", "shared");
    http_server_stop(srv);
    snapshot_slot_free(slot);
    if (plain < 0 || gz < 0)
        return 1;
    if (plain_limit_ms > 0 && (plain >= plain_limit_ms * 1000 || gz >= gz_limit_ms * 1000)) {
        printf("p99 over the limit (%ld ms plain, %ld ms gzip)\n", plain_limit_ms, gz_limit_ms);
        return 1;
    }
    return 0;
}
