/* SPDX-License-Identifier: MIT */
#include "identity.h"

#include "procfs.h"

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
