/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Pure parser of one /proc/<pid>/stat buffer (proc(5)):
 *
 *   "1234 (comm) S 1 1234 1234 0 -1 4194560 ... utime stime ... num_threads 0 starttime ..."
 *
 * comm (field 2) is taken between the first '(' and the LAST ')' of the buffer, because a
 * process may name itself ") (" or ":-) 1 2 3". Fields 3..22 must all be present and be
 * plain decimal integers (fields that the kernel prints signed may carry a '-'); fields
 * after 22 are not inspected beyond the buffer end.
 */

/* Kernel threads print "kworker/3:1-events" style names longer than TASK_COMM_LEN (16), so
 * room for 63 bytes; anything longer is truncated (not an error). */
#define PROC_COMM_MAX 64

/* PID_MAX_LIMIT on 64-bit kernels: pids are always below 2^22. */
#define PROC_PID_LIMIT (UINT32_C(1) << 22)

/* PF_KTHREAD in include/linux/sched.h: set in field 9 for kernel threads. */
#define PROC_PF_KTHREAD UINT32_C(0x00200000)

struct proc_pid_stat {
    uint32_t pid;             /* field 1, 1 .. PROC_PID_LIMIT-1 */
    char comm[PROC_COMM_MAX]; /* field 2, NUL-terminated, may contain spaces and parens */
    char state;               /* field 3: R S D Z T t X I ... (a letter) */
    uint32_t ppid;            /* field 4, 0 .. PROC_PID_LIMIT-1 (0 for init and kthreadd) */
    uint32_t flags;           /* field 9, PF_* bits */
    uint64_t utime;           /* field 14, clock ticks */
    uint64_t stime;           /* field 15, clock ticks */
    uint64_t cutime;          /* field 16: of its children waited for, clock ticks */
    uint64_t cstime;          /* field 17 */
    uint32_t num_threads;     /* field 20 */
    uint64_t starttime;       /* field 22, clock ticks since boot */
};

/*
 * Parses `len` bytes of `buf` (need not be NUL-terminated; an embedded NUL is malformed).
 * Returns 0 and fills *ret, or -EINVAL for any malformed input (missing parens, fewer than
 * 22 fields, non-numeric or out-of-range numbers, pid 0, ppid/pid >= PROC_PID_LIMIT,
 * numbers that do not fit their field). *ret is written only on success.
 */
int proc_pid_stat_parse(const char *buf, size_t len, struct proc_pid_stat *ret);
