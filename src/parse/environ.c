/* SPDX-License-Identifier: MIT */
#include "environ.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

int environ_get(const char *env, size_t len, const char *key, const char **ret_value,
                size_t *ret_len) {
    size_t klen = strlen(key);
    const char *end = env + len;

    for (const char *p = env; p < end;) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        const char *e = nul ? nul : end;

        if ((size_t)(e - p) > klen && memcmp(p, key, klen) == 0 && p[klen] == '=') {
            *ret_value = p + klen + 1;
            *ret_len = (size_t)(e - p) - klen - 1;
            return 0;
        }
        if (!nul)
            break;
        p = nul + 1;
    }
    return -ENOENT;
}

/* Slurm prints job ids with %u: digits, no sign, no leading zero, 1..UINT32_MAX. */
static int parse_job_id(const char *s, size_t n, uint32_t *ret) {
    uint64_t v = 0;

    if (n == 0 || n > 10 || s[0] == '0')
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > UINT32_MAX)
        return -EINVAL;
    *ret = (uint32_t)v;
    return 0;
}

/* The job id variable, preferring SLURM_JOB_ID over the legacy SLURM_JOBID. */
static int environ_job_id(const char *env, size_t len, uint32_t *ret) {
    const char *value;
    size_t vlen;
    int r;

    r = environ_get(env, len, "SLURM_JOB_ID", &value, &vlen);
    if (r < 0)
        r = environ_get(env, len, "SLURM_JOBID", &value, &vlen);
    if (r < 0)
        return r;
    return parse_job_id(value, vlen, ret);
}

int workload_identity_apply_environ(struct workload_identity *id, const char *env, size_t len) {
    const char *value;
    size_t vlen;
    uint32_t job;
    int r;

    if (!id->slurm.needs_environ)
        return -EALREADY;

    /* Slurm exports both with SLUIDs (src/common/env.c): one without it borrows an id. */
    r = environ_get(env, len, "SLURM_JOB_SLUID", &value, &vlen);
    if (r < 0)
        return r;
    if (vlen != strlen(id->slurm.sluid) || memcmp(value, id->slurm.sluid, vlen) != 0)
        return -EINVAL;

    r = environ_job_id(env, len, &job);
    if (r < 0)
        return r;

    id->slurm.job_id = job;
    id->slurm.job_id_valid = true;
    id->slurm.needs_environ = false;
    return 0;
}

bool workload_identity_wants_slurm_environ(const struct workload_identity *id) {
    return id->kind == IDENTITY_NONE && id->slurm.role == SLURM_ROLE_NONE &&
           (id->systemd_unit[0] == '\0' || strcmp(id->systemd_unit, "slurmd.service") == 0);
}

int workload_identity_apply_slurm_environ(struct workload_identity *id, const char *env,
                                          size_t len) {
    const char *value;
    size_t vlen;
    uint32_t job, step;
    int r;

    if (!workload_identity_wants_slurm_environ(id))
        return -EALREADY;
    /* slurmd's prolog and epilog scripts carry the job's id but are not its work (and an
     * epilog that asks joulestat for the job's energy must not keep the job alive). */
    if (environ_get(env, len, "SLURM_SCRIPT_CONTEXT", &value, &vlen) >= 0)
        return -ENOENT;
    r = environ_job_id(env, len, &job);
    if (r < 0)
        return r;

    id->kind = IDENTITY_SLURM_JOB;
    id->slurm.role = SLURM_ROLE_JOB;
    id->slurm.job_id = job;
    id->slurm.job_id_valid = true;
    id->slurm.from_environ = true;
    /* A malformed step is dropped; the job stays. */
    if (environ_get(env, len, "SLURM_STEP_ID", &value, &vlen) >= 0 &&
        ((vlen == 1 && value[0] == '0') || parse_job_id(value, vlen, &step) == 0)) {
        memcpy(id->slurm.step, value, vlen);
        id->slurm.step[vlen] = '\0';
    }
    return 0;
}

/* An array index: decimal, "0" allowed, no other leading zero, at most UINT32_MAX. */
static int parse_index(const char *s, size_t n, uint32_t *ret) {
    if (n == 1 && s[0] == '0') {
        *ret = 0;
        return 0;
    }
    return parse_job_id(s, n, ret);
}

int workload_identity_apply_array_environ(struct workload_identity *id, const char *env,
                                          size_t len) {
    const char *value;
    size_t vlen;
    uint32_t job, array_job, task;
    int r;

    if (id->kind != IDENTITY_SLURM_JOB || !id->slurm.job_id_valid)
        return -EALREADY;
    r = environ_job_id(env, len, &job);
    if (r == -ENOENT)
        return -ESRCH; /* names no job: says nothing of the job's array */
    if (r < 0)
        return r;
    if (job != id->slurm.job_id)
        return -EINVAL;
    if (environ_get(env, len, "SLURM_ARRAY_JOB_ID", &value, &vlen) < 0)
        return -ENOENT;
    r = parse_job_id(value, vlen, &array_job);
    if (r < 0)
        return r;
    if (environ_get(env, len, "SLURM_ARRAY_TASK_ID", &value, &vlen) < 0)
        return -ENOENT;
    r = parse_index(value, vlen, &task);
    if (r < 0)
        return r;
    id->slurm.array_valid = true;
    id->slurm.array_job_id = array_job;
    id->slurm.array_task_id = task;
    return 0;
}
