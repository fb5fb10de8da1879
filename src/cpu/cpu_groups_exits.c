/* SPDX-License-Identifier: MIT */
/* Which workloads' cgroups the next read needs, from the exits the exec watch announced
 * (cpu_groups_select_reads()). */
#include "cpu_groups.h"

#include <errno.h>
#include <stdlib.h>

#include "exec_watch.h"
#include "procfs.h"
#include "workload_kind.h"

/* The workload of pid as the last scan or the exec watch knew it; false when neither did. */
static bool workload_of(struct procfs_scanner *scanner, struct exec_watch *watch, uint32_t pid,
                        uint64_t *ret_key) {
    const struct workload_identity *id = procfs_scanned_identity(scanner, pid);
    struct exec_record rec;

    if (id) {
        *ret_key = workload_group_key(id);
        return true;
    }
    if (exec_watch_lookup(watch, pid, &rec) < 0)
        return false;
    *ret_key = workload_group_key(&rec.identity);
    return true;
}

bool cpu_groups_place_exits(struct cpu_groups *g, const struct exec_exit *exits, size_t n,
                            cpu_groups_lookup_fn lookup, void *userdata) {
    for (size_t i = 0; i < n; i++) {
        uint64_t key;

        /* One that exited before any scan saw it was most likely where its parent is (a
         * process moved out of its parent's cgroup and gone before a scan is found by the
         * periodic read). Neither known: every cgroup is read. */
        if (!lookup(userdata, exits[i].pid, &key) && !lookup(userdata, exits[i].parent, &key))
            return false;
        if (key)
            cpu_groups_mark_exit(g, key);
    }
    cpu_groups_select_reads(g);
    return true;
}

struct sources {
    struct procfs_scanner *scanner;
    struct exec_watch *watch;
};

static bool lookup_in_sources(void *userdata, uint32_t pid, uint64_t *ret_key) {
    struct sources *s = userdata;

    return workload_of(s->scanner, s->watch, pid, ret_key);
}

int cpu_groups_select_by_exits(struct cpu_groups *g, struct procfs_scanner *scanner,
                               struct exec_watch *watch) {
    struct sources sources = {scanner, watch};
    struct exec_watch_stats st;
    int n;

    if (!procfs_uses_bpf(scanner, NULL, NULL))
        return 0; /* a listed scan may leave out processes: it needs every cgroup */
    /* Subscribed but never told of a program: a network namespace the kernel sends no
     * process events to, where no exit would be heard either. */
    exec_watch_get_stats(watch, &st);
    if (st.execs == 0)
        return 0;
    if (!g->exits) {
        g->exits = calloc(EXEC_WATCH_MAX_EXITS, sizeof(*g->exits));
        if (!g->exits)
            return -ENOMEM;
    }
    n = exec_watch_take_exits(watch, g->exits);
    if (n >= 0) /* else exits were lost: every cgroup is read */
        (void)cpu_groups_place_exits(g, g->exits, (size_t)n, lookup_in_sources, &sources);
    return 0;
}
