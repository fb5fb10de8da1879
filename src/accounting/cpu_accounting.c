/* SPDX-License-Identifier: MIT */
#include "cpu_accounting.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "counter.h"
#include "cpu_groups.h"
#include "cpu_split.h"
#include "cpu_unseen.h"
#include "workload_kind.h"
#include "macro.h"
#include "proc_cpu_stat.h"
#include "rapl_resume.h"

#define USEC_PER_SEC_U64 1000000ULL

_Static_assert(_RAPL_DOMAIN_MAX == SNAP_CPU_DOMAINS, "one ledger slot per RAPL domain");

/* Who a consumer of the split is: a process row, or the unseen part of a group. */
struct consumer {
    uint32_t row;   /* index in the scan's rows; UINT32_MAX for an unseen consumer */
    uint32_t group; /* index in groups */
};

struct cpu_accounting {
    enum idle_policy policy;
    bool process_metrics;
    unsigned long clk_tck;
    /* One per RAPL reading, in the readings' order (rapl_sample keeps it); powercap may
     * list up to 1024 zones, and a zone left out would be energy nobody sees. */
    struct energy_counter *counters;
    size_t counters_cap;
    bool have_times;
    struct cpu_times last_times;
    uint64_t last_stat_ns;     /* when last_times was read */
    uint64_t last_tick_ns;     /* the scan before this one; 0 none */
    struct cpu_groups *groups; /* borrowed for the length of one tick */

    /* Scratch reused every window: no allocation per tick once warm. */
    size_t n_consumers, consumers_cap;
    struct consumer *consumers;
    uint64_t *keys, *weights, *parts;
    size_t unseen_cap;
    struct cpu_unseen_group *unseen;
    /* Per group over the scan's domains: its CPU energy (the domains counted as cpu), and
     * its unseen part of each domain (SNAP_CPU_DOMAINS per group); booked once a scan. */
    uint64_t *group_uj, *group_unseen_uj;
    unsigned booked_domains; /* bit per domain split in this scan */
    struct split_scratch split;
};

int cpu_accounting_new(const struct cpu_accounting_options *o, struct cpu_accounting **ret) {
    struct cpu_accounting *c;

    if (!o || o->clk_tck == 0 ||
        (o->policy != IDLE_POLICY_UNATTRIBUTED && o->policy != IDLE_POLICY_EVEN &&
         o->policy != IDLE_POLICY_SHARE))
        return -EINVAL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->policy = o->policy;
    c->process_metrics = o->process_metrics;
    c->clk_tck = o->clk_tck;
    *ret = c;
    return 0;
}

struct cpu_accounting *cpu_accounting_free(struct cpu_accounting *c) {
    if (!c)
        return NULL;
    free(c->counters);
    free(c->consumers);
    free(c->keys);
    free(c->weights);
    free(c->parts);
    free(c->unseen);
    free(c->group_uj);
    free(c->group_unseen_uj);
    split_scratch_done(&c->split);
    free(c);
    return NULL;
}

static uint64_t ticks_to_us(const struct cpu_accounting *c, uint64_t ticks) {
    return (uint64_t)((unsigned __int128)ticks * USEC_PER_SEC_U64 / c->clk_tck);
}

/*
 * The node's busy CPU time in the window, in the unit of the consumers' (schedstat, cgroup
 * usage: the clock's microseconds). /proc/stat's ticks are sampled: a virtual machine whose
 * host takes its CPUs away without reporting steal time loses ticks, and under load their
 * sum fell 4-6 % short of CPUs x the window here, which gave every consumer that much more
 * energy per CPU-second. So the ticks give the busy fraction only, and the time is the
 * clock's: busy / (busy + idle) x CPUs x window. Without per-CPU lines, a CPU count that
 * changed, or no window, the ticks themselves.
 */
static uint64_t node_active_us(const struct cpu_accounting *c, const struct cpu_times *cur,
                               uint64_t active, uint64_t total, uint64_t window_ns) {
    uint64_t capacity_us = window_ns / 1000 * cur->n_cpus;

    if (total == 0 || cur->n_cpus == 0 || cur->n_cpus != c->last_times.n_cpus || window_ns == 0)
        return ticks_to_us(c, active);
    return (uint64_t)((unsigned __int128)capacity_us * active / total);
}

/* Makes room for n RAPL counters; new ones start unset (unit.den 0: set at their first
 * reading). */
