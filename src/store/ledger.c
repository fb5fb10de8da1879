/* SPDX-License-Identifier: MIT */
#include "ledger.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger_past.h"
#include "macro.h"

void ledger_init(struct ledger *l) {
    *l = (struct ledger){0};
    hashmap_init(&l->processes);
    hashmap_init(&l->gpu_latest);
    hashmap_init(&l->workloads);
    hashmap_init(&l->cpu_processes);
    hashmap_init(&l->cpu_latest);
    hashmap_init(&l->allocations);
    hashmap_init(&l->past_workloads);
    l->workload_gen = 1;
    l->process_gen = 1;
}

static void free_process(void *value) {
    struct ledger_process *p = value;

    labels_unref(p->id);
    free(p);
}

static void free_workload(void *value) {
    struct ledger_workload *w = value;

    labels_unref(w->id);
    free(w);
}

static void free_values(struct hashmap *m, void (*free_one)(void *)) {
    void *value;

    for (size_t i = 0; hashmap_next(m, &i, NULL, &value);)
        free_one(value);
    hashmap_done(m);
}

void ledger_done(struct ledger *l) {
    free_values(&l->processes, free_process);
    hashmap_done(&l->gpu_latest);
    free_values(&l->workloads, free_workload);
    free_values(&l->cpu_processes, ledger_cpu_process_free);
    hashmap_done(&l->cpu_latest);
    free_values(&l->allocations, free);
    ledger_past_done(l);
    free(l->rapl);
    free(l->sweep_keys);
    *l = (struct ledger){0};
}

void ledger_set_labeler(struct ledger *l, ledger_labeler_fn fn, void *userdata) {
    l->labeler = fn;
    l->labeler_userdata = userdata;
}

const struct snap_identity *ledger_labels_new(const struct ledger *l,
                                              const struct snap_identity *id) {
    struct snap_identity named;

    if (!l->labeler)
        return labels_new(id);
    named = *id;
    l->labeler(l->labeler_userdata, &named);
    return labels_new(&named);
}

int ledger_labels_replace(const struct snap_identity **slot, const struct snap_identity *id) {
    const struct snap_identity *fresh = labels_new(id);

    if (!fresh)
        return -ENOMEM;
    labels_unref(*slot);
    *slot = fresh;
    return 0;
}

uint64_t ledger_process_key(unsigned gpu, uint32_t pid, uint64_t start_ticks) {
    return hash_u64(hash_u64(((uint64_t)gpu << 32) | pid) ^ start_ticks);
}

/* The key of a process's (gpu, pid) in gpu_latest. */
static uint64_t gpu_pid_slot(const struct ledger_process *p) {
    return hash_u64(((uint64_t)p->gpu << 32) | p->pid) ^ 0x7069647265757365ULL;
}

/* How far back the entries of one (gpu, pid) are looked through for one to go on from. */
#define LEDGER_REUSE_WALK_MAX 8

/* The labels a GPU process's series carry besides pid and gpu (exposition.c): its job,
 * step and unit are not among them. */
static bool same_gpu_labels(const struct snap_identity *a, const struct snap_identity *b) {
    for (size_t f = LABEL_PROCESS_NAME; f <= LABEL_CONTAINER_ID; f++)
        if (strcmp(label_value(a, f), label_value(b, f)) != 0)
            return false;
    return true;
}

/* A pid of a GPU given again to a process of the same labels (a relaunch loop, a small
 * pid_max): on /metrics both are one series, so the new entry goes on from the old one's
 * counters and the old entry, which has ended (a pid is one process's at a time, whether
 * or not a sweep has marked it inactive yet: the sweep runs at publish, seconds apart), is
 * dropped; two entries would export the same series twice. The same series, whatever the labels it
 * does not carry: two SLURM jobs' processes that differ only by job were two entries with one label
 * set (a series twice in one scrape, which Prometheus and promtool refuse). A workload's energy was
 * booked as it went, so nothing moves between jobs. */
