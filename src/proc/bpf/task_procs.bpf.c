/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every process of the system in one program run (Linux 6.7 and later): the kernel's
 * open-coded task iterator walks the process list, each process's threads after it, so
 * there is one record per process with its threads' time summed, and no pid look-up per
 * task as the seq-file task iterator (task_iter.bpf.c) makes. The records go to an array
 * that src/proc/task_iter.c maps; the program is hosted by a cgroup iterator on the root
 * cgroup alone, which calls it once per read, and writes the count to the read.
 */
#include "kernel_types.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "task_iter_record.h"

/* From include/uapi/linux/bpf.h and kernel/bpf/task_iter.c. */
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_F_MMAPABLE (1U << 10)
#define BPF_TASK_ITER_ALL_THREADS 1

struct cgroup;

struct bpf_iter__cgroup {
    struct bpf_iter_meta *meta;
    struct cgroup *cgroup;
} __attribute__((preserve_access_index));

struct bpf_iter_task {
    __u64 __opaque[3];
} __attribute__((aligned(8)));

extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task,
                             unsigned int flags) __weak __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(max_entries, TASK_PROCS_MAX);
    __type(key, __u32);
    __type(value, struct task_iter_record);
} procs SEC(".maps");

char LICENSE[] SEC("license") = "GPL";

SEC("iter/cgroup")
int joulestat_procs(struct bpf_iter__cgroup *ctx) {
    struct seq_file *seq = ctx->meta->seq;
    struct task_procs_count count = {0};
    struct task_iter_record *rec = NULL;
    struct bpf_iter_task it;
    struct task_struct *task;

    if (!ctx->cgroup)
        return 0; /* the call after the last cgroup */
    /* Each process's leader, then its other threads, then the next process. */
    bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
    while ((task = bpf_iter_task_next(&it))) {
        struct signal_struct *sig;
        __u32 key = count.stored;

        if (task->pid != task->tgid) {
            if (rec && rec->tgid == (__u32)task->tgid)
                rec->runtime_ns += task->se.sum_exec_runtime;
            continue;
        }
        rec = NULL;
        if (task->pid == 0)
            continue; /* the idle task heads the list */
        count.total++;
        rec = bpf_map_lookup_elem(&procs, &key);
        if (!rec)
            continue; /* full: the count says so and the reader walks the tasks instead */
        count.stored++;
        sig = task->signal;
        rec->tid = (__u32)task->pid;
        rec->tgid = (__u32)task->tgid;
        /* Its own time and its exited threads'; the live ones follow. */
        rec->runtime_ns = task->se.sum_exec_runtime + sig->sum_sched_runtime;
        rec->threads = (__u32)sig->nr_threads;
        rec->ppid = (__u32)task->real_parent->tgid;
        rec->flags = task->flags;
        rec->start_boottime_ns = task->start_boottime;
        rec->run_state = task->__state;
        rec->exit_state = (__u32)task->exit_state;
        __builtin_memcpy(rec->comm, task->comm, sizeof(rec->comm));
    }
    bpf_iter_task_destroy(&it);
    bpf_seq_write(seq, &count, sizeof(count));
    return 0;
}