static int reserve_counters(struct cpu_accounting *c, size_t n) {
    size_t cap = c->counters_cap;
    int r;

    if (n <= cap)
        return 0;
    r = grow_array(&c->counters, &cap, n, sizeof(*c->counters));
    if (r < 0)
        return r;
    memset(c->counters + c->counters_cap, 0, (cap - c->counters_cap) * sizeof(*c->counters));
    c->counters_cap = cap;
    return 0;
}

/* Makes room for n consumers (and the split's extra slot). */
static int reserve_consumers(struct cpu_accounting *c, size_t n) {
    size_t cap;
    int r;

    if (n <= c->consumers_cap)
        return 0;
    n = MAX(n, 2 * c->consumers_cap);
    cap = c->consumers_cap;
    r = grow_array(&c->consumers, &cap, n, sizeof(*c->consumers));
    if (r >= 0) {
        cap = c->consumers_cap;
        r = grow_array(&c->keys, &cap, n, sizeof(*c->keys));
    }
    if (r >= 0) {
        cap = c->consumers_cap;
        r = grow_array(&c->weights, &cap, n, sizeof(*c->weights));
    }
    if (r >= 0) {
        cap = c->consumers_cap;
        r = grow_array(&c->parts, &cap, n, sizeof(*c->parts));
    }
    if (r < 0)
        return r;
    c->consumers_cap = cap;
    /* Beyond what a split takes, the window is booked as no_data (cpu_split() refuses it),
     * not the whole scan lost. */
    return split_scratch_reserve(&c->split, MIN(n + 1, (size_t)SPLIT_MAX_CONSUMERS));
}

static int add_consumer(struct cpu_accounting *c, uint32_t row, uint32_t group, uint64_t key,
                        uint64_t weight) {
    int r = reserve_consumers(c, c->n_consumers + 1);

    if (r < 0)
        return r;
    c->consumers[c->n_consumers] = (struct consumer){.row = row, .group = group};
    c->keys[c->n_consumers] = key;
    c->weights[c->n_consumers] = weight;
    c->n_consumers++;
    return 0;
}

/* A process's key in the split: (pid, start time), so a reused pid is someone else. */
static uint64_t process_key(const struct procfs_process *p) {
    return hash_u64(hash_u64(p->pid) ^ p->starttime);
}

/* An exited process is out of any workload now: its CPU series, if it had one, ends. */
static void process_exited(const struct cpu_accounting *c, const struct procfs_process *p,
                           uint64_t now_ns, struct ledger *ledger) {
    struct snap_identity id;

    if (!c->process_metrics || !p->identity)
        return;
    identity_to_labels(p->identity, p->comm, &id);
    ledger_cpu_process_exited(ledger, p->pid, p->starttime, &id, now_ns);
}

void cpu_accounting_exits(const struct cpu_accounting *c, const struct procfs_process *rows,
                          size_t n_rows, uint64_t now_ns, struct ledger *ledger) {
    for (size_t i = 0; i < n_rows; i++)
        if (rows[i].flags & PROCFS_PROCESS_EXITED)
            process_exited(c, &rows[i], now_ns, ledger);
}

/* The process consumers, and the exited processes' CPU series. The groups of their
 * workloads exist already (cpu_groups_track()). */
static int collect_processes(struct cpu_accounting *c, const struct procfs_process *rows,
                             size_t n_rows, uint64_t now_ns, struct ledger *ledger,
                             uint64_t *ret_all_seen_us) {
    uint64_t all_seen = 0;
    int r;

    for (size_t i = 0; i < n_rows && i < UINT32_MAX; i++) {
        const struct procfs_process *p = &rows[i];
        uint64_t key, us;
        size_t g;

        if (p->flags & PROCFS_PROCESS_EXITED) {
            process_exited(c, p, now_ns, ledger);
            continue;
        }
        if (p->cpu_ticks_delta == 0)
            continue;
        us = ticks_to_us(c, p->cpu_ticks_delta);
        all_seen += us;
        key = workload_group_key(p->identity);
        g = key ? cpu_groups_find(c->groups, key) : SIZE_MAX;
        if (g == SIZE_MAX)
            continue; /* no workload: its CPU time is "system" */
        c->groups->v[g].seen_us += us;
        r = add_consumer(c, (uint32_t)i, (uint32_t)g, process_key(p), us);
        if (r < 0)
            return r;
    }
    *ret_all_seen_us = all_seen;
    return 0;
}

