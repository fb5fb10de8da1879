/* SPDX-License-Identifier: MIT */
#include "scenario_values.h"

#include <errno.h>
#include <string.h>

#include "parse_num.h"

/* Splits "12.5GiB" into a number part (copied to buf) and a suffix pointer. */
static int split_suffix(const char *s, char *buf, size_t size, const char **ret_suffix) {
    size_t n = 0;
    while (s[n] && (s[n] == '.' || (s[n] >= '0' && s[n] <= '9')))
        n++;
    if (n == 0 || n >= size)
        return -EINVAL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    *ret_suffix = s + n;
    return 0;
}

int sim_parse_duration_us(const char *s, uint64_t *ret_us) {
    uint64_t ns;
    int r = parse_duration_ns(s, &ns);
    if (r < 0)
        return r;
    if (ns > 0 && ns < 1000)
        return -ERANGE; /* would be 0 µs: a key switched off, not a short time */
    *ret_us = ns / 1000;
    return 0;
}

int sim_parse_power_mw(const char *s, uint32_t *ret_mw) {
    char num[32];
    const char *suffix;
    double v, scale;
    int r = split_suffix(s, num, sizeof num, &suffix);
    if (r < 0)
        return r;
    if (strcmp(suffix, "") == 0 || strcmp(suffix, "W") == 0)
        scale = 1000.0;
    else if (strcmp(suffix, "mW") == 0)
        scale = 1.0;
    else
        return -EINVAL;
    r = safe_atod(num, &v);
    if (r < 0)
        return r;
    /* Rounded half up by hand: libm would be mapped into the exporter that loads us (the
     * benchmark counts its pages against the exporter). */
    v *= scale;
    if (!(v > -0.5) || v > 100e6)
        return -ERANGE;
    *ret_mw = (uint32_t)(v + 0.5);
    return 0;
}

int sim_parse_bytes(const char *s, uint64_t *ret_bytes) {
    static const struct {
        const char *suffix;
        unsigned shift;
    } units[] = {{"", 0}, {"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};
    char num[32];
    const char *suffix;
    uint64_t v;
    int r = split_suffix(s, num, sizeof num, &suffix);
    if (r < 0)
        return r;
    r = safe_atou64(num, &v);
    if (r < 0)
        return r;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(suffix, units[i].suffix) != 0)
            continue;
        if (units[i].shift > 0 && v > (UINT64_MAX >> units[i].shift))
            return -ERANGE;
        *ret_bytes = v << units[i].shift;
        return 0;
    }
    return -EINVAL;
}

int sim_parse_percent(const char *s, uint32_t *ret_percent) {
    char num[16];
    const char *suffix;
    uint32_t v;
    int r = split_suffix(s, num, sizeof num, &suffix);
    if (r < 0)
        return r;
    if (strcmp(suffix, "") != 0 && strcmp(suffix, "%") != 0)
        return -EINVAL;
    r = safe_atou32(num, &v);
    if (r < 0)
        return r;
    if (v > 100)
        return -ERANGE;
    *ret_percent = v;
    return 0;
}

int sim_parse_fraction_ppm(const char *s, uint32_t *ret_ppm) {
    char num[32];
    const char *suffix;
    double v;
    int r = split_suffix(s, num, sizeof num, &suffix);
    if (r < 0)
        return r;
    if (strcmp(suffix, "") != 0 && strcmp(suffix, "%") != 0)
        return -EINVAL;
    r = safe_atod(num, &v);
    if (r < 0)
        return r;
    if (!(v >= 0.0) || v > 100.0)
        return -ERANGE;
    *ret_ppm = (uint32_t)(v * 10000.0 + 0.5); /* percent -> parts per million, rounded */
    return 0;
}

int sim_parse_drift(const char *s, uint32_t *ret_mw, uint64_t *ret_tau_us) {
    char power[32];
    const char *slash = strchr(s, '/');
    uint32_t mw;
    uint64_t tau;
    int r;

    if (!slash || (size_t)(slash - s) >= sizeof power)
        return -EINVAL;
    memcpy(power, s, (size_t)(slash - s));
    power[slash - s] = '\0';
    r = sim_parse_power_mw(power, &mw);
    if (r < 0)
        return r;
    r = sim_parse_duration_us(slash + 1, &tau);
    if (r < 0)
        return r;
    if (tau == 0)
        return -ERANGE;
    *ret_mw = mw;
    *ret_tau_us = tau;
    return 0;
}

int sim_parse_bool(const char *s, bool *ret_value) {
    if (!strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "true") || !strcmp(s, "1")) {
        *ret_value = true;
        return 0;
    }
    if (!strcmp(s, "no") || !strcmp(s, "off") || !strcmp(s, "false") || !strcmp(s, "0")) {
        *ret_value = false;
        return 0;
    }
    return -EINVAL;
}