static void take_over_reused_pid(struct ledger *l, struct ledger_process *p) {
    uint64_t slot = gpu_pid_slot(p);
    uint64_t head = (uint64_t)(uintptr_t)hashmap_get(&l->gpu_latest, slot), key = head;
    struct ledger_process *later = NULL;

    /* The entries on this (gpu, pid), newest first: not only the newest (pid 500 given to
     * "infer", "train", then "infer" again left two "infer" entries, one series twice). A
     * swept entry ends the walk. */
    for (unsigned hops = 0; key && hops < LEDGER_REUSE_WALK_MAX; hops++) {
        struct ledger_process *e = hashmap_get(&l->processes, key);

        if (!e)
            break;
        if (e != p && same_gpu_labels(e->id, p->id)) {
            p->measured_uj = e->measured_uj;
            p->estimated_uj = e->estimated_uj;
            if (later)
                later->earlier_key = e->earlier_key;
            else
                head = e->earlier_key;
            free_process(hashmap_remove(&l->processes, key));
            l->process_gen++; /* cached process pointers (gpu_accounting) may dangle now */
            break;
        }
        later = e;
        key = e->earlier_key;
    }
    p->earlier_key = head;
    /* Out of memory: a reuse goes unnoticed, as before. */
    (void)hashmap_put(&l->gpu_latest, slot, (void *)(uintptr_t)p->key);
}

int ledger_process_get(struct ledger *l, unsigned gpu, uint32_t pid, uint64_t start_ticks,
                       const struct snap_identity *id, struct ledger_process **ret) {
    uint64_t key = ledger_process_key(gpu, pid, start_ticks);
    struct ledger_process *p = hashmap_get(&l->processes, key);
    int r;

    if (p) {
        *ret = p;
        return 0;
    }
    {
        p = calloc(1, sizeof(*p));
        if (!p)
            return -ENOMEM;
        *p = (struct ledger_process){.key = key,
                                     .gpu = gpu,
                                     .pid = pid,
                                     .start_ticks = start_ticks,
                                     .id = ledger_labels_new(l, id),
                                     .gpu_instance = LEDGER_NO_INSTANCE,
                                     .compute_instance = LEDGER_NO_INSTANCE};
        r = p->id ? hashmap_put(&l->processes, key, p) : -ENOMEM;
        if (r < 0) {
            free_process(p);
            return r;
        }
        take_over_reused_pid(l, p);
    }
    *ret = p;
    return 1;
}

/* Marks a workload seen. Names (pod, namespace, container) may arrive later than the ids:
 * keep them fresh, with a new label set only when they differ. Out of memory, the old
 * names stay until the next booking. */
/* An empty name of a booking's labels takes the workload's own: the names belong to the
 * workload's ids, and a booking made from a process's bare ids (the CPU side) must not
 * take away the names another gave (the GPU side's processes carry them). */
static void keep_names(struct snap_identity *fresh, const struct snap_identity *had) {
    if (!fresh->pod[0])
        memcpy(fresh->pod, had->pod, sizeof(fresh->pod));
    if (!fresh->namespace_[0])
        memcpy(fresh->namespace_, had->namespace_, sizeof(fresh->namespace_));
    if (!fresh->container[0])
        memcpy(fresh->container, had->container, sizeof(fresh->container));
    /* A job's array, likewise: known from a process's environment, not from a group the
     * SLURM watch found by its directory alone. */
    if (!fresh->array_job_id[0] && strcmp(fresh->slurm_job, had->slurm_job) == 0) {
        memcpy(fresh->array_job_id, had->array_job_id, sizeof(fresh->array_job_id));
        memcpy(fresh->array_task_id, had->array_task_id, sizeof(fresh->array_task_id));
    }
}

/* The workload's labels from a booking's; only when they differ even so are the names
 * the labeler knows asked for (a lookup under its lock: not on every booking). */
static void workload_refresh(const struct ledger *l, struct ledger_workload *w,
                             enum workload_kind kind, const struct snap_identity *id,
                             uint64_t now_ns) {
    struct snap_identity fresh;

    workload_labels_copy(kind, id, &fresh);
    keep_names(&fresh, w->id);
    if (!workload_labels_equal(kind, &fresh, w->id)) {
        if (l->labeler)
            l->labeler(l->labeler_userdata, &fresh);
        (void)ledger_labels_replace(&w->id, &fresh);
    }
    w->active = true;
    w->ended = false;
    w->last_seen_ns = now_ns;
}

