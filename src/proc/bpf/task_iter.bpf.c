/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A task iterator: one record per task (thread) of the system, read by
 * src/proc/task_iter.c. The kernel's types are declared here with only the fields read,
 * relocated at load time against the running kernel's BTF (CO-RE), so the build needs
 * neither the kernel's headers nor its BTF.
 */
typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "task_iter_record.h"

struct kernfs_node {
    __u64 id;
} __attribute__((preserve_access_index));

struct cgroup {
    struct kernfs_node *kn;
} __attribute__((preserve_access_index));

struct css_set {
    struct cgroup *dfl_cgrp;
} __attribute__((preserve_access_index));

struct signal_struct {
    int nr_threads;
    __u64 sum_sched_runtime;
} __attribute__((preserve_access_index));

struct sched_entity {
    __u64 sum_exec_runtime;
} __attribute__((preserve_access_index));

struct task_struct {
    unsigned int __state;
    unsigned int flags;
    int exit_state;
    int pid;
    int tgid;
    __u64 start_boottime;
    struct sched_entity se;
    struct task_struct *real_parent;
    struct task_struct *group_leader;
    struct signal_struct *signal;
    struct css_set *cgroups;
    char comm[16];
} __attribute__((preserve_access_index));

/* Before 5.14 the run state was a long named state. */
struct task_struct___pre514 {
    long state;
} __attribute__((preserve_access_index));

struct seq_file;

struct bpf_iter_meta {
    struct seq_file *seq;
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
