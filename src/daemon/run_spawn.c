/* SPDX-License-Identifier: MIT */
#include "run_spawn.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

/* SIGTERM or SIGHUP to joulestat while the command runs: passed on to it. */
static volatile sig_atomic_t pending_signal;

static void on_signal_to_forward(int sig) {
    pending_signal = sig;
}

static const int run_signals[RUN_N_SIGNALS] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE};

static bool was_ignored(const struct sigaction *old) {
    return !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_IGN;
}

int run_signals_take(struct run_signals *s) {
    for (size_t i = 0; i < ARRAY_SIZE(run_signals); i++) {
        int sig = run_signals[i];
        struct sigaction sa = {.sa_handler = SIG_DFL};

        if (sigaction(sig, NULL, &s->old[i]) < 0)
            return -errno;
        if (sig == SIGINT || sig == SIGQUIT || sig == SIGPIPE ||
            (sig != SIGCHLD && was_ignored(&s->old[i])))
            sa.sa_handler = SIG_IGN;
        else if (sig != SIGCHLD)
            sa.sa_handler = on_signal_to_forward;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sig, &sa, NULL) < 0)
            return -errno;
    }
    return 0;
}

void run_signals_give_back(const struct run_signals *s) {
    for (size_t i = 0; i < ARRAY_SIZE(run_signals); i++)
        (void)sigaction(run_signals[i], &s->old[i], NULL);
}

int run_signals_pending(void) {
    int sig = pending_signal;

    pending_signal = 0;
    return sig;
}

/* The file exec runs for a command name, searched in $PATH as execvp() would (the default
 * path when unset; an empty entry is the working directory). Done before fork(): the child
 * of a threaded program may only call async-signal-safe functions. */
static int resolve_command(const char *name, char *buf, size_t size) {
    const char *dirs = getenv("PATH");
    int r = -ENOENT;

    if (!name[0])
        return -ENOENT;
    if (strchr(name, '/'))
        return snprintf(buf, size, "%s", name) < (int)size ? 0 : -ENAMETOOLONG;
    if (!dirs)
        dirs = "/bin:/usr/bin";
    for (const char *d = dirs;; d++) {
        size_t n = strcspn(d, ":");
        int k = snprintf(buf, size, "%.*s%s%s", (int)n, d, n ? "/" : "", name);
        struct stat st;

        if (k > 0 && (size_t)k < size) {
            /* Found but not an executable file (a directory, no x bit): EACCES, as from
             * execvp(), unless a later entry has one. */
            if (stat(buf, &st) == 0) {
                if (S_ISREG(st.st_mode) && faccessat(AT_FDCWD, buf, X_OK, AT_EACCESS) == 0)
                    return 0;
                r = -EACCES;
            } else if (errno == EACCES)
                r = -EACCES;
        }
        d += n;
        if (!*d)
            return r;
    }
}

static char shell[] = "/bin/sh";

/* What the child tells the parent before exec, through a close-on-exec pipe. */
struct spawn_report {
    int stage; /* SPAWN_* */
    int err;
};
enum { SPAWN_CGROUP = 1, SPAWN_EXEC };

static void report_to_parent(int fd, int stage, int err) {
    struct spawn_report rep = {stage, err};

    (void)!write(fd, &rep, sizeof(rep));
}

/* The child, between fork and exec: async-signal-safe calls only. It starts with every
 * signal blocked, so none is lost to joulestat's handlers meanwhile. The command starts in
 * its cgroup (if any), with nothing blocked and the default action for each of run's
 * signals, but those joulestat was started with ignored. */
static _Noreturn void exec_child(const char *file, char **argv, char **sh_argv,
                                 const struct run_signals *s, const struct run_cgroup *cg,
                                 int report_fd) {
    sigset_t none;
    int r, err;

    if (cg) {
        r = run_cgroup_enter(cg);
        if (r < 0)
            report_to_parent(report_fd, SPAWN_CGROUP, -r);
    }
    for (size_t i = 0; i < ARRAY_SIZE(run_signals); i++)
        if (!was_ignored(&s->old[i]))
            (void)signal(run_signals[i], SIG_DFL);
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    execve(file, argv, environ);
    err = errno;
    /* A script without "#!": run by the shell, as execvp(), time and perf stat do (should
     * that fail too, the script's own error is the one said). */
    if (err == ENOEXEC)
        execve(sh_argv[0], sh_argv, environ);
    report_to_parent(report_fd, SPAWN_EXEC, err);
    _exit(127);
}

int run_spawn(char **argv, const struct run_signals *s, const struct run_cgroup *cg, pid_t *ret_pid,
              bool *ret_in_cgroup) {
    _cleanup_(closep) int read_fd = -1, write_fd = -1;
    _cleanup_(freep) char **sh_argv = NULL;
    struct spawn_report rep;
    sigset_t all, mask;
    bool in_cgroup = cg != NULL;
    char file[PATH_MAX];
    size_t argc = 0;
    int fds[2], r;
    pid_t pid;

    r = resolve_command(argv[0], file, sizeof(file));
    if (r < 0)
        return r;
    /* Made before fork(): the child may not allocate. */
    while (argv[argc])
        argc++;
    sh_argv = calloc(argc + 2, sizeof(*sh_argv));
    if (!sh_argv)
        return -ENOMEM;
    sh_argv[0] = shell;
    sh_argv[1] = file;
    for (size_t i = 1; i < argc; i++)
        sh_argv[i + 1] = argv[i];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -errno;
    read_fd = fds[0];
    write_fd = fds[1];
    /* A Ctrl-C or a SIGTERM between fork and exec would reach the child's copy of
     * joulestat's dispositions, and be lost: blocked until the child has the command's. */
    sigfillset(&all);
    (void)pthread_sigmask(SIG_SETMASK, &all, &mask);
    pid = fork();
    if (pid == 0)
        exec_child(file, argv, sh_argv, s, cg, write_fd);
    r = pid < 0 ? -errno : 0;
    (void)pthread_sigmask(SIG_SETMASK, &mask, NULL);
    if (r < 0)
        return r;
    (void)close(TAKE_FD(write_fd));
    for (;;) {
        ssize_t n = read(read_fd, &rep, sizeof(rep));

        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof(rep))
            break; /* end of file: exec succeeded */
        if (rep.stage == SPAWN_CGROUP) {
            log_debug_errno(-rep.err, "run: the command cannot enter its cgroup: %m");
            in_cgroup = false;
            continue;
        }
        (void)waitpid(pid, NULL, 0);
        return -rep.err;
    }
    *ret_pid = pid;
    *ret_in_cgroup = in_cgroup;
    return 0;
}
