/* SPDX-License-Identifier: MIT */
#include "cpu_groups.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_workload_dir.h"
#include "fileio.h"
#include "workload_kind.h"
#include "log.h"
#include "macro.h"
#include "procfs.h"

/* /proc/<pid>/cgroup is one line on v2 and a dozen on v1. */
#define PID_CGROUP_MAX (64 * 1024)

void cpu_groups_init(struct cpu_groups *g, int proc_fd, int sys_fd) {
    *g = (struct cpu_groups){.proc_fd = proc_fd, .sys_fd = sys_fd};
    hashmap_init(&g->index);
}

void cpu_groups_done(struct cpu_groups *g) {
    free(g->taken);
    free(g->exits);
    for (size_t i = 0; i < g->n; i++)
        g->v[i].cgroup = cgroup_cpu_free(g->v[i].cgroup);
    hashmap_done(&g->index);
    free(g->v);
    *g = (struct cpu_groups){.proc_fd = -1, .sys_fd = -1};
}

size_t cpu_groups_find(const struct cpu_groups *g, uint64_t key) {
    uintptr_t i = (uintptr_t)hashmap_get(&g->index, key);

    return i == 0 ? SIZE_MAX : i - 1;
}

/* Finds and opens the workload's cgroup through one of its processes. */
static void open_cgroup(struct cpu_groups *g, struct cpu_group *grp, uint32_t pid,
                        const struct workload_identity *w) {
    _cleanup_(freep) char *text = NULL;
    char path[32], dir[4096];
    size_t len;
    int r;

    if (g->proc_fd < 0 || g->sys_fd < 0)
        return;
    (void)snprintf(path, sizeof(path), "%u/cgroup", pid);
    r = read_virtual_file_at(g->proc_fd, path, PID_CGROUP_MAX, &text, &len);
    if (r >= 0)
        r = cgroup_workload_dir(text, len, w, dir, sizeof(dir));
    if (r >= 0)
        r = cgroup_cpu_open(g->sys_fd, dir, &grp->cgroup);
    if (r < 0) {
        (void)log_debug_errno(r, "cpu: pid %u: no cgroup CPU time for its workload: %m", pid);
        return;
    }
    /* The baseline: the first delta comes with the next scan. Taken after the process
     * scan, it cannot tell whether the process ran since its stat was read. */
    grp->have_usage = cgroup_cpu_read(grp->cgroup, &grp->last_usage_us) >= 0;
    grp->usage_from_scan = false;
}

int cpu_groups_add(struct cpu_groups *g, uint64_t key, const struct workload_identity *w,
                   size_t *ret_index) {
    struct cpu_group *grp;
    int r;

    r = grow_array(&g->v, &g->cap, g->n + 1, sizeof(*g->v));
    if (r < 0)
        return r;
    r = hashmap_put(&g->index, key, (void *)(uintptr_t)(g->n + 1));
    if (r < 0)
        return r;
    grp = &g->v[g->n];
    *grp = (struct cpu_group){.key = key, .watch_step = SIZE_MAX};
    identity_to_labels(w, NULL, &grp->id);
    *ret_index = g->n++;
    return 0;
}

int cpu_groups_get(struct cpu_groups *g, uint64_t key, uint32_t pid,
                   const struct workload_identity *w, bool retry, size_t *ret_index) {
    size_t i = cpu_groups_find(g, key);
    struct cpu_group *grp;
    bool created = false;
    int r;

    if (i == SIZE_MAX) {
        r = cpu_groups_add(g, key, w, &i);
        if (r < 0)
            return r;
        retry = created = true;
    }
    grp = &g->v[i];
    /* A job first named by its SLUID directory takes its numeric id once a process says
     * it (SLURM_JOB_ID in the process's environment). */
    if (w->slurm.job_id_valid && w->slurm.sluid[0] &&
        strcmp(grp->id.slurm_job, w->slurm.sluid) == 0)
        identity_to_labels(w, NULL, &grp->id);
    /* A job the watch found by its directory learns its array from a process's
     * environment. */
    if (w->slurm.array_valid && !grp->id.array_job_id[0])
        identity_to_labels(w, NULL, &grp->id);
    if (retry && !grp->cgroup)
        open_cgroup(g, grp, pid, w);
    *ret_index = i;
    return created ? 1 : 0;
}

void cpu_groups_begin(struct cpu_groups *g) {
    for (size_t i = 0; i < g->n; i++) {
        if (g->v[i].read_skipped)
            g->v[i].skipped_seen_us += g->v[i].seen_us;
        g->v[i].seen_us = 0;
        g->v[i].cgroup_delta_us = 0;
        g->v[i].cgroup_valid = false;
        g->v[i].ended = false;
        g->v[i].watch_step = SIZE_MAX;
    }
}

void cpu_groups_select_reads(struct cpu_groups *g) {
    g->read_selected = true;
}

void cpu_groups_mark_exit(struct cpu_groups *g, uint64_t key) {
    size_t i = cpu_groups_find(g, key);

    if (i != SIZE_MAX)
        g->v[i].exited = true;
}

uint64_t cpu_group_delta_since_read(const struct cpu_group *grp, uint64_t usage) {
    uint64_t delta = usage - grp->last_usage_us;

    return delta > grp->skipped_seen_us ? delta - grp->skipped_seen_us : 0;
}

/* Whether this read may leave grp out (cpu_groups_select_reads()). */
static bool may_skip(const struct cpu_groups *g, const struct cpu_group *grp) {
    return g->read_selected && grp->have_usage && !grp->exited && !grp->watched &&
           grp->watch_step == SIZE_MAX && (g->reads + grp->key) % CPU_GROUPS_FULL_READ_SCANS != 0;
}

