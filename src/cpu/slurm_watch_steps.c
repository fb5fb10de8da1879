/* SPDX-License-Identifier: MIT */
/* The SLURM watch's steps: reading a step's CPU time and the rate between reads, and once a
 * step ends, its weight for the caller's tails and its exact final usage. */
#include <errno.h>
#include <string.h>

#include "clock.h"
#include "slurm_step_array.h"
#include "slurm_watch_internal.h"

struct step *slurm_watch_step_by_path(struct slurm_watch *w, const char *path) {
    for (size_t i = 0; i < w->n_steps; i++)
        if (strcmp(w->steps[i].pub.path, path) == 0)
            return &w->steps[i];
    return NULL;
}

void slurm_watch_step_read(struct step *j) {
    uint64_t u;
    int r;

    if (j->pub.gone || !j->cg)
        return;
    r = cgroup_cpu_read(j->cg, &u);
    if (r == -EMFILE || r == -ENFILE || r == -ENOMEM)
        return;
    if (r < 0) {
        j->pub.gone = true; /* the caller calls slurm_watch_step_ended(), which counts it */
        j->cg = cgroup_cpu_free(j->cg);
        return;
    }
    if (j->pub.have_usage && u >= j->pub.usage_us) {
        j->pub.rate_us = u - j->pub.usage_us;
        j->interval_ns = clock_monotonic_ns() - j->read_ns;
    }
    j->read_ns = clock_monotonic_ns();
    j->pub.usage_us = u;
    j->pub.have_usage = true;
}

/* A step found gone: its weight for the tails becomes the time it probably used since its
 * last read, its last rate over the time from that read to now (a step removed just after
 * its read left little; one removed just before the next, a whole poll's worth). */
static void step_tail_weight(struct step *j) {
    uint64_t since = clock_monotonic_ns() - j->read_ns;

    if (j->interval_ns > 0 && j->read_ns > 0)
        j->pub.rate_us = (uint64_t)((unsigned __int128)j->pub.rate_us * since / j->interval_ns);
}

/* The job directory a step's path lies in, or NULL. */
static struct watch_dir *job_of(struct slurm_watch *w, const char *step_path) {
    const char *slash = strrchr(step_path, '/');
    size_t n = slash ? (size_t)(slash - step_path) : 0;

    for (size_t i = 0; n && i < w->n_dirs; i++)
        if (w->dirs[i].level == LEVEL_JOB && strlen(w->dirs[i].path) == n &&
            memcmp(w->dirs[i].path, step_path, n) == 0)
            return &w->dirs[i];
    return NULL;
}

/* The final usage of a step whose directory is gone, exactly: the kernel keeps a removed
 * child's time in its parent, so it is the job directory's usage now less its live
 * siblings' (read now) and its removed siblings' finals. Else the step's last read stays,
 * and the caller's tails estimate the rest. On v2 this is what mends a step whose
 * "populated 0" could not be read: slurmstepd removes the step's directories right after
 * it leaves them, and the event may come after the directory is gone. */
static void step_final(struct slurm_watch *w, struct step *s) {
    struct watch_dir *job = job_of(w, s->pub.path);
    uint64_t u, sum;

    s->finalized = true;
    if (!job || !job->exact)
        return;
    job->exact = false; /* unless all is known below */
    if (cgroup_cpu_read(job->cg, &u) < 0)
        return;
    sum = job->removed_us;
    for (size_t i = 0; i < w->n_steps; i++) {
        struct step *t = &w->steps[i];

        if (t == s || job_of(w, t->pub.path) != job || (t->pub.gone && t->finalized))
            continue;
        if (!t->pub.gone)
            slurm_watch_step_read(t);
        if (t->pub.gone)
            return; /* removed too, its final not known: the two cannot be told apart */
        sum += t->pub.usage_us;
    }
    /* Never below its last poll, but the reads above are microseconds apart: a final 1 ms
     * short of the last poll is that poll; more is a job directory that does not add up. */
    if (u < sum || (s->pub.have_usage && u - sum + 1000 < s->pub.usage_us))
        return;
    if (!s->pub.have_usage || u - sum > s->pub.usage_us)
        s->pub.usage_us = u - sum;
    s->pub.have_usage = true;
    s->pub.final_exact = true;
    job->removed_us += s->pub.usage_us;
    job->exact = true;
}

void slurm_watch_step_ended(struct slurm_watch *w, struct step *j) {
    if (!j->pub.ended)
        atomic_fetch_add(&w->ended, 1);
    j->pub.ended = true;
    if (j->pub.gone && !j->finalized) {
        step_tail_weight(j);
        step_final(w, j);
    }
}

void slurm_watch_step_array(struct slurm_watch *w, struct step *s) {
    uint64_t now;

    if (s->array_tries == 0 || s->pub.gone)
        return;
    /* A poll interval between tries: the thread also wakes at every inotify event, and the
     * events of jobs that start together would spend the tries in a few milliseconds,
     * before the step's first task has exec'd. */
    now = clock_monotonic_ns();
    if (now < s->array_next_ns)
        return;
    s->array_next_ns = now + SLURM_WATCH_POLL_MS * NSEC_PER_MSEC;
    s->array_tries--;
    if (slurm_step_array(w->sys_fd, w->proc_fd, w->mount, &s->pub) >= 0)
        s->array_tries = 0;
}
