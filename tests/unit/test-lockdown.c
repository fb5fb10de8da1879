/* SPDX-License-Identifier: MIT */
/* The steady state's privileges: capabilities dropped in every thread, no-new-privileges,
 * and the seccomp allow-list refusing what a hijacked exporter would want (execve, ptrace,
 * fork, raw sockets, namespaces) while threads, files and sockets keep working. Each case
 * runs in a child process, which keeps the filter and the dropped capabilities to itself. */
#include "testutil.h"

#include <linux/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "privileges.h"
#include "syscall_filter.h"

/* Runs fn in a child with its stderr into a pipe; returns the exit status, the stderr text
 * in out[size]. */
static int in_child(int (*fn)(void), char *out, size_t size) {
    int pipefd[2], status = 0;
    size_t used = 0;
    ssize_t n;
    pid_t pid;

    assert_int_equal(pipe(pipefd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        (void)dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[0]);
        _exit(fn());
    }
    close(pipefd[1]);
    while (used + 1 < size && (n = read(pipefd[0], out + used, size - 1 - used)) > 0)
        used += (size_t)n;
    out[used] = '\0';
    close(pipefd[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void *nothing(void *arg) {
    return arg;
}

/* Exit codes name the first check that failed. */
static int filtered(void) {
    static char prog[] = "/bin/true";
    char *const argv[] = {prog, NULL};
    pthread_t t;
    char status[4096];
    union bpf_attr attr = {0};
    int fd, sock;
    ssize_t n;

    if (syscall_filter_install(false) < 0)
        return 2;
    /* Refused, with EPERM: */
    if (execve("/bin/true", argv, NULL) != -1 || errno != EPERM)
        return 10;
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != -1 || errno != EPERM)
        return 11;
    if (fork() != -1 || errno != EPERM) /* clone() without CLONE_THREAD */
        return 12;
    /* With every signal blocked, as posix_spawn() and newer glibc's fork() do: a trapped
     * call would kill the process (a blocked SIGSYS), a refused one fails. */
    {
        sigset_t all, old;

        (void)sigfillset(&all);
        (void)pthread_sigmask(SIG_BLOCK, &all, &old);
        if (fork() != -1 || errno != EPERM)
            return 17;
        (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    /* What a thread that missed the capability drop needs to drop later. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return 18;
    if (socket(AF_PACKET, SOCK_RAW, 0) != -1 || errno != EPERM)
        return 13;
    if (unshare(CLONE_NEWUSER) != -1 || errno != EPERM)
        return 14;
    if (syscall(SYS_kill, 1, 0) != -1 || errno != EPERM)
        return 15;
    /* Without the task iterator not even an iterator from a link is made. */
    if (syscall(SYS_bpf, BPF_ITER_CREATE, &attr, sizeof(attr)) != -1 || errno != EPERM)
        return 16;
    /* Still working: threads, files, inet sockets. */
    if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 20;
    fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 21;
    n = read(fd, status, sizeof(status) - 1);
    close(fd);
    if (n <= 0)
        return 22;
    status[n] = '\0';
    if (!strstr(status, "Seccomp:\t2") || !strstr(status, "NoNewPrivs:\t1"))
        return 23;
    sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return 24;
    close(sock);
    if (syscall_filter_refusals() != 6) /* all but the process creations (not trapped) */
        return 25;
    return 0;
}

static void test_filter_refuses_and_serves(void **state) {
    char err[4096], expect[96];

    if (!syscall_filter_supported())
        skip();
    assert_int_equal(in_child(filtered, err, sizeof(err)), 0);
    /* Each refusal is logged with its number. */
    (void)snprintf(expect, sizeof(expect), "seccomp: refused system call %d ", SYS_execve);
    assert_non_null(strstr(err, expect));
    (void)snprintf(expect, sizeof(expect), "seccomp: refused system call %d ", SYS_ptrace);
    assert_non_null(strstr(err, expect));
}

static atomic_int go;
static atomic_uint_least64_t seen[3];
static atomic_int seen_nnp[3];

static void *report_later(void *arg) {
    int i = (int)(intptr_t)arg;
    struct timespec pause = {.tv_nsec = 1000000};

    while (!atomic_load(&go))
        (void)nanosleep(&pause, NULL); /* interrupted by the drop's signal: fine */
    atomic_store(&seen[i], privileges_effective());
    atomic_store(&seen_nnp[i], prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    return NULL;
}

static int dropped(void) {
    uint64_t keep = 1ULL << PRIV_CAP_SYS_PTRACE, before = privileges_effective(), kept = 0;
    pthread_t t[3];

    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, report_later, (void *)(intptr_t)i) != 0)
            return 2;
    if (privileges_drop(keep, &kept) < 0)
        return 3;
    /* A thread made afterwards inherits the dropped set. */
    if (pthread_create(&t[2], NULL, report_later, (void *)(intptr_t)2) != 0)
        return 4;
    atomic_store(&go, 1);
    for (int i = 0; i < 3; i++)
        (void)pthread_join(t[i], NULL);
    if (kept != (before & keep) || privileges_effective() != kept)
        return 10;
    for (int i = 0; i < 3; i++)
        if (atomic_load(&seen[i]) != kept || atomic_load(&seen_nnp[i]) != 1)
            return 11 + i;
    if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
        return 14;
    /* Gone from the bounding set too, where CAP_SETPCAP allowed it (root). */
    if ((before & (1ULL << 8)) && prctl(PR_CAPBSET_READ, 21 /* CAP_SYS_ADMIN */, 0, 0, 0) != 0)
        return 15;
    return 0;
}

static void test_capabilities_dropped_in_every_thread(void **state) {
    char err[1024];
    int r = in_child(dropped, err, sizeof(err));

    if (r)
        fail_msg("check %d failed; stderr: %s", r, err);
}

static atomic_int released;

/* A thread that cannot take the drop's signal for now (as one in a killable wait in the
 * kernel): it holds it blocked until told, then reports. */
static void *deaf_for_a_while(void *arg) {
    struct timespec pause = {.tv_nsec = 1000000};
    sigset_t rt;

    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN + 1);
    (void)pthread_sigmask(SIG_BLOCK, &rt, NULL);
    atomic_store(&go, 1);
    while (!atomic_load(&released))
        (void)nanosleep(&pause, NULL);
    (void)pthread_sigmask(SIG_UNBLOCK, &rt, NULL); /* the pending signal arrives here */
    atomic_store(&seen[0], privileges_effective());
    return arg;
}

/* Exit codes name the first check that failed; killed by the signal: not an exit at all. */
static int late_thread(void) {
    uint64_t keep = 1ULL << PRIV_CAP_SYS_PTRACE, before = privileges_effective();
    struct timespec pause = {.tv_nsec = 1000000};
    pthread_t t;

    if (pthread_create(&t, NULL, deaf_for_a_while, NULL) != 0)
        return 2;
    while (!atomic_load(&go))
        (void)nanosleep(&pause, NULL);
    if (privileges_drop(keep, NULL) != -ETIMEDOUT)
        return 3;
    if (privileges_effective() != (before & keep)) /* this thread dropped them all the same */
        return 4;
    atomic_store(&released, 1);
    (void)pthread_join(t, NULL);
    if (atomic_load(&seen[0]) != (before & keep)) /* and the late one when it woke */
        return 5;
    return 0;
}

/* The drop gives up waiting on a thread after 2 s; the signal still pending there must not
 * end the daemon when it arrives (the default action of a real-time signal). */
static void test_a_late_thread_does_not_kill(void **state) {
    char err[1024];
    int r = in_child(late_thread, err, sizeof(err));

    if (r)
        fail_msg("check %d failed; stderr: %s", r, err);
}

static void test_steady_state_set(void **state) {
    struct config cfg = {0};

    assert_int_equal(privileges_steady_state(&cfg, false), 1ULL << PRIV_CAP_SYS_PTRACE);
    cfg.web_config_file = "web.yml";
    assert_int_equal(privileges_steady_state(&cfg, false),
                     (1ULL << PRIV_CAP_SYS_PTRACE) | (1ULL << PRIV_CAP_DAC_READ_SEARCH));
    /* CAP_BPF only while the process scan reads the task iterator. */
    assert_int_equal(privileges_steady_state(&cfg, true), (1ULL << PRIV_CAP_SYS_PTRACE) |
                                                              (1ULL << PRIV_CAP_DAC_READ_SEARCH) |
                                                              (1ULL << PRIV_CAP_BPF));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_refuses_and_serves),
        cmocka_unit_test(test_capabilities_dropped_in_every_thread),
        cmocka_unit_test(test_a_late_thread_does_not_kill),
        cmocka_unit_test(test_steady_state_set),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
