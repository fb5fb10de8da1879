/* SPDX-License-Identifier: MIT */
#include "exposition.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "promtext.h"
#include "rapl_units.h"

#ifndef JOULESTAT_VERSION
#define JOULESTAT_VERSION "unknown"
#endif

struct family {
    const char *prefix; /* "joulestat_" or the per-process prefix */
    const char *suffix;
    const char *type;
    const char *help;
};

/* HELP/TYPE are written lazily at a family's first series, so an empty family (no GPUs,
 * no RAPL) leaves nothing behind and each family appears exactly once. */
struct render {
    struct strbuf *out;
    const struct family *fam;
    bool header_done;
    size_t series;
};

static void family_begin(struct render *r, const struct family *f) {
    r->fam = f;
    r->header_done = false;
}

static void put_name(struct render *r) {
    strbuf_puts(r->out, r->fam->prefix);
    strbuf_puts(r->out, r->fam->suffix);
}

static void series_begin(struct render *r) {
    if (!r->header_done) {
        strbuf_append(r->out, "# HELP ", 7);
        put_name(r);
        strbuf_putc(r->out, ' ');
        strbuf_puts(r->out, r->fam->help);
        strbuf_append(r->out, "\n# TYPE ", 8);
        put_name(r);
        strbuf_putc(r->out, ' ');
        strbuf_puts(r->out, r->fam->type);
        strbuf_putc(r->out, '\n');
        r->header_done = true;
    }
    put_name(r);
    r->series++;
}

/* name="value" with a leading comma unless it is the first label. */
static void put_label(struct strbuf *sb, bool first, const char *name, const char *value,
                      size_t max) {
    if (!first)
        strbuf_putc(sb, ',');
    strbuf_puts(sb, name);
    strbuf_append(sb, "=\"", 2);
    promtext_put_label_value(sb, value, max);
    strbuf_putc(sb, '"');
}

static void put_label_u64(struct strbuf *sb, bool first, const char *name, uint64_t value) {
    if (!first)
        strbuf_putc(sb, ',');
    strbuf_puts(sb, name);
    strbuf_append(sb, "=\"", 2);
    strbuf_put_u64(sb, value);
    strbuf_putc(sb, '"');
}

#define PUT_LABEL(sb, first, name, field) put_label(sb, first, name, field, sizeof(field))

static void end_u64(struct render *r, uint64_t v) {
    strbuf_append(r->out, "} ", 2);
    strbuf_put_u64(r->out, v);
    strbuf_putc(r->out, '\n');
}

static void end_micro(struct render *r, uint64_t micro) {
    strbuf_append(r->out, "} ", 2);
    strbuf_put_micro(r->out, micro);
    strbuf_putc(r->out, '\n');
}

static void end_double(struct render *r, double v) {
    strbuf_append(r->out, "} ", 2);
    promtext_put_double(r->out, v);
    strbuf_putc(r->out, '\n');
}

/* A series without labels. */
static void plain_series_double(struct render *r, const struct family *f, double v) {
    family_begin(r, f);
    series_begin(r);
    strbuf_putc(r->out, ' ');
    promtext_put_double(r->out, v);
    strbuf_putc(r->out, '\n');
}

/* ---- per process ------------------------------------------------------------------- */

/*
 * Each process's label set is escaped once into one scratch buffer and copied into the
 * six families, so a render allocates twice, not per series.
 */
static void put_process_labels(struct strbuf *sb, const struct snap_gpu_process *p, bool compat) {
    put_label_u64(sb, true, "pid", p->pid);
    put_label_u64(sb, false, "gpu", p->gpu);
    PUT_LABEL(sb, false, "process_name", p->id.process_name);
    if (compat) {
        /* my-gpu-exporter's exporter.go: exported_ names (the DCGM convention), no pod_uid. */
        PUT_LABEL(sb, false, "exported_pod", p->id.pod);
        PUT_LABEL(sb, false, "exported_namespace", p->id.namespace_);
        PUT_LABEL(sb, false, "exported_container", p->id.container);
    } else {
        PUT_LABEL(sb, false, "pod", p->id.pod);
        PUT_LABEL(sb, false, "namespace", p->id.namespace_);
        PUT_LABEL(sb, false, "container", p->id.container);
        PUT_LABEL(sb, false, "pod_uid", p->id.pod_uid);
    }
    PUT_LABEL(sb, false, "container_id", p->id.container_id);
}

