/* SPDX-License-Identifier: MIT */
#include "slurm_step_array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_path.h"
#include "environ.h"
#include "fileio.h"
#include "macro.h"

/* The first pid in <mount><path>/<file>, or 0. */
static uint32_t first_pid(int sys_fd, const char *mount, const char *path, const char *file) {
    char rel[SLURM_WATCH_PATH_MAX + 64], buf[64];
    unsigned long long pid;

    (void)snprintf(rel, sizeof(rel), "%s%s/%s", mount, path, file);
    if (read_file_into_at(sys_fd, rel, buf, sizeof(buf)) < 0 || buf[0] < '1' || buf[0] > '9')
        return 0;
    pid = strtoull(buf, NULL, 10);
    return pid <= UINT32_MAX ? (uint32_t)pid : 0;
}

int slurm_step_array(int sys_fd, int proc_fd, const char *mount, struct slurm_watch_step *s) {
    static const char *const places[] = {"task_0/cgroup.procs", "user/task_0/cgroup.procs",
                                         "cgroup.procs"};
    struct workload_identity id;
    uint32_t pid = 0;
    char rel[32];
    _cleanup_(freep) char *env = NULL;
    size_t len;
    int r;

    for (size_t i = 0; i < ARRAY_SIZE(places) && !pid; i++)
        pid = first_pid(sys_fd, mount, s->path, places[i]);
    (void)snprintf(rel, sizeof(rel), "%u/environ", pid);
    if (!pid || read_virtual_file_at(proc_fd, rel, 256u * 1024u, &env, &len) < 0 ||
        cgroup_path_parse(s->path, strlen(s->path), &id) < 0)
        return -EAGAIN; /* no task yet, or gone */
    if (id.slurm.needs_environ)
        (void)workload_identity_apply_environ(&id, env, len);
    if (id.slurm.sluid[0]) {
        if (!id.slurm.job_id_valid)
            return -EAGAIN; /* slurmstepd's child before its exec, or not the job's task */
        s->job_id_valid = true;
        s->job_id = id.slurm.job_id;
    }
    r = workload_identity_apply_array_environ(&id, env, len);
    if (r == -ENOENT || r == -EALREADY)
        return 0; /* a task of the job, in no array */
    if (r < 0)
        return -EAGAIN; /* not the job's task (yet: slurmstepd's child before its exec) */
    s->array_valid = true;
    s->array_job_id = id.slurm.array_job_id;
    s->array_task_id = id.slurm.array_task_id;
    return 1;
}
