/* SPDX-License-Identifier: MIT */
/* The seccomp allow-list of the steady state (libseccomp), with refusals logged. */
#include "syscall_filter.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <linux/bpf.h>
#include <ucontext.h>
#include <unistd.h>

#include "dl_symbols.h"
#include "macro.h"

/* AddressSanitizer: gcc says __SANITIZE_ADDRESS__, clang __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#define FILTER_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FILTER_UNDER_ASAN 1
#endif
#endif

/* Where a trapped call's return value goes, so that it returns -EPERM. */
#if defined(__x86_64__)
#define FILTER_ARCH "x86_64"
#define SET_RETURN(uc, v) ((uc)->uc_mcontext.gregs[REG_RAX] = (greg_t)(v))
#elif defined(__aarch64__)
#define FILTER_ARCH "aarch64"
#define SET_RETURN(uc, v) ((uc)->uc_mcontext.regs[0] = (unsigned long long)(v))
#endif

/* Refusals written to stderr; later ones are only counted. */
#define LOGGED_REFUSALS 32

/* Allowed whatever their arguments. Names the architecture lacks (open on aarch64) are
 * skipped. */
static const char *const allowed[] = {
    /* files */
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "lseek",
    "open",
    "openat",
    "openat2",
    "close",
    "close_range",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "statfs",
    "fstatfs",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getdents",
    "getdents64",
    "getcwd",
    "fcntl",
    "dup",
    "dup2",
    "dup3",
    "pipe",
    "pipe2",
    "flock",
    "fsync",
    "fdatasync",
    "ftruncate",
    "fadvise64",
    "rename",
    "renameat",
    "renameat2",
    "unlink",
    "unlinkat",
    "mkdir",
    "mkdirat",
    "fchmod",
    "umask",
    "sendfile",
    /* memory */
    "mmap",
    "munmap",
    "mprotect",
    "mremap",
    "madvise",
    "brk",
    "msync",
    "mincore",
    /* threads, scheduling, exit */
    "futex",
    "futex_waitv",
    "set_robust_list",
    "get_robust_list",
    "set_tid_address",
    "rseq",
    "membarrier",
    "sched_yield",
    "sched_getaffinity",
    "sched_getparam",
    "sched_getscheduler",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "getpriority",
    "getcpu",
    "exit",
    "exit_group",
    "restart_syscall",
    /* signals */
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigtimedwait",
    "rt_sigpending",
    "rt_sigsuspend",
    "sigaltstack",
    "signalfd",
    "signalfd4",
    /* time */
    "nanosleep",
    "clock_nanosleep",
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "times",
    "alarm",
    "setitimer",
    "getitimer",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    /* identity and limits */
    "getpid",
    "gettid",
    "getppid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getgroups",
    "getresuid",
    "getresgid",
    "getpgrp",
    "getsid",
    "capget",
    "prlimit64",
    "getrlimit",
    "getrusage",
    "sysinfo",
    "uname",
    "getrandom",
    /* sockets (socket() itself below, by family) */
    "socketpair",
    "connect",
    "accept",
    "accept4",
    "bind",
    "listen",
    "shutdown",
    "getsockname",
    "getpeername",
    "setsockopt",
    "getsockopt",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    /* waiting */
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "eventfd",
    "eventfd2",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "inotify_rm_watch",
};

static atomic_uint refusals;

bool syscall_filter_supported(void) {
#if defined(FILTER_UNDER_ASAN) || !defined(FILTER_ARCH)
    return false;
#else
    return true;
#endif
}

unsigned syscall_filter_refusals(void) {
    return atomic_load(&refusals);
}

#ifdef FILTER_ARCH
/* Async-signal-safe: a line put together by hand, one write(). */
static void on_sigsys(int sig _unused_, siginfo_t *si, void *context) {
    static const char head[] = "joulestat: seccomp: refused system call ";
    static const char tail[] = " (" FILTER_ARCH "), returned EPERM\n";
    char line[sizeof(head) + sizeof(tail) + 16], digits[12];
    unsigned nr = (unsigned)si->si_syscall, nd = 0;
    size_t len = 0;
    int saved = errno;

    SET_RETURN((ucontext_t *)context, -EPERM);
    if (atomic_fetch_add(&refusals, 1) < LOGGED_REFUSALS) {
        do
            digits[nd++] = (char)('0' + nr % 10);
        while ((nr /= 10) && nd < sizeof(digits));
        memcpy(line, head, sizeof(head) - 1);
        len = sizeof(head) - 1;
        while (nd)
            line[len++] = digits[--nd];
        memcpy(line + len, tail, sizeof(tail) - 1);
        len += sizeof(tail) - 1;
        (void)!write(STDERR_FILENO, line, len);
    }
    errno = saved;
}
#endif

/*
 * libseccomp is needed for the few milliseconds that build and load the filter, and not
 * after: it is dlopen()ed for them and closed again, so the daemon does not keep its pages
 * resident (about 120 KiB) for the rest of its life.
 */
struct seccomp_api {
    __typeof__(seccomp_init) *init;
    __typeof__(seccomp_attr_set) *attr_set;
    __typeof__(seccomp_rule_add_array) *rule_add_array;
    __typeof__(seccomp_syscall_resolve_name) *resolve_name;
    __typeof__(seccomp_load) *load;
    __typeof__(seccomp_release) *release;
};

static const struct dl_symbol seccomp_symbols[] = {
    DL_SYMBOL(struct seccomp_api, init, seccomp_init),
    DL_SYMBOL(struct seccomp_api, attr_set, seccomp_attr_set),
    DL_SYMBOL(struct seccomp_api, rule_add_array, seccomp_rule_add_array),
    DL_SYMBOL(struct seccomp_api, resolve_name, seccomp_syscall_resolve_name),
    DL_SYMBOL(struct seccomp_api, load, seccomp_load),
    DL_SYMBOL(struct seccomp_api, release, seccomp_release),
};