/* The unseen consumers: cgroup CPU time beyond the seen processes', clamped. */
static int collect_unseen(struct cpu_accounting *c, uint64_t node_active_us, uint64_t all_seen_us) {
    size_t n = c->groups->n, cap = c->unseen_cap;
    int r;

    if (n > c->unseen_cap) {
        r = grow_array(&c->unseen, &cap, n, sizeof(*c->unseen));
        if (r >= 0) {
            cap = c->unseen_cap;
            r = grow_array(&c->group_uj, &cap, n, sizeof(*c->group_uj));
        }
        if (r >= 0) {
            cap = c->unseen_cap;
            r = grow_array(&c->group_unseen_uj, &cap, n,
                           SNAP_CPU_DOMAINS * sizeof(*c->group_unseen_uj));
        }
        if (r < 0)
            return r;
        c->unseen_cap = cap;
    }
    for (size_t g = 0; g < n; g++)
        c->unseen[g] = (struct cpu_unseen_group){
            .seen_us = c->groups->v[g].seen_us,
            .cgroup_delta_us = c->groups->v[g].cgroup_delta_us,
            .cgroup_valid = c->groups->v[g].cgroup_valid,
        };
    (void)cpu_unseen_compute(c->unseen, n, node_active_us, all_seen_us);
    for (size_t g = 0; g < n; g++) {
        if (c->unseen[g].unseen_us == 0)
            continue;
        r = add_consumer(c, UINT32_MAX, (uint32_t)g,
                         hash_u64(c->groups->v[g].key ^ 0x756e7365656eULL), c->unseen[g].unseen_us);
        if (r < 0)
            return r;
    }
    return 0;
}

/* The domains whose sum is a workload's component="cpu": they do not overlap. */
static bool counts_as_cpu(enum rapl_domain d) {
    return d == RAPL_DOMAIN_PACKAGE || d == RAPL_DOMAIN_DRAM;
}

/* Books the parts of one domain to the processes; the workloads' parts wait for
 * book_groups(), once a scan. A part that cannot be booked (out of memory), and those
 * after it, are booked as no data: counted, never lost. */
static int book_domain(struct cpu_accounting *c, const struct procfs_process *rows,
                       enum rapl_domain domain, struct ledger_rapl *lr, uint64_t now_ns,
                       struct ledger *ledger) {
    unsigned d = (unsigned)domain;
    int r;

    c->booked_domains |= 1u << d;
    for (size_t i = 0; i < c->n_consumers; i++) {
        const struct consumer *k = &c->consumers[i];
        const struct procfs_process *p;
        struct snap_identity id;

        if (counts_as_cpu(domain))
            c->group_uj[k->group] += c->parts[i];
        if (k->row == UINT32_MAX)
            c->group_unseen_uj[k->group * SNAP_CPU_DOMAINS + d] += c->parts[i];
        if (k->row == UINT32_MAX || !c->process_metrics)
            continue;
        p = &rows[k->row];
        identity_to_labels(p->identity, p->comm, &id);
        r = ledger_add_cpu_process_energy(ledger, p->pid, p->starttime, &id, d, c->parts[i],
                                          now_ns);
        if (r < 0) {
            if (counts_as_cpu(domain))
                c->group_uj[k->group] -= c->parts[i];
            for (size_t j = i; j < c->n_consumers; j++)
                lr->unattributed_uj[UNATTR_NO_DATA] += c->parts[j];
            return r;
        }
    }
    return 0;
}

/* Splits one domain's delta and books it. */
static int account_domain(struct cpu_accounting *c, const struct procfs_process *rows,
                          const struct rapl_reading *rd, struct ledger_rapl *lr, uint64_t delta_uj,
                          uint64_t active, uint64_t total, uint64_t node_active_us, uint64_t now_ns,
                          struct ledger *ledger) {
    struct cpu_split_request req = {
        .energy_uj = delta_uj,
        .active_ticks = active,
        .total_ticks = total,
        .node_cpu_time = node_active_us,
        .policy = c->policy,
        .n = c->n_consumers,
        .keys = c->keys,
        .cpu_time = c->weights,
    };
    struct cpu_split_result res;
    int r;

    r = split_scratch_reserve(&c->split, c->n_consumers + 1);
    if (r >= 0)
        r = cpu_split(&req, &c->split, c->parts, &res);
    if (r < 0) {
        lr->unattributed_uj[UNATTR_NO_DATA] += delta_uj;
        return 0;
    }
    lr->unattributed_uj[UNATTR_SYSTEM] += res.unattributed_active_uj;
    lr->unattributed_uj[UNATTR_IDLE] += res.unattributed_idle_uj;
    return book_domain(c, rows, rd->domain, lr, now_ns, ledger);
}

