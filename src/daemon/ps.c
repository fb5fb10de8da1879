/* SPDX-License-Identifier: MIT */
#include "ps.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "escape.h"
#include "fileio.h"
#include "log.h"
#include "pod_allocations.h"
#include "json_out.h"
#include "macro.h"
#include "procfs.h"
#include "ps_rows.h"
#include "rapl_domain.h"
#include "sampler.h"
#include "snapshot.h"

static void print_json_field(const char *key, const char *value) {
    printf(", \"%s\": ", key);
    json_put_string(stdout, value);
}

static const char *or_dash(const char *s) {
    return s[0] ? s : "-";
}

/* What a process is: the outermost workload it is in (workload_kind.h), else "none". */
static const char *kind_name(const struct ps_row *r) {
    enum workload_kind k = workload_kind_outermost(&r->id);

    return k == WORKLOAD_KIND_NONE ? "none" : workload_kinds[k].name;
}

/* How the job was found: from the cgroup path, or from SLURM_JOB_ID in environ. */
static const char *job_source(const struct workload_identity *w) {
    if (!w->slurm.job_id_valid && !w->slurm.sluid[0])
        return "";
    return w->slurm.from_environ || (w->slurm.sluid[0] && w->slurm.job_id_valid) ? "environ"
                                                                                 : "cgroup";
}