enum process_value {
    PV_SM_UTIL,
    PV_MEM_UTIL,
    PV_MEM_USED,
    PV_START_TIME,
    PV_ACTIVE,
};

static const struct {
    const char *suffix;
    const char *help;
    enum process_value value;
} process_gauges[] = {
    {"_sm_utilization_ratio", "SM utilization of the process in the last window (0-1).",
     PV_SM_UTIL},
    {"_memory_utilization_ratio", "Memory bandwidth utilization of the process (0-1).",
     PV_MEM_UTIL},
    {"_memory_used_bytes", "GPU memory used by the process in bytes.", PV_MEM_USED},
    {"_start_time_seconds", "Process start time in seconds since the Unix epoch.", PV_START_TIME},
    {"_active", "1 while the process runs, 0 after it exited (kept for the retention time).",
     PV_ACTIVE},
};

static void process_gauge(struct render *r, const struct snap_gpu_process *p, enum process_value v,
                          const char *labels, size_t len) {
    double d;

    switch (v) {
    case PV_SM_UTIL:
    case PV_MEM_UTIL:
        d = v == PV_SM_UTIL ? p->sm_util_ratio : p->mem_util_ratio;
        if (!p->util_valid || !isfinite(d))
            return;
        break;
    case PV_MEM_USED:
        if (!p->memory_valid)
            return;
        series_begin(r);
        strbuf_putc(r->out, '{');
        strbuf_append(r->out, labels, len);
        end_u64(r, p->memory_used_bytes);
        return;
    case PV_START_TIME:
        d = p->start_time_seconds;
        if (!isfinite(d) || d <= 0)
            return;
        break;
    case PV_ACTIVE:
    default:
        d = p->active ? 1 : 0;
        break;
    }
    series_begin(r);
    strbuf_putc(r->out, '{');
    strbuf_append(r->out, labels, len);
    end_double(r, d);
}

static int render_processes(struct render *r, const struct snapshot *s, const char *prefix,
                            bool compat) {
    _cleanup_(freep) size_t *off = NULL;
    struct strbuf lbl;
    struct family f;
    size_t n = s->n_gpu_processes;
    int ret = 0;

    if (n == 0)
        return 0;
    off = calloc(n + 1, sizeof(*off));
    if (!off)
        return -ENOMEM;
    strbuf_init(&lbl);
    for (size_t i = 0; i < n; i++) {
        off[i] = lbl.len;
        put_process_labels(&lbl, &s->gpu_processes[i], compat);
    }
    off[n] = lbl.len;
    if (strbuf_error(&lbl) < 0) {
        ret = -ENOMEM;
        goto finish;
    }

    f = (struct family){prefix, "_energy_joules_total", "counter",
                        "Energy attributed to the process in joules. energy_estimated=\"false\": "
                        "windows it had the GPU to itself (measured); \"true\": shared windows "
                        "(split by SM utilization)."};
    family_begin(r, &f);
    for (size_t i = 0; i < n; i++) {
        const struct snap_gpu_process *p = &s->gpu_processes[i];

        series_begin(r);
        strbuf_putc(r->out, '{');
        strbuf_append(r->out, lbl.buf + off[i], off[i + 1] - off[i]);
        strbuf_puts(r->out, ",energy_estimated=\"false\"");
        end_micro(r, p->energy_measured_uj);
        series_begin(r);
        strbuf_putc(r->out, '{');
        strbuf_append(r->out, lbl.buf + off[i], off[i + 1] - off[i]);
        strbuf_puts(r->out, ",energy_estimated=\"true\"");
        end_micro(r, p->energy_estimated_uj);
    }
    for (size_t g = 0; g < ARRAY_SIZE(process_gauges); g++) {
        f = (struct family){prefix, process_gauges[g].suffix, "gauge", process_gauges[g].help};
        family_begin(r, &f);
        for (size_t i = 0; i < n; i++)
            process_gauge(r, &s->gpu_processes[i], process_gauges[g].value, lbl.buf + off[i],
                          off[i + 1] - off[i]);
    }
finish:
    strbuf_done(&lbl);
    return ret;
}

/* ---- per GPU ------------------------------------------------------------------------- */

static uint64_t gpu_unattributed(const struct snap_gpu *g) {
    uint64_t sum = 0;

    for (size_t k = 0; k < _UNATTR_MAX; k++)
        sum += g->unattributed_uj[k];
    return sum;
}