static int workload_touch(struct ledger *l, enum workload_kind kind, const struct snap_identity *id,
                          uint64_t now_ns, struct ledger_workload **ret) {
    const char *name = workload_id(kind, id);
    struct ledger_workload *w;
    uint64_t key;
    int r;

    if (name[0] == '\0') {
        *ret = NULL;
        return 0;
    }
    key = workload_key(kind, id);
    w = hashmap_get(&l->workloads, key);
    if (!w) {
        struct snap_identity labels;

        w = calloc(1, sizeof(*w));
        if (!w)
            return -ENOMEM;
        w->key = key;
        w->kind = kind;
        workload_labels_copy(kind, id, &labels);
        w->id = ledger_labels_new(l, &labels);
        r = w->id ? hashmap_put(&l->workloads, key, w) : -ENOMEM;
        if (r < 0) {
            free_workload(w);
            return r;
        }
        ledger_past_resume(l, w, now_ns);
    }
    workload_refresh(l, w, kind, id, now_ns);
    *ret = w;
    return 0;
}

int ledger_workload_restore(struct ledger *l, enum workload_kind kind,
                            const struct snap_identity *id, uint64_t gpu_uj, uint64_t cpu_uj,
                            const uint64_t *cpu_unseen_uj, uint64_t now_ns) {
    struct ledger_workload *w;
    int r = workload_touch(l, kind, id, now_ns, &w);

    if (r < 0)
        return r;
    if (!w)
        return -EINVAL;
    w->gpu_uj = gpu_uj;
    w->cpu_uj = cpu_uj;
    w->cpu_unseen_valid = cpu_unseen_uj != NULL;
    if (cpu_unseen_uj)
        memcpy(w->cpu_unseen_uj, cpu_unseen_uj, sizeof(w->cpu_unseen_uj));
    w->active = false;
    return 0;
}

static int add_to_workloads(struct ledger *l, const struct snap_identity *id, uint64_t uj, bool gpu,
                            uint64_t now_ns) {
    for (enum workload_kind k = 0; k < _WORKLOAD_KIND_MAX; k++) {
        struct ledger_workload *w;
        int r;

        r = workload_touch(l, k, id, now_ns, &w);
        if (r < 0)
            return r;
        if (!w)
            continue;
        if (gpu)
            w->gpu_uj += uj;
        else {
            w->cpu_uj += uj;
            w->cpu_seen_ns = now_ns;
        }
    }
    return 0;
}

/* Every tick books every GPU process: its workload entries are resolved once, not hashed
 * from id strings each time. A cached entry whose id no longer matches is looked up again. */
int ledger_add_gpu_energy(struct ledger *l, struct ledger_process *p, uint64_t uj, bool estimated,
                          uint64_t now_ns) {
    bool cached = p->wl_gen == l->workload_gen;

    if (estimated)
        p->estimated_uj += uj;
    else
        p->measured_uj += uj;
    p->active = true;
    p->last_seen_ns = now_ns;
    if (cached && p->wl_fresh) { /* the common tick: nothing to compare or copy */
        for (enum workload_kind k = 0; k < _WORKLOAD_KIND_MAX; k++) {
            struct ledger_workload *w = p->wl[k];

            if (!w)
                continue;
            w->active = true;
            w->last_seen_ns = now_ns;
            w->gpu_uj += uj;
        }
        return 0;
    }
    for (enum workload_kind k = 0; k < _WORKLOAD_KIND_MAX; k++) {
        struct ledger_workload *w = cached ? p->wl[k] : NULL;
        const char *name = workload_id(k, p->id);
        int r;

        if (w && w->kind == k && strcmp(workload_id(k, w->id), name) == 0 &&
            w->key == workload_key(k, p->id))
            workload_refresh(l, w, k, p->id, now_ns);
        else if (!cached || w || name[0] != '\0') {
            r = workload_touch(l, k, p->id, now_ns, &w);
            if (r < 0) {
                p->wl_gen = 0;
                return r;
            }
        }
        p->wl[k] = w;
        if (w)
            w->gpu_uj += uj;
    }
    p->wl_gen = l->workload_gen;
    p->wl_fresh = true;
    return 0;
}

int ledger_add_cpu_energy(struct ledger *l, const struct snap_identity *id, uint64_t uj,
                          uint64_t now_ns) {
    return add_to_workloads(l, id, uj, false, now_ns);
}

int ledger_add_workload_gpu_energy(struct ledger *l, const struct snap_identity *id, uint64_t uj,
                                   uint64_t now_ns) {
    return add_to_workloads(l, id, uj, true, now_ns);
}

void ledger_cpu_scan(struct ledger *l, uint64_t now_ns) {
    l->cpu_scan_ns = now_ns;
}

