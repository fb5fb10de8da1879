/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Every process of the system in one read: an eBPF task iterator (bpf/task_iter.bpf.c,
 * CO-RE against the running kernel's BTF) instead of listing /proc and reading a file per
 * process. Used by the process scanner on the kernel's own /proc when the kernel lets us
 * load it (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN; BTF at /sys/kernel/btf/vmlinux;
 * Linux 5.8 or later) and the build has libbpf; otherwise the scanner reads /proc.
 *
 * The program is loaded and attached once, before capabilities are dropped; each read
 * then makes a new iterator from the kept link (one bpf(BPF_ITER_CREATE), which the
 * system-call filter allows alone among bpf()'s commands) and read()s it.
 *
 * Two walks: from Linux 6.7 the process list, one record a process with its threads'
 * time summed in the kernel, into an array this process maps (bpf/task_procs.bpf.c);
 * before, or with more processes than the array holds, every task, one record each,
 * found by pid (bpf/task_iter.bpf.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc_pid_stat.h"

struct task_iter_process {
    uint32_t pid; /* tgid */
    uint32_t ppid;
    uint32_t flags;   /* PF_* of the leader */
    uint32_t threads; /* live threads */
    uint64_t start_boottime_ns;
    uint64_t cpu_ns; /* on-CPU ns of the whole group, exited threads included */
    char state;      /* as stat's field 3 */
    char comm[16];
};

struct task_iter;

/*
 * Loads and attaches the iterator and checks that it sees this process as
 * <procfs_fd>/self/stat does (the same pid namespace and start clock).
 * Returns 0 with *ret, -EOPNOTSUPP when built without libbpf, or -errno (-EPERM: not
 * allowed, -ENOENT: no kernel BTF, -EXDEV: another pid namespace...), with *ret_reason a
 * short static text saying why. Writes *ret only on success.
 */
int task_iter_open(int procfs_fd, struct task_iter **ret, const char **ret_reason);

/* Accepts NULL; returns NULL. */
struct task_iter *task_iter_free(struct task_iter *ti);

/*
 * One pass over the system's tasks, threads summed into their processes. Returns the
 * number of processes (>= 0) with *ret_rows (owned by the iterator, valid until the next
 * read or free), in ascending pid order, or -errno (-ENOMEM, or what bpf() or read() said).
 */
int task_iter_read(struct task_iter *ti, const struct task_iter_process **ret_rows);

/* Whether the last read walked the process list (one record a process, Linux 6.7 and
 * later) rather than every task. task_iter_limit_processes() has the process walk serve
 * only reads of at most n processes (default and most: TASK_PROCS_MAX, 16 384); more, or
 * n = 0, and the read walks every task (tests). So does a read whose process walk fails for
 * any other reason. */
bool task_iter_walks_processes(const struct task_iter *ti);
void task_iter_limit_processes(struct task_iter *ti, uint32_t n);

/* stat's one-letter state from a task's __state and exit_state. */
char task_iter_state_letter(uint32_t run_state, uint32_t exit_state);