static void gpu_label(struct render *r, const struct snap_gpu *g) {
    series_begin(r);
    strbuf_putc(r->out, '{');
    put_label_u64(r->out, true, "gpu", g->index);
}

static const struct family gpu_energy = {
    "joulestat_", "gpu_energy_joules_total", "counter",
    "Energy measured by the GPU since joulestat started, in joules."};
static const struct family gpu_energy_estimated = {
    "joulestat_", "gpu_energy_estimated", "gauge",
    "1 when the GPU has no energy counter and its energy is integrated from power samples."};
static const struct family gpu_unattr = {
    "joulestat_", "gpu_unattributed_energy_joules_total", "counter",
    "GPU energy given to no process, by reason (idle, no_consumer, no_data), in joules."};
static const struct family gpu_power = {"joulestat_", "gpu_power_watts", "gauge",
                                        "Last power reading of the GPU in watts."};
static const struct family gpu_idle_power = {
    "joulestat_", "gpu_idle_power_watts", "gauge",
    "Idle power of the GPU in watts (configured or learned)."};
static const struct family gpu_processes = {"joulestat_", "gpu_processes", "gauge",
                                            "Processes on the GPU in the last window."};
static const struct family gpu_up = {"joulestat_", "gpu_up", "gauge",
                                     "1 when the GPU answered in the last sample."};

static void render_gpus(struct render *r, const struct snapshot *s, const char *prefix,
                        bool compat) {
    struct family f;

    family_begin(r, &gpu_energy);
    for (size_t i = 0; i < s->n_gpus; i++) {
        const struct snap_gpu *g = &s->gpus[i];

        gpu_label(r, g);
        PUT_LABEL(r->out, false, "uuid", g->uuid);
        PUT_LABEL(r->out, false, "model", g->model);
        end_micro(r, g->energy_uj);
    }
    family_begin(r, &gpu_energy_estimated);
    for (size_t i = 0; i < s->n_gpus; i++) {
        gpu_label(r, &s->gpus[i]);
        end_u64(r, s->gpus[i].energy_estimated);
    }
    family_begin(r, &gpu_unattr);
    for (size_t i = 0; i < s->n_gpus; i++)
        for (unsigned k = 0; k < _UNATTR_MAX; k++) {
            if (k == UNATTR_SYSTEM) /* CPU time of no workload: a CPU-only reason */
                continue;
            gpu_label(r, &s->gpus[i]);
            put_label(r->out, false, "reason", unattributed_reason_to_string(k), SIZE_MAX);
            end_micro(r, s->gpus[i].unattributed_uj[k]);
        }
    family_begin(r, &gpu_power);
    for (size_t i = 0; i < s->n_gpus; i++)
        if (s->gpus[i].power_valid && isfinite(s->gpus[i].power_watts)) {
            gpu_label(r, &s->gpus[i]);
            end_double(r, s->gpus[i].power_watts);
        }
    family_begin(r, &gpu_idle_power);
    for (size_t i = 0; i < s->n_gpus; i++)
        if (s->gpus[i].idle_power_valid && isfinite(s->gpus[i].idle_power_watts)) {
            gpu_label(r, &s->gpus[i]);
            end_double(r, s->gpus[i].idle_power_watts);
        }
    family_begin(r, &gpu_processes);
    for (size_t i = 0; i < s->n_gpus; i++) {
        gpu_label(r, &s->gpus[i]);
        end_u64(r, s->gpus[i].process_count);
    }
    family_begin(r, &gpu_up);
    for (size_t i = 0; i < s->n_gpus; i++) {
        gpu_label(r, &s->gpus[i]);
        end_u64(r, s->gpus[i].up);
    }
    if (!compat)
        return;

    /* my-gpu-exporter's per-GPU families. Its energy was a sum over live processes (not
     * monotonic); ours is the GPU's energy minus the unattributed part, a true counter. */
    f = (struct family){prefix, "_gpu_energy_joules_total", "counter",
                        "Energy attributed to processes on this GPU since start, in joules."};
    family_begin(r, &f);
    for (size_t i = 0; i < s->n_gpus; i++) {
        const struct snap_gpu *g = &s->gpus[i];
        uint64_t un = gpu_unattributed(g);

        gpu_label(r, g);
        end_micro(r, g->energy_uj > un ? g->energy_uj - un : 0);
    }
    f = (struct family){prefix, "_gpu_process_count", "gauge",
                        "Processes on this GPU (more than 1 means time-slicing)."};
    family_begin(r, &f);
    for (size_t i = 0; i < s->n_gpus; i++) {
        gpu_label(r, &s->gpus[i]);
        end_u64(r, s->gpus[i].process_count);
    }
}

