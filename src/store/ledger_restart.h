/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ledger.h"

/*
 * How long joulestat was down, from the clocks a state was saved with and the clocks now,
 * and whether the raw counters it saved still count on from their readings.
 *
 * Where both name the same boot, the boot clock tells (the wall clock may have been
 * stepped meanwhile: NTP, a VM resumed). After a reboot the raw counters restarted (RAPL's
 * at power-on, the GPUs' at the driver's load) and the time down is at least the time since
 * the boot. Where the boot is unknown (a state of version 1, no boot id), the wall clock
 * tells, and a wall clock now behind the save says nothing: the time is unknown, and no
 * counter is bridged over it.
 */

#define STATE_BOOT_ID_MAX 40

/* The clocks at a save or at a load. */
struct state_clock {
    char boot_id[STATE_BOOT_ID_MAX]; /* /proc/sys/kernel/random/boot_id; "" unknown */
    uint64_t boot_us;                /* CLOCK_BOOTTIME */
    uint64_t wall_us;                /* CLOCK_REALTIME */
    uint64_t mono_ns;                /* CLOCK_MONOTONIC: this run's, never saved */
};

struct ledger_restart {
    uint64_t downtime_us; /* from the save to now (0 when unknown) */
    bool rebooted;        /* the saved raw counters were reset since */
    bool counting;        /* they count on from their readings (the same boot) */
    bool have_saved;      /* saved_wall_us holds the save's wall clock (version 2) */
    uint64_t saved_wall_us;
    uint64_t now_wall_us;
    uint64_t now_mono_ns;
};

/* saved: the state's clocks (NULL for a state of version 1, written file_wall_us). Sets *ret
 * for the readings restored after. */
void ledger_restart_begin(const struct state_clock *saved, uint64_t file_wall_us,
                          const struct state_clock *now, struct ledger_restart *ret);

/* A RAPL die's reading, saved age_us before its state was saved: when it was read, in
 * this run's monotonic clock. */
int64_t ledger_restart_read_ns(const struct ledger_restart *r, uint64_t age_us);

/* A GPU window's start, in the wall clock at the save: the same instant in today's wall
 * clock, measured from now by the time down (a state of version 1 keeps it as it was). */
uint64_t ledger_restart_wall_us(const struct ledger_restart *r, uint64_t at_us);
