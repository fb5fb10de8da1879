/* SPDX-License-Identifier: MIT */
#include "check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_sources.h"
#include "fileio.h"
#include "kube_labels.h"
#include "pod_allocations.h"
#include "macro.h"
#include "sampler.h"

static void check_cgroups(int sys_fd) {
    struct stat st;

    if (fstatat(sys_fd, "fs/cgroup/cgroup.controllers", &st, 0) == 0)
        printf("cgroup  ok        v2 (unified hierarchy)\n");
    else if (fstatat(sys_fd, "fs/cgroup/cpuacct", &st, 0) == 0 ||
             fstatat(sys_fd, "fs/cgroup/cpu,cpuacct", &st, 0) == 0)
        printf("cgroup  ok        v1 (cpuacct)%s\n",
               fstatat(sys_fd, "fs/cgroup/unified/cgroup.controllers", &st, 0) == 0
                   ? " + v2 at fs/cgroup/unified (hybrid)"
                   : "");
    else
        printf("cgroup  absent    no cgroup hierarchy under the sysfs root; per-container CPU "
               "energy falls back to per-process CPU time\n");
}

#define CAP_SYS_PTRACE_BIT 19

/* SLURM job ids that only the environment carries (SLUID cgroups, proctrack/linuxproc):
 * reading another user's environ needs CAP_SYS_PTRACE (even root's: a process that is not
 * dumpable refuses without it). The effective set in our own status says it. */
static void check_environ(int proc_fd) {
    _cleanup_(freep) char *status = NULL;
    unsigned long long caps = 0;
    const char *line;
    size_t len;
    int r;

    r = read_virtual_file_at(proc_fd, "self/status", 64 * 1024, &status, &len);
    line = r >= 0 ? strstr(status, "\nCapEff:") : NULL;
    if (!line || sscanf(line, "\nCapEff: %llx", &caps) != 1) {
        printf("environ unknown   no CapEff line in <procfs>/self/status\n");
        return;
    }
    if (caps & (1ULL << CAP_SYS_PTRACE_BIT))
        printf("environ ok        CAP_SYS_PTRACE: other users' /proc/<pid>/environ readable "
               "(SLURM_JOB_ID for SLUID jobs and nodes without Slurm cgroups)\n");
    else
        printf("environ denied    no CAP_SYS_PTRACE: other users' /proc/<pid>/environ is "
               "unreadable, so SLURM jobs named by SLUID only (Slurm >= 26.05) and jobs on "
               "nodes without proctrack/cgroup get no job id\n"
               "        fix: add CAP_SYS_PTRACE (deploy/systemd/joulestat.service), or run "
               "as root with all capabilities\n");
}

static void check_kubelet(const struct config *cfg) {
    const char *why = NULL;
    struct stat st;

    if (!cfg->kubernetes_enabled) {
        printf("kubelet off       --kubernetes-enabled=false\n");
        return;
    }
    if (stat(cfg->pod_resources_socket, &st) < 0)
        why = strerror(errno);
    else if (!S_ISSOCK(st.st_mode))
        why = "not a socket";
    if (!why)
        printf("kubelet ok        pod-resources socket %s\n", cfg->pod_resources_socket);
    else
        printf("kubelet absent    no socket at %s (%s); pods are still found from cgroups\n"
               "        fix: mount /var/lib/kubelet/pod-resources into the pod, or set "
               "--pod-resources-socket\n",
               cfg->pod_resources_socket, why);
}

int check_run(const struct config *cfg) {
    _cleanup_(closep) int sys_fd = open_root(cfg->sysfs);
    _cleanup_(closep) int dev_fd = open_root(cfg->devfs);
    _cleanup_(closep) int proc_fd = open_root(cfg->procfs);
    struct kube_labels_options kube;
    bool gpu, rapl = false;

    printf("joulestat %s: sources on this node\n\n", JOULESTAT_VERSION);
    gpu = check_gpu_source(cfg, proc_fd);
    if (proc_fd < 0)
        printf("procfs  down      cannot open %s: %s\n", cfg->procfs, strerror(-proc_fd));
    else {
        printf("procfs  ok        %s\n", cfg->procfs);
        check_environ(proc_fd);
    }
    if (sys_fd < 0)
        printf("sysfs   down      cannot open %s: %s\n", cfg->sysfs, strerror(-sys_fd));
    else {
        /* powercap and perf need sysfs only; the MSR interface says so when it lacks the
         * devices root. */
        rapl = check_rapl_source(cfg, sys_fd, dev_fd, proc_fd);
        check_cgroups(sys_fd);
    }
    check_kubelet(cfg);
    pod_allocations_check(cfg);
    sampler_kube_options(cfg, &kube);
    kube_labels_check(&kube);
    return gpu || rapl ? 0 : -ENODEV;
}
