/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * A GPU's idle power: configured (--gpu-idle-power), or learned as a low percentile of the
 * average power of recent windows in which nothing ran on the GPU. Until something is
 * learned, idle power is unknown and treated as zero (all energy counts as active).
 *
 * Windows are joined, while nothing runs, into observations of at least a second
 * (IDLE_OBSERVATION_US): an energy counter that moves in 100 ms steps reads 0 W in half of 50 ms
 * windows and double in the others, and a low percentile of those is no idle power.
 */
#define IDLE_OBSERVATION_US 1000000U
#define IDLE_POWER_HISTORY 64

struct idle_power {
    bool configured;
    uint64_t configured_mw;
    unsigned count; /* observations stored (up to IDLE_POWER_HISTORY) */
    unsigned next;
    uint64_t history_mw[IDLE_POWER_HISTORY];
    uint64_t estimate_mw;
    uint64_t pending_uj, pending_us; /* idle windows joined so far, shorter than one */
};

/* watts < 0: learn; otherwise use the configured value. */
void idle_power_init(struct idle_power *ip, double watts);
/* Records a window with no consumers: its average power is energy / duration. */
void idle_power_observe(struct idle_power *ip, uint64_t energy_uj, uint64_t duration_us);
/* A window with consumers: the idle windows joined so far are not one stretch with the
 * next ones. */
void idle_power_interrupt(struct idle_power *ip);
/* The observations, oldest first, into ret_mw (IDLE_POWER_HISTORY entries); returns how
 * many (0 when configured). */
unsigned idle_power_history(const struct idle_power *ip, uint64_t *ret_mw);
/* Learns again from observations saved before a restart (oldest first; the oldest beyond
 * IDLE_POWER_HISTORY drop out as they would have), replacing what was learned. A
 * configured value stays. */
void idle_power_restore(struct idle_power *ip, const uint64_t *mw, unsigned n);
bool idle_power_known(const struct idle_power *ip);
double idle_power_watts(const struct idle_power *ip);
/* Idle energy over a duration, in uJ (0 when unknown). */
uint64_t idle_power_energy_uj(const struct idle_power *ip, uint64_t duration_us);
