/* SPDX-License-Identifier: MIT */
#include "window_trace.h"

#include <errno.h>
#include <inttypes.h>

#include "gpu_accounting.h"
#include "log.h"

/* The group a baseline that works per pod copies energy to: the pod, else the container,
 * job or service, else the process alone ("-"). */
static const char *trace_group(const struct ledger_process *p) {
    const struct snap_identity *id = p->id;

    if (!id)
        return "-";
    return id->pod_uid[0]        ? id->pod_uid
           : id->container_id[0] ? id->container_id
           : id->slurm_job[0]    ? id->slurm_job
           : id->systemd_unit[0] ? id->systemd_unit
                                 : "-";
}

static void trace_window(void *userdata, const struct gpu_window_trace *w) {
    FILE *f = userdata;

    fprintf(f, "W %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, w->gpu, w->t0_us, w->t1_us,
            w->energy_uj, w->idle_uj);
    for (size_t i = 0; i < w->n; i++)
        fprintf(f, " %" PRIu32 ":%.0f:%" PRIu64 ":%s", w->procs[i]->pid,
                w->procs[i]->start_time_seconds * 1e6, w->activity[i], trace_group(w->procs[i]));
    fputc('\n', f);
}

int window_trace_attach(struct sampler *s, const char *path, FILE **ret_file) {
    FILE *f = fopen(path, "we");

    if (!f)
        return log_error_errno(-errno, "--trace: cannot write '%s': %m", path);
    (void)setvbuf(f, NULL, _IOLBF, 0);
    sampler_set_window_observer(s, trace_window, f);
    *ret_file = f;
    return 0;
}