/* ---- GPU allocations (pod-resources, idle policy allocation) -------------------------- */

static const struct family gpu_allocation_energy = {
    "joulestat_", "gpu_allocation_energy_joules_total", "counter",
    "GPU energy charged to a pod for holding the GPU (--gpu-idle-policy=allocation): idle "
    "energy, and all of it in windows without processes, split by the replicas held, in "
    "joules."};

static void render_gpu_allocations(struct render *r, const struct snapshot *s) {
    family_begin(r, &gpu_allocation_energy);
    for (size_t i = 0; i < s->n_gpu_allocations; i++) {
        const struct snap_gpu_allocation *a = &s->gpu_allocations[i];

        series_begin(r);
        strbuf_putc(r->out, '{');
        put_label_u64(r->out, true, "gpu", a->gpu);
        PUT_LABEL(r->out, false, "namespace", a->namespace_);
        PUT_LABEL(r->out, false, "pod", a->pod);
        PUT_LABEL(r->out, false, "pod_uid", a->pod_uid);
        end_micro(r, a->energy_uj);
    }
}

/* ---- RAPL ---------------------------------------------------------------------------- */

static const struct family rapl_energy = {
    "joulestat_", "rapl_energy_joules_total", "counter",
    "Energy measured by a RAPL domain since joulestat started, in joules."};
static const struct family cpu_unattr = {"joulestat_", "cpu_unattributed_energy_joules_total",
                                         "counter",
                                         "RAPL energy given to no workload, by reason, in joules."};

static void rapl_labels(struct render *r, const struct snap_rapl *d) {
    series_begin(r);
    strbuf_putc(r->out, '{');
    put_label_u64(r->out, true, "package", d->package);
    PUT_LABEL(r->out, false, "domain", d->domain);
}

static void render_rapl(struct render *r, const struct snapshot *s) {
    family_begin(r, &rapl_energy);
    for (size_t i = 0; i < s->n_rapl; i++) {
        rapl_labels(r, &s->rapl[i]);
        end_micro(r, s->rapl[i].energy_uj);
    }
    family_begin(r, &cpu_unattr);
    for (size_t i = 0; i < s->n_rapl; i++)
        for (unsigned k = 0; k < _UNATTR_MAX; k++) {
            rapl_labels(r, &s->rapl[i]);
            put_label(r->out, false, "reason", unattributed_reason_to_string(k), SIZE_MAX);
            end_micro(r, s->rapl[i].unattributed_uj[k]);
        }
}

/* ---- CPU energy per process and unseen per workload ------------------------------------ */

static const struct family cpu_process_energy = {
    "joulestat_", "cpu_process_energy_joules_total", "counter",
    "RAPL energy attributed to the process by its CPU time, per domain, in joules "
    "(--cpu-process-metrics)."};
static const struct family cpu_process_active = {
    "joulestat_", "cpu_process_active", "gauge",
    "1 while the process runs, 0 after it exited (kept for the retention time)."};
static const struct family cpu_unseen_energy = {
    "joulestat_", "cpu_unseen_energy_joules_total", "counter",
    "RAPL energy of a workload's cgroup CPU time that no process scan saw (short-lived "
    "processes), per domain, in joules."};

/* The domains the node measures: a process gets one series for each. */
static unsigned rapl_domain_mask(const struct snapshot *s) {
    unsigned mask = 0;

    for (size_t i = 0; i < s->n_rapl; i++) {
        int d = rapl_domain_from_string(s->rapl[i].domain);

        if (d >= 0 && d < SNAP_CPU_DOMAINS)
            mask |= 1U << d;
    }
    return mask;
}

static void cpu_workload_labels(struct strbuf *sb, const struct snap_identity *id) {
    PUT_LABEL(sb, false, "pod", id->pod);
    PUT_LABEL(sb, false, "namespace", id->namespace_);
    PUT_LABEL(sb, false, "container", id->container);
    PUT_LABEL(sb, false, "pod_uid", id->pod_uid);
    PUT_LABEL(sb, false, "container_id", id->container_id);
    PUT_LABEL(sb, false, "job_id", id->slurm_job);
}

static void cpu_process_labels(struct render *r, const struct snap_cpu_process *p) {
    series_begin(r);
    strbuf_putc(r->out, '{');
    put_label_u64(r->out, true, "pid", p->pid);
    PUT_LABEL(r->out, false, "process_name", p->id.process_name);
    cpu_workload_labels(r->out, &p->id);
}

