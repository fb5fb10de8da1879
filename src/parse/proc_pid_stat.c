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

/* A field the kernel may print signed: syntax check only, the value is not used. */
static bool is_dec_token(const char *s, size_t n) {
    if (n > 0 && s[0] == '-') {
        s++;
        n--;
    }
    if (n == 0 || n > 20)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
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

/* Stores one numeric field (4..22) into st; fields we do not keep are syntax-checked. */
static int store_field(struct proc_pid_stat *st, unsigned field, const char *s, size_t n) {
    switch (field) {
    case 4:
        return parse_u32_max(s, n, PROC_PID_LIMIT - 1, &st->ppid);
    case 9:
        return parse_u32_max(s, n, UINT32_MAX, &st->flags);
    case 14:
        return parse_dec_u64(s, n, &st->utime);
    case 15:
        return parse_dec_u64(s, n, &st->stime);
    case 20:
        return parse_u32_max(s, n, UINT32_MAX, &st->num_threads);
    case 22:
        return parse_dec_u64(s, n, &st->starttime);
    default:
        return is_dec_token(s, n) ? 0 : -EINVAL;
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
    close = NULL;
    for (const char *q = end; q > open + 1;)
        if (*--q == ')') {
            close = q;
            break;
        }
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
        const char *tok = p;

        while (p < end && *p != ' ' && *p != '\n')
            p++;
        r = store_field(&st, field, tok, (size_t)(p - tok));
        if (r < 0)
            return r;
        if (field < LAST_FIELD) {
            if (p >= end || *p != ' ')
                return -EINVAL;
            p++;
        }
    }

    *ret = st;
    return 0;
}
