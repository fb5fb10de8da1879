/* SPDX-License-Identifier: MIT */
#include "cpuinfo.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "parse_num.h"

static const struct {
    const char *name;
    enum cpu_vendor vendor;
} vendors[] = {
    {"GenuineIntel", CPU_VENDOR_INTEL},
    {"AuthenticAMD", CPU_VENDOR_AMD},
    {"HygonGenuine", CPU_VENDOR_HYGON},
};

const char *cpu_vendor_to_string(enum cpu_vendor v) {
    for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
        if (vendors[i].vendor == v)
            return vendors[i].name;
    return "unknown";
}

/* Strips spaces and tabs at both ends of [*start, *end). */
static void trim(const char **start, const char **end) {
    while (*start < *end && (**start == ' ' || **start == '\t'))
        (*start)++;
    while (*end > *start && ((*end)[-1] == ' ' || (*end)[-1] == '\t' || (*end)[-1] == '\r'))
        (*end)--;
}

static bool key_is(const char *k, const char *k_end, const char *want) {
    size_t n = strlen(want);

    return (size_t)(k_end - k) == n && memcmp(k, want, n) == 0;
}

static int parse_u32_span(const char *v, const char *v_end, uint32_t *ret) {
    char tmp[16];
    size_t n = (size_t)(v_end - v);

    if (n == 0 || n >= sizeof(tmp))
        return -EINVAL;
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    return safe_atou32(tmp, ret);
}

int cpuinfo_parse(const char *buf, size_t size, struct cpu_id *ret_id) {
    struct cpu_id id = {CPU_VENDOR_UNKNOWN, 0, 0};
    bool have_vendor = false, have_family = false, have_model = false, in_block = false;
    const char *p = buf, *end = buf + size;
    int r;

    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = eol ? eol : end;
        const char *colon = memchr(p, ':', (size_t)(line_end - p));
        const char *k = p, *k_end, *v, *v_end = line_end;

        p = eol ? eol + 1 : end;
        if (k == line_end || (line_end - k == 1 && *k == '\r')) {
            /* A blank line ends a processor block; only the first one counts. */
            if (in_block)
                break;
            continue;
        }
        in_block = true;
        if (!colon)
            continue;
        k_end = colon;
        v = colon + 1;
        trim(&k, &k_end);
        trim(&v, &v_end);

        if (!have_vendor && key_is(k, k_end, "vendor_id")) {
            have_vendor = true;
            for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
                if (key_is(v, v_end, vendors[i].name))
                    id.vendor = vendors[i].vendor;
        } else if (!have_family && key_is(k, k_end, "cpu family")) {
            r = parse_u32_span(v, v_end, &id.family);
            if (r < 0)
                return r;
            have_family = true;
        } else if (!have_model && key_is(k, k_end, "model")) {
            r = parse_u32_span(v, v_end, &id.model);
            if (r < 0)
                return r;
            have_model = true;
        }
    }
    if (!have_vendor || !have_family || !have_model)
        return -ENODATA;
    *ret_id = id;
    return 0;
}
