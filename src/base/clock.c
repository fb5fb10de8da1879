/* SPDX-License-Identifier: MIT */
#include "clock.h"

#include <time.h>

static uint64_t clock_ns(clockid_t id) {
    struct timespec ts;

    if (clock_gettime(id, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t clock_monotonic_ns(void) {
    return clock_ns(CLOCK_MONOTONIC);
}

uint64_t clock_realtime_ns(void) {
    return clock_ns(CLOCK_REALTIME);
}

uint64_t clock_boottime_ns(void) {
    return clock_ns(CLOCK_BOOTTIME);
}