static void put_domain(struct render *r, unsigned d) {
    put_label(r->out, false, "domain", rapl_domain_to_string((enum rapl_domain)d), SIZE_MAX);
}

static void render_cpu_processes(struct render *r, const struct snapshot *s) {
    unsigned mask = rapl_domain_mask(s);

    family_begin(r, &cpu_process_energy);
    for (size_t i = 0; i < s->n_cpu_processes; i++)
        for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++) {
            if (!(mask & (1U << d)))
                continue;
            cpu_process_labels(r, &s->cpu_processes[i]);
            put_domain(r, d);
            end_micro(r, s->cpu_processes[i].energy_uj[d]);
        }
    family_begin(r, &cpu_process_active);
    for (size_t i = 0; i < s->n_cpu_processes; i++) {
        cpu_process_labels(r, &s->cpu_processes[i]);
        end_u64(r, s->cpu_processes[i].active);
    }
    family_begin(r, &cpu_unseen_energy);
    for (size_t i = 0; i < s->n_workloads; i++) {
        const struct snap_workload *w = &s->workloads[i];

        if (!w->cpu_unseen_valid)
            continue;
        for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++) {
            if (!(mask & (1U << d)))
                continue;
            series_begin(r);
            strbuf_putc(r->out, '{');
            /* The first label of cpu_workload_labels() has a leading comma: start with
             * the domain instead. */
            put_label(r->out, true, "domain", rapl_domain_to_string((enum rapl_domain)d), SIZE_MAX);
            cpu_workload_labels(r->out, &w->id);
            end_micro(r, w->cpu_unseen_uj[d]);
        }
    }
}

/* ---- containers, pods, SLURM jobs ---------------------------------------------------- */

static const struct {
    struct family energy;
    struct family active;
} workload_families[_WORKLOAD_KIND_MAX] = {
    [WORKLOAD_CONTAINER] = {{"joulestat_", "container_energy_joules_total", "counter",
                             "Energy attributed to the container by component (gpu, cpu), "
                             "in joules."},
                            {"joulestat_", "container_active", "gauge",
                             "1 while the container has processes, 0 during retention."}},
    [WORKLOAD_POD] = {{"joulestat_", "pod_energy_joules_total", "counter",
                       "Energy attributed to the pod by component (gpu, cpu), in joules."},
                      {"joulestat_", "pod_active", "gauge",
                       "1 while the pod has processes, 0 during retention."}},
    [WORKLOAD_JOB] = {{"joulestat_", "slurm_job_energy_joules_total", "counter",
                       "Energy attributed to the SLURM job by component (gpu, cpu), in joules."},
                      {"joulestat_", "slurm_job_active", "gauge",
                       "1 while the job has processes, 0 during retention."}},
};

static void workload_labels(struct render *r, const struct snap_workload *w) {
    series_begin(r);
    strbuf_putc(r->out, '{');
    switch (w->kind) {
    case WORKLOAD_CONTAINER:
        PUT_LABEL(r->out, true, "namespace", w->id.namespace_);
        PUT_LABEL(r->out, false, "pod", w->id.pod);
        PUT_LABEL(r->out, false, "container", w->id.container);
        PUT_LABEL(r->out, false, "container_id", w->id.container_id);
        break;
    case WORKLOAD_POD:
        PUT_LABEL(r->out, true, "namespace", w->id.namespace_);
        PUT_LABEL(r->out, false, "pod", w->id.pod);
        PUT_LABEL(r->out, false, "pod_uid", w->id.pod_uid);
        break;
    case WORKLOAD_JOB:
    default:
        PUT_LABEL(r->out, true, "job_id", w->id.slurm_job);
        break;
    }
}

static void render_workloads(struct render *r, const struct snapshot *s) {
    for (unsigned kind = 0; kind < _WORKLOAD_KIND_MAX; kind++) {
        family_begin(r, &workload_families[kind].energy);
        for (size_t i = 0; i < s->n_workloads; i++) {
            const struct snap_workload *w = &s->workloads[i];

            if ((unsigned)w->kind != kind)
                continue;
            workload_labels(r, w);
            strbuf_puts(r->out, ",component=\"gpu\"");
            end_micro(r, w->gpu_energy_uj);
            workload_labels(r, w);
            strbuf_puts(r->out, ",component=\"cpu\"");
            end_micro(r, w->cpu_energy_uj);
        }
        family_begin(r, &workload_families[kind].active);
        for (size_t i = 0; i < s->n_workloads; i++) {
            const struct snap_workload *w = &s->workloads[i];

            if ((unsigned)w->kind != kind)
                continue;
            workload_labels(r, w);
            end_u64(r, w->active);
        }
    }
}

