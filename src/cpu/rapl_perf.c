/* SPDX-License-Identifier: MIT */
/* RAPL through the perf "power" PMU: <sysfs>/bus/event_source/devices/power. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "parse_num.h"
#include "rapl_internal.h"

#define PMU_DIR "bus/event_source/devices/power"
#define MAX_PMU_CPUS 64

static const struct {
    const char *event;
    enum rapl_domain domain;
} perf_events[] = {
    {"energy-pkg", RAPL_DOMAIN_PACKAGE}, {"energy-cores", RAPL_DOMAIN_CORE},
    {"energy-gpu", RAPL_DOMAIN_UNCORE},  {"energy-ram", RAPL_DOMAIN_DRAM},
    {"energy-psys", RAPL_DOMAIN_PSYS},
};

static int sys_perf_open(uint32_t type, uint64_t config, int cpu, void *userdata) {
    struct perf_event_attr attr = {
        .type = type,
        .size = sizeof(attr),
        .config = config,
    };
    long fd;

    /* Counting only, CPU-wide (pid -1): the only form the power PMU accepts. */
    fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : (int)fd;
}

/* "0", "0,18", "0-1": the PMU's cpumask, one CPU per package. */
static int parse_cpu_list(const char *s, uint32_t *cpus, size_t cap, size_t *ret_n) {
    size_t n = 0;

    while (*s && *s != '\n') {
        char *end;
        unsigned long lo, hi;

        if (*s < '0' || *s > '9')
            return -EINVAL;
        lo = strtoul(s, &end, 10);
        hi = lo;
        if (*end == '-') {
            if (end[1] < '0' || end[1] > '9')
                return -EINVAL;
            hi = strtoul(end + 1, &end, 10);
        }
        if (hi < lo || hi > UINT32_MAX)
            return -EINVAL;
        for (unsigned long c = lo; c <= hi; c++) {
            if (n == cap)
                return -E2BIG;
            cpus[n++] = (uint32_t)c;
        }
        if (*end == ',')
            end++;
        else if (*end != '\0' && *end != '\n')
            return -EINVAL;
        s = end;
    }
    if (n == 0)
        return -EINVAL;
    *ret_n = n;
    return 0;
}

/* "event=0x02" (other terms ignored). */
static int parse_event_config(const char *s, uint64_t *ret) {
    const char *p = strstr(s, "event=");
    char tmp[24];
    size_t len;

    if (!p)
        return -EINVAL;
    p += strlen("event=");
    len = strcspn(p, ",\n");
    if (len == 0 || len >= sizeof(tmp))
        return -EINVAL;
    memcpy(tmp, p, len);
    tmp[len] = '\0';
    return safe_atou64(tmp, ret);
}

/* The kernel's scale is 2^-32 J; accept any exact power of two 2^-k J, k in 0..63, so the
 * unit stays an exact ratio. */
static int parse_scale(const char *s, struct energy_unit *ret) {
    double d;
    uint64_t bits;
    int exp, r;

    r = safe_atod(s, &d);
    if (r < 0)
        return r;
    memcpy(&bits, &d, sizeof(bits));
    if ((bits & ((UINT64_C(1) << 52) - 1)) != 0 || (bits >> 63) != 0)
        return -EINVAL; /* not a power of two, or negative */
    exp = (int)((bits >> 52) & 0x7ff) - 1023;
    if (exp > 0 || exp < -63)
        return -EINVAL;
    *ret = (struct energy_unit){UINT64_C(1000000), UINT64_C(1) << (unsigned)-exp};
    return 0;
}

static int read_event(int sys_fd, const char *event, uint64_t *ret_config,
                      struct energy_unit *ret_unit) {
    char path[128], buf[64];
    int r;

    (void)snprintf(path, sizeof(path), PMU_DIR "/events/%s", event);
    r = read_file_into_at(sys_fd, path, buf, sizeof(buf));
    if (r < 0)
        return r;
    r = parse_event_config(buf, ret_config);
    if (r < 0)
        return r;
    (void)snprintf(path, sizeof(path), PMU_DIR "/events/%s.scale", event);
    r = read_file_into_at(sys_fd, path, buf, sizeof(buf));
    if (r < 0)
        return r;
    return parse_scale(buf, ret_unit);
}

