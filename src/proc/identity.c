/* SPDX-License-Identifier: MIT */
#include "identity.h"

#include <stdio.h>
#include <string.h>

void identity_to_labels(const struct workload_identity *w, const char *comm,
                        struct snap_identity *ret) {
    struct snap_identity id = {0};

    (void)snprintf(id.process_name, sizeof(id.process_name), "%s", comm ? comm : "");
    (void)snprintf(id.container_id, sizeof(id.container_id), "%s", w->container_id);
    (void)snprintf(id.pod_uid, sizeof(id.pod_uid), "%s", w->pod_uid);
    if (w->slurm.job_id_valid)
        (void)snprintf(id.slurm_job, sizeof(id.slurm_job), "%u", w->slurm.job_id);
    else if (w->slurm.sluid[0])
        (void)snprintf(id.slurm_job, sizeof(id.slurm_job), "%s", w->slurm.sluid);
    *ret = id;
}

int identity_resolve_pid(void *scanner, uint32_t pid, struct process_info *ret) {
    struct procfs_lookup l;
    int r;

    r = procfs_lookup(scanner, pid, &l);
    if (r < 0)
        return r;
    *ret = (struct process_info){
        .start_ticks = l.starttime,
        .start_time_seconds = l.start_time_seconds,
    };
    identity_to_labels(l.identity, l.comm, &ret->id);
    return 0;
}
