/* SPDX-License-Identifier: MIT */
/* The GPU accounting tests' fixture: one simulated device reading, ticked by hand. */
#pragma once

#include "testutil.h"

#include <stdlib.h>

#include "clock.h"
#include "gpu_accounting.h"
#include "ledger.h"

#define T0_US UINT64_C(1700000000000000)

struct fixture {
    struct gpu_accounting *acc;
    struct ledger ledger;
    struct gpu_device_reading dev;
    struct gpu_process procs[8];
    struct gpu_util_sample utils[64];
    uint64_t now_us;
};

static inline struct fixture *fixture_new_with(const struct gpu_accounting_options *o) {
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    ASSERT_OK(gpu_accounting_new(o, &f->acc));
    ledger_init(&f->ledger);
    f->dev = (struct gpu_device_reading){
        .index = 0,
        .uuid = "GPU-00000000-1111-2222-3333-444444444444",
        .name = "Simulated H100",
        .up = true,
        .energy_valid = true,
        .power_valid = true,
        .power_mw = 100000,
        .utils_supported = true,
        .processes = f->procs,
        .utils = f->utils,
    };
    f->now_us = T0_US;
    return f;
}

static inline struct fixture *fixture_new(enum idle_policy policy, double idle_watts) {
    return fixture_new_with(
        &(struct gpu_accounting_options){.idle_policy = policy, .idle_power_watts = idle_watts});
}

static inline void fixture_free(struct fixture *f) {
    gpu_accounting_free(f->acc);
    ledger_done(&f->ledger);
    free(f);
}

static inline void tick(struct fixture *f, uint64_t energy_mj) {
    f->dev.energy_mj = energy_mj;
    ASSERT_OK(gpu_accounting_tick(f->acc, &f->dev, 1, f->now_us, f->now_us * 1000, NULL, NULL,
                                  &f->ledger, NULL));
}

static inline uint64_t process_total(struct fixture *f, uint32_t pid, uint64_t *measured,
                                     uint64_t *estimated) {
    struct ledger_process *p;

    ASSERT_OK(ledger_process_get(&f->ledger, 0, pid, 0, &(struct snap_identity){0}, &p));
    if (measured)
        *measured = p->measured_uj;
    if (estimated)
        *estimated = p->estimated_uj;
    return p->measured_uj + p->estimated_uj;
}

/* Σ processes + Σ unattributed == device energy, exactly. */
static inline void assert_conserved(struct fixture *f) {
    struct ledger_gpu *g = ledger_gpu(&f->ledger, 0);
    uint64_t sum = 0;
    void *v;

    for (size_t i = 0; hashmap_next(&f->ledger.processes, &i, NULL, &v);) {
        struct ledger_process *p = v;
        sum += p->measured_uj + p->estimated_uj;
    }
    for (int r = 0; r < _UNATTR_MAX; r++)
        sum += g->unattributed_uj[r];
    assert_int_equal(sum, g->energy_uj);
}
