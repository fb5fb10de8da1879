/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * src/accounting: every rule about who gets which joule.
 *
 *   gpu_accounting.h  one window per GPU and tick: the energy counter's delta (or power
 *                     integrated), the consumers and their time-weighted utilisation
 *                     (weights.h), the idle part (idle_power.h) and the exact split
 *                     (attribution.h), booked to the ledger;
 *   cpu_accounting.h  one window per RAPL domain and process scan: the node's busy share,
 *                     processes and the workloads' unseen CPU time (cpu_unseen.h), split
 *                     by CPU time (cpu_split.h);
 *   counter.h         wrap- and reset-aware counters, converted exactly with carried
 *                     remainders;
 *   attribution.h     the split itself and the idle policies.
 *
 * Contract: pure. No I/O, no clock, no threads (tests/check-purity.sh); time comes in as
 * arguments, readings come from the sources' headers, and the only call outward is the
 * process resolver the daemon hands in. Integers only, and for every device and window
 * the parts plus the unattributed energy equal the measured delta exactly. Other folders
 * include this header's headers only.
 */
#include "attribution.h"    /* IWYU pragma: export */
#include "counter.h"        /* IWYU pragma: export */
#include "cpu_accounting.h" /* IWYU pragma: export */
#include "gpu_accounting.h" /* IWYU pragma: export */
