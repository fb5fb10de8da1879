/* SPDX-License-Identifier: MIT */
/*
 * Real processes for the benchmark on the kernel's own /proc (bench/run --real):
 *
 *   bench-spawn-procs N READY_FILE [CGROUP_DIR]
 *
 * Forks N children and writes READY_FILE once all of them run, then waits for SIGTERM or
 * SIGINT, kills the children, reaps them and removes the cgroups it made. Children die
 * with it (PR_SET_PDEATHSIG) if it is killed outright.
 *
 *   - every 20th child is busy: it burns about 0.5 ms of CPU, then sleeps about 1 s;
 *   - every 10th child (offset 5) has four threads, all asleep;
 *   - the rest sleep in pause().
 *
 * With CGROUP_DIR (a writable cgroup v2 directory), the children go ten by ten into
 * cgroups of their own, CGROUP_DIR/docker-<64 hex>.scope, which joulestat reads as
 * containers; every other container then holds one busy child.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PER_CGROUP 10
#define BUSY_EVERY 20
#define THREADED_EVERY 10
#define THREADS 4
#define BURN_NS 500000
#define STACK_SIZE (64 * 1024)

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;

    (void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *sleeper(void *arg) {
    (void)arg;
    for (;;)
        (void)pause();
    return NULL;
}

static void cgroup_name(char *buf, size_t size, const char *dir, unsigned group) {
    /* A docker-style id: 64 hex digits derived from the group number. */
    char id[65];
    uint64_t x = 0x9e3779b97f4a7c15ULL * (group + 1);

    for (unsigned i = 0; i < 64; i++) {
        x ^= x >> 29;
        x *= 0xbf58476d1ce4e5b9ULL;
        id[i] = "0123456789abcdef"[(x >> 60) & 15];
    }
    id[64] = '\0';
    (void)snprintf(buf, size, "%s/docker-%s.scope", dir, id);
}

static int join_cgroup(const char *dir, unsigned group) {
    char path[4096], pid[32];
    int fd, n;

    cgroup_name(path, sizeof(path), dir, group);
    if (strlen(path) + sizeof("/cgroup.procs") > sizeof(path))
        return -ENAMETOOLONG;
    strcat(path, "/cgroup.procs");
    fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
    if (write(fd, pid, (size_t)n) != n) {
        n = -errno;
        (void)close(fd);
        return n;
    }
    (void)close(fd);
    return 0;
}

static void child(unsigned i, const char *cgroup_dir) {
    struct timespec nap;

    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        _exit(0);
    if (cgroup_dir)
        (void)join_cgroup(cgroup_dir, i / PER_CGROUP); /* else it stays in ours: still a process */
    if (i % THREADED_EVERY == THREADED_EVERY / 2) {
        pthread_attr_t attr;

        (void)pthread_attr_init(&attr);
        (void)pthread_attr_setstacksize(&attr, STACK_SIZE);
        for (unsigned t = 1; t < THREADS; t++) {
            pthread_t th;

            if (pthread_create(&th, &attr, sleeper, NULL) != 0)
                _exit(4);
        }
    }
    if (i % BUSY_EVERY != 0)
        for (;;)
            (void)pause();
    /* Busy: a short burst, then about a second of sleep (staggered by i). */
    nap = (struct timespec){.tv_sec = 0, .tv_nsec = (long)(i % 97) * 10000000L};
    (void)nanosleep(&nap, NULL);
    for (;;) {
        uint64_t end = thread_cpu_ns() + BURN_NS;

        while (thread_cpu_ns() < end)
            ;
        nap = (struct timespec){.tv_sec = 1, .tv_nsec = 0};
        (void)nanosleep(&nap, NULL);
    }
}

int main(int argc, char **argv) {
    const char *cgroup_dir = argc > 3 ? argv[3] : NULL;
    struct sigaction sa = {.sa_handler = on_signal};
    unsigned n, groups;
    bool failed = false;
    pid_t *kids;
    int fd;

    if (argc < 3 || argc > 4 || sscanf(argv[1], "%u", &n) != 1 || n == 0) {
        fprintf(stderr, "usage: bench-spawn-procs N READY_FILE [CGROUP_DIR]\n");
        return 2;
    }
    (void)sigaction(SIGTERM, &sa, NULL);
    (void)sigaction(SIGINT, &sa, NULL);
    groups = (n + PER_CGROUP - 1) / PER_CGROUP;
    if (cgroup_dir)
        for (unsigned g = 0; g < groups; g++) {
            char path[4096];

            cgroup_name(path, sizeof(path), cgroup_dir, g);
            if (mkdir(path, 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, "bench-spawn-procs: mkdir %s: %s\n", path, strerror(errno));
                return 1;
            }
        }
    kids = calloc(n, sizeof(*kids));
    if (!kids)
        return 1;
    for (unsigned i = 0; i < n && !stop; i++) {
        kids[i] = fork();
        if (kids[i] < 0) {
            fprintf(stderr, "bench-spawn-procs: fork %u: %s\n", i, strerror(errno));
            failed = true;
            stop = 1;
            break;
        }
        if (kids[i] == 0)
            child(i, cgroup_dir);
    }
    if (!stop) {
        fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            char line[32];
            int len = snprintf(line, sizeof(line), "%u\n", n);

            if (write(fd, line, (size_t)len) != len)
                stop = 1;
            (void)close(fd);
        }
    }
    while (!stop)
        (void)pause();
    for (unsigned i = 0; i < n; i++)
        if (kids[i] > 0)
            (void)kill(kids[i], SIGKILL);
    for (unsigned i = 0; i < n; i++)
        if (kids[i] > 0)
            (void)waitpid(kids[i], NULL, 0);
    if (cgroup_dir)
        for (unsigned g = 0; g < groups; g++) {
            char path[4096];

            cgroup_name(path, sizeof(path), cgroup_dir, g);
            (void)rmdir(path);
        }
    free(kids);
    return failed ? 1 : 0;
}
