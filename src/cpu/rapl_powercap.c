/* SPDX-License-Identifier: MIT */
/* RAPL through powercap sysfs: <sysfs>/class/powercap/intel-rapl[-mmio]:N[:M]. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "parse_num.h"
#include "rapl_internal.h"

#define POWERCAP_DIR "class/powercap"
#define ZONE_NAME_MAX 64
#define MAX_ZONES 1024

/* Control types that carry RAPL; -mmio mirrors the package domain on client SoCs. */
enum control_type {
    CONTROL_INTEL_RAPL,
    CONTROL_INTEL_RAPL_MMIO,
};

struct zone {
    char dir[ZONE_NAME_MAX];
    enum control_type type;
    uint32_t index[2]; /* top-level index, sub-zone index */
    unsigned depth;    /* 1: top level, 2: sub-zone */
};

static int parse_hex_u32(const char *s, size_t len, uint32_t *ret) {
    uint32_t v = 0;

    if (len == 0 || len > 8)
        return -EINVAL;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        uint32_t d;

        if (c >= '0' && c <= '9')
            d = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (uint32_t)(c - 'a' + 10);
        else
            return -EINVAL;
        v = v << 4 | d;
    }
    *ret = v;
    return 0;
}

/* Zone directories are named "<type>:<hex>[:<hex>]" (powercap_sys.c uses "%s:%x"). */
static int parse_zone_dir(const char *name, struct zone *ret) {
    struct zone z = {0};
    const char *p, *colon = strchr(name, ':');
    size_t type_len;

    if (!colon || strlen(name) >= sizeof(z.dir))
        return -EINVAL;
    type_len = (size_t)(colon - name);
    if (type_len == strlen("intel-rapl") && strncmp(name, "intel-rapl", type_len) == 0)
        z.type = CONTROL_INTEL_RAPL;
    else if (type_len == strlen("intel-rapl-mmio") &&
             strncmp(name, "intel-rapl-mmio", type_len) == 0)
        z.type = CONTROL_INTEL_RAPL_MMIO;
    else
        return -EINVAL;
    p = colon + 1;
    while (z.depth < 2) {
        const char *next = strchr(p, ':');
        size_t len = next ? (size_t)(next - p) : strlen(p);

        if (parse_hex_u32(p, len, &z.index[z.depth]) < 0)
            return -EINVAL;
        z.depth++;
        if (!next)
            break;
        p = next + 1;
        if (z.depth == 2)
            return -EINVAL; /* deeper than any RAPL zone */
    }
    strcpy(z.dir, name);
    *ret = z;
    return 0;
}

static int compare_zone(const void *a, const void *b) {
    const struct zone *x = a, *y = b;

    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    for (unsigned i = 0; i < 2; i++) {
        uint32_t xi = i < x->depth ? x->index[i] : 0, yi = i < y->depth ? y->index[i] : 0;

        if (i < x->depth && i >= y->depth)
            return 1;
        if (i >= x->depth && i < y->depth)
            return -1;
        if (xi != yi)
            return xi < yi ? -1 : 1;
    }
    return 0;
}

static int parse_dec_suffix(const char *s, uint32_t *ret) {
    if (*s < '0' || *s > '9')
        return -EINVAL;
    return safe_atou32(s, ret);
}

int rapl_zone_name_parse(const char *name, enum rapl_domain *ret_domain, uint32_t *ret_package,
                         uint32_t *ret_die, bool *ret_has_package) {
    uint32_t package = 0, die = 0;
    const char *p;
    int d;

    if (strncmp(name, "package-", 8) == 0) {
        char tmp[16];
        const char *die_part = strstr(name + 8, "-die-");
        size_t len = die_part ? (size_t)(die_part - (name + 8)) : strlen(name + 8);

        if (len == 0 || len >= sizeof(tmp))
            return -EINVAL;
        memcpy(tmp, name + 8, len);
        tmp[len] = '\0';
        if (parse_dec_suffix(tmp, &package) < 0)
            return -EINVAL;
        if (die_part && parse_dec_suffix(die_part + 5, &die) < 0)
            return -EINVAL;
        *ret_domain = RAPL_DOMAIN_PACKAGE;
        *ret_package = package;
        *ret_die = die;
        *ret_has_package = true;
        return 0;
    }
    if (strncmp(name, "psys", 4) == 0) {
        /* "psys" for the first package, "psys-P" for the others. */
        p = name + 4;
        if (*p == '-' && parse_dec_suffix(p + 1, &package) < 0)
            return -EINVAL;
        if (*p != '\0' && *p != '-')
            return -EINVAL;
        *ret_domain = RAPL_DOMAIN_PSYS;
        *ret_package = package;
        *ret_die = 0;
        *ret_has_package = true;
        return 0;
    }
    d = rapl_domain_from_string(name);
    if (d < 0 || d == RAPL_DOMAIN_PACKAGE || d == RAPL_DOMAIN_PSYS)
        return -EINVAL;
    *ret_domain = (enum rapl_domain)d;
    *ret_package = 0;
    *ret_die = 0;
    *ret_has_package = false;
    return 0;
}

