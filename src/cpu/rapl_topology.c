/* SPDX-License-Identifier: MIT */
/* Which CPU to read each package's RAPL counters on, and the package of a CPU. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "parse_num.h"
#include "rapl_internal.h"

#define CPU_DIR "devices/system/cpu"

static int read_u32_at(int dirfd, const char *path, uint32_t *ret) {
    uint64_t v;
    int r;

    r = read_u64_at(dirfd, path, &v);
    if (r < 0)
        return r;
    if (v > UINT32_MAX)
        return -ERANGE;
    *ret = (uint32_t)v;
    return 0;
}

int rapl_cpu_topology(int sys_fd, uint32_t cpu, struct rapl_cpu *ret_cpu) {
    char path[96];
    struct rapl_cpu c = {.cpu = cpu};
    int r;

    (void)snprintf(path, sizeof(path), CPU_DIR "/cpu%u/topology/physical_package_id", cpu);
    r = read_u32_at(sys_fd, path, &c.package);
    if (r < 0)
        return r;
    /* die_id exists since Linux 5.3; older kernels and single-die parts: die 0. */
    (void)snprintf(path, sizeof(path), CPU_DIR "/cpu%u/topology/die_id", cpu);
    r = read_u32_at(sys_fd, path, &c.die);
    if (r == -ENOENT)
        c.die = 0;
    else if (r < 0)
        return r;
    *ret_cpu = c;
    return 0;
}

/* "cpu<decimal>" and nothing else (cpufreq, cpuidle, ... are siblings). */
static int parse_cpu_dirname(const char *name, uint32_t *ret_cpu) {
    if (strncmp(name, "cpu", 3) != 0 || name[3] < '0' || name[3] > '9')
        return -EINVAL;
    for (const char *p = name + 3; *p; p++)
        if (*p < '0' || *p > '9')
            return -EINVAL;
    return safe_atou32(name + 3, ret_cpu);
}

static int compare_cpu(const void *a, const void *b) {
    const struct rapl_cpu *x = a, *y = b;

    if (x->package != y->package)
        return x->package < y->package ? -1 : 1;
    if (x->die != y->die)
        return x->die < y->die ? -1 : 1;
    return x->cpu < y->cpu ? -1 : (x->cpu > y->cpu);
}

int rapl_lead_cpus(int sys_fd, struct rapl_cpu **ret_cpus, size_t *ret_n) {
    _cleanup_(closedirp) DIR *d = NULL;
    _cleanup_(freep) struct rapl_cpu *cpus = NULL;
    size_t n = 0, cap = 0, kept = 0;
    struct dirent *de;
    int r;

    r = opendir_at(sys_fd, CPU_DIR, false, &d);
    if (r < 0)
        return r;
    while ((errno = 0, de = readdir(d))) {
        struct rapl_cpu c;
        uint32_t cpu;

        if (parse_cpu_dirname(de->d_name, &cpu) < 0)
            continue;
        /* Offline CPUs have no topology directory: skip them. */
        if (rapl_cpu_topology(sys_fd, cpu, &c) < 0)
            continue;
        r = grow_array(&cpus, &cap, n + 1, sizeof(*cpus));
        if (r < 0)
            return r;
        cpus[n++] = c;
    }
    if (errno != 0)
        return -errno;
    if (n == 0)
        return -ENOENT;
    qsort(cpus, n, sizeof(*cpus), compare_cpu);
    /* Sorted by (package, die, cpu): the first of each run is its lead CPU. */
    for (size_t i = 0; i < n; i++)
        if (i == 0 || cpus[i].package != cpus[kept - 1].package ||
            cpus[i].die != cpus[kept - 1].die)
            cpus[kept++] = cpus[i];
    *ret_cpus = TAKE_PTR(cpus);
    *ret_n = kept;
    return 0;
}
