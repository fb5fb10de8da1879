/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/*
 * The seccomp allow-list of `serve` once its sources are open (docs/DEPLOY.md, "The
 * system-call filter"): file and socket I/O, memory, threads, time, signals, inotify, and
 * the few calls the libraries make (NVML's ioctls, GnuTLS's getrandom, libcurl's and
 * nghttp2's sockets, glibc's resolver). Everything else, execve, ptrace, fork, mount, bpf,
 * module loading, setuid and new namespaces among them, fails with EPERM, and the first
 * refusals are logged to stderr with the system call's number ("seccomp: refused system
 * call 59 (x86_64)"; `scmp_sys_resolver 59` names it). EPERM rather than killing the
 * process: a call missing from the list in a rarely taken path of a library makes that path
 * fail like any I/O error instead of restarting the node agent.
 *
 * clone() is allowed for threads only (CLONE_THREAD); clone3(), whose flags a filter cannot
 * see, answers ENOSYS so that glibc falls back to clone(). socket() is allowed for AF_UNIX,
 * AF_INET, AF_INET6 and AF_NETLINK (glibc's getaddrinfo), tgkill() for this process only,
 * prctl() for thread names, ioctl() for anything but TIOCSTI.
 *
 * Installed on every thread at once (SECCOMP_FILTER_FLAG_TSYNC); needs no-new-privileges
 * or CAP_SYS_ADMIN. Returns 0, -EOPNOTSUPP where this build or architecture has no filter,
 * -ENOENT without libseccomp, or -errno. bpf_iter: the process scan uses the eBPF task iterator,
 * and bpf() may make iterators from its link (BPF_ITER_CREATE, nothing else).
 */
int syscall_filter_install(bool bpf_iter);

/* Why the filter is not installed when syscall_filter_install() says -ENOENT: libseccomp
 * is loaded only while the filter is built. */
#define SECCOMP_LIBRARY_MISSING                                                                    \
    "libseccomp.so.2 not found: install libseccomp2 (Debian) for the system-call filter"

/* Whether this build can install the filter: false under AddressSanitizer, whose leak
 * check at exit stops the threads with ptrace from a process made by clone() without
 * CLONE_THREAD, both refused by the filter. */
bool syscall_filter_supported(void);

/* Refusals seen since the filter was installed (each one logged up to a limit). */
unsigned syscall_filter_refusals(void);