static void explain_perf(const struct rapl_options *o, int err, const char *object, char *reason,
                         size_t size) {
    char obj[160], paranoid[16];

    if ((err == -EACCES || err == -EPERM) &&
        read_file_into_at(o->proc_fd, "sys/kernel/perf_event_paranoid", paranoid,
                          sizeof(paranoid)) > 0) {
        paranoid[strcspn(paranoid, "\n")] = '\0';
        (void)snprintf(obj, sizeof(obj), "%s (perf_event_paranoid is %s)", object, paranoid);
        object = obj;
    }
    rapl_explain_error(RAPL_MODE_PERF, err, object, reason, size);
}

int rapl_perf_open(const struct rapl_options *o, struct rapl **ret, char *reason, size_t size) {
    rapl_perf_open_fn open_fn = o->perf_open ? o->perf_open : sys_perf_open;
    uint32_t type, cpus[MAX_PMU_CPUS];
    char buf[256], object[96];
    struct rapl *rapl;
    size_t n_cpus = 0;
    int r;

    r = read_file_into_at(o->sys_fd, PMU_DIR "/type", buf, sizeof(buf));
    if (r >= 0)
        r = safe_atou32(buf, &type);
    if (r >= 0)
        r = read_file_into_at(o->sys_fd, PMU_DIR "/cpumask", buf, sizeof(buf));
    if (r >= 0)
        r = parse_cpu_list(buf, cpus, ARRAY_SIZE(cpus), &n_cpus);
    if (r < 0) {
        rapl_explain_error(RAPL_MODE_PERF, r, "/sys/" PMU_DIR, reason, size);
        return r == -ENOENT ? -ENODEV : r;
    }

    rapl = rapl_new(RAPL_MODE_PERF);
    if (!rapl)
        return -ENOMEM;
    for (size_t e = 0; e < ARRAY_SIZE(perf_events); e++) {
        struct rapl_reading tmpl = {.domain = perf_events[e].domain, .modulus = 0};
        uint64_t config;

        /* Events this CPU lacks are simply not listed. */
        if (read_event(o->sys_fd, perf_events[e].event, &config, &tmpl.unit) < 0)
            continue;
        for (size_t i = 0; i < n_cpus; i++) {
            struct rapl_cpu topo;
            int fd;

            r = rapl_cpu_topology(o->sys_fd, cpus[i], &topo);
            if (r < 0)
                continue;
            tmpl.package = topo.package;
            tmpl.die = topo.die;
            if (rapl_has_domain(rapl, topo.package, topo.die, tmpl.domain))
                continue;
            fd = open_fn(type, config, (int)cpus[i], o->perf_userdata);
            if (fd >= 0)
                r = rapl_add_counter(rapl, fd, RAPL_SLOT_PERF64, 0, &tmpl);
            else
                r = fd;
            if (r < 0) {
                /* One refusal means all are refused: the cause is privilege or PMU. */
                rapl_free(rapl);
                (void)snprintf(object, sizeof(object), "perf_event_open(%s, cpu %u)",
                               perf_events[e].event, cpus[i]);
                explain_perf(o, r, object, reason, size);
                return r == -ENOENT || r == -EINVAL || r == -EOPNOTSUPP ? -ENODEV : r;
            }
        }
    }
    if (rapl->n == 0) {
        rapl_free(rapl);
        rapl_explain_error(RAPL_MODE_PERF, -ENOENT, "/sys/" PMU_DIR "/events/energy-*", reason,
                           size);
        return -ENODEV;
    }
    (void)snprintf(reason, size, "perf: power PMU type %u, %zu counters on %zu CPU%s", type,
                   rapl->n, n_cpus, n_cpus == 1 ? "" : "s");
    *ret = rapl;
    return 0;
}