static void format_gpus(const struct ps_row *r, char *buf, size_t size) {
    size_t used = 0;

    buf[0] = '\0';
    for (unsigned i = 0; i < r->n_gpus && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%u", i ? "," : "", r->gpus[i]);

        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* text (escaped) cut and padded to `width` columns: a name in UTF-8 lines up as one in
 * ASCII (with a wide character's two columns in a UTF-8 locale). */
static void print_cell(const char *text, int width) {
    int used;
    size_t n = terminal_fit_columns(text, width, &used);

    printf("%.*s%*s", (int)n, text, width - used, "");
}

static void print_all_table(const struct ps_rows *t) {
    printf("%-8s %-16s %-9s %-14s %-36s %-24s %-10s %-5s %12s %12s\n", "PID", "NAME", "KIND",
           "CONTAINER", "POD_UID", "POD", "JOB", "GPU", "GPU_J", "CPU_J");
    for (size_t i = 0; i < t->n; i++) {
        const struct ps_row *r = &t->rows[i];
        /* Names come from processes and the cluster: escaped, so that none can drive the
         * terminal (escape.h). JSON output escapes them as JSON. */
        char name[ESCAPED_SIZE(sizeof(r->id.process_name))];
        char container[ESCAPED_SIZE(sizeof(r->id.container_id))];
        char pod_uid[ESCAPED_SIZE(sizeof(r->id.pod_uid))], pod[ESCAPED_SIZE(sizeof(r->id.pod))];
        char job[ESCAPED_SIZE(sizeof(r->id.slurm_job))];
        char gpus[64];

        format_gpus(r, gpus, sizeof(gpus));
        /* The name column is 16 wide: escaped into 16 bytes, so a cut falls between
         * escapes, never inside one (and 16 bytes never take more than 16 columns). */
        (void)escape_terminal(r->id.process_name, name, MIN(sizeof(name), (size_t)17));
        (void)escape_terminal(r->id.container_id, container, sizeof(container));
        (void)escape_terminal(r->id.pod_uid, pod_uid, sizeof(pod_uid));
        (void)escape_terminal(r->id.pod, pod, sizeof(pod));
        (void)escape_terminal(r->id.slurm_job, job, sizeof(job));
        printf("%-8u ", r->pid);
        print_cell(name[0] ? name : "?", 16);
        printf(" %-9s %-14.12s %-36s %-24.24s %-10s %-5s %12.6f %12.6f\n",
               r->kernel_thread ? "kernel" : kind_name(r), or_dash(container), or_dash(pod_uid),
               or_dash(pod), or_dash(job), or_dash(gpus),
               (double)(r->gpu_measured_uj + r->gpu_estimated_uj) / 1e6,
               (double)ps_row_cpu_uj(r) / 1e6);
    }
}

static void print_all_json(const struct ps_rows *t, unsigned domains) {
    printf("[");
    for (size_t i = 0; i < t->n; i++) {
        const struct ps_row *r = &t->rows[i];
        char state[2] = {r->state, '\0'};

        printf("%s\n  {\"pid\": %u, \"ppid\": %u", i ? "," : "", r->pid, r->ppid);
        print_json_field("name", r->id.process_name);
        print_json_field("state", state);
        printf(", \"live\": %s, \"kernel_thread\": %s", r->live ? "true" : "false",
               r->kernel_thread ? "true" : "false");
        print_json_field("kind", kind_name(r));
        print_json_field("runtime", container_runtime_to_string(r->w.runtime));
        print_json_field("container_id", r->id.container_id);
        print_json_field("container", r->id.container);
        print_json_field("pod_uid", r->id.pod_uid);
        print_json_field("pod", r->id.pod);
        print_json_field("namespace", r->id.namespace_);
        print_json_field("qos", pod_qos_to_string(r->w.qos));
        print_json_field("slurm_job", r->id.slurm_job);
        print_json_field("slurm_step", r->w.slurm.step);
        print_json_field("slurm_job_source", job_source(&r->w));
        print_json_field("systemd_unit", r->w.systemd_unit);
        printf(", \"gpus\": [");
        for (unsigned g = 0; g < r->n_gpus; g++)
            printf("%s%u", g ? ", " : "", r->gpus[g]);
        printf("], \"gpu_energy_measured_joules\": %.6f, \"gpu_energy_estimated_joules\": %.6f",
               (double)r->gpu_measured_uj / 1e6, (double)r->gpu_estimated_uj / 1e6);
        printf(", \"cpu_energy_joules\": %.6f, \"cpu_energy_by_domain_joules\": {",
               (double)ps_row_cpu_uj(r) / 1e6);
        for (unsigned d = 0, first = 1; d < SNAP_CPU_DOMAINS; d++)
            if (domains & (1U << d)) {
                printf("%s\"%s\": %.6f", first ? "" : ", ",
                       rapl_domain_to_string((enum rapl_domain)d), (double)r->cpu_uj[d] / 1e6);
                first = 0;
            }
        printf("}}");
    }
    printf("\n]\n");
}

/* Whether a row used a GPU or the CPU in the window (what plain `ps` lists). */
static bool row_in_use(const struct ps_row *r) {
    return r->n_gpus > 0 || r->gpu_measured_uj + r->gpu_estimated_uj > 0 || ps_row_cpu_uj(r) > 0;
}

/* Keeps the rows that used a GPU or the CPU, in order. */
static void keep_rows_in_use(struct ps_rows *t) {
    size_t kept = 0;

    for (size_t i = 0; i < t->n; i++)
        if (row_in_use(&t->rows[i]))
            t->rows[kept++] = t->rows[i];
    t->n = kept;
    t->n_sorted = kept;
}

/* Every process of a fresh scan joined with the sampler's window; without --all only the
 * processes that used a GPU or the CPU in it. */
static int ps_list(const struct config *cfg, const struct snapshot *snap) {
    _cleanup_(closep) int proc_fd = -1;
    struct procfs_scanner *scanner = NULL;
    const struct procfs_process *rows = NULL;
    struct ps_rows t = {0};
    int n, r;

    proc_fd = open_root(cfg->procfs);
    if (proc_fd < 0)
        return log_error_errno(proc_fd, "ps: cannot open '%s': %m", cfg->procfs);
    r = procfs_scanner_new(proc_fd, NULL, &scanner);
    if (r < 0)
        return log_error_errno(r, "ps: cannot read processes from '%s': %m", cfg->procfs);
    n = procfs_scan(scanner, &rows);
    if (n < 0) {
        r = log_error_errno(n, "ps: cannot list '%s': %m", cfg->procfs);
        goto finish;
    }
    r = ps_rows_add_scan(&t, rows, (size_t)n);
    if (r < 0)
        goto finish;
    ps_rows_sort(&t);
    r = ps_rows_add_gpu(&t, snap);
    if (r >= 0)
        r = ps_rows_add_cpu(&t, snap);
    if (r < 0)
        goto finish;
    ps_rows_sort(&t);
    if (!cfg->all)
        keep_rows_in_use(&t);
    if (cfg->json)
        print_all_json(&t, snapshot_rapl_domains(snap));
    else {
        print_all_table(&t);
        if (!cfg->all && t.n == 0)
            printf("(no process used a GPU or the CPU during the sample)\n");
    }

finish:
    ps_rows_done(&t);
    procfs_scanner_free(scanner);
    return r;
}

int ps_run(const struct config *given) {
    /* One window for everything: the CPU scan runs at both ticks, and per-process CPU
     * energy is kept (it is what ps shows). */
    struct config c = *given, *cfg = &c;
    struct snapshot_slot *slot = snapshot_slot_new();
    struct sampler *sampler = NULL;
    struct snapshot *snap = NULL;
    struct tick_time t;
    struct timespec pause = {
        .tv_sec = (time_t)(cfg->sample_interval_ns / NSEC_PER_SEC),
        .tv_nsec = (long)(cfg->sample_interval_ns % NSEC_PER_SEC),
    };
    int r;

    if (!slot)
        return -ENOMEM;
    (void)setlocale(LC_CTYPE, ""); /* a wide character's columns (print_cell()) */
    c.process_scan_interval_ns = c.sample_interval_ns;
    c.cpu_process_metrics = true;
    r = sampler_new(cfg, slot, &sampler);
    if (r < 0) {
        log_error_errno(r, "ps: cannot sample: %m");
        goto finish;
    }
    /* Two ticks one interval apart: one window of energy, per process. */
    t = sampler_now();
    (void)sampler_tick(sampler, &t);
    (void)nanosleep(&pause, NULL);
    t = sampler_now();
    r = sampler_tick(sampler, &t);
    if (r < 0)
        goto finish;
    snap = snapshot_slot_get(slot);
    if (!snap) {
        r = -ENODATA;
        goto finish;
    }
    r = ps_list(cfg, snap);
    if (r >= 0 && !cfg->json)
        pod_allocations_print(snap);

finish:
    (void)snapshot_unref(snap);
    sampler_free(sampler);
    snapshot_slot_free(slot);
    return r;
}
