/* SPDX-License-Identifier: MIT */
/* Capabilities and no-new-privileges, dropped in every thread of the process. */
#include "privileges.h"

#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"

/* Threads waited for in one round, and the rounds (threads made while signalling). */
#define MAX_THREADS 256
#define MAX_ROUNDS 8
#define ROUND_TIMEOUT_NS 2000000000LL

uint64_t privileges_steady_state(const struct config *cfg, bool task_iter) {
    uint64_t keep = 1ULL << PRIV_CAP_SYS_PTRACE;

    if (task_iter)
        keep |= 1ULL << PRIV_CAP_BPF;
    if (cfg->web_config_file)
        keep |= 1ULL << PRIV_CAP_DAC_READ_SEARCH;
    return keep;
}

/* What each thread applies: prepared before any signal is sent, read by the handler. */
static struct {
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    uint64_t keep;
    atomic_int answered;
    atomic_int failed; /* the first error, as a positive errno */
} target;

static int get_caps(struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]) {
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};

    return syscall(SYS_capget, &h, data) < 0 ? -errno : 0;
}

uint64_t privileges_effective(void) {
    struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

    if (get_caps(d) < 0)
        return 0;
    return (uint64_t)d[0].effective | (uint64_t)d[1].effective << 32;
}

/* Async-signal-safe: raw system calls only. */
static int apply_here(void) {
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    int cap;

    /* Ambient first (an older kernel without it says EINVAL), then the bounding set while
     * CAP_SETPCAP is still effective (without it, EPERM: the set stays, and with
     * no-new-privileges nothing can be gained from it anyway). */
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return -errno;
    for (cap = 0; cap < 64; cap++) {
        int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

        if (r < 0)
            break; /* past the kernel's last capability */
        if (r == 1 && !(target.keep & (1ULL << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
            errno != EPERM)
            return -errno;
    }
    if (syscall(SYS_capset, &h, target.data) < 0)
        return -errno;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -errno;
    return 0;
}

static void on_signal(int sig _unused_) {
    int saved = errno, r = apply_here(), none = 0;

    if (r < 0)
        (void)atomic_compare_exchange_strong(&target.failed, &none, -r);
    atomic_fetch_add(&target.answered, 1);
    errno = saved;
}

static bool in_list(const pid_t *list, size_t n, pid_t tid) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == tid)
            return true;
    return false;
}

/* Signals every thread in /proc/self/task not in done[] and adds it there; returns how
 * many were signalled, or -errno. */
static int signal_new_threads(int sig, pid_t *done, size_t *n_done) {
    _cleanup_(closedirp) DIR *d = opendir("/proc/self/task");
    pid_t self = gettid(), pid = getpid();
    struct dirent *e;
    int sent = 0;

    if (!d)
        return -errno;
    while ((e = readdir(d))) {
        pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);

        if (tid <= 0 || tid == self || in_list(done, *n_done, tid))
            continue;
        if (*n_done == MAX_THREADS)
            return -E2BIG;
        if (syscall(SYS_tgkill, pid, tid, sig) < 0) {
            if (errno == ESRCH)
                continue; /* it just exited */
            return -errno;
        }
        done[(*n_done)++] = tid;
        sent++;
    }
    return sent;
}

static int64_t now_ns(void) {
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int wait_answers(int expected) {
    int64_t deadline = now_ns() + ROUND_TIMEOUT_NS;
    struct timespec pause = {.tv_nsec = 1000000};

    while (atomic_load(&target.answered) < expected) {
        if (now_ns() > deadline)
            return -ETIMEDOUT;
        (void)nanosleep(&pause, NULL);
    }
    return 0;
}

static int drop_everywhere(void) {
    _cleanup_(freep) pid_t *done = calloc(MAX_THREADS, sizeof(pid_t));
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART}, old;
    size_t n_done = 0;
    int sig = SIGRTMIN + 1, expected = 0, r = 0;

    if (!done)
        return -ENOMEM;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) < 0)
        return -errno;
    for (int round = 0; round < MAX_ROUNDS; round++) {
        r = signal_new_threads(sig, done, &n_done);
        if (r <= 0)
            break;
        expected += r;
        r = wait_answers(expected);
        if (r < 0)
            break;
    }
    if (r == -ETIMEDOUT) {
        /* A thread still asleep (a killable wait in the kernel) has the signal pending:
         * the handler stays, so it drops them when it wakes. The default action of a
         * real-time signal would end the daemon. This thread drops them now. */
        (void)apply_here();
        return r;
    }
    (void)sigaction(sig, &old, NULL);
    if (r < 0)
        return r;
    if (atomic_load(&target.failed))
        return -atomic_load(&target.failed);
    return apply_here();
}

int privileges_drop(uint64_t keep, uint64_t *ret_kept) {
    struct __user_cap_data_struct now[_LINUX_CAPABILITY_U32S_3];
    int r;

    r = get_caps(now);
    if (r < 0)
        return r;
    memset(&target, 0, sizeof(target));
    target.keep = keep;
    for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
        uint32_t k = (uint32_t)(keep >> (32 * i)) & now[i].permitted;

        target.data[i] = (struct __user_cap_data_struct){.effective = k, .permitted = k};
    }
    r = drop_everywhere();
    if (r < 0)
        return r;
    if (ret_kept)
        *ret_kept = privileges_effective();
    return 0;
}
