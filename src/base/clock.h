/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/* One time type for the whole project: nanoseconds in a uint64_t. */
#define NSEC_PER_USEC UINT64_C(1000)
#define NSEC_PER_MSEC UINT64_C(1000000)
#define NSEC_PER_SEC UINT64_C(1000000000)
#define USEC_PER_SEC UINT64_C(1000000)

/* CLOCK_MONOTONIC now, in ns. */
uint64_t clock_monotonic_ns(void);
/* CLOCK_REALTIME now, in ns since the epoch. */
uint64_t clock_realtime_ns(void);
/* CLOCK_BOOTTIME now, in ns (counts suspend; /proc start times are relative to boot). */
uint64_t clock_boottime_ns(void);
