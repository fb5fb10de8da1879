/* SPDX-License-Identifier: MIT */
#include "parse_num.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

static const char *skip_space(const char *s) {
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

int safe_atou64(const char *s, uint64_t *ret_value) {
    unsigned long long v;
    char *end;
    int base = 10;

    s = skip_space(s);
    if (!isdigit((unsigned char)*s))
        return -EINVAL; /* refuses "-1", which strtoull would wrap */
    /* "0x" hex, otherwise decimal: base 0 would read "010" as octal 8. */
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        if (!isxdigit((unsigned char)s[2]))
            return -EINVAL;
        base = 16;
    }
    errno = 0;
    v = strtoull(s, &end, base);
    if (errno == ERANGE)
        return -ERANGE;
    if (end == s || *skip_space(end) != '\0')
        return -EINVAL;
    *ret_value = (uint64_t)v;
    return 0;
}

bool all_digits_n(const char *s, size_t n) {
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

int safe_atou32(const char *s, uint32_t *ret_value) {
    uint64_t v;
    int r;

    r = safe_atou64(s, &v);
    if (r < 0)
        return r;
    if (v > UINT32_MAX)
        return -ERANGE;
    *ret_value = (uint32_t)v;
    return 0;
}

int safe_atoi64(const char *s, int64_t *ret_value) {
    long long v;
    char *end;

    s = skip_space(s);
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    if (end == s || *skip_space(end) != '\0')
        return -EINVAL;
    *ret_value = (int64_t)v;
    return 0;
}

int safe_atod(const char *s, double *ret_value) {
    double v;
    char *end;

    s = skip_space(s);
    errno = 0;
    v = strtod(s, &end);
    if (errno == ERANGE)
        return -ERANGE;
    if (end == s || *skip_space(end) != '\0' || !isfinite(v))
        return -EINVAL;
    *ret_value = v;
    return 0;
}

int parse_duration_ns(const char *s, uint64_t *ret_ns) {
    static const struct {
        const char *suffix;
        uint64_t ns;
    } units[] = {
        {"ms", NSEC_PER_MSEC}, {"us", NSEC_PER_USEC},    {"ns", 1},
        {"s", NSEC_PER_SEC},   {"m", 60 * NSEC_PER_SEC}, {"h", 3600 * NSEC_PER_SEC},
    };
    double total = 0;
    bool first = true;
    const char *p = skip_space(s);

    if (*p == '\0')
        return -EINVAL;
    while (*p != '\0') {
        char *end;
        double v;
        size_t i;

        if (!isdigit((unsigned char)*p) && *p != '.')
            return -EINVAL;
        errno = 0;
        v = strtod(p, &end);
        if (errno != 0 || end == p || v < 0)
            return -EINVAL;
        p = end;
        if (*skip_space(p) == '\0' && first) { /* bare number: seconds */
            total = v * (double)NSEC_PER_SEC;
            break;
        }
        for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t len = strlen(units[i].suffix);

            if (strncmp(p, units[i].suffix, len) == 0 && !isalpha((unsigned char)p[len]))
                break;
        }
        if (i == sizeof(units) / sizeof(units[0]))
            return -EINVAL;
        total += v * (double)units[i].ns;
        first = false;
        p = skip_space(p + strlen(units[i].suffix));
    }
    if (total >= 18e18)
        return -ERANGE;
    /* Round, not truncate: 1.001 x 10^9 is 1000999999.99... in binary floating point. */
    *ret_ns = (uint64_t)(total + 0.5);
    return 0;
}