static int read_zone_name(int sys_fd, const char *dir, char *buf, size_t size) {
    char path[ZONE_NAME_MAX + 64];
    int r;

    (void)snprintf(path, sizeof(path), POWERCAP_DIR "/%s/name", dir);
    r = read_file_into_at(sys_fd, path, buf, size);
    if (r < 0)
        return r;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static int list_zones(int sys_fd, struct zone **ret_zones, size_t *ret_n) {
    _cleanup_(closedirp) DIR *d = NULL;
    _cleanup_(freep) struct zone *zones = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int r;

    r = opendir_at(sys_fd, POWERCAP_DIR, false, &d);
    if (r < 0)
        return r;
    while ((errno = 0, de = readdir(d))) {
        struct zone z;

        if (parse_zone_dir(de->d_name, &z) < 0)
            continue;
        if (n >= MAX_ZONES)
            return -E2BIG;
        r = grow_array(&zones, &cap, n + 1, sizeof(*zones));
        if (r < 0)
            return r;
        zones[n++] = z;
    }
    if (errno != 0)
        return -errno;
    if (n > 1)
        qsort(zones, n, sizeof(*zones), compare_zone);
    *ret_zones = TAKE_PTR(zones);
    *ret_n = n;
    return 0;
}

/* The top-level zone a sub-zone belongs to (zones are sorted, so it is found before). */
static const struct zone *find_parent(const struct zone *zones, size_t n, const struct zone *z) {
    for (size_t i = 0; i < n; i++)
        if (zones[i].type == z->type && zones[i].depth == 1 && zones[i].index[0] == z->index[0])
            return &zones[i];
    return NULL;
}

/* The domain, package and die a zone counts; a sub-zone (dram, core) takes its package and
 * die from its parent. Returns 0, or < 0 for a zone that is no RAPL domain of a package. */
static int zone_identity(int sys_fd, const struct zone *zones, size_t n, const struct zone *z,
                         enum rapl_domain *ret_domain, uint32_t *ret_package, uint32_t *ret_die) {
    const struct zone *top = z->depth == 1 ? z : find_parent(zones, n, z);
    char name[ZONE_NAME_MAX], top_name[ZONE_NAME_MAX];
    uint32_t package, die, top_package, top_die;
    enum rapl_domain domain, top_domain;
    bool has_package;

    if (!top || read_zone_name(sys_fd, z->dir, name, sizeof(name)) < 0 ||
        rapl_zone_name_parse(name, &domain, &package, &die, &has_package) < 0)
        return -EINVAL;
    if (!has_package) {
        if (read_zone_name(sys_fd, top->dir, top_name, sizeof(top_name)) < 0 ||
            rapl_zone_name_parse(top_name, &top_domain, &top_package, &top_die, &has_package) < 0 ||
            top_domain != RAPL_DOMAIN_PACKAGE)
            return -EINVAL;
        package = top_package;
        die = top_die;
    }
    *ret_domain = domain;
    *ret_package = package;
    *ret_die = die;
    return 0;
}

/* Whether AMD's per-core "core" zone, which reads one core only: never counted. */
static bool skipped_core_zone(const struct cpu_id *cpu, enum rapl_domain domain) {
    return domain == RAPL_DOMAIN_CORE &&
           (cpu->vendor == CPU_VENDOR_AMD || cpu->vendor == CPU_VENDOR_HYGON);
}

/* Opens one zone's counter and adds it. Returns 1 when added, 0 when skipped on purpose,
 * or -errno. */
static int add_zone(struct rapl *rapl, int sys_fd, const struct zone *z,
                    const struct rapl_reading *tmpl, char *detail, size_t size) {
    char path[ZONE_NAME_MAX + 64];
    struct rapl_reading rd = *tmpl;
    uint64_t max_range;
    int fd, r;

    (void)snprintf(path, sizeof(path), POWERCAP_DIR "/%s/max_energy_range_uj", z->dir);
    r = read_u64_at(sys_fd, path, &max_range);
    if (r < 0 || max_range == 0 || max_range == UINT64_MAX) {
        (void)snprintf(detail, size, "%s", path);
        return r < 0 ? r : -EINVAL;
    }
    rd.modulus = max_range + 1;
    rd.unit = ENERGY_UNIT_UJ;

    (void)snprintf(path, sizeof(path), POWERCAP_DIR "/%s/energy_uj", z->dir);
    (void)snprintf(detail, size, "%s", path);
    fd = openat(sys_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    r = rapl_add_counter(rapl, fd, RAPL_SLOT_TEXT_UJ, 0, &rd);
    return r < 0 ? r : 1;
}

int rapl_powercap_open(const struct rapl_options *o, struct rapl **ret, char *reason, size_t size) {
    _cleanup_(freep) struct zone *zones = NULL;
    struct rapl *rapl = NULL;
    struct cpu_id cpu = {CPU_VENDOR_UNKNOWN, 0, 0};
    char detail[ZONE_NAME_MAX + 64] = "", names[256] = "";
    size_t n = 0, used = 0, skipped = 0;
    int first_error = 0, r;

    r = list_zones(o->sys_fd, &zones, &n);
    if (r < 0 || n == 0) {
        rapl_explain_error(RAPL_MODE_POWERCAP, r < 0 ? r : -ENODEV, "/sys/" POWERCAP_DIR, reason,
                           size);
        return r < 0 && r != -ENOENT ? r : -ENODEV;
    }
    /* Only to drop AMD's "core" sub-zone, which reads one core only; optional. */
    (void)rapl_cpu_of(o, &cpu);

    rapl = rapl_new(RAPL_MODE_POWERCAP);
    if (!rapl)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const struct zone *z = &zones[i];
        struct rapl_reading tmpl = {0};
        uint32_t package, die;
        enum rapl_domain domain;
        int k;

        if (zone_identity(o->sys_fd, zones, n, z, &domain, &package, &die) < 0)
            continue;
        if (skipped_core_zone(&cpu, domain)) {
            skipped++;
            continue;
        }
        /* The mmio package zone mirrors the MSR one: never count a domain twice. */
        if (rapl_has_domain(rapl, package, die, domain)) {
            skipped++;
            continue;
        }
        tmpl.package = package;
        tmpl.die = die;
        tmpl.domain = domain;
        k = add_zone(rapl, o->sys_fd, z, &tmpl, detail, sizeof(detail));
        if (k == -ENOMEM) {
            rapl_free(rapl);
            return k;
        }
        if (k < 0) {
            if (first_error == 0) {
                first_error = k;
                rapl_explain_error(RAPL_MODE_POWERCAP, k, detail, reason, size);
            }
            continue;
        }
        k = snprintf(names + used, sizeof(names) - used, "%s%s", used ? " " : "", z->dir);
        if (k > 0)
            used = MIN(sizeof(names) - 1, used + (size_t)k);
    }
    if (rapl->n == 0) {
        rapl_free(rapl);
        if (first_error == 0) {
            rapl_explain_error(RAPL_MODE_POWERCAP, -ENODEV, "/sys/" POWERCAP_DIR, reason, size);
            return -ENODEV;
        }
        return first_error;
    }
    (void)snprintf(reason, size, "powercap: %zu zone%s (%s)%s%s%s", rapl->n,
                   rapl->n == 1 ? "" : "s", names,
                   skipped ? ", duplicate or per-core zones skipped" : "",
                   first_error ? "; some zones unreadable: " : "", first_error ? detail : "");
    *ret = rapl;
    return 0;
}

/* The zone that now counts what reading rd counted, wherever the kernel numbered it when it
 * registered it anew; NULL if none. Dies merged (AMD's CCDs): any die of the package. */
static const struct zone *zone_counting(int sys_fd, const struct zone *zones, size_t n,
                                        const struct rapl_reading *rd, bool dies_merged,
                                        const struct cpu_id *cpu) {
    for (size_t i = 0; i < n; i++) {
        uint32_t package, die;
        enum rapl_domain domain;

        if (zone_identity(sys_fd, zones, n, &zones[i], &domain, &package, &die) == 0 &&
            !skipped_core_zone(cpu, domain) && domain == rd->domain && package == rd->package &&
            (dies_merged || die == rd->die))
            return &zones[i];
    }
    return NULL;
}

int rapl_powercap_reopen_unread(struct rapl *rapl, int sys_fd, const struct cpu_id *cpu) {
    _cleanup_(freep) struct zone *zones = NULL;
    size_t n = 0;
    int reopened = 0;

    if (list_zones(sys_fd, &zones, &n) < 0)
        return 0;
    for (size_t i = 0; i < rapl->n; i++) {
        struct rapl_slot *slot = &rapl->slots[i], fresh = *slot;
        const struct rapl_reading *rd = &rapl->readings[i];
        const struct zone *z;
        char path[ZONE_NAME_MAX + 64];
        uint64_t raw;

        if (rd->valid || slot->kind != RAPL_SLOT_TEXT_UJ)
            continue;
        z = zone_counting(sys_fd, zones, n, rd, rapl->dies_merged, cpu);
        if (!z)
            continue;
        (void)snprintf(path, sizeof(path), POWERCAP_DIR "/%s/energy_uj", z->dir);
        fresh.fd = openat(sys_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fresh.fd < 0)
            continue;
        if (rapl_read_slot(&fresh, &raw) < 0 || (rd->modulus != 0 && raw >= rd->modulus)) {
            (void)close(fresh.fd);
            continue;
        }
        (void)close(slot->fd);
        slot->fd = fresh.fd;
        reopened++;
    }
    return reopened;
}
