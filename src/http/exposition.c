/* SPDX-License-Identifier: MIT */
#include "exposition.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "exposition_internal.h"
#include "promtext.h"

#ifndef JOULESTAT_VERSION
#define JOULESTAT_VERSION "unknown"
#endif

/* ---- per process ------------------------------------------------------------------- */

/*
 * Each process's label set is escaped once into one scratch buffer and copied into the
 * six families, so a render allocates twice, not per series.
 */
/* The labels my-gpu-exporter's users query (its README and metrics reference): the same
 * with or without its prefix. A scrape config with honor_labels keeps pod and namespace
 * from being renamed exported_pod, exported_namespace (docs/METRICS.md). With its prefix,
 * the exporter's own label names too: it serves exported_pod, exported_namespace and
 * exported_container under those names, and its dashboards query them. */
static void put_process_labels(struct strbuf *sb, const struct snap_gpu_process *p, bool compat) {
    put_label_u64(sb, true, "pid", p->pid);
    put_label_u64(sb, false, "gpu", p->gpu);
    PUT_LABEL(sb, false, "process_name", p->id->process_name);
    PUT_LABEL(sb, false, "pod", p->id->pod);
    PUT_LABEL(sb, false, "namespace", p->id->namespace_);
    PUT_LABEL(sb, false, "container", p->id->container);
    if (compat) {
        PUT_LABEL(sb, false, "exported_pod", p->id->pod);
        PUT_LABEL(sb, false, "exported_namespace", p->id->namespace_);
        PUT_LABEL(sb, false, "exported_container", p->id->container);
    }
    PUT_LABEL(sb, false, "pod_uid", p->id->pod_uid);
    PUT_LABEL(sb, false, "container_id", p->id->container_id);
    if (p->mig) { /* fixed for the process's life: its series stays one series */
        put_label_u64(sb, false, "gpu_instance", p->gpu_instance);
        put_label_u64(sb, false, "compute_instance", p->compute_instance);
        PUT_LABEL(sb, false, "mig_profile", p->mig_profile);
    }
}

enum process_value {
    PV_SM_UTIL,
    PV_MEM_UTIL,
    PV_MEM_USED,
    PV_START_TIME,
    PV_ACTIVE,
    PV_INTENSITY,
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
    {"_power_intensity_watts",
     "Learned power of the process's workload at 100 % SM, in watts (absent until learned).",
     PV_INTENSITY},
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
    case PV_INTENSITY:
        d = p->intensity_watts;
        if (!p->intensity_valid || !isfinite(d))
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
        if (i + IDENTITY_PREFETCH_AHEAD < n)
            prefetch_identity(s->gpu_processes[i + IDENTITY_PREFETCH_AHEAD].id);
        off[i] = lbl.len;
        put_process_labels(&lbl, &s->gpu_processes[i], compat);
    }
    off[n] = lbl.len;
    if (strbuf_error(&lbl) < 0) {
        ret = -ENOMEM;
        goto finish;
    }

    /* joulestat's name follows the convention, and so does my-gpu-exporter's (its code and
     * dashboards: _total); its README's queries have no _total: with its prefix, both. */
    for (int name = compat ? 0 : 1; name < 2; name++) {
        f = (struct family){prefix, name == 0 ? "_energy_joules" : "_energy_joules_total",
                            "counter",
                            "Energy attributed to the process in joules. "
                            "energy_estimated=\"false\": windows it had the GPU to itself "
                            "(measured); \"true\": shared windows (split by SM utilization)."};
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
    "Energy measured by the GPU since joulestat first counted it (across restarts with "
    "--state-dir), in joules."};
static const struct family gpu_energy_estimated = {
    "joulestat_", "gpu_energy_estimated", "gauge",
    "1 when the GPU has no energy counter and its energy is integrated from power samples."};
static const struct family gpu_unattr = {
    "joulestat_", "gpu_unattributed_energy_joules_total", "counter",
    "GPU energy given to no process, by reason (idle, no_consumer, no_data, downtime), in "
    "joules."};
static const struct family gpu_power = {"joulestat_", "gpu_power_watts", "gauge",
                                        "Last power reading of the GPU in watts."};
static const struct family gpu_idle_power = {
    "joulestat_", "gpu_idle_power_watts", "gauge",
    "Idle power of the GPU in watts (configured or learned)."};
static const struct family gpu_processes = {"joulestat_", "gpu_processes", "gauge",
                                            "Processes on the GPU in the last window."};
static const struct family gpu_up = {"joulestat_", "gpu_up", "gauge",
                                     "1 when the GPU answered in the last sample."};
static const struct family gpu_learned_split = {
    "joulestat_", "gpu_learned_split", "gauge",
    "1 when the last window's energy was split by learned power intensity, 0 when by SM "
    "share (the fallback)."};
static const struct family gpu_split_windows = {
    "joulestat_", "gpu_split_windows_total", "counter",
    "Windows by how their energy was split: learned, or SM share and why (no_activity, "
    "single_class, too_few_rows, not_identifiable)."};

/* Windows split before a restart (--state-dir): the counter goes on before this run's
 * first split, never missing from a scrape. */
static bool counted_windows(const struct snap_gpu *g) {
    for (unsigned k = 0; k < _SPLIT_METHOD_MAX; k++)
        if (g->split_windows[k])
            return true;
    return false;
}

static const struct family gpu_sharing = {
    "joulestat_", "gpu_sharing", "gauge",
    "Always 1: how the GPU was shared in the last window, in the label (none, exclusive, "
    "time-slicing, mps, mig)."};

