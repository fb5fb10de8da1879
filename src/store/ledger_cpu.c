/* SPDX-License-Identifier: MIT */
/* CPU energy per process series in the ledger. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "macro.h"

/* One series per (pid, labels): the label strings are what Prometheus sees, so two
 * processes with equal pid and labels must share a series (or the exposition would carry
 * a duplicate). The pod, namespace and container names are left out: the Kubernetes API
 * fills them in later from the ids, which are in the key (a series restored with its
 * names and booked again without them is the same series). */
static uint64_t cpu_process_key(uint32_t pid, const struct snap_identity *id) {
    uint64_t h = hash_u64(0x6370750000000000ULL | pid);

    for (size_t f = 0; f < _LABEL_FIELD_MAX; f++) {
        const char *v = label_value(id, f);

        if (f == LABEL_POD || f == LABEL_NAMESPACE || f == LABEL_CONTAINER)
            continue;
        h = hash_bytes(v, strnlen(v, SNAP_LABEL_MAX), h + f);
    }
    return h;
}

void ledger_cpu_process_free(void *value) {
    struct ledger_cpu_process *p = value;

    labels_unref(p->id);
    free(p);
}

/* A process that changed its name (exec, PR_SET_NAME) books to the series of its new name
 * from now on: the one of its old name ends here, or nothing would ever end it (its exit
 * is looked up by the last name). */
static void end_renamed(struct ledger *l, uint32_t pid, uint64_t start_ticks, uint64_t key,
                        uint64_t now_ns) {
    uint64_t latest = (uint64_t)(uintptr_t)hashmap_get(&l->cpu_latest, (uint64_t)pid + 1);
    struct ledger_cpu_process *old;

    if (latest == key)
        return;
    old = latest ? hashmap_get(&l->cpu_processes, latest) : NULL;
    if (old && old->pid == pid && old->start_ticks == start_ticks && old->active) {
        old->active = false;
        old->last_seen_ns = now_ns;
    }
    /* Out of memory: a rename goes unnoticed, the series stays as it was. */
    (void)hashmap_put(&l->cpu_latest, (uint64_t)pid + 1, (void *)(uintptr_t)key);
}

int ledger_add_cpu_process_energy(struct ledger *l, uint32_t pid, uint64_t start_ticks,
                                  const struct snap_identity *id, unsigned domain, uint64_t uj,
                                  uint64_t now_ns) {
    uint64_t key;
    struct ledger_cpu_process *p;
    int r;

    if (domain >= SNAP_CPU_DOMAINS)
        return -EINVAL;
    key = cpu_process_key(pid, id);
    p = hashmap_get(&l->cpu_processes, key);
    if (!p) {
        p = calloc(1, sizeof(*p));
        if (!p)
            return -ENOMEM;
        *p = (struct ledger_cpu_process){.key = key, .pid = pid, .id = ledger_labels_new(l, id)};
        r = p->id ? hashmap_put(&l->cpu_processes, key, p) : -ENOMEM;
        if (r < 0) {
            ledger_cpu_process_free(p);
            return r;
        }
    }
    end_renamed(l, pid, start_ticks, key, now_ns);
    p->start_ticks = start_ticks;
    p->energy_uj[domain] += uj;
    p->active = true;
    p->last_seen_ns = now_ns;
    return 0;
}

/* Ends p if it is the series of the process (pid, start_ticks): a newer process with the
 * same pid owns it otherwise, and it stays active. */
static void end_if_its(struct ledger_cpu_process *p, uint32_t pid, uint64_t start_ticks,
                       uint64_t now_ns) {
    if (!p || p->pid != pid || p->start_ticks != start_ticks)
        return;
    p->active = false;
    p->last_seen_ns = now_ns;
}

void ledger_cpu_process_exited(struct ledger *l, uint32_t pid, uint64_t start_ticks,
                               const struct snap_identity *id, uint64_t now_ns) {
    uint64_t latest = (uint64_t)(uintptr_t)hashmap_get(&l->cpu_latest, (uint64_t)pid + 1);

    /* The series of its exit's labels, and the one the pid booked to last: they differ when
     * it exec'd or renamed itself (setproctitle) since, or left its workload. */
    end_if_its(hashmap_get(&l->cpu_processes, cpu_process_key(pid, id)), pid, start_ticks, now_ns);
    end_if_its(latest ? hashmap_get(&l->cpu_processes, latest) : NULL, pid, start_ticks, now_ns);
}

void ledger_sweep_cpu_processes(struct ledger *l, uint64_t now_ns, uint64_t retention_ns) {
    size_t n = 0;
    uint64_t key;
    void *value;

    if (l->cpu_processes.size == 0)
        return;
    if (grow_array(&l->sweep_keys, &l->sweep_cap, l->cpu_processes.size, sizeof(*l->sweep_keys)) <
        0)
        return; /* try again next tick */
    for (size_t i = 0; hashmap_next(&l->cpu_processes, &i, &key, &value);) {
        const struct ledger_cpu_process *p = value;

        if (!p->active && now_ns - p->last_seen_ns > retention_ns)
            l->sweep_keys[n++] = key;
    }
    for (size_t i = 0; i < n; i++) {
        struct ledger_cpu_process *p = hashmap_remove(&l->cpu_processes, l->sweep_keys[i]);
        uint64_t latest = (uint64_t)(uintptr_t)hashmap_get(&l->cpu_latest, (uint64_t)p->pid + 1);

        if (latest == l->sweep_keys[i])
            (void)hashmap_remove(&l->cpu_latest, (uint64_t)p->pid + 1);
        ledger_cpu_process_free(p);
    }
}
