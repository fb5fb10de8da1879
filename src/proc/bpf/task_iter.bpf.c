/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A task iterator: one record per task (thread) of the system, read by
 * src/proc/task_iter.c. The kernel's types: kernel_types.h.
 */
#include "kernel_types.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "task_iter_record.h"

/* Before 5.14 the run state was a long named state. */
struct task_struct___pre514 {
    long state;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
    struct bpf_iter_meta *meta;
    struct task_struct *task;
} __attribute__((preserve_access_index));

char LICENSE[] SEC("license") = "GPL";

SEC("iter/task")
int joulestat_tasks(struct bpf_iter__task *ctx) {
    struct seq_file *seq = ctx->meta->seq;
    struct task_struct *task = ctx->task;
    struct task_iter_record rec = {0};

    if (!task)
        return 0;
    /* Direct loads (the verifier turns them into faulting-safe loads of BTF pointers) cost
     * a fraction of a bpf_probe_read_kernel() call each. */
    rec.tid = (__u32)task->pid;
    rec.tgid = (__u32)task->tgid;
    rec.runtime_ns = task->se.sum_exec_runtime;
    if (rec.tid == rec.tgid) {
        struct signal_struct *sig = task->signal;

        /* The leader stands for the process: what stat shows, and the time of its
         * threads that are gone (live threads come as records of their own). */
        rec.runtime_ns += sig->sum_sched_runtime;
        rec.threads = (__u32)sig->nr_threads;
        rec.ppid = (__u32)task->real_parent->tgid;
        rec.flags = task->flags;
        rec.start_boottime_ns = task->start_boottime;
        if (bpf_core_field_exists(task->__state))
            rec.run_state = task->__state;
        else
            rec.run_state = (__u32)((struct task_struct___pre514 *)task)->state;
        rec.exit_state = (__u32)task->exit_state;
        __builtin_memcpy(rec.comm, task->comm, sizeof(rec.comm));
    }
    bpf_seq_write(seq, &rec, sizeof(rec));
    return 0;
}
