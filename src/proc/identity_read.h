/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cgroup_path.h"

/* Bounds on what a process's files can hold that is worth reading. */
#define IDENTITY_CGROUP_MAX_SIZE (64u * 1024u)
#define IDENTITY_ENVIRON_MAX_SIZE (256u * 1024u)

/* What reading identities cost and met, added to by identity_read_at(). */
struct identity_read_counts {
    uint64_t cgroup_reads;
    uint64_t environ_reads;
    uint64_t parse_errors;
    uint64_t read_errors; /* other than the process being gone */
    uint64_t vanished;
};

/*
 * The workload identity of the process whose /proc/<pid> directory is pid_fd: its cgroup
 * line, and its environment where the job id is only there (Slurm's SLUID directories,
 * nodes without Slurm cgroups) and for every Slurm job's process (its array job, once per
 * new process). An unreadable or unknown cgroup is IDENTITY_NONE. Returns
 * 0, -ESRCH when the process is gone (nothing is to be kept of it), or a shortage of ours
 * (-ENOMEM, -EMFILE, -ENFILE, -EINTR, -EAGAIN: nothing is to be kept either; read it again
 * later). counts may be NULL.
 */
int identity_read_at(int pid_fd, struct workload_identity *ret,
                     struct identity_read_counts *counts);

/* Whether r is a shortage of ours, not the process's (the errors above): what failed is to
 * be read again later, and nothing kept from it. */
bool identity_read_error_is_transient(int r);
