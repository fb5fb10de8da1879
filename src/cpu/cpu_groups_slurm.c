/* SPDX-License-Identifier: MIT */
/*
 * SLURM job steps in the CPU groups, to their last microsecond (docs/SLURM.md). A job's
 * time is its steps' (one group each; the job's series is their sum):
 *
 * - every step directory the watch knows gets a group, whether or not a scan saw one of
 *   its processes: a step that lives between two scans is read all the same, and one
 *   created while watched starts from 0, so its time before the first scan is its own;
 * - a step whose cgroup is gone when the scan reads it gets its delta up to the watch's
 *   last read (at "populated 0" on cgroup v2, the last poll on v1);
 * - on v1 the watch takes a removed step's final usage from its job directory (which
 *   keeps a removed child's time) less its siblings', when it can (slurm_watch.c);
 * - what the other steps used after their last read is still in the slurm root's usage
 *   (the kernel charges CPU time to every ancestor, and a removed child's stays there):
 *   the root's growth minus every step's delta of the window goes to the steps that ended
 *   in it without an exact final, in proportion to their estimated unread time (slurm_watch.h).
 * All of it only sets the groups' cgroup deltas: the split that uses them conserves the
 * energy whatever they are.
 */
#include <errno.h>
#include <string.h>

#include "cpu_groups.h"
#include "log.h"
#include "workload_kind.h"

void cpu_groups_set_watch(struct cpu_groups *g, struct slurm_watch *w) {
    g->watch = w;
    g->root_have = false;
}

/* The group of a step the watch reports, made when missing. */
static void adopt(struct cpu_groups *g, size_t index) {
    const struct slurm_watch_step *j = &g->taken[index];
    struct workload_identity w;
    struct cpu_group *grp;
    uint64_t key;
    size_t i;

    if (cgroup_path_parse(j->path, strlen(j->path), &w) < 0 || w.kind != IDENTITY_SLURM_JOB)
        return;
    w.slurm.array_valid = j->array_valid;
    w.slurm.array_job_id = j->array_job_id;
    w.slurm.array_task_id = j->array_task_id;
    if (j->job_id_valid && w.slurm.sluid[0]) {
        w.slurm.job_id_valid = true;
        w.slurm.job_id = j->job_id;
    }
    key = workload_group_key(&w);
    if (!key)
        return;
    i = cpu_groups_find(g, key);
    if (i == SIZE_MAX) {
        struct cgroup_cpu *cg = NULL;

        if (!j->fresh && (j->gone || !j->have_usage)) {
            (void)log_debug("slurm: step %s went before its time was read: not counted", j->path);
            return; /* nothing known of its time before it went */
        }
        /* A live step whose cgroup cannot be opened now (out of descriptors, or gone since
         * the watch's report) waits for the next take: made without it, the group would
         * end at once with the step's whole time, and be made again from 0. */
        if (!j->gone && cgroup_cpu_open(g->sys_fd, j->path, &cg) < 0)
            return;
        if (cpu_groups_add(g, key, &w, &i) < 0) {
            (void)cgroup_cpu_free(cg);
            return;
        }
        grp = &g->v[i];
        grp->cgroup = cg;
        /* Fresh: everything since 0. Else from the watch's first read. */
        grp->have_usage = j->fresh || j->have_usage;
        grp->last_usage_us = j->fresh ? 0 : j->usage_us;
        grp->usage_from_scan = false;
    }
    grp = &g->v[i];
    grp->watched = true;
    grp->watch_step = index;
    /* Named by its SLUID until now: the number the watch read names it from here on. */
    if (w.slurm.job_id_valid && w.slurm.sluid[0] && strcmp(grp->id.slurm_job, w.slurm.sluid) == 0)
        identity_to_labels(&w, NULL, &grp->id);
    if (j->array_valid && !grp->id.array_job_id[0]) {
        struct snap_identity labels;

        /* Only the array: a SLUID job's numeric id, from a process, stays. */
        identity_to_labels(&w, NULL, &labels);
        memcpy(grp->id.array_job_id, labels.array_job_id, sizeof(labels.array_job_id));
        memcpy(grp->id.array_task_id, labels.array_task_id, sizeof(labels.array_task_id));
    }
}

void cpu_groups_slurm_take(struct cpu_groups *g) {
    bool root_valid = false;
    uint64_t root = 0;
    int n;

    n = slurm_watch_take(g->watch, &g->taken, &g->taken_cap, &root_valid, &root);
    g->n_taken = n > 0 ? (size_t)n : 0;
    for (size_t i = 0; i < g->n_taken; i++)
        adopt(g, i);
    /* The root's delta is taken in cpu_groups_slurm_tails(); remember this read. */
    g->root_prev_have = g->root_have;
    g->root_prev_us = g->root_usage_us;
    g->root_have = root_valid && (!g->root_have || root >= g->root_usage_us);
    g->root_usage_us = root;
}

void cpu_groups_slurm_final(struct cpu_groups *g, struct cpu_group *grp) {
    const struct slurm_watch_step *j = &g->taken[grp->watch_step];

    if (grp->have_usage && j->have_usage && j->usage_us >= grp->last_usage_us) {
        grp->cgroup_delta_us = cpu_group_delta_since_read(grp, j->usage_us);
        grp->cgroup_valid = true;
    } else if (grp->have_usage) {
        grp->cgroup_valid = true; /* read after the watch's last read: nothing more */
    }
    grp->ended = true;
    grp->tail_weight = j->rate_us;
    grp->tail_exact = j->final_exact;
    grp->cgroup = cgroup_cpu_free(grp->cgroup);
    grp->have_usage = grp->usage_from_scan = false;
    grp->unchanged_reads = grp->skipped_seen_us = 0;
}

void cpu_groups_slurm_tails(struct cpu_groups *g) {
    uint64_t known = 0, rest, weights = 0, given = 0;
    size_t n_ended = 0, last = SIZE_MAX;

    if (!g->root_have || !g->root_prev_have || g->root_usage_us < g->root_prev_us)
        return;
    for (size_t i = 0; i < g->n; i++) {
        const struct cpu_group *grp = &g->v[i];

        if (!grp->watched)
            continue;
        if (!grp->cgroup_valid && (grp->cgroup || grp->ended)) {
            /* a step without a delta (a baseline read): the root cannot be split */
            (void)log_debug("slurm: step %s.%s has no delta: the root's rest is not split",
                            grp->id.slurm_job, grp->id.slurm_step);
            return;
        }
        known += grp->cgroup_delta_us;
        if (grp->ended && !grp->tail_exact) {
            n_ended++;
            weights += grp->tail_weight;
        }
    }
    rest = g->root_usage_us - g->root_prev_us;
    if (n_ended > 0 && rest <= known)
        (void)log_debug("slurm: root grew %llu us, its steps %llu us: no rest for %zu ended",
                        (unsigned long long)rest, (unsigned long long)known, n_ended);
    if (n_ended == 0 || rest <= known)
        return;
    rest -= known;
    for (size_t i = 0; i < g->n; i++) {
        struct cpu_group *grp = &g->v[i];
        uint64_t part;

        if (!grp->watched || !grp->ended || grp->tail_exact)
            continue;
        part = weights ? (uint64_t)((unsigned __int128)rest * grp->tail_weight / weights)
                       : rest / n_ended;
        grp->cgroup_delta_us += part;
        given += part;
        last = i;
    }
    if (last != SIZE_MAX)
        g->v[last].cgroup_delta_us += rest - given; /* the rounding, so all of it is given */
    (void)log_debug("slurm: %llu us of ended steps after their last read",
                    (unsigned long long)rest);
}
