/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cgroup_path.h"

/*
 * Pure helpers for a /proc/<pid>/environ blob: NUL-separated "KEY=VALUE" entries as the
 * process had them at execve() (later setenv() calls are not visible); the last entry may
 * lack its NUL. An entry without '=' is skipped.
 */

/* Finds the first entry whose key is exactly `key`. Returns 0 and points *ret_value at the
 * value inside `env` (not NUL-terminated when it is the unterminated last entry; use
 * *ret_len), or -ENOENT. ret_* are written only on success. */
int environ_get(const char *env, size_t len, const char *key, const char **ret_value,
                size_t *ret_len);

/*
 * Completes a SLUID identity (slurm.needs_environ) from the process environment. The
 * blob must carry SLURM_JOB_SLUID equal to the SLUID of the path (Slurm exports both), so
 * a process cannot borrow another job's id by its environment alone (`env -u
 * SLURM_JOB_SLUID SLURM_JOB_ID=777 prog`). SLURM_JOB_ID is preferred over the legacy
 * SLURM_JOBID.
 * Returns 0 and sets slurm.job_id/job_id_valid (clearing needs_environ); -EALREADY when
 * the identity did not need it; -ENOENT without SLURM_JOB_SLUID or without
 * SLURM_JOB_ID/SLURM_JOBID; -EINVAL for a malformed job id or a SLUID that does not
 * match. *id is modified only on success.
 */
int workload_identity_apply_environ(struct workload_identity *id, const char *env, size_t len);

/*
 * The fallback for nodes where Slurm does not put jobs in cgroups (proctrack/linuxproc or
 * proctrack/pgid): the job is then only in the environment slurmstepd gave the task.
 * True when the cgroup names no workload and no Slurm role (slurmstepd.scope and /slurm are
 * the cgroup plugin's: never), and the process sits either in no systemd unit (a node
 * without systemd) or in slurmd.service, where slurmstepd and its tasks stay without the
 * cgroup plugin. Processes of any other unit (sshd, a login session, kubelet) are never read.
 */
bool workload_identity_wants_slurm_environ(const struct workload_identity *id);

/*
 * Makes `id` a Slurm job from the environment: job id from SLURM_JOB_ID (or the legacy
 * SLURM_JOBID), step from SLURM_STEP_ID when it is a decimal step number; sets
 * slurm.from_environ. The id is the process's own claim (documented in docs/IDENTITY.md).
 * Returns 0; -EALREADY when workload_identity_wants_slurm_environ() is false; -ENOENT
 * without a job id variable, or for a prolog or epilog script of slurmd
 * (SLURM_SCRIPT_CONTEXT set): not the job's work; -EINVAL for a malformed job id. *id is
 * modified only on success.
 */
int workload_identity_apply_slurm_environ(struct workload_identity *id, const char *env,
                                          size_t len);

/*
 * Adds the array of a Slurm job's process: SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID,
 * taken only when the blob's SLURM_JOB_ID (or SLURM_JOBID) is the job id id already has
 * (the path's, or the environment's), so one job's process cannot label another job.
 * Returns 0 and sets slurm.array_*; -EALREADY when id is no job with a numeric id;
 * -ESRCH when the blob has no job id variable (slurmstepd's child before its exec, the
 * extern step's sleep: no word on the job's array); -ENOENT when the job's process is in
 * no array job; -EINVAL for malformed or mismatched values. *id is modified only on
 * success.
 */
int workload_identity_apply_array_environ(struct workload_identity *id, const char *env,
                                          size_t len);
