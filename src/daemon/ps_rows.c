/* SPDX-License-Identifier: MIT */
#include "ps_rows.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload_kind.h"
#include "macro.h"
#include "rapl_domain.h"

static struct ps_row *row_new(struct ps_rows *t, uint32_t pid) {
    struct ps_row *r;

    if (grow_array(&t->rows, &t->cap, t->n + 1, sizeof(*t->rows)) < 0)
        return NULL;
    r = &t->rows[t->n++];
    *r = (struct ps_row){.pid = pid, .state = '?'};
    return r;
}

static int by_pid(const void *a, const void *b) {
    const struct ps_row *x = a, *y = b;

    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Bisection over the sorted scan rows, then the few rows added since (processes only the
 * snapshot knows). */
static struct ps_row *row_find(struct ps_rows *t, uint32_t pid) {
    struct ps_row key = {.pid = pid}, *r = NULL;

    if (t->n_sorted > 0)
        r = bsearch(&key, t->rows, t->n_sorted, sizeof(*t->rows), by_pid);
    for (size_t i = t->n_sorted; !r && i < t->n; i++)
        if (t->rows[i].pid == pid)
            r = &t->rows[i];
    return r;
}

uint64_t ps_row_cpu_uj(const struct ps_row *r) {
    return r->cpu_uj[RAPL_DOMAIN_PACKAGE] + r->cpu_uj[RAPL_DOMAIN_DRAM];
}

int ps_rows_add_scan(struct ps_rows *t, const struct procfs_process *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        struct ps_row *r;

        if (p[i].flags & PROCFS_PROCESS_EXITED)
            continue;
        r = row_new(t, p[i].pid);
        if (!r)
            return -ENOMEM;
        r->ppid = p[i].ppid;
        r->state = p[i].state;
        r->kernel_thread = p[i].kernel_thread;
        r->live = true;
        r->w = *p[i].identity;
        identity_to_labels(&r->w, p[i].comm, &r->id);
    }
    return 0;
}

/* Names the Kubernetes API gave the snapshot; the scan only knows UIDs. */
static void copy_name(char *dst, const char *src, size_t size) {
    if (src[0] && !dst[0])
        (void)snprintf(dst, size, "%s", src);
}

int ps_rows_add_gpu(struct ps_rows *t, const struct snapshot *snap) {
    for (size_t i = 0; i < snap->n_gpu_processes; i++) {
        const struct snap_gpu_process *g = &snap->gpu_processes[i];
        struct ps_row *r = row_find(t, g->pid);

        if (!r) {
            r = row_new(t, g->pid);
            if (!r)
                return -ENOMEM;
            r->id = *g->id;
        }
        copy_name(r->id.pod, g->id->pod, sizeof(r->id.pod));
        copy_name(r->id.namespace_, g->id->namespace_, sizeof(r->id.namespace_));
        copy_name(r->id.container, g->id->container, sizeof(r->id.container));
        r->gpu_measured_uj += g->energy_measured_uj;
        r->gpu_estimated_uj += g->energy_estimated_uj;
        if (r->n_gpus < PS_GPUS_MAX)
            r->gpus[r->n_gpus++] = g->gpu;
    }
    return 0;
}

int ps_rows_add_cpu(struct ps_rows *t, const struct snapshot *snap) {
    for (size_t i = 0; i < snap->n_cpu_processes; i++) {
        const struct snap_cpu_process *c = &snap->cpu_processes[i];
        struct ps_row *r = row_find(t, c->pid);

        if (!r) {
            r = row_new(t, c->pid);
            if (!r)
                return -ENOMEM;
            r->id = *c->id;
        }
        copy_name(r->id.pod, c->id->pod, sizeof(r->id.pod));
        copy_name(r->id.namespace_, c->id->namespace_, sizeof(r->id.namespace_));
        copy_name(r->id.container, c->id->container, sizeof(r->id.container));
        for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++)
            r->cpu_uj[d] += c->energy_uj[d];
    }
    return 0;
}

void ps_rows_sort(struct ps_rows *t) {
    if (t->n > 1)
        qsort(t->rows, t->n, sizeof(*t->rows), by_pid);
    t->n_sorted = t->n;
}

void ps_rows_done(struct ps_rows *t) {
    free(t->rows);
    *t = (struct ps_rows){0};
}