/* tests/libs.cmake builds this file into a test with a soname that does not exist. */
#ifndef SECCOMP_LOAD_SONAME
#define SECCOMP_LOAD_SONAME "libseccomp.so.2"
#endif
static const char *const seccomp_sonames[] = {SECCOMP_LOAD_SONAME};

static int rule_add(const struct seccomp_api *api, scmp_filter_ctx ctx, uint32_t action, int nr,
                    const struct scmp_arg_cmp *cmp) {
    return api->rule_add_array(ctx, action, nr, cmp ? 1 : 0, cmp);
}

/* name allowed, if cmp (an argument's condition; all zeros: none). */
static int allow_if(const struct seccomp_api *api, scmp_filter_ctx ctx, const char *name,
                    struct scmp_arg_cmp cmp) {
    int nr = api->resolve_name(name);

    if (nr == __NR_SCMP_ERROR)
        return 0;
    return rule_add(api, ctx, SCMP_ACT_ALLOW, nr, cmp.op ? &cmp : NULL);
}

/* name refused with EPERM, if cmp (as allow_if()). */
static int errno_if(const struct seccomp_api *api, scmp_filter_ctx ctx, const char *name,
                    struct scmp_arg_cmp cmp) {
    int nr = api->resolve_name(name);

    if (nr == __NR_SCMP_ERROR)
        return 0;
    return rule_add(api, ctx, SCMP_ACT_ERRNO(EPERM), nr, cmp.op ? &cmp : NULL);
}

static int add_rules(const struct seccomp_api *api, scmp_filter_ctx ctx, bool bpf_iter) {
    static const int families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
    static const int prctls[] = {PR_SET_NAME, PR_GET_NAME, PR_CAPBSET_READ};
    static const int drops[] = {PR_CAP_AMBIENT, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS};
    static const char *const spawns[] = {"fork", "vfork"};
    int r, nr;

    for (size_t i = 0; i < ARRAY_SIZE(allowed); i++) {
        nr = api->resolve_name(allowed[i]);
        if (nr == __NR_SCMP_ERROR)
            continue;
        r = rule_add(api, ctx, SCMP_ACT_ALLOW, nr, NULL);
        if (r < 0)
            return r;
    }
    r = allow_if(api, ctx, "clone", SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    if (r < 0)
        return r;
    /* A new process is refused with EPERM, not trapped (and so not logged): glibc's
     * posix_spawn(), popen(), system() (and fork() in newer glibc) block every signal
     * around the clone, and a SIGSYS that is blocked kills the whole process. */
    r = errno_if(api, ctx, "clone", SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(spawns); i++)
        r = errno_if(api, ctx, spawns[i], (struct scmp_arg_cmp){0});
    if (r < 0)
        return r;
    /* What a thread that missed the drop (privileges.c) needs to drop later: each can only
     * lower privileges (capset within a permitted set that cannot grow). */
    r = allow_if(api, ctx, "capset", (struct scmp_arg_cmp){0});
    for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(drops); i++)
        r = allow_if(api, ctx, "prctl", SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)drops[i]));
    if (r < 0)
        return r;
    nr = api->resolve_name("clone3");
    if (nr != __NR_SCMP_ERROR && (r = rule_add(api, ctx, SCMP_ACT_ERRNO(ENOSYS), nr, NULL)) < 0)
        return r;
    for (size_t i = 0; i < ARRAY_SIZE(families); i++)
        if ((r = allow_if(api, ctx, "socket", SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i]))) < 0)
            return r;
    for (size_t i = 0; i < ARRAY_SIZE(prctls); i++)
        if ((r = allow_if(api, ctx, "prctl", SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)prctls[i]))) < 0)
            return r;
    r = allow_if(api, ctx, "tgkill", SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
    if (r < 0)
        return r;
    /* The process scan makes a new iterator from its kept link each scan (task_iter.h):
     * no other bpf() command, so nothing can be loaded or attached any more; without the
     * iterator, not even that. */
    if (bpf_iter) {
        r = allow_if(api, ctx, "bpf", SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)BPF_ITER_CREATE));
        if (r < 0)
            return r;
    }
    return allow_if(api, ctx, "ioctl", SCMP_A1(SCMP_CMP_NE, (scmp_datum_t)TIOCSTI));
}

static int load_filter(const struct seccomp_api *api, bool bpf_iter) {
    scmp_filter_ctx ctx = api->init(SCMP_ACT_TRAP);
    int r;

    if (!ctx)
        return -ENOMEM;
    r = api->attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    if (r >= 0)
        r = add_rules(api, ctx, bpf_iter);
    if (r >= 0)
        r = api->load(ctx);
    api->release(ctx);
    return r;
}

int syscall_filter_install(bool bpf_iter) {
#ifdef FILTER_ARCH
    struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
    struct seccomp_api api;
    void *dl;
    int r = 0;

    if (!syscall_filter_supported())
        return -EOPNOTSUPP;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSYS, &sa, NULL) < 0)
        return -errno;
    dl = dl_open("libseccomp", NULL, seccomp_sonames, ARRAY_SIZE(seccomp_sonames), &r);
    if (!dl)
        return r;
    r = dl_resolve(dl, "libseccomp", seccomp_symbols, ARRAY_SIZE(seccomp_symbols), &api);
    if (r >= 0)
        r = load_filter(&api, bpf_iter);
    dlclose(dl);
    return r < 0 ? r : 0;
#else
    return -EOPNOTSUPP;
#endif
}
