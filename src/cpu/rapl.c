/* SPDX-License-Identifier: MIT */
#include "rapl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "parse_num.h"
#include "rapl_internal.h"

static const char *const mode_names[_RAPL_MODE_MAX] = {
    [RAPL_MODE_AUTO] = "auto", [RAPL_MODE_POWERCAP] = "powercap", [RAPL_MODE_PERF] = "perf",
    [RAPL_MODE_MSR] = "msr",   [RAPL_MODE_OFF] = "off",
};

const char *rapl_mode_to_string(enum rapl_mode m) {
    return (unsigned)m < _RAPL_MODE_MAX ? mode_names[m] : NULL;
}

int rapl_mode_from_string(const char *s) {
    for (unsigned i = 0; i < _RAPL_MODE_MAX; i++)
        if (strcmp(s, mode_names[i]) == 0)
            return (int)i;
    return -EINVAL;
}

struct rapl *rapl_new(enum rapl_mode mode) {
    struct rapl *r = calloc(1, sizeof(*r));

    if (r)
        r->mode = mode;
    return r;
}

struct rapl *rapl_free(struct rapl *r) {
    if (!r)
        return NULL;
    for (size_t i = 0; i < r->n; i++)
        if (r->slots[i].fd >= 0)
            (void)close(r->slots[i].fd);
    free(r->slots);
    free(r->readings);
    free(r);
    return NULL;
}

enum rapl_mode rapl_get_mode(const struct rapl *r) {
    return r->mode;
}

size_t rapl_count(const struct rapl *r) {
    return r->n;
}

static int pread_u64(int fd, uint64_t offset, uint64_t *ret) {
    uint64_t v;
    ssize_t n;

    if (offset > (uint64_t)INT64_MAX)
        return -EINVAL;
    do
        n = pread(fd, &v, sizeof(v), (off_t)offset);
    while (n < 0 && errno == EINTR);
    /* perf event fds may refuse pread on some kernels: read() returns the same count. */
    if (n < 0 && errno == ESPIPE)
        do
            n = read(fd, &v, sizeof(v));
        while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if (n != (ssize_t)sizeof(v))
        return -EIO;
    *ret = v;
    return 0;
}

int rapl_read_slot(const struct rapl_slot *s, uint64_t *ret_raw) {
    char buf[32];
    uint64_t v;
    int r;

    switch (s->kind) {
    case RAPL_SLOT_TEXT_UJ:
        r = read_fd_into(s->fd, buf, sizeof(buf));
        if (r < 0)
            return r;
        r = safe_atou64(buf, &v);
        if (r < 0)
            return -EINVAL;
        break;
    case RAPL_SLOT_MSR32:
        r = pread_u64(s->fd, s->offset, &v);
        if (r < 0)
            return r;
        v &= UINT32_MAX; /* bits 63:32 are reserved */
        break;
    case RAPL_SLOT_PERF64:
        r = pread_u64(s->fd, 0, &v);
        if (r < 0)
            return r;
        break;
    default:
        return -EINVAL;
    }
    *ret_raw = v;
    return 0;
}

int rapl_add_counter(struct rapl *r, int fd, enum rapl_slot_kind kind, uint64_t offset,
                     const struct rapl_reading *tmpl) {
    _cleanup_(closep) int owned = fd;
    struct rapl_slot slot = {fd, kind, offset};
    uint64_t raw;
    int k;

    k = rapl_read_slot(&slot, &raw);
    if (k < 0)
        return k;
    if (tmpl->modulus != 0 && raw >= tmpl->modulus)
        return -ERANGE;
    k = grow_array(&r->slots, &r->cap_slots, r->n + 1, sizeof(*r->slots));
    if (k < 0)
        return k;
    k = grow_array(&r->readings, &r->cap_readings, r->n + 1, sizeof(*r->readings));
    if (k < 0)
        return k;
    slot.fd = TAKE_FD(owned);
    r->slots[r->n] = slot;
    r->readings[r->n] = *tmpl;
    r->readings[r->n].raw = raw;
    r->readings[r->n].valid = true;
    r->n++;
    return 0;
}

#define ANY_DIE UINT32_MAX

/* Whether one of the first n counters is of package's domain on die (or on any). */
static bool has_domain_in(const struct rapl *r, size_t n, uint32_t package, uint32_t die,
                          enum rapl_domain domain) {
    for (size_t i = 0; i < n; i++)
        if (r->readings[i].package == package && r->readings[i].domain == domain &&
            (die == ANY_DIE || r->readings[i].die == die))
            return true;
    return false;
}

bool rapl_has_domain(const struct rapl *r, uint32_t package, uint32_t die,
                     enum rapl_domain domain) {
    return has_domain_in(r, r->n, package, die, domain);
}

