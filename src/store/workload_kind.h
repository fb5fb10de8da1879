/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cgroup_path.h"

/*
 * Workload kinds as a table: one entry per kind of workload a process can belong to
 * (container, pod, SLURM job, ...). The entry says how the kind is recognised from what
 * the cgroup parser and the environment found about a process (struct workload_identity),
 * which labels its series carry and what its exposition families are called. Identity,
 * the ledger, the snapshot, the exposition and `joulestat ps` all walk this table; none of
 * them names a kind. Adding a kind is: a value below, its label field if it brings one,
 * and its entry in workload_kind.c.
 */

#define SNAP_LABEL_MAX 128
#define SNAP_ID_MAX 80

/* A process's or workload's labels. Each slot is sized by what can fill it: longer values
 * are cut, never overflow. */
struct snap_identity {
    char process_name[64]; /* comm: 15 characters, kernel threads' full names up to 63 */
    char pod[SNAP_LABEL_MAX];
    char namespace_[64]; /* Kubernetes namespace and container names are DNS labels: <= 63 */
    char container[64];
    char pod_uid[40];                    /* 36 with dashes, 32 hex for static pods */
    char container_id[72];               /* 64 hex */
    char slurm_job[32];                  /* decimal job id or a 14-character SLUID */
    char slurm_step[SLURM_STEP_MAX + 1]; /* "0", "batch", "extern", "interactive", "1+0" */
    char array_job_id[12];               /* decimal, an array job's elements only */
    char array_task_id[12];
    char systemd_unit[SYSTEMD_UNIT_MAX]; /* a service outside any container: "foo.service" */
};

/* The fields of struct snap_identity, in the order the CPU series print them. */
enum label_field {
    LABEL_PROCESS_NAME,
    LABEL_POD,
    LABEL_NAMESPACE,
    LABEL_CONTAINER,
    LABEL_POD_UID,
    LABEL_CONTAINER_ID,
    LABEL_JOB_ID,
    LABEL_STEP,
    LABEL_ARRAY_JOB_ID,
    LABEL_ARRAY_TASK_ID,
    LABEL_UNIT,
    _LABEL_FIELD_MAX,
};

struct label_field_info {
    const char *label; /* the series label name */
    size_t offset;     /* of the value in struct snap_identity */
    size_t size;
    size_t label_len; /* strlen(label), for a render's ~40 000 label names */
    /* Left out of a series when empty (labels added later, so the series that existed
     * before them keep their label sets). */
    bool omit_empty;
};

extern const struct label_field_info label_fields[_LABEL_FIELD_MAX];

static inline const char *label_value(const struct snap_identity *id, enum label_field f) {
    return (const char *)id + label_fields[f].offset;
}

/* Whether a series prints field f of id (an omit_empty field only when it is set). */
static inline bool label_printed(const struct snap_identity *id, enum label_field f) {
    return !label_fields[f].omit_empty || label_value(id, f)[0] != '\0';
}

enum workload_kind {
    WORKLOAD_CONTAINER,
    WORKLOAD_POD,
    WORKLOAD_STEP,
    WORKLOAD_JOB,
    WORKLOAD_SYSTEMD_SERVICE,
    _WORKLOAD_KIND_MAX,
};

#define WORKLOAD_KIND_NONE _WORKLOAD_KIND_MAX
#define WORKLOAD_LABELS_MAX 4

struct workload_kind_info {
    /* "container": what `joulestat ps` calls it, and the stem of its families
     * joulestat_<name>_energy_joules_total and joulestat_<name>_active. */
    const char *name;
    /* The kind a workload of this kind lies in and whose labels it carries too (a
     * container in a pod), or WORKLOAD_KIND_NONE. A kind comes before its parent, and a
     * parent has no parent of its own. */
    enum workload_kind parent;
    /* The label that names one workload of the kind ("" when a process is in none). */
    enum label_field id;
    /* The id names the workload only within its parent (a step "batch" of each job): its
     * key mixes in the parent's id. */
    bool id_within_parent;
    /* Recognition: writes the id of the workload of this kind that a process with cgroup
     * and environment identity w belongs to into buf (size bytes, cut to fit), or "". */
    void (*recognise)(const struct workload_identity *w, char *buf, size_t size);
    /* The key of the workload's CPU group; NULL: a hash of the id and the kind. */
    uint64_t (*group_key)(const struct workload_identity *w);
    /* Fills the label fields of the kind other than its id from w (the array of a job), or
     * NULL. */
    void (*describe)(const struct workload_identity *w, struct snap_identity *id);
    /* The labels of the kind's series, in order. */
    enum label_field labels[WORKLOAD_LABELS_MAX];
    size_t n_labels;
    const char *energy_help;
    const char *active_help;
};

extern const struct workload_kind_info workload_kinds[_WORKLOAD_KIND_MAX];

/* The labels of a process: its name (comm, may be NULL) and the id of every workload kind
 * that recognises it. Pod, namespace and container names stay empty until the Kubernetes
 * API fills them. */
/* Every label value of id made valid UTF-8 (utf8_make_valid()): what the exposition prints
 * is what keys and compares. */
void labels_make_valid(struct snap_identity *id);

void identity_to_labels(const struct workload_identity *w, const char *comm,
                        struct snap_identity *ret);

/* The key of the workload of kind k that labels name (its id, and its parent's id where the
 * id names it only within its parent). */
uint64_t workload_key(enum workload_kind k, const struct snap_identity *labels);

/* The id of the workload of kind k that labels name, "" when none. */
const char *workload_id(enum workload_kind k, const struct snap_identity *labels);

/* The most specific workload the labels name (the first kind in table order with an id),
 * or WORKLOAD_KIND_NONE. */
enum workload_kind workload_kind_innermost(const struct snap_identity *labels);

/* What a process is, for `ps`: the outermost workload it belongs to (a pod rather than
 * the pod's container), or WORKLOAD_KIND_NONE. */
enum workload_kind workload_kind_outermost(const struct snap_identity *labels);

/* The key of the CPU group (the workload whose cgroup CPU time is read) of a process with
 * identity w: its innermost workload's. 0 for a process of no workload ("system"). */
uint64_t workload_group_key(const struct workload_identity *w);

/* The labels a workload of kind k keeps: its own and its parents' fields of src, the rest
 * empty. */
void workload_labels_copy(enum workload_kind k, const struct snap_identity *src,
                          struct snap_identity *dst);
/* Whether dst holds what workload_labels_copy() would write from src. */
bool workload_labels_equal(enum workload_kind k, const struct snap_identity *src,
                           const struct snap_identity *dst);

/* Orders workloads of one kind: by its parent's id, then by its own (inline: it is the
 * comparison of the snapshot's sort). */
static inline int workload_labels_compare(enum workload_kind k, const struct snap_identity *a,
                                          const struct snap_identity *b) {
    const struct workload_kind_info *info = &workload_kinds[k];
    int c;

    if (info->parent != WORKLOAD_KIND_NONE) {
        enum label_field p = workload_kinds[info->parent].id;

        c = strcmp(label_value(a, p), label_value(b, p));
        if (c != 0)
            return c;
    }
    return strcmp(label_value(a, info->id), label_value(b, info->id));
}
