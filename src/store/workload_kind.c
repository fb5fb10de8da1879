/* SPDX-License-Identifier: MIT */
#include "workload_kind.h"

#include <string.h>

#include "escape.h"
#include "hashmap.h"
#include "macro.h"

#define MEMBER_SIZE(member) sizeof(((struct snap_identity *)0)->member)
/* omit: the label is left out of a series while empty (label_printed()). */
#define FIELD(name, member, omit)                                                                  \
    { name, offsetof(struct snap_identity, member), MEMBER_SIZE(member), sizeof(name) - 1, omit }

const struct label_field_info label_fields[_LABEL_FIELD_MAX] = {
    [LABEL_PROCESS_NAME] = FIELD("process_name", process_name, false),
    [LABEL_POD] = FIELD("pod", pod, false),
    [LABEL_NAMESPACE] = FIELD("namespace", namespace_, false),
    [LABEL_CONTAINER] = FIELD("container", container, false),
    [LABEL_POD_UID] = FIELD("pod_uid", pod_uid, false),
    [LABEL_CONTAINER_ID] = FIELD("container_id", container_id, false),
    [LABEL_JOB_ID] = FIELD("job_id", slurm_job, false),
    [LABEL_STEP] = FIELD("step", slurm_step, true),
    [LABEL_ARRAY_JOB_ID] = FIELD("array_job_id", array_job_id, true),
    [LABEL_ARRAY_TASK_ID] = FIELD("array_task_id", array_task_id, true),
    [LABEL_UNIT] = FIELD("unit", systemd_unit, false),
};

static void recognise_container(const struct workload_identity *w, char *buf, size_t size) {
    copy_cut(buf, size, w->container_id);
}

static void recognise_pod(const struct workload_identity *w, char *buf, size_t size) {
    copy_cut(buf, size, w->pod_uid);
}

static void put_u32(char *buf, size_t size, uint32_t v) {
    char digits[16], *p = digits + sizeof(digits);

    *--p = '\0';
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    copy_cut(buf, size, p);
}

/* The job id from the cgroup path or SLURM_JOB_ID, else the SLUID of the job directory. */
static void recognise_job(const struct workload_identity *w, char *buf, size_t size) {
    if (!w->slurm.job_id_valid)
        copy_cut(buf, size, w->slurm.sluid);
    else
        put_u32(buf, size, w->slurm.job_id);
}

/* An array job's element: the array's job id and the element's index. */
static void describe_job(const struct workload_identity *w, struct snap_identity *id) {
    if (!w->slurm.array_valid)
        return;
    put_u32(id->array_job_id, sizeof(id->array_job_id), w->slurm.array_job_id);
    put_u32(id->array_task_id, sizeof(id->array_task_id), w->slurm.array_task_id);
}

/* The step of a job's process, from its cgroup path (step_<s>) or SLURM_STEP_ID. */
static void recognise_step(const struct workload_identity *w, char *buf, size_t size) {
    if (w->kind == IDENTITY_SLURM_JOB && (w->slurm.job_id_valid || w->slurm.sluid[0]))
        copy_cut(buf, size, w->slurm.step);
    else
        copy_cut(buf, size, "");
}

/* The job's directory names its CPU group: the SLUID where the directory is one (Slurm
 * >= 26.05), whether or not environ gave the numeric id too, so a job found by its
 * directory (docs/SLURM.md) and by its processes is one group; else the numeric id. */
static uint64_t job_group_key(const struct workload_identity *w) {
    if (w->slurm.sluid[0])
        return hash_bytes(w->slurm.sluid, strlen(w->slurm.sluid), 4);
    if (w->slurm.job_id_valid)
        return hash_u64(((uint64_t)3 << 32) | w->slurm.job_id);
    return 0;
}

/* A step's group: its job's key mixed with the step's name. */
static uint64_t step_group_key(const struct workload_identity *w) {
    uint64_t job = job_group_key(w);

    return job ? hash_bytes(w->slurm.step, strlen(w->slurm.step), job) : 0;
}

/* A host process outside any container, pod or job, run by a systemd service: the unit
 * from its cgroup path ("0::/system.slice/foo.service"). Scopes (sessions, runtimes'
 * containers) are not services. */
static void recognise_service(const struct workload_identity *w, char *buf, size_t size) {
    size_t n = strlen(w->systemd_unit), suffix = strlen(".service");

    if (w->kind == IDENTITY_NONE && n > suffix &&
        strcmp(w->systemd_unit + n - suffix, ".service") == 0)
        copy_cut(buf, size, w->systemd_unit);
    else
        copy_cut(buf, size, "");
}

