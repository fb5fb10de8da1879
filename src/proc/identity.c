/* SPDX-License-Identifier: MIT */
#include "identity.h"

#include <errno.h>

#include "exec_watch.h"
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

int identity_resolve_watched(void *resolver, uint32_t pid, struct process_info *ret) {
    struct identity_resolver *ir = resolver;
    struct exec_record rec;
    int r = identity_resolve_pid(ir->scanner, pid, ret);

    if (r != -ESRCH || !ir->watch || exec_watch_lookup(ir->watch, pid, &rec) < 0)
        return r;
    /* gone before a scan saw it: what was read at its exec */
    *ret = (struct process_info){
        .start_ticks = rec.starttime,
        .start_time_seconds = procfs_start_time_seconds(ir->scanner, rec.starttime),
    };
    identity_to_labels(&rec.identity, rec.comm, &ret->id);
    return 0;
}