int ledger_add_cpu_unseen(struct ledger *l, const struct snap_identity *id, const uint64_t *uj,
                          unsigned domains, uint64_t now_ns) {
    enum workload_kind kind = workload_kind_innermost(id);
    struct ledger_workload *w;
    int r;

    if (domains >> SNAP_CPU_DOMAINS || kind == WORKLOAD_KIND_NONE)
        return -EINVAL;
    r = workload_touch(l, kind, id, now_ns, &w);
    if (r < 0)
        return r;
    if (!w)
        return -EINVAL;
    w->cpu_unseen_valid = true;
    for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++)
        if (domains & (1u << d))
            w->cpu_unseen_uj[d] += uj[d];
    w->cpu_seen_ns = now_ns;
    return 0;
}

void ledger_cpu_workload_ended(struct ledger *l, enum workload_kind kind,
                               const struct snap_identity *id) {
    struct ledger_workload *w;

    if (kind >= _WORKLOAD_KIND_MAX || !workload_id(kind, id)[0])
        return;
    w = hashmap_get(&l->workloads, workload_key(kind, id));
    if (w)
        w->ended = true;
}

struct ledger_gpu *ledger_gpu(struct ledger *l, unsigned index) {
    return index < LEDGER_MAX_GPUS ? &l->gpus[index] : NULL;
}

int ledger_rapl_get(struct ledger *l, unsigned package, const char *domain,
                    struct ledger_rapl **ret) {
    int r;

    for (size_t i = 0; i < l->n_rapl; i++)
        if (l->rapl[i].package == package && strcmp(l->rapl[i].domain, domain) == 0) {
            *ret = &l->rapl[i];
            return 0;
        }
    r = grow_array(&l->rapl, &l->rapl_cap, l->n_rapl + 1, sizeof(*l->rapl));
    if (r < 0)
        return r;
    l->rapl[l->n_rapl] = (struct ledger_rapl){.package = package};
    (void)snprintf(l->rapl[l->n_rapl].domain, sizeof(l->rapl[l->n_rapl].domain), "%s", domain);
    *ret = &l->rapl[l->n_rapl++];
    return 0;
}

/* Drops the entries of one map whose last_seen is older than the retention. */
static void sweep_map(struct ledger *l, struct hashmap *m, bool processes, uint64_t tick_start_ns,
                      uint64_t now_ns, uint64_t retention_ns) {
    size_t n = 0;
    uint64_t key;
    void *value;

    if (grow_array(&l->sweep_keys, &l->sweep_cap, m->size, sizeof(*l->sweep_keys)) < 0)
        return; /* try again next tick; nothing is lost by sweeping late */
    for (size_t i = 0; hashmap_next(m, &i, &key, &value);) {
        uint64_t last = processes ? ((struct ledger_process *)value)->last_seen_ns
                                  : ((struct ledger_workload *)value)->last_seen_ns;
        bool active = last >= tick_start_ns;

        /* CPU work is booked once per process scan, not at every tick. */
        if (!processes && l->cpu_scan_ns > 0 &&
            ((struct ledger_workload *)value)->cpu_seen_ns >= l->cpu_scan_ns)
            active = true;
        if (!processes && ((struct ledger_workload *)value)->ended)
            active = false;

        if (processes)
            ((struct ledger_process *)value)->active = active;
        else
            ((struct ledger_workload *)value)->active = active;
        if (!active && now_ns - last > retention_ns)
            l->sweep_keys[n++] = key;
    }
    for (size_t i = 0; i < n; i++) {
        void *gone = hashmap_remove(m, l->sweep_keys[i]);

        if (processes) {
            uint64_t slot = gpu_pid_slot(gone);

            if ((uint64_t)(uintptr_t)hashmap_get(&l->gpu_latest, slot) == l->sweep_keys[i])
                (void)hashmap_remove(&l->gpu_latest, slot);
            free_process(gone);
        } else {
            ledger_past_keep(l, gone, now_ns);
            free_workload(gone);
        }
    }
    if (n > 0 && processes)
        l->process_gen++; /* cached process pointers (gpu_accounting) may dangle now */
    else if (n > 0)
        l->workload_gen++; /* cached workload pointers in processes may dangle now */
}

void ledger_sweep(struct ledger *l, uint64_t tick_start_ns, uint64_t now_ns,
                  uint64_t retention_ns) {
    sweep_map(l, &l->processes, true, tick_start_ns, now_ns, retention_ns);
    sweep_map(l, &l->workloads, false, tick_start_ns, now_ns, retention_ns);
    ledger_sweep_cpu_processes(l, now_ns, retention_ns);
    ledger_sweep_allocations(l, tick_start_ns, now_ns, retention_ns);
}
