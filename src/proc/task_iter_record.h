/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the task iterator (task_iter.bpf.c) writes for each task, read by task_iter.c.
 * Built for the BPF target and the host alike: fixed-size fields, no padding.
 * A thread that is not its group's leader fills only tid, tgid and runtime_ns.
 */
struct task_iter_record {
    __u32 tid;
    __u32 tgid;
    __u64 runtime_ns;        /* on-CPU ns; the leader adds its group's exited threads */
    __u64 start_boottime_ns; /* leader: start, ns since boot (stat field 22 in ns) */
    __u32 ppid;              /* leader: the parent's tgid */
    __u32 flags;             /* leader: PF_* */
    __u32 threads;           /* leader: live threads of the group */
    __u32 run_state;         /* leader: __state (TASK_* bits) */
    __u32 exit_state;        /* leader: EXIT_ZOMBIE / EXIT_DEAD */
    __u32 reserved;
    char comm[16];
};

/* Processes the process walk (task_procs.bpf.c) stores at most; beyond, the task walk. */
#define TASK_PROCS_MAX 16384

/* What the process walk writes to the read: processes seen, and of them stored. */
struct task_procs_count {
    __u32 total;
    __u32 stored;
};
