/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/*
 * The cgroup `joulestat run` gives its command where it can create one: a child of its own
 * cgroup v2, "<own>/joulestat-run-<pid>-<time>", which the command enters between fork and
 * exec. Every process the command starts is born in it, whatever it does next (a double
 * fork, a daemon, a parent that reaps before a scan): the cgroup's CPU time (cpu.stat
 * usage_usec, there without the cpu controller) counts them all, exited ones included, and
 * the processes listed in it at each scan are the command's on the GPUs (one that starts and
 * ends between two scans is not seen there either).
 *
 * The cgroup is that of this mount namespace's /sys/fs/cgroup (or its "unified" mount on a
 * hybrid host), not --path.sysfs: it is where this process lives, not the host it watches.
 * Where it cannot be made (cgroup v1 only, /sys/fs/cgroup read-only as in most containers,
 * no write access: not root and no delegated cgroup, a cgroup namespace or a bind mount that
 * hides where we are), run_cgroup_create() fails and `run` follows the process tree alone.
 */
struct run_cgroup;

/* Creates the cgroup below the one this process is in (read from <proc_fd>/self/cgroup).
 * Returns 0, or -errno (-EOPNOTSUPP: no cgroup v2 mount; -EXDEV: our cgroup is outside our
 * cgroup namespace). *ret is written only on success. */
int run_cgroup_create(int proc_fd, struct run_cgroup **ret);

/* Moves the calling process into the cgroup: one write(), so it may be called between
 * fork() and exec() in a threaded program. Returns 0 or -errno. */
int run_cgroup_enter(const struct run_cgroup *cg);

/* The CPU time of every process that was ever in the cgroup, in us. Returns 0 or -errno;
 * *ret_us is written only on success. */
int run_cgroup_usage_us(const struct run_cgroup *cg, uint64_t *ret_us);

/* Calls fn for each process now in the cgroup. Returns 0 or -errno. */
int run_cgroup_for_each_pid(const struct run_cgroup *cg, void (*fn)(pid_t pid, void *userdata),
                            void *userdata);

/* "/sys/fs/cgroup/<own>/joulestat-run-<pid>-<time>", for messages. */
const char *run_cgroup_path(const struct run_cgroup *cg);

/* Moves the processes the command left running back to the cgroup run was started in,
 * then removes the cgroup. Returns NULL. */
struct run_cgroup *run_cgroup_free(struct run_cgroup *cg);
