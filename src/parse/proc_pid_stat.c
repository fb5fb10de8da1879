/* SPDX-License-Identifier: MIT */
#include "proc_pid_stat.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define LAST_FIELD 22

/* Parses [s, s+n) as an unsigned decimal without sign, whitespace or overflow. */
static int parse_dec_u64(const char *s, size_t n, uint64_t *ret) {
    uint64_t v = 0;

    if (n == 0 || n > 20)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        unsigned d;

        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -EINVAL;
        v = v * 10 + d;
    }
    *ret = v;
    return 0;
}

static int parse_u32_max(const char *s, size_t n, uint32_t max, uint32_t *ret) {
    uint64_t v;
    int r;

    r = parse_dec_u64(s, n, &v);
    if (r < 0)
        return r;
    if (v > max)
        return -EINVAL;
    *ret = (uint32_t)v;
    return 0;
}

static bool is_letter(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool field_kept(unsigned field) {
    return field == 4 || field == 9 || (field >= 14 && field <= 17) || field == 20 || field == 22;
}

/* The kept fields the kernel prints signed (cutime, cstime: %ld, never negative in
 * practice); a negative one is kept as 0. */
static bool field_signed(unsigned field) {
    return field == 16 || field == 17;
}

/* Reads one of fields 4..22 at *pp in a single pass: 1 to 20 digits, after a '-' for the
 * fields the kernel may print signed (for those not kept only the syntax is checked). */
static int scan_field(const char **pp, const char *end, bool keep, bool is_signed, uint64_t *ret) {
    const char *p = *pp, *digits;
    bool overflow = false, negative = false;
    uint64_t v = 0;

    if ((!keep || is_signed) && p < end && *p == '-') {
        negative = true;
        p++;
    }
    for (digits = p; p < end && *p >= '0' && *p <= '9'; p++)
        if (keep) {
            overflow |= __builtin_mul_overflow(v, 10, &v);
            overflow |= __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v);
        }
    if (p == digits || p - digits > 20 || (keep && overflow))
        return -EINVAL;
    *pp = p;
    *ret = negative ? 0 : v;
    return 0;
}

/* Stores one kept field into st, range-checked. */
static int store_field(struct proc_pid_stat *st, unsigned field, uint64_t v) {
    switch (field) {
    case 4:
        if (v >= PROC_PID_LIMIT)
            return -EINVAL;
        st->ppid = (uint32_t)v;
        return 0;
    case 9:
        if (v > UINT32_MAX)
            return -EINVAL;
        st->flags = (uint32_t)v;
        return 0;
    case 20:
        if (v > UINT32_MAX)
            return -EINVAL;
        st->num_threads = (uint32_t)v;
        return 0;
    case 14:
        st->utime = v;
        return 0;
    case 15:
        st->stime = v;
        return 0;
    case 16:
        st->cutime = v;
        return 0;
    case 17:
        st->cstime = v;
        return 0;
    case 22:
        st->starttime = v;
        return 0;
    default: /* not kept (field_kept) */
        return 0;
    }
}

int proc_pid_stat_parse(const char *buf, size_t len, struct proc_pid_stat *ret) {
    struct proc_pid_stat st = {0};
    const char *open, *close, *p, *end = buf + len;
    size_t comm_len;
    unsigned field;
    int r;

    if (!buf || len == 0 || memchr(buf, '\0', len))
        return -EINVAL;

    /* Field 1: the pid, then " (". */
    open = memchr(buf, '(', len);
    if (!open || open - buf < 2 || open[-1] != ' ')
        return -EINVAL;
    r = parse_u32_max(buf, (size_t)(open - 1 - buf), PROC_PID_LIMIT - 1, &st.pid);
    if (r < 0 || st.pid == 0)
        return -EINVAL;

    /* Field 2: up to the last ')' in the whole buffer, since comm may contain ')'. */
    close = memrchr(open + 1, ')', (size_t)(end - open - 1));
    if (!close)
        return -EINVAL;
    comm_len = (size_t)(close - open - 1);
    if (comm_len >= sizeof(st.comm))
        comm_len = sizeof(st.comm) - 1;
    memcpy(st.comm, open + 1, comm_len);
    st.comm[comm_len] = '\0';

    /* Field 3: one letter. */
    p = close + 1;
    if (end - p < 3 || p[0] != ' ' || !is_letter(p[1]) || p[2] != ' ')
        return -EINVAL;
    st.state = p[1];
    p += 3;

    /* Fields 4..22, separated by exactly one space as the kernel prints them. */
    for (field = 4; field <= LAST_FIELD; field++) {
        bool keep = field_kept(field);
        uint64_t v;

        r = scan_field(&p, end, keep, field_signed(field), &v);
        if (r < 0)
            return r;
        if (keep) {
            r = store_field(&st, field, v);
            if (r < 0)
                return r;
        }
        if (field < LAST_FIELD) {
            if (p >= end || *p != ' ')
                return -EINVAL;
            p++;
        } else if (p < end && *p != ' ' && *p != '\n')
            return -EINVAL;
    }

    *ret = st;
    return 0;
}