const struct workload_kind_info workload_kinds[_WORKLOAD_KIND_MAX] = {
    [WORKLOAD_CONTAINER] =
        {
            .name = "container",
            .parent = WORKLOAD_POD,
            .id = LABEL_CONTAINER_ID,
            .recognise = recognise_container,
            .labels = {LABEL_NAMESPACE, LABEL_POD, LABEL_CONTAINER, LABEL_CONTAINER_ID},
            .n_labels = 4,
            .energy_help = "Energy attributed to the container by component (gpu, cpu), in joules.",
            .active_help = "1 while the container has processes, 0 during retention.",
        },
    [WORKLOAD_POD] =
        {
            .name = "pod",
            .parent = WORKLOAD_KIND_NONE,
            .id = LABEL_POD_UID,
            .recognise = recognise_pod,
            .labels = {LABEL_NAMESPACE, LABEL_POD, LABEL_POD_UID},
            .n_labels = 3,
            .energy_help = "Energy attributed to the pod by component (gpu, cpu), in joules.",
            .active_help = "1 while the pod has processes, 0 during retention.",
        },
    [WORKLOAD_STEP] =
        {
            .name = "slurm_step",
            .parent = WORKLOAD_JOB,
            .id = LABEL_STEP,
            .id_within_parent = true,
            .recognise = recognise_step,
            .group_key = step_group_key,
            .labels = {LABEL_JOB_ID, LABEL_STEP},
            .n_labels = 2,
            .energy_help = "Energy attributed to the SLURM job step by component (gpu, cpu), "
                           "in joules; a job's steps add up to its "
                           "joulestat_slurm_job_energy_joules_total.",
            .active_help = "1 while the step has processes, 0 during retention.",
        },
    [WORKLOAD_JOB] =
        {
            .name = "slurm_job",
            .parent = WORKLOAD_KIND_NONE,
            .id = LABEL_JOB_ID,
            .recognise = recognise_job,
            .group_key = job_group_key,
            .describe = describe_job,
            .labels = {LABEL_JOB_ID, LABEL_ARRAY_JOB_ID, LABEL_ARRAY_TASK_ID},
            .n_labels = 3,
            .energy_help = "Energy attributed to the SLURM job by component (gpu, cpu), in joules.",
            .active_help = "1 while the job has processes, 0 during retention.",
        },
    [WORKLOAD_SYSTEMD_SERVICE] =
        {
            .name = "systemd_service",
            .parent = WORKLOAD_KIND_NONE,
            .id = LABEL_UNIT,
            .recognise = recognise_service,
            .labels = {LABEL_UNIT},
            .n_labels = 1,
            .energy_help = "Energy attributed to the systemd service (host processes outside "
                           "containers) by component (gpu, cpu), in joules.",
            .active_help = "1 while the service has processes, 0 during retention.",
        },
};

static char *label_slot(struct snap_identity *id, enum label_field f) {
    return (char *)id + label_fields[f].offset;
}

void labels_make_valid(struct snap_identity *id) {
    for (enum label_field f = 0; f < _LABEL_FIELD_MAX; f++)
        utf8_make_valid(label_slot(id, f), label_fields[f].size);
}

void identity_to_labels(const struct workload_identity *w, const char *comm,
                        struct snap_identity *ret) {
    struct snap_identity id = {0};

    copy_cut(id.process_name, sizeof(id.process_name), comm ? comm : "");
    for (size_t k = 0; k < _WORKLOAD_KIND_MAX; k++) {
        const struct workload_kind_info *info = &workload_kinds[k];

        info->recognise(w, label_slot(&id, info->id), label_fields[info->id].size);
        if (info->describe && label_slot(&id, info->id)[0])
            info->describe(w, &id);
    }
    labels_make_valid(&id); /* before any key is made of it */
    *ret = id;
}

const char *workload_id(enum workload_kind k, const struct snap_identity *labels) {
    return label_value(labels, workload_kinds[k].id);
}

uint64_t workload_key(enum workload_kind k, const struct snap_identity *labels) {
    const char *id = workload_id(k, labels);
    uint64_t seed = (uint64_t)k + 1;

    if (workload_kinds[k].id_within_parent) {
        const char *parent = workload_id(workload_kinds[k].parent, labels);

        seed = hash_bytes(parent, strlen(parent), seed);
    }
    return hash_bytes(id, strlen(id), seed);
}

enum workload_kind workload_kind_innermost(const struct snap_identity *labels) {
    for (size_t k = 0; k < _WORKLOAD_KIND_MAX; k++)
        if (workload_id(k, labels)[0])
            return k;
    return WORKLOAD_KIND_NONE;
}

enum workload_kind workload_kind_outermost(const struct snap_identity *labels) {
    for (size_t k = 0; k < _WORKLOAD_KIND_MAX; k++) {
        enum workload_kind parent = workload_kinds[k].parent;

        if (workload_id(k, labels)[0] &&
            (parent == WORKLOAD_KIND_NONE || !workload_id(parent, labels)[0]))
            return k;
    }
    return WORKLOAD_KIND_NONE;
}

uint64_t workload_group_key(const struct workload_identity *w) {
    for (size_t k = 0; k < _WORKLOAD_KIND_MAX; k++) {
        const struct workload_kind_info *info = &workload_kinds[k];
        char id[SNAP_LABEL_MAX];

        info->recognise(w, id, sizeof(id));
        if (!id[0])
            continue;
        return info->group_key ? info->group_key(w) : hash_bytes(id, strlen(id), k + 1);
    }
    return 0;
}

/* The fields a workload of kind k keeps: its labels and id, and its parents'. */
static unsigned kind_fields(enum workload_kind k) {
    unsigned mask = 0;

    for (; k != WORKLOAD_KIND_NONE; k = workload_kinds[k].parent) {
        mask |= 1U << workload_kinds[k].id;
        for (size_t i = 0; i < workload_kinds[k].n_labels; i++)
            mask |= 1U << workload_kinds[k].labels[i];
    }
    return mask;
}

void workload_labels_copy(enum workload_kind k, const struct snap_identity *src,
                          struct snap_identity *dst) {
    unsigned mask = kind_fields(k);

    *dst = (struct snap_identity){0};
    for (enum label_field f = 0; f < _LABEL_FIELD_MAX; f++)
        if (mask & (1U << f))
            memcpy(label_slot(dst, f), label_value(src, f), label_fields[f].size);
}

bool workload_labels_equal(enum workload_kind k, const struct snap_identity *src,
                           const struct snap_identity *dst) {
    unsigned mask = kind_fields(k);

    for (enum label_field f = 0; f < _LABEL_FIELD_MAX; f++)
        if ((mask & (1U << f)) && strcmp(label_value(src, f), label_value(dst, f)) != 0)
            return false;
    return true;
}