int rapl_reopen_unread(struct rapl *r, int sys_fd) {
    return r->mode == RAPL_MODE_POWERCAP ? rapl_powercap_reopen_unread(r, sys_fd, &r->cpu) : 0;
}

int rapl_sample(struct rapl *r, const struct rapl_reading **ret_readings, size_t *ret_n) {
    int valid = 0;

    for (size_t i = 0; i < r->n; i++) {
        struct rapl_reading *rd = &r->readings[i];
        uint64_t raw;

        rd->valid =
            rapl_read_slot(&r->slots[i], &raw) >= 0 && (rd->modulus == 0 || raw < rd->modulus);
        if (rd->valid) {
            rd->raw = raw;
            valid++;
        }
    }
    *ret_readings = r->readings;
    *ret_n = r->n;
    return r->n > 0 && valid == 0 ? -EIO : valid;
}

void rapl_explain_error(enum rapl_mode mode, int err, const char *object, char *buf, size_t size) {
    const char *fix;
    int e = err < 0 ? -err : err;

    switch (mode) {
    case RAPL_MODE_POWERCAP:
        if (e == EACCES || e == EPERM)
            fix = "energy_uj is readable by root only since Linux 5.10 (CVE-2020-8694): run "
                  "as root, or grant read access with a udev rule or `chmod 0444` on "
                  "/sys/class/powercap/intel-rapl:*/energy_uj";
        else if (e == ENOENT || e == ENODEV)
            fix = "no intel-rapl powercap zones: load the intel_rapl_msr module (`modprobe "
                  "intel_rapl_msr`) or use --rapl-source=msr";
        else
            fix = "unexpected error";
        break;
    case RAPL_MODE_MSR:
        if (e == EACCES || e == EPERM)
            fix = "reading /dev/cpu/N/msr needs CAP_SYS_RAWIO and read permission on the "
                  "device (run as root, or grant the capability; msr-safe allows non-root "
                  "access)";
        else if (e == ENOENT || e == ENXIO || e == ENODEV)
            fix = "no MSR device: load the msr module (`modprobe msr`)";
        else if (e == EIO)
            fix = "the CPU does not implement this RAPL register";
        else if (e == EOPNOTSUPP)
            fix = "CPU vendor/family has no known RAPL MSRs";
        else if (e == EDOM)
            fix = "this Atom encodes its RAPL energy unit the other way (2^ESU uJ), which the "
                  "MSR source does not decode: use --rapl-source=powercap (the kernel does)";
        else
            fix = "unexpected error";
        break;
    case RAPL_MODE_PERF:
        if (e == EACCES || e == EPERM)
            fix = "CPU-wide perf events need CAP_PERFMON (or CAP_SYS_ADMIN), or "
                  "kernel.perf_event_paranoid <= 0 (`sysctl kernel.perf_event_paranoid=0`)";
        else if (e == ENOENT || e == ENODEV || e == EINVAL || e == EOPNOTSUPP)
            fix = "no usable perf 'power' PMU on this kernel/CPU";
        else
            fix = "unexpected error";
        break;
    default:
        fix = "";
        break;
    }
    (void)snprintf(buf, size, "%s: %s: %s (%s)", rapl_mode_to_string(mode), object, strerror(e),
                   fix);
}

int rapl_read_cpu_id(int proc_fd, struct cpu_id *ret_id) {
    _cleanup_(freep) char *buf = NULL;
    size_t size;
    int r;

    /* Only the first processor block is parsed, but the file is read whole: it is small
     * enough (a few kB per CPU) and the read must be one consistent snapshot. */
    r = read_virtual_file_at(proc_fd, "cpuinfo", 4U << 20, &buf, &size);
    if (r < 0)
        return r;
    return cpuinfo_parse(buf, size, ret_id);
}

int rapl_cpu_of(const struct rapl_options *o, struct cpu_id *ret_id) {
    if (o->cpu.vendor != CPU_VENDOR_UNKNOWN) {
        *ret_id = o->cpu;
        return 0;
    }
    return rapl_read_cpu_id(o->proc_fd, ret_id);
}

/* Appends s to the NUL-terminated buf of `size` bytes, cutting it short if needed. */
static void append(char *buf, size_t size, const char *s) {
    size_t used = strnlen(buf, size), room;

    if (used + 1 >= size)
        return;
    room = size - used - 1;
    strncat(buf + used, s, room);
}

typedef int (*backend_open_fn)(const struct rapl_options *o, struct rapl **ret, char *reason,
                               size_t size);

/* The MSR interface is the only one that reads the devices root (cpu/N/msr), and it needs
 * /proc/cpuinfo for the model's units; powercap and perf need sysfs alone. */
