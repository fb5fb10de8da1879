/* SPDX-License-Identifier: MIT */
/*
 * What one read of the eBPF task iterator (src/proc/task_iter.c) costs on this machine's
 * own tasks, hot (reads back to back) and cold (reads GAP_MS apart, as the process scan
 * reads once a second): the kernel's walk touches every task's structures, and between
 * two scans other work has pushed them out of the caches.
 *
 *   bench-task-iter-cost [READS [GAP_MS]]      (default 20 reads, 500 ms apart)
 *
 * Prints the processes, the tasks, and per read and per task the thread CPU time of each
 * way. Needs what the exporter needs to load the iterator (root, kernel BTF).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "task_iter.h"

static uint64_t cpu_ns(void) {
    struct timespec ts;

    (void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Mean thread CPU ns of one read, over `reads` reads gap_ms apart. */
static int time_reads(struct task_iter *ti, unsigned reads, unsigned gap_ms, double *ret_ns,
                      size_t *ret_tasks, int *ret_processes) {
    const struct task_iter_process *rows;
    uint64_t sum = 0;
    size_t tasks = 0;
    int n = 0;

    for (unsigned i = 0; i < reads; i++) {
        uint64_t t0;

        if (gap_ms)
            (void)usleep(gap_ms * 1000u);
        t0 = cpu_ns();
        n = task_iter_read(ti, &rows);
        sum += cpu_ns() - t0;
        if (n < 0)
            return n;
    }
    for (int i = 0; i < n; i++)
        tasks += rows[i].threads;
    *ret_ns = (double)sum / reads;
    *ret_tasks = tasks;
    *ret_processes = n;
    return 0;
}

int main(int argc, char **argv) {
    unsigned reads = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20;
    unsigned gap_ms = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 500;
    struct task_iter *ti = NULL;
    const char *reason = "";
    double hot, cold;
    size_t tasks;
    int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n, r;

    if (fd < 0 || reads == 0) {
        fprintf(stderr, "usage: bench-task-iter-cost [READS [GAP_MS]] (needs /proc)\n");
        return 2;
    }
    r = task_iter_open(fd, &ti, &reason);
    if (r < 0) {
        fprintf(stderr, "bench-task-iter-cost: no task iterator: %s\n", reason);
        return 1;
    }
    r = time_reads(ti, reads, 0, &hot, &tasks, &n);
    if (r >= 0)
        r = time_reads(ti, reads, gap_ms, &cold, &tasks, &n);
    task_iter_free(ti);
    (void)close(fd);
    if (r < 0) {
        fprintf(stderr, "bench-task-iter-cost: read failed (%d)\n", r);
        return 1;
    }
    printf("%d processes, %zu tasks\n", n, tasks);
    printf("hot  (back to back): %8.1f us a read, %6.0f ns a task\n", hot / 1e3,
           tasks ? hot / (double)tasks : 0);
    printf("cold (%u ms apart): %8.1f us a read, %6.0f ns a task\n", gap_ms, cold / 1e3,
           tasks ? cold / (double)tasks : 0);
    return 0;
}
