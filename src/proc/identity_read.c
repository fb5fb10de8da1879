/* SPDX-License-Identifier: MIT */
#include "identity_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "environ.h"
#include "fileio.h"
#include "macro.h"

static bool is_vanished(int r) {
    return r == -ENOENT || r == -ESRCH;
}

/* Our own shortage, not the process's: no identity may be cached from it (an fd limit
 * reached once would leave the process without a workload for its whole life). */
bool identity_read_error_is_transient(int r) {
    return r == -ENOMEM || r == -EMFILE || r == -ENFILE || r == -EINTR || r == -EAGAIN;
}

/* -ESRCH and transient errors pass; other errors are counted and leave the identity as it
 * is. */
static int read_error(struct identity_read_counts *c, int r) {
    if (identity_read_error_is_transient(r))
        return r;
    if (is_vanished(r)) {
        c->vanished++;
        return -ESRCH;
    }
    c->read_errors++;
    return 0;
}

/* A job's process: its environment says whether the job is an element of an array (the
 * path has the element's own job id only). */
static bool wants_array(const struct workload_identity *id) {
    return id->kind == IDENTITY_SLURM_JOB && id->slurm.role == SLURM_ROLE_JOB;
}

/* slurmstepd on cgroup v1 is in the job's freezer directory (job level, no step) but in no
 * cpuacct one, and the step daemon of an srun step carries the job's SLURM_JOB_ID: it is
 * Slurm's, not the job's work (its time is in no step's cgroup). It runs as root: a job's
 * own program named slurmstepd (comm is the program's to choose) is still the job's. */
static bool is_slurmstepd(int pid_fd) {
    struct stat st;
    char comm[32];

    return fstat(pid_fd, &st) == 0 && st.st_uid == 0 &&
           read_file_into_at(pid_fd, "comm", comm, sizeof(comm)) >= 0 &&
           strcmp(comm, "slurmstepd\n") == 0;
}

/* The job id from the environment: where the cgroup needs it (SLUID job directories), or
 * where no Slurm cgroup exists at all (proctrack/linuxproc); and a job's array. EACCES
 * (another user's environment needs CAP_SYS_PTRACE) just leaves the process without a
 * job, or without its array. */
static int read_environ(int pid_fd, struct workload_identity *id, struct identity_read_counts *c) {
    _cleanup_(freep) char *env = NULL;
    size_t len;
    int r;

    r = read_virtual_file_at(pid_fd, "environ", IDENTITY_ENVIRON_MAX_SIZE, &env, &len);
    if (r < 0 && !id->slurm.needs_environ) {
        /* only a possible job: a process gone now is dropped by the next scan, a tree
         * without environ files (fixtures) is not an error */
        if (identity_read_error_is_transient(r))
            return r;
        if (!is_vanished(r))
            c->read_errors++;
        return 0;
    }
    if (r < 0)
        return read_error(c, r);
    c->environ_reads++;
    if (id->slurm.needs_environ)
        (void)workload_identity_apply_environ(id, env, len); /* no id: job stays SLUID-only */
    else if (workload_identity_wants_slurm_environ(id)) {
        struct workload_identity before = *id;

        /* no job variable: none */
        if (workload_identity_apply_slurm_environ(id, env, len) >= 0 && is_slurmstepd(pid_fd))
            *id = before;
    }
    (void)workload_identity_apply_array_environ(id, env, len); /* no array: none */
    return 0;
}

int identity_read_at(int pid_fd, struct workload_identity *ret, struct identity_read_counts *c) {
    _cleanup_(freep) char *text = NULL;
    struct workload_identity id = {0};
    struct identity_read_counts unused = {0};
    size_t len;
    int r;

    if (!c)
        c = &unused;
    r = read_virtual_file_at(pid_fd, "cgroup", IDENTITY_CGROUP_MAX_SIZE, &text, &len);
    if (r < 0) {
        r = read_error(c, r);
        if (r < 0)
            return r;
        *ret = id; /* unreadable (EACCES, EFBIG...): no identity */
        return 0;
    }
    c->cgroup_reads++;
    if (cgroup_file_parse(text, len, &id) < 0) {
        c->parse_errors++;
        id = (struct workload_identity){0};
    }
    if (id.kind == IDENTITY_SLURM_JOB && id.slurm.role == SLURM_ROLE_JOB && !id.slurm.step[0] &&
        is_slurmstepd(pid_fd)) {
        id.slurm = (struct slurm_identity){.role = SLURM_ROLE_INFRA};
        id.kind = IDENTITY_NONE;
    }
    if (id.slurm.needs_environ || workload_identity_wants_slurm_environ(&id) || wants_array(&id)) {
        r = read_environ(pid_fd, &id, c);
        if (identity_read_error_is_transient(r) || (r == -ESRCH && id.slurm.needs_environ))
            return r;
    }
    *ret = id;
    return 0;
}
