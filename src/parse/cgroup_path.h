/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Pure parser: the text of /proc/<pid>/cgroup (or one cgroup path) -> the workload the
 * process belongs to: container (runtime + 64-hex id), Kubernetes pod (UID, QoS class),
 * SLURM job (id or SLUID, step, task) and the innermost systemd unit.
 *
 * Every string in the result has been validated (length and charset) before it was
 * accepted; a shape the parser does not know yields kind IDENTITY_NONE, never a guess.
 * docs/IDENTITY.md lists the shapes with real examples.
 */

#define CONTAINER_ID_LEN 64 /* lowercase hex */
#define POD_UID_MAX 36      /* 8-4-4-4-12 with dashes, or 32 hex for static pods */
#define SLURM_SLUID_LEN 14  /* 's' + 13 Crockford base32 characters */
#define SLURM_STEP_MAX 24   /* "4294967294+4294967294" fits */
#define SLURM_TASK_MAX 12   /* "4294967295" or "special" */
#define SYSTEMD_UNIT_MAX 128

/* What the process is, most specific first: a pod's container is IDENTITY_POD. */
enum identity_kind {
    IDENTITY_NONE = 0,  /* host process, kernel thread, unknown shape */
    IDENTITY_CONTAINER, /* a container outside Kubernetes (docker, podman) */
    IDENTITY_POD,       /* inside a Kubernetes pod (container_id may be empty: pod level) */
    IDENTITY_SLURM_JOB, /* inside a SLURM job (job id or SLUID known) */
    _IDENTITY_KIND_MAX,
};

enum container_runtime {
    RUNTIME_NONE = 0,
    RUNTIME_UNKNOWN, /* a bare 64-hex id under a pod (kubelet cgroupfs driver) */
    RUNTIME_CONTAINERD,
    RUNTIME_CRIO,
    RUNTIME_DOCKER,
    RUNTIME_PODMAN,
    _RUNTIME_MAX,
};

enum pod_qos {
    POD_QOS_UNKNOWN = 0, /* no pod, or the QoS level is hidden by a cgroup namespace */
    POD_QOS_GUARANTEED,
    POD_QOS_BURSTABLE,
    POD_QOS_BESTEFFORT,
    _POD_QOS_MAX,
};

enum slurm_role {
    SLURM_ROLE_NONE = 0, /* not under a SLURM cgroup */
    SLURM_ROLE_JOB,      /* user work: job, step or task level */
    SLURM_ROLE_STEPD,    /* slurmstepd's own leaf "<job>/step_X/slurm" (v2) */
    SLURM_ROLE_INFRA,    /* "slurmstepd.scope/system" parking or "/slurmd": no job */
    _SLURM_ROLE_MAX,
};

struct slurm_identity {
    enum slurm_role role;
    bool job_id_valid;
    uint32_t job_id;                 /* from "job_<n>", or from environ for a SLUID */
    char sluid[SLURM_SLUID_LEN + 1]; /* "" unless the job dir is a SLUID (Slurm >= 26.05) */
    bool uid_valid;                  /* v1 "uid_<n>" level */
    uint32_t uid;
    char step[SLURM_STEP_MAX + 1]; /* "0", "batch", "extern", "interactive", "TBD", "1+0" */
    char task[SLURM_TASK_MAX + 1]; /* "0", "special", or "" */
    /* The job dir is a SLUID and the numeric job id is not in the path: the caller should
     * read SLURM_JOB_ID from /proc/<pid>/environ (workload_identity_apply_environ()). */
    bool needs_environ;
    /* No Slurm cgroup at all: the job id (and step) came from SLURM_JOB_ID in the
     * process's environment (proctrack/linuxproc nodes; workload_identity_apply_slurm_environ). */
    bool from_environ;
    /* An element of an array job: SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID from the
     * environment of a process whose SLURM_JOB_ID is this job's (the path has the element's
     * own job id only). */
    bool array_valid;
    uint32_t array_job_id, array_task_id;
};

struct workload_identity {
    enum identity_kind kind;
    enum container_runtime runtime;
    char container_id[CONTAINER_ID_LEN + 1]; /* "" or 64 lowercase hex */
    char pod_uid[POD_UID_MAX + 1];           /* "" or lowercase, dashes restored */
    enum pod_qos qos;
    struct slurm_identity slurm;
    char systemd_unit[SYSTEMD_UNIT_MAX]; /* innermost "*.service"/"*.scope" or "" */
};

/*
 * Parses the whole text of /proc/<pid>/cgroup (`len` bytes, NUL not required). Every line
 * ("N:ctrl,ctrl:/path", "N:name=x:/path", "0::/path"; the path may itself contain ':' and
 * leading "/.." components from a cgroup namespace) is evaluated; the v2 line wins when it
 * names a workload, otherwise the most specific v1 line (ties: cpu/cpuacct, memory,
 * name=systemd, pids, then file order). A well-formed file without any workload gives
 * kind IDENTITY_NONE (and still the systemd unit of the preferred line).
 * Returns 0, or -EINVAL when not a single line is well formed (empty input included).
 * Malformed lines (embedded NUL, bad hierarchy id or controller list, path not starting
 * with '/') are ignored. *ret is written only on success.
 */
int cgroup_file_parse(const char *text, size_t len, struct workload_identity *ret);

/* Parses one cgroup path (starting with '/'). Returns 0 or -EINVAL (empty, no leading '/',
 * embedded NUL). *ret is written only on success. */
int cgroup_path_parse(const char *path, size_t len, struct workload_identity *ret);

/* Whether the len bytes at s are a SLUID, a SLURM job directory's name on cgroup v2 since
 * Slurm 26.05: "s" + 13 Crockford base32 characters (no I, L, O, U). */
bool cgroup_is_sluid(const char *s, size_t len);

/* Label-friendly names: "none", "container", "pod", "slurm_job"; "", "unknown",
 * "containerd", "cri-o", "docker", "podman"; "", "guaranteed", "burstable", "besteffort".
 * NULL for out-of-range values. */
const char *identity_kind_to_string(enum identity_kind k);
const char *container_runtime_to_string(enum container_runtime r);
const char *pod_qos_to_string(enum pod_qos q);
const char *slurm_role_to_string(enum slurm_role r);
