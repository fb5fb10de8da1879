/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * DCGM's profiling module, through the node's nv-hostengine: the SM activity of each MIG
 * GPU instance on GPUs whose NVML has no GPM (Ampere: the A100 and A30). joulestat is one
 * more client of the engine that dcgm-exporter or an administrator runs; it never starts
 * an engine of its own (only one engine may hold the profiling counters). libdcgm is
 * loaded with dlopen(), so joulestat runs without DCGM.
 *
 * The engine samples DCGM_FI_PROF_SM_ACTIVE every DCGM_WATCH_PERIOD_US; each update reads
 * the samples that came since the last, and an instance's activity over the window is
 * their mean. Not thread-safe: the GPU source's thread owns it.
 */

#define DCGM_WATCH_PERIOD_US 100000 /* the profiling module's shortest period */

struct dcgm_client;

/*
 * Loads `library` (NULL: libdcgm.so.4, then libdcgm.so.3) and initialises it, for the
 * engine at `address` (NULL: 127.0.0.1, port 5555; "HOST:PORT"; a path starting with '/'
 * is a unix socket; kept, not copied). Not connected yet. Returns 0, or -ENOENT (no
 * library), -ELIBBAD, -ENOMEM, -EIO with *ret_reason (static text). ret_client is written
 * only on success. The library stays loaded until dcgm_client_free().
 */
int dcgm_client_open(const char *library, const char *address, struct dcgm_client **ret_client,
                     const char **ret_reason);
struct dcgm_client *dcgm_client_free(struct dcgm_client *c);

/* Connects to the engine unless connected. Returns 0, or -ECONNREFUSED (no engine there)
 * or -EIO with *ret_reason (static text). */
int dcgm_client_connect(struct dcgm_client *c, const char **ret_reason);
bool dcgm_client_connected(const struct dcgm_client *c);

/* Reads what the engine sampled since the last update (once per now_us: later calls with
 * the same now_us do nothing). Returns 0, -ENOTCONN (not connected), or -ECONNRESET when
 * the engine went away (the client is then disconnected: connect again later). */
int dcgm_client_update(struct dcgm_client *c, uint64_t now_us);

/*
 * The mean SM activity (0..1) of GPU instance `gpu_instance` of the GPU `gpu_uuid` over the
 * samples of the last update. false when there were none: the instance is then watched
 * from now on (new instances are found in the engine's hierarchy, read again at most every
 * few seconds).
 */
bool dcgm_client_instance_activity(struct dcgm_client *c, const char *gpu_uuid,
                                   uint32_t gpu_instance, uint64_t now_us, double *ret_activity);

/* What the last failing call said, for `joulestat check`; "" when none. */
const char *dcgm_client_error(const struct dcgm_client *c);
