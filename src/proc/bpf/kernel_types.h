/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's types the task programs read, with only the fields read: relocated at load
 * time against the running kernel's BTF (CO-RE), so the build needs neither the kernel's
 * headers nor its BTF. Included first by each *.bpf.c here.
 */
#pragma once

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
    struct signal_struct *signal;
    char comm[16];
} __attribute__((preserve_access_index));

struct seq_file;

struct bpf_iter_meta {
    struct seq_file *seq;
} __attribute__((preserve_access_index));
