/* SPDX-License-Identifier: MIT */
#pragma once

#include "slurm_watch.h"

/*
 * One try at the array of a job step: the environment of the step's first task (in
 * task_0 on cgroup v1, user/task_0 on v2), read under the procfs root proc_fd; the step's
 * directory is <mount><s->path> under sys_fd. Returns 1 when s->array_* are set, 0 when
 * the task's job is in no array (no need to try again), -EAGAIN when no task could be
 * read yet, or none that speaks for the job: a reused pid, or an environment without
 * SLURM_JOB_ID (slurmstepd's child, attached to the step before it execs the job's
 * program, still has slurmstepd's; the extern step's sleep has none).
 */
int slurm_step_array(int sys_fd, int proc_fd, const char *mount, struct slurm_watch_step *s);
