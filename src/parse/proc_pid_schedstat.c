/* SPDX-License-Identifier: MIT */
#include "proc_pid_schedstat.h"

#include <errno.h>

#define FIELDS 3

int proc_pid_schedstat_parse(const char *buf, size_t len, uint64_t *ret_run_ns) {
    const char *p = buf, *end = buf + len;
    uint64_t first = 0;

    if (len > 0 && end[-1] == '\n')
        end--;
    for (unsigned field = 0; field < FIELDS; field++) {
        const char *digits = p;
        uint64_t v = 0;

        if (field > 0) {
            if (p >= end || *p != ' ')
                return -EINVAL;
            digits = ++p;
        }
        for (; p < end && *p >= '0' && *p <= '9'; p++) {
            unsigned d = (unsigned)(*p - '0');

            if (v > (UINT64_MAX - d) / 10)
                return -EINVAL;
            v = v * 10 + d;
        }
        if (p == digits)
            return -EINVAL;
        if (field == 0)
            first = v;
    }
    if (p != end)
        return -EINVAL;
    *ret_run_ns = first;
    return 0;
}