static int msr_open(const struct rapl_options *o, struct rapl **ret, char *reason, size_t size) {
    if (o->dev_fd < 0 || o->proc_fd < 0) {
        (void)snprintf(reason, size,
                       "msr: %s cannot be opened (MSRs are read from <dev>/cpu/N/msr)",
                       o->dev_fd < 0 ? "the devices root (--path.dev)" : "procfs (--path.procfs)");
        return -ENOENT;
    }
    return rapl_msr_open(o, ret, reason, size);
}

static backend_open_fn backend_for(enum rapl_mode m) {
    switch (m) {
    case RAPL_MODE_POWERCAP:
        return rapl_powercap_open;
    case RAPL_MODE_PERF:
        return rapl_perf_open;
    case RAPL_MODE_MSR:
        return msr_open;
    default:
        return NULL;
    }
}

/* The order `auto` tries: kernel interfaces first (they apply the model quirks), raw MSRs
 * last. powercap before perf because it is the common one (node_exporter, Kepler read it),
 * so users see the same numbers. */
static const enum rapl_mode auto_order[] = {RAPL_MODE_POWERCAP, RAPL_MODE_PERF, RAPL_MODE_MSR};

/* The error that says most about why nothing worked: a permission problem beats absence. */
static int worse_error(int a, int b) {
    if (a == -EACCES || a == -EPERM)
        return a;
    if (b == -EACCES || b == -EPERM)
        return b;
    return a != -ENODEV && a != -ENOENT && a != 0 ? a : b;
}

/*
 * AMD's RAPL counters are per package, but since Linux 6.10 a Zen 4 or later part names
 * each CCD a die (CPUID leaf 0x80000026): read once per die, a package of 12 CCDs was
 * counted 12 times. On AMD and Hygon only the first counter of each (package, domain) is
 * kept, as die 0. The source keeps the CPU it was opened for, for a reopen.
 */
static void keep_one_per_package(const struct rapl_options *o, struct rapl *r) {
    size_t kept = 0;

    r->cpu = o->cpu;
    if (o->cpu.vendor != CPU_VENDOR_AMD && o->cpu.vendor != CPU_VENDOR_HYGON)
        return;
    r->dies_merged = true;
    for (size_t i = 0; i < r->n; i++) {
        struct rapl_reading rd = r->readings[i];

        if (has_domain_in(r, kept, rd.package, ANY_DIE, rd.domain)) {
            if (r->slots[i].fd >= 0)
                (void)close(r->slots[i].fd);
            continue;
        }
        rd.die = 0;
        r->slots[kept] = r->slots[i];
        r->readings[kept++] = rd;
    }
    r->n = kept;
}

int rapl_open(const struct rapl_options *given, struct rapl **ret, struct rapl_status *status) {
    struct rapl_options opts = *given, *o = &opts;
    char tried[RAPL_REASON_MAX] = "";
    int err = 0, r;

    *status = (struct rapl_status){.chosen = RAPL_MODE_OFF};
    if ((unsigned)o->mode >= _RAPL_MODE_MAX)
        return -EINVAL;
    /* Once for every backend and the check below: all go by the same vendor. */
    if (rapl_cpu_of(given, &opts.cpu) < 0)
        opts.cpu = (struct cpu_id){.vendor = CPU_VENDOR_UNKNOWN};
    status->cpu = opts.cpu;
    if (o->mode == RAPL_MODE_OFF) {
        status->error = -ENODEV;
        (void)snprintf(status->reason, sizeof(status->reason), "off: disabled by configuration");
        return -ENODEV;
    }
    if (o->mode != RAPL_MODE_AUTO) {
        r = backend_for(o->mode)(o, ret, status->reason, sizeof(status->reason));
        if (r >= 0) {
            status->chosen = o->mode;
            keep_one_per_package(o, *ret);
        }
        status->error = r < 0 ? r : 0;
        log_debug("rapl: %s", status->reason);
        return r < 0 ? r : 0;
    }

    for (size_t i = 0; i < ARRAY_SIZE(auto_order); i++) {
        char reason[RAPL_REASON_MAX];

        r = backend_for(auto_order[i])(o, ret, reason, sizeof(reason));
        if (r >= 0) {
            status->chosen = auto_order[i];
            keep_one_per_package(o, *ret);
            append(status->reason, sizeof(status->reason), "auto: ");
            append(status->reason, sizeof(status->reason), reason);
            if (tried[0]) {
                append(status->reason, sizeof(status->reason), "; not usable before it: ");
                append(status->reason, sizeof(status->reason), tried);
            }
            log_debug("rapl: %s", status->reason);
            return 0;
        }
        err = i == 0 ? r : worse_error(err, r);
        if (tried[0])
            append(tried, sizeof(tried), "; ");
        append(tried, sizeof(tried), reason);
    }
    status->error = err;
    append(status->reason, sizeof(status->reason), "auto: no RAPL interface: ");
    append(status->reason, sizeof(status->reason), tried);
    log_debug("rapl: %s", status->reason);
    return err;
}
