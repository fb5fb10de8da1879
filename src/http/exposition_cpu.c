/* SPDX-License-Identifier: MIT */
/* The CPU side of the exposition: RAPL domains, CPU energy per process and unseen per
 * workload, and the families of each workload kind (GPU and CPU components). */
#include <stdint.h>
#include <string.h>

#include "exposition_internal.h"
#include "macro.h"
#include "rapl_domain.h"

/* ---- RAPL ---------------------------------------------------------------------------- */

static const struct family rapl_energy = {
    "joulestat_", "rapl_energy_joules_total", "counter",
    "Energy measured by a RAPL domain since joulestat first counted it (across restarts with "
    "--state-dir), in joules."};
static const struct family cpu_unattr = {"joulestat_", "cpu_unattributed_energy_joules_total",
                                         "counter",
                                         "RAPL energy given to no workload, by reason, in joules."};

static const struct family rapl_downtime_unknown = {
    "joulestat_", "rapl_downtime_unknown_seconds_total", "counter",
    "Time the RAPL counter went unread (joulestat down or stalled) while it could have "
    "wrapped more than once, so that the energy drawn then is unknown (not booked), in "
    "seconds."};

static void rapl_labels(struct render *r, const struct snap_rapl *d) {
    series_begin(r);
    strbuf_putc(r->out, '{');
    put_label_u64(r->out, true, "package", d->package);
    PUT_LABEL(r->out, false, "domain", d->domain);
}

void exposition_render_rapl(struct render *r, const struct snapshot *s) {
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
    family_begin(r, &rapl_downtime_unknown);
    for (size_t i = 0; i < s->n_rapl; i++) {
        rapl_labels(r, &s->rapl[i]);
        end_micro(r, s->rapl[i].downtime_unknown_us);
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

/* Every workload label (each kind's), in the order of enum label_field. */
static void cpu_workload_labels(struct strbuf *sb, const struct snap_identity *id) {
    for (enum label_field f = LABEL_PROCESS_NAME + 1; f < _LABEL_FIELD_MAX; f++)
        if (label_printed(id, f))
            put_field(sb, false, id, f);
}

static void cpu_process_labels(struct render *r, const struct snap_cpu_process *p) {
    series_begin(r);
    strbuf_putc(r->out, '{');
    put_label_u64(r->out, true, "pid", p->pid);
    PUT_LABEL(r->out, false, "process_name", p->id->process_name);
    cpu_workload_labels(r->out, p->id);
}

static void put_domain(struct render *r, unsigned d) {
    put_label(r->out, false, "domain", rapl_domain_to_string((enum rapl_domain)d), SIZE_MAX);
}

void exposition_render_cpu_processes(struct render *r, const struct snapshot *s) {
    unsigned mask = snapshot_rapl_domains(s); /* a process gets one series for each */

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
        bool labels_ready = false;

        if (i + IDENTITY_PREFETCH_AHEAD < s->n_workloads)
            prefetch_identity(s->workloads[i + IDENTITY_PREFETCH_AHEAD].id);
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
            if (!labels_ready) {
                cpu_workload_labels(labels_begin(r), w->id);
                labels_ready = true;
            }
            labels_put(r);
            end_micro(r, w->cpu_unseen_uj[d]);
        }
    }
}

/* ---- workloads: one pair of families per kind (workload_kind.h) -------------------- */

/* '{' and the workload's labels (no closing brace). */
static void workload_labels(struct strbuf *sb, const struct snap_workload *w) {
    const struct workload_kind_info *info = &workload_kinds[w->kind];

    strbuf_putc(sb, '{');
    for (size_t i = 0; i < info->n_labels; i++) {
        enum label_field f = info->labels[i];

        /* (A kind's first label is its own or its parent's id: never left out.) */
        if (label_printed(w->id, f))
            put_field(sb, i == 0, w->id, f);
    }
}

/* The labels of the workload that many places ahead, if it is of this kind: each kind's
 * pass renders only its own, and the others' labels need not be fetched. */
static void prefetch_workload(const struct snapshot *s, size_t ahead, unsigned kind) {
    if (ahead < s->n_workloads && (unsigned)s->workloads[ahead].kind == kind)
        prefetch_identity(s->workloads[ahead].id);
}

void exposition_render_workloads(struct render *r, const struct snapshot *s) {
    for (unsigned kind = 0; kind < _WORKLOAD_KIND_MAX; kind++) {
        const struct workload_kind_info *info = &workload_kinds[kind];
        char stem[64] = "joulestat_";
        struct family energy = {stem, "_energy_joules_total", "counter", info->energy_help};
        struct family active = {stem, "_active", "gauge", info->active_help};

        copy_cut(stem + strlen(stem), sizeof(stem) - strlen(stem), info->name);
        family_begin(r, &energy);
        for (size_t i = 0; i < s->n_workloads; i++) {
            const struct snap_workload *w = &s->workloads[i];

            prefetch_workload(s, i + IDENTITY_PREFETCH_AHEAD, kind);
            if ((unsigned)w->kind != kind)
                continue;
            workload_labels(labels_begin(r), w);
            series_begin(r);
            labels_put(r);
            strbuf_puts(r->out, ",component=\"gpu\"");
            end_micro(r, w->gpu_energy_uj);
            series_begin(r);
            labels_put(r);
            strbuf_puts(r->out, ",component=\"cpu\"");
            end_micro(r, w->cpu_energy_uj);
        }
        family_begin(r, &active);
        for (size_t i = 0; i < s->n_workloads; i++) {
            const struct snap_workload *w = &s->workloads[i];

            prefetch_workload(s, i + IDENTITY_PREFETCH_AHEAD, kind);
            if ((unsigned)w->kind != kind)
                continue;
            series_begin(r);
            workload_labels(r->out, w);
            end_u64(r, w->active);
        }
    }
}
