/* SPDX-License-Identifier: MIT */
#include "cpu_accounting.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "counter.h"
#include "cpu_split.h"
#include "hashmap.h"
#include "identity.h"
#include "macro.h"
#include "proc_cpu_stat.h"

#define CPU_MAX_COUNTERS 64

/* The processes of one workload, summed for this window. */
struct cpu_group {
    uint64_t key;
    uint64_t cpu_ticks;
    struct snap_identity id;
};

struct cpu_accounting {
    enum idle_policy policy;
    struct energy_counter counters[CPU_MAX_COUNTERS];
    bool have_times;
    struct cpu_times last_times;

    /* Scratch reused every window. */
    struct hashmap group_index; /* workload key -> index + 1 */
    size_t n_groups, groups_cap;
    struct cpu_group *groups;
    size_t arrays_cap;
    uint64_t *keys, *ticks, *parts;
    struct split_scratch split;
};

int cpu_accounting_new(enum idle_policy policy, struct cpu_accounting **ret) {
    struct cpu_accounting *c = calloc(1, sizeof(*c));

    if (!c)
        return -ENOMEM;
    c->policy = policy;
    hashmap_init(&c->group_index);
    *ret = c;
    return 0;
}

struct cpu_accounting *cpu_accounting_free(struct cpu_accounting *c) {
    if (!c)
        return NULL;
    hashmap_done(&c->group_index);
    free(c->groups);
    free(c->keys);
    free(c->ticks);
    free(c->parts);
    split_scratch_done(&c->split);
    free(c);
    return NULL;
}

/* The workload a process is charged to: its container, else its pod, else its job. */
static uint64_t workload_key(const struct snap_identity *id) {
    const char *name = id->container_id[0] ? id->container_id
                       : id->pod_uid[0]    ? id->pod_uid
                                           : id->slurm_job;

    return name[0] ? hash_bytes(name, strlen(name), 0x637075) : 0;
}

static int add_to_group(struct cpu_accounting *c, const struct procfs_process *p) {
    struct snap_identity id;
    uintptr_t index;
    uint64_t key;
    int r;

    identity_to_labels(p->identity, NULL, &id);
    key = workload_key(&id);
    if (key == 0)
        return 0; /* no workload: its CPU time is "system" */
    index = (uintptr_t)hashmap_get(&c->group_index, key);
    if (index == 0) {
        r = grow_array(&c->groups, &c->groups_cap, c->n_groups + 1, sizeof(*c->groups));
        if (r < 0)
            return r;
        r = hashmap_put(&c->group_index, key, (void *)(uintptr_t)(c->n_groups + 1));
        if (r < 0)
            return r;
        c->groups[c->n_groups] = (struct cpu_group){.key = key, .id = id};
        index = ++c->n_groups;
    }
    c->groups[index - 1].cpu_ticks += p->cpu_ticks_delta;
    return 0;
}

static int collect_groups(struct cpu_accounting *c, const struct procfs_process *processes,
                          size_t n_processes) {
    int r;

    hashmap_clear(&c->group_index);
    c->n_groups = 0;
    for (size_t i = 0; i < n_processes; i++) {
        if (processes[i].cpu_ticks_delta == 0)
            continue;
        r = add_to_group(c, &processes[i]);
        if (r < 0)
            return r;
    }
    if (c->n_groups > c->arrays_cap) {
        size_t cap = c->arrays_cap;

        r = grow_array(&c->keys, &cap, c->n_groups, sizeof(*c->keys));
        if (r >= 0) {
            cap = c->arrays_cap;
            r = grow_array(&c->ticks, &cap, c->n_groups, sizeof(*c->ticks));
        }
        if (r >= 0) {
            cap = c->arrays_cap;
            r = grow_array(&c->parts, &cap, c->n_groups, sizeof(*c->parts));
        }
        if (r < 0)
            return r;
        c->arrays_cap = cap;
    }
    for (size_t i = 0; i < c->n_groups; i++) {
        c->keys[i] = c->groups[i].key;
        c->ticks[i] = c->groups[i].cpu_ticks;
    }
    /* cpu_split() needs one more slot, for the CPU time of no workload. */
    return split_scratch_reserve(&c->split, c->n_groups + 1);
}

/* Splits one domain's delta and books it. */
static int account_domain(struct cpu_accounting *c, struct ledger_rapl *lr, uint64_t delta_uj,
                          uint64_t active, uint64_t total, uint64_t now_ns, struct ledger *ledger) {
    struct cpu_split_request req = {
        .energy_uj = delta_uj,
        .active_ticks = active,
        .total_ticks = total,
        .node_cpu_time = active,
        .policy = c->policy,
        .n = c->n_groups,
        .keys = c->keys,
        .cpu_time = c->ticks,
    };
    struct cpu_split_result res;
    int r;

    r = cpu_split(&req, &c->split, c->parts, &res);
    if (r < 0) {
        lr->unattributed_uj[UNATTR_NO_DATA] += delta_uj;
        return r == -ENOMEM ? r : 0;
    }
    lr->unattributed_uj[UNATTR_SYSTEM] += res.unattributed_active_uj;
    lr->unattributed_uj[UNATTR_IDLE] += res.unattributed_idle_uj;
    for (size_t i = 0; i < c->n_groups; i++) {
        lr->attributed_uj += c->parts[i];
        r = ledger_add_cpu_energy(ledger, &c->groups[i].id, c->parts[i], now_ns);
        if (r < 0)
            return r;
    }
    return 0;
}

int cpu_accounting_tick(struct cpu_accounting *c, const struct procfs_process *processes,
                        size_t n_processes, const char *stat_text, size_t stat_len,
                        const struct rapl_reading *readings, size_t n_readings, uint64_t now_ns,
                        struct ledger *ledger) {
    struct cpu_times times;
    uint64_t active = 0, total = 0;
    bool have_window = false;
    int r;

    if (stat_text && proc_cpu_stat_parse(stat_text, stat_len, &times) >= 0) {
        if (c->have_times) {
            cpu_times_window(&c->last_times, &times, &active, &total);
            have_window = true;
        }
        c->last_times = times;
        c->have_times = true;
    } else
        c->have_times = false;

    r = collect_groups(c, processes, n_processes);
    if (r < 0)
        return r;

    for (size_t i = 0; i < n_readings && i < CPU_MAX_COUNTERS; i++) {
        const struct rapl_reading *rd = &readings[i];
        struct energy_counter *counter = &c->counters[i];
        struct ledger_rapl *lr;
        uint64_t delta;

        if (!rd->valid)
            continue;
        if (counter->unit.den == 0)
            (void)energy_counter_init(counter, rd->modulus, rd->unit, 0);
        if (energy_counter_update(counter, rd->raw, &delta) < 0)
            continue;
        r = ledger_rapl_get(ledger, rd->package, rapl_domain_to_string(rd->domain), &lr);
        if (r < 0)
            return r;
        lr->energy_uj += delta;
        if (delta == 0)
            continue;
        if (!have_window) {
            /* No CPU-time window to split by (first scan, unreadable /proc/stat). */
            lr->unattributed_uj[UNATTR_NO_DATA] += delta;
            continue;
        }
        r = account_domain(c, lr, delta, active, total, now_ns, ledger);
        if (r < 0)
            return r;
    }
    return 0;
}
