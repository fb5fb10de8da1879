/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Value syntax of the scenario format: durations, watts, byte sizes, percentages, yes/no.
 * Each returns 0 or -EINVAL/-ERANGE and writes its result only on success.
 */

#include <stdbool.h>
#include <stdint.h>

/* "5s", "167ms", "250us", "1h30m", or bare seconds "0.5" -> microseconds. */
int sim_parse_duration_us(const char *s, uint64_t *ret_us);
/* "250W", "37.5W", "800mW", bare watts "60" -> milliwatts (at most 100 kW). */
int sim_parse_power_mw(const char *s, uint32_t *ret_mw);
/* "4GiB", "512MiB", "64KiB", "1TiB", bare bytes "1048576". */
int sim_parse_bytes(const char *s, uint64_t *ret_bytes);
/* "50%" or "50": an integer 0..100. */
int sim_parse_percent(const char *s, uint32_t *ret_percent);
/* "25%", "2.5%" or bare "25" (percent, 0..100, decimals allowed) -> parts per million. */
int sim_parse_fraction_ppm(const char *s, uint32_t *ret_ppm);
/* "6W/300s": a power and a time constant (not 0). */
int sim_parse_drift(const char *s, uint32_t *ret_mw, uint64_t *ret_tau_us);
/* "yes"/"no", "on"/"off", "true"/"false", "1"/"0". */
int sim_parse_bool(const char *s, bool *ret_value);