static const struct family gpu_mig_activity = {
    "joulestat_", "gpu_mig_activity", "gauge",
    "Always 1 on a MIG GPU: where the last window's instance activity came from, in the "
    "label (gpm, dcgm, or size: not measured, instances weighted by their size)."};

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
    family_begin(r, &gpu_learned_split);
    for (size_t i = 0; i < s->n_gpus; i++)
        if (s->gpus[i].split_valid) {
            gpu_label(r, &s->gpus[i]);
            end_u64(r, s->gpus[i].split == SPLIT_LEARNED);
        }
    family_begin(r, &gpu_split_windows);
    for (size_t i = 0; i < s->n_gpus; i++)
        if (s->gpus[i].split_valid || counted_windows(&s->gpus[i]))
            for (unsigned k = 0; k < _SPLIT_METHOD_MAX; k++) {
                gpu_label(r, &s->gpus[i]);
                put_label(r->out, false, "method", split_method_to_string(k), SIZE_MAX);
                end_u64(r, s->gpus[i].split_windows[k]);
            }
    family_begin(r, &gpu_sharing);
    for (size_t i = 0; i < s->n_gpus; i++)
        if (s->gpus[i].up) {
            gpu_label(r, &s->gpus[i]);
            put_label(r->out, false, "sharing", gpu_sharing_to_string(s->gpus[i].sharing),
                      SIZE_MAX);
            end_u64(r, 1);
        }
    family_begin(r, &gpu_mig_activity);
    for (size_t i = 0; i < s->n_gpus; i++)
        if (s->gpus[i].up && s->gpus[i].sharing == SHARING_MIG) {
            gpu_label(r, &s->gpus[i]);
            put_label(r->out, false, "source", mig_activity_to_string(s->gpus[i].mig_activity),
                      SIZE_MAX);
            end_u64(r, 1);
        }
    if (!compat)
        return;

    /* my-gpu-exporter's per-GPU families. Its energy was a sum over live processes (not
     * monotonic); ours is the GPU's energy less what no process was given (unattributed,
     * and the pods' GPU allocations), a true counter. */
    f = (struct family){prefix, "_gpu_energy_joules_total", "counter",
                        "Energy attributed to processes on this GPU since start, in joules."};
    family_begin(r, &f);
    for (size_t i = 0; i < s->n_gpus; i++) {
        const struct snap_gpu *g = &s->gpus[i];
        uint64_t un = gpu_unattributed(g) + g->allocated_uj;

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
static const struct family http_connections = {
    "joulestat_", "http_connections", "gauge",
    "Open HTTP connections when this exposition was rendered."};
static const struct family http_closed = {
    "joulestat_", "http_connections_closed_total", "counter",
    "HTTP connections closed early: waiting for a request past the header deadline, the "
    "oldest waiting one to make room for a new connection, or a reply sent too slowly."};
static const struct family http_auth_busy = {
    "joulestat_", "http_auth_busy_total", "counter",
    "Requests answered 503 because every password-check thread was busy."};
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
    if (o->http) {
        plain_series_double(r, &http_connections, (double)o->http->connections_open);
        family_begin(r, &http_closed);
        series_begin(r);
        strbuf_putc(r->out, '{');
        put_label(r->out, true, "reason", "header_deadline", SIZE_MAX);
        end_u64(r, o->http->closed_header_deadline);
        series_begin(r);
        strbuf_putc(r->out, '{');
        put_label(r->out, true, "reason", "idle", SIZE_MAX);
        end_u64(r, o->http->closed_idle);
        series_begin(r);
        strbuf_putc(r->out, '{');
        put_label(r->out, true, "reason", "make_room", SIZE_MAX);
        end_u64(r, o->http->closed_make_room);
        series_begin(r);
        strbuf_putc(r->out, '{');
        put_label(r->out, true, "reason", "slow_reply", SIZE_MAX);
        end_u64(r, o->http->closed_slow_reply);
        plain_series_double(r, &http_auth_busy, (double)o->http->auth_busy);
    }
    /* Last, so it can count everything before it (and itself). */
    family_begin(r, &series_family);
    series_begin(r);
    strbuf_putc(r->out, ' ');
    strbuf_put_u64(r->out, r->series);
    strbuf_putc(r->out, '\n');
}

void render_flush(struct render *r) {
    int ret;

    if (r->out->len == 0 || r->out->error)
        return;
    ret = r->sink->write(r->sink->userdata, r->out->buf, r->out->len);
    if (ret < 0)
        r->out->error = ret; /* sticky: the render stops appending and returns it */
    else
        strbuf_reset(r->out);
}

int exposition_render(const struct snapshot *s, const struct exposition_options *o,
                      struct strbuf *out) {
    return exposition_render_to(s, o, out, NULL);
}

int exposition_render_to(const struct snapshot *s, const struct exposition_options *o,
                         struct strbuf *out, const struct exposition_sink *sink) {
    static const struct exposition_options defaults = {0};
    struct render r = {.out = out, .sink = sink};
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
    exposition_render_rapl(&r, s);
    exposition_render_cpu_processes(&r, s);
    exposition_render_workloads(&r, s);
    render_self(&r, s, o);
    strbuf_done(&r.labels);
    ret = strbuf_error(out);
    if (ret < 0)
        return ret;
    return r.series > INT_MAX ? INT_MAX : (int)r.series;
}
