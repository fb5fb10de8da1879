/* SPDX-License-Identifier: MIT */
#include "proc_cpu_stat.h"

#include <errno.h>
#include <string.h>

#include "parse_num.h"

#define CPU_FIELDS 10
#define CPU_FIELDS_REQUIRED 4

/* Finds the line that starts with "cpu " (the aggregate, not "cpu0"). */
static const char *find_cpu_line(const char *buf, size_t size, const char **ret_end) {
    const char *p = buf, *end = buf + size;

    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = eol ? eol : end;

        if (line_end - p >= 4 && memcmp(p, "cpu ", 4) == 0) {
            *ret_end = line_end;
            return p + 4;
        }
        p = eol ? eol + 1 : end;
    }
    return NULL;
}

/* The "cpu<N>" lines: the CPUs online when the file was read. */
static unsigned count_cpu_lines(const char *buf, size_t size) {
    const char *p = buf, *end = buf + size;
    unsigned n = 0;

    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = eol ? eol : end;

        if (line_end - p >= 4 && memcmp(p, "cpu", 3) == 0 && p[3] >= '0' && p[3] <= '9')
            n++;
        p = eol ? eol + 1 : end;
    }
    return n;
}

int proc_cpu_stat_parse(const char *buf, size_t size, struct cpu_times *ret_times) {
    uint64_t v[CPU_FIELDS] = {0};
    const char *line_end = NULL, *p = find_cpu_line(buf, size, &line_end);
    size_t n = 0;
    int r;

    if (!p)
        return -ENODATA;
    while (p < line_end) {
        char tmp[24];
        const char *tok;
        size_t len;

        while (p < line_end && (*p == ' ' || *p == '\t'))
            p++;
        if (p == line_end)
            break;
        tok = p;
        while (p < line_end && *p != ' ' && *p != '\t')
            p++;
        len = (size_t)(p - tok);
        if (len >= sizeof(tmp))
            return -ERANGE;
        if (n == CPU_FIELDS)
            break; /* fields added by future kernels */
        memcpy(tmp, tok, len);
        tmp[len] = '\0';
        r = safe_atou64(tmp, &v[n]);
        if (r < 0)
            return r;
        n++;
    }
    if (n < CPU_FIELDS_REQUIRED)
        return -EINVAL;
    *ret_times = (struct cpu_times){
        .user = v[0],
        .nice = v[1],
        .system = v[2],
        .idle = v[3],
        .iowait = v[4],
        .irq = v[5],
        .softirq = v[6],
        .steal = v[7],
        .guest = v[8],
        .guest_nice = v[9],
        .n_cpus = count_cpu_lines(buf, size),
    };
    return 0;
}

uint64_t cpu_times_active(const struct cpu_times *t) {
    return t->user + t->nice + t->system + t->irq + t->softirq + t->steal;
}

uint64_t cpu_times_idle(const struct cpu_times *t) {
    return t->idle + t->iowait;
}

static uint64_t forward(uint64_t prev, uint64_t cur) {
    return cur > prev ? cur - prev : 0;
}

void cpu_times_window(const struct cpu_times *prev, const struct cpu_times *cur,
                      uint64_t *ret_active, uint64_t *ret_total) {
    uint64_t active = forward(prev->user, cur->user) + forward(prev->nice, cur->nice) +
                      forward(prev->system, cur->system) + forward(prev->irq, cur->irq) +
                      forward(prev->softirq, cur->softirq) + forward(prev->steal, cur->steal);
    uint64_t idle = forward(prev->idle, cur->idle) + forward(prev->iowait, cur->iowait);

    *ret_active = active;
    *ret_total = active + idle;
}