void cpu_groups_read(struct cpu_groups *g) {
    if (g->watch)
        cpu_groups_slurm_take(g);
    for (size_t i = 0; i < g->n; i++) {
        struct cpu_group *grp = &g->v[i];
        uint64_t usage;
        int r;

        grp->read_skipped = false;
        /* Ended before any read of ours, or the watch says so (removed; or emptied and left
         * behind by Slurm, its directory still readable): its last read is the watch's. */
        if (!grp->cgroup || (grp->watch_step != SIZE_MAX && g->taken[grp->watch_step].gone)) {
            if (grp->watch_step != SIZE_MAX)
                cpu_groups_slurm_final(g, grp);
            continue;
        }
        if (may_skip(g, grp)) {
            grp->read_skipped = true;
            grp->unchanged_reads = 0;
            continue;
        }
        r = cgroup_cpu_read(grp->cgroup, &usage);
        if (r == -EMFILE || r == -ENFILE || r == -ENOMEM) {
            /* our shortage, not the cgroup's: the next read takes the delta */
            grp->read_skipped = true;
            continue;
        }
        if (r < 0 && grp->watch_step != SIZE_MAX) {
            /* Removed after the watch's copy was taken: its last read (and the root's
             * share of it) comes with the next copy, which says it is gone. */
            if (!g->taken[grp->watch_step].gone)
                continue;
            cpu_groups_slurm_final(g, grp); /* gone: its last read is the watch's */
            continue;
        }
        if (r < 0) {
            /* Removed (the workload ended), or unreadable: stop reading it. */
            (void)log_debug_errno(r, "cpu: cgroup of workload %016llx: %m; no longer read",
                                  (unsigned long long)grp->key);
            grp->cgroup = cgroup_cpu_free(grp->cgroup);
            grp->have_usage = grp->usage_from_scan = false;
            grp->unchanged_reads = grp->skipped_seen_us = 0;
            continue;
        }
        if (grp->have_usage && grp->usage_from_scan && usage == grp->last_usage_us)
            grp->unchanged_reads++;
        else
            grp->unchanged_reads = 0;
        /* A usage that went back (a recreated cgroup) is a new baseline, never negative.
         * The windows left out gave their processes what they were seen to use. */
        if (grp->have_usage && usage >= grp->last_usage_us) {
            grp->cgroup_delta_us = cpu_group_delta_since_read(grp, usage);
            grp->cgroup_valid = true;
        }
        grp->last_usage_us = usage;
        grp->have_usage = grp->usage_from_scan = true;
        grp->skipped_seen_us = 0;
        grp->exited = false;
    }
    g->read_selected = false;
    g->reads++;
    if (g->watch)
        cpu_groups_slurm_tails(g);
}

bool cpu_groups_unchanged(const struct cpu_groups *g, uint64_t key, uint64_t reads) {
    size_t i = key ? cpu_groups_find(g, key) : SIZE_MAX;

    return i != SIZE_MAX && g->v[i].cgroup && g->v[i].unchanged_reads >= reads;
}

void cpu_groups_prune(struct cpu_groups *g) {
    for (size_t i = 0; i < g->n;) {
        struct cpu_group *grp = &g->v[i];

        if (grp->n_live > 0 || grp->cgroup) {
            i++;
            continue;
        }
        (void)hashmap_remove(&g->index, grp->key);
        if (i != g->n - 1) {
            g->v[i] = g->v[g->n - 1];
            /* Replacing an existing key does not allocate. */
            (void)hashmap_put(&g->index, g->v[i].key, (void *)(uintptr_t)(i + 1));
        }
        g->n--;
    }
}

void cpu_groups_prepare(struct cpu_groups *g) {
    cpu_groups_begin(g);
    cpu_groups_read(g);
    g->prepared = true;
}

int cpu_groups_track(struct cpu_groups *g, const struct procfs_process *rows, size_t n) {
    if (!g->prepared)
        cpu_groups_prepare(g);
    for (size_t i = 0; i < n; i++) {
        const struct procfs_process *p = &rows[i];
        bool is_new = p->flags & PROCFS_PROCESS_NEW, exited = p->flags & PROCFS_PROCESS_EXITED;
        uint64_t key;
        size_t k;
        int r;

        /* Most processes slept through the scan: nothing to track, not even their key. */
        if (!exited && !is_new && p->cpu_ticks_delta == 0)
            continue;
        key = workload_group_key(p->identity);
        if (!key)
            continue; /* no workload: its CPU time is "system" */
        if (exited) {
            k = cpu_groups_find(g, key);
            if (k != SIZE_MAX && g->v[k].n_live > 0)
                g->v[k].n_live--;
            continue;
        }
        r = cpu_groups_get(g, key, p->pid, p->identity, is_new, &k);
        if (r < 0)
            return r;
        /* Created now for a process first met without its NEW flag (a failed scan lost
         * it): it is alive all the same. */
        if (is_new || r > 0)
            g->v[k].n_live++;
    }
    return 0;
}

void cpu_groups_finish(struct cpu_groups *g) {
    g->prepared = false;
    cpu_groups_prune(g);
}

bool cpu_groups_unchanged_fn(void *userdata, const struct workload_identity *identity,
                             uint64_t scans_ago) {
    const struct cpu_groups *g = userdata;

    /* A job found from the environment may run outside the job's cgroup: always read. */
    return g->prepared && !identity->slurm.from_environ &&
           cpu_groups_unchanged(g, workload_group_key(identity), scans_ago);
}