static void clear_groups(struct cpu_accounting *c) {
    size_t n = c->groups->n;

    c->booked_domains = 0;
    if (n == 0) /* the arrays may not exist yet */
        return;
    memset(c->group_uj, 0, n * sizeof(*c->group_uj));
    memset(c->group_unseen_uj, 0, n * SNAP_CPU_DOMAINS * sizeof(*c->group_unseen_uj));
}

/* Each workload's CPU energy of the scan, and its unseen series of each domain split.
 * Workloads with live processes or a cgroup stay active even in windows without CPU. Out
 * of memory for one group, the others are still booked; returns the first error. */
static int book_groups(struct cpu_accounting *c, uint64_t now_ns, struct ledger *ledger) {
    int ret = 0;

    for (size_t g = 0; g < c->groups->n; g++) {
        const struct cpu_group *grp = &c->groups->v[g];
        int r;

        /* Gone in this scan (pruned after it), unless the SLURM watch saw it end: a step
         * that ran has its series, even with 0 J. */
        if (grp->n_live > 0 || grp->cgroup || grp->ended || c->group_uj[g] > 0) {
            r = ledger_add_cpu_energy(ledger, &grp->id, c->group_uj[g], now_ns);
            if (r < 0 && ret == 0)
                ret = r;
        }
        /* Workloads whose cgroup is read carry an unseen series (0 until it matters). */
        if (c->booked_domains && (grp->cgroup || c->unseen[g].unseen_us > 0)) {
            r = ledger_add_cpu_unseen(ledger, &grp->id, &c->group_unseen_uj[g * SNAP_CPU_DOMAINS],
                                      c->booked_domains, now_ns);
            if (r < 0 && ret == 0)
                ret = r;
        }
    }
    return ret;
}

/* Whether another group inside the same workload of kind parent as group g (another step
 * of g's job) is still running. */
static bool parent_goes_on(const struct cpu_groups *groups, size_t g, enum workload_kind parent) {
    const char *id = workload_id(parent, &groups->v[g].id);

    for (size_t i = 0; i < groups->n; i++) {
        const struct cpu_group *o = &groups->v[i];

        /* A followed step lives while its cgroup does (its processes are counted out
         * only at the scan after they exit); another group while it has processes. */
        bool alive = o->watched ? o->cgroup != NULL : (o->n_live > 0 || o->cgroup);

        if (i != g && !o->ended && alive && strcmp(workload_id(parent, &o->id), id) == 0)
            return true;
    }
    return false;
}

/* Workloads whose cgroup went in this window have all their CPU time now (a process the
 * scans still count, slurmstepd on its way out, is no longer in the cgroup): the group's
 * own (a job step), and the one it is part of (its job) once no other part is left. */
static void mark_ended(const struct cpu_groups *groups, struct ledger *ledger) {
    for (size_t g = 0; g < groups->n; g++) {
        const struct cpu_group *grp = &groups->v[g];
        enum workload_kind k = workload_kind_innermost(&grp->id), parent;

        if (!grp->ended || k == WORKLOAD_KIND_NONE)
            continue;
        ledger_cpu_workload_ended(ledger, k, &grp->id);
        parent = workload_kinds[k].parent;
        if (parent != WORKLOAD_KIND_NONE && !parent_goes_on(groups, g, parent))
            ledger_cpu_workload_ended(ledger, parent, &grp->id);
    }
}

void cpu_accounting_rapl_reopened(struct cpu_accounting *c, struct ledger *ledger) {
    if (c->counters_cap > 0)
        memset(c->counters, 0, c->counters_cap * sizeof(*c->counters));
    for (size_t i = 0; i < ledger->n_rapl; i++) {
        struct ledger_rapl *lr = &ledger->rapl[i];

        lr->reopened |= lr->raw_valid & ~lr->restored; /* a restored die's is downtime */
        lr->restored |= lr->raw_valid;
    }
}