/* ---- self-metrics -------------------------------------------------------------------- */

static const struct family build_info = {"joulestat_", "build_info", "gauge",
                                         "Always 1; the version is in the label."};
static const struct family source_up = {"joulestat_", "source_up", "gauge",
                                        "1 when the source worked in the last sample."};
static const struct family source_errors = {"joulestat_", "source_errors_total", "counter",
                                            "Failed samples of the source since start."};
static const struct family sample_duration = {"joulestat_", "sample_duration_seconds", "gauge",
                                              "Duration of the last sampler tick in seconds."};
static const struct family samples_total = {"joulestat_", "samples_total", "counter",
                                            "Sampler ticks since start."};
static const struct family snapshot_time = {
    "joulestat_", "last_sample_timestamp_seconds", "gauge",
    "Unix time of the sample this exposition was built from."};
static const struct family scrape_duration = {
    "joulestat_", "scrape_duration_seconds", "gauge",
    "Time the previous scrape took to render, in seconds."};
static const struct family series_family = {
    "joulestat_", "series", "gauge", "Number of series in this exposition, this one included."};

static void render_self(struct render *r, const struct snapshot *s,
                        const struct exposition_options *o) {
    family_begin(r, &build_info);
    series_begin(r);
    strbuf_putc(r->out, '{');
    put_label(r->out, true, "version", o->version ? o->version : JOULESTAT_VERSION, SIZE_MAX);
    end_u64(r, 1);

    family_begin(r, &source_up);
    for (size_t i = 0; i < s->n_sources; i++) {
        series_begin(r);
        strbuf_putc(r->out, '{');
        PUT_LABEL(r->out, true, "source", s->sources[i].name);
        end_u64(r, s->sources[i].up);
    }
    family_begin(r, &source_errors);
    for (size_t i = 0; i < s->n_sources; i++) {
        series_begin(r);
        strbuf_putc(r->out, '{');
        PUT_LABEL(r->out, true, "source", s->sources[i].name);
        end_u64(r, s->sources[i].errors);
    }
    if (isfinite(s->last_sample_duration_seconds) && s->last_sample_duration_seconds >= 0)
        plain_series_double(r, &sample_duration, s->last_sample_duration_seconds);
    plain_series_double(r, &samples_total, (double)s->samples_total);
    if (isfinite(s->timestamp_seconds) && s->timestamp_seconds > 0)
        plain_series_double(r, &snapshot_time, s->timestamp_seconds);
    if (o->scrape_duration_valid && isfinite(o->scrape_duration_seconds) &&
        o->scrape_duration_seconds >= 0)
        plain_series_double(r, &scrape_duration, o->scrape_duration_seconds);
    /* Last, so it can count everything before it (and itself). */
    family_begin(r, &series_family);
    series_begin(r);
    strbuf_putc(r->out, ' ');
    strbuf_put_u64(r->out, r->series);
    strbuf_putc(r->out, '\n');
}

int exposition_render(const struct snapshot *s, const struct exposition_options *o,
                      struct strbuf *out) {
    static const struct exposition_options defaults = {0};
    struct render r = {.out = out};
    const char *prefix;
    bool compat;
    int ret;

    if (!s || !out)
        return -EINVAL;
    if (!o)
        o = &defaults;
    prefix = o->metric_prefix ? o->metric_prefix
                              : (s->metric_prefix ? s->metric_prefix : EXPOSITION_DEFAULT_PREFIX);
    if (!promtext_name_valid(prefix))
        return -EINVAL;
    compat = strcmp(prefix, EXPOSITION_COMPAT_PREFIX) == 0;

    ret = render_processes(&r, s, prefix, compat);
    if (ret < 0)
        return ret;
    render_gpus(&r, s, prefix, compat);
    render_gpu_allocations(&r, s);
    render_rapl(&r, s);
    render_cpu_processes(&r, s);
    render_workloads(&r, s);
    render_self(&r, s, o);
    ret = strbuf_error(out);
    if (ret < 0)
        return ret;
    return r.series > INT_MAX ? INT_MAX : (int)r.series;
}