int cpu_accounting_tick(struct cpu_accounting *c, struct cpu_groups *groups,
                        const struct procfs_process *processes, size_t n_processes,
                        const struct cpu_node_reading *node, uint64_t now_ns,
                        struct ledger *ledger) {
    const struct rapl_reading *readings = node->rapl;
    size_t n_readings = node->n_rapl;
    uint64_t window_start_ns = c->last_tick_ns;
    struct cpu_times times;
    uint64_t active = 0, total = 0, all_seen_us = 0, node_active = 0;
    bool have_window = false;
    int r, ret = 0;

    /* Before anything moves: out of memory here, every counter keeps its energy for the
     * next scan. */
    r = reserve_counters(c, n_readings);
    if (r < 0)
        return r;
    if (node->stat_text && proc_cpu_stat_parse(node->stat_text, node->stat_len, &times) >= 0) {
        if (c->have_times) {
            cpu_times_window(&c->last_times, &times, &active, &total);
            node_active = node_active_us(
                c, &times, active, total,
                node->stat_ns > c->last_stat_ns ? node->stat_ns - c->last_stat_ns : 0);
            have_window = true;
        }
        /* Moved on even if the collection below runs out of memory: the processes' and
         * groups' times move on there too, so the next window's shares stay of one window. */
        c->last_times = times;
        c->last_stat_ns = node->stat_ns;
        c->have_times = true;
    } else
        c->have_times = false;

    ledger_cpu_scan(ledger, now_ns);
    c->n_consumers = 0;
    c->groups = groups;
    r = collect_processes(c, processes, n_processes, now_ns, ledger, &all_seen_us);
    if (r < 0)
        return r;
    r = collect_unseen(c, node_active, all_seen_us);
    if (r < 0)
        return r;
    clear_groups(c);

    for (size_t i = 0; i < n_readings; i++) {
        const struct rapl_reading *rd = &readings[i];
        struct energy_counter *counter = &c->counters[i];
        struct ledger_rapl *lr;
        bool downtime = false, reopened = false, missed = false, implausible;
        uint64_t delta;

        if (!rd->valid || (unsigned)rd->domain >= SNAP_CPU_DOMAINS)
            continue;
        r = ledger_rapl_get(ledger, rd->package, rapl_domain_to_string(rd->domain), &lr);
        if (r < 0) { /* not read: the counter keeps it for the next scan */
            ret = ret < 0 ? ret : r;
            continue;
        }
        if (counter->unit.den == 0) {
            uint32_t bit = rd->die < LEDGER_RAPL_MAX_DIES ? 1u << rd->die : 0;

            reopened = lr->reopened & bit;
            lr->reopened &= ~bit;
            (void)energy_counter_init(counter, rd->modulus, rd->unit, 0);
            downtime = rapl_resume(counter, lr, rd->die, now_ns);
        } else {
            (void)rapl_gap_unknown(counter, lr, rd->die, now_ns);
            missed = rapl_missed_a_scan(lr, rd->die, window_start_ns);
        }
        if (energy_counter_update(counter, rd->raw, &delta) < 0)
            continue;
        implausible = rapl_implausible(lr, rd->die, now_ns, delta);
        rapl_keep_raw(lr, rd, now_ns);
        if (implausible)
            continue; /* its time is of unknown energy */
        lr->energy_uj += delta;
        if (delta == 0)
            continue;
        if (downtime) {
            /* Drawn while joulestat was not running, or not reading the counter: nobody's
             * that it can know. */
            lr->unattributed_uj[reopened ? UNATTR_NO_DATA : UNATTR_DOWNTIME] += delta;
            continue;
        }
        if (!have_window || missed) {
            /* No CPU-time window to split by (first scan, unreadable /proc/stat), or the
             * counter did not read at the scan before: what it moved since was drawn in
             * windows it did not see, and one window's CPU time cannot say by whom. */
            lr->unattributed_uj[UNATTR_NO_DATA] += delta;
            continue;
        }
        /* A domain that failed is booked as no data; the others and the workloads' parts
         * go on, so nothing split is lost. */
        r = account_domain(c, processes, rd, lr, delta, active, total, node_active, now_ns, ledger);
        if (r < 0 && ret == 0)
            ret = r;
    }
    c->last_tick_ns = now_ns;
    r = book_groups(c, now_ns, ledger);
    /* Even when a booking failed: the SLURM watch says a step ended only once. */
    mark_ended(groups, ledger);
    return r < 0 ? r : ret;
}
