/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "gpu_accounting.h"
#include "snapshot.h"

/*
 * The sampler owns the sources, the attribution and the ledger. Each tick it reads the
 * GPUs (every --sample-interval) and the processes and RAPL (every
 * --process-scan-interval), accounts the energy, and publishes a new immutable snapshot.
 * It runs in its own thread for `serve`, or is ticked by hand on a virtual clock for
 * `replay` and tests.
 */

struct sampler;

/* The time of one tick: monotonic (retention, scheduling) and the GPU sample clock
 * (host real time, or the simulator's virtual time), plus wall time for the snapshot. */
struct tick_time {
    uint64_t mono_ns;
    uint64_t sample_us;
    double wall_seconds;
};

/* Opens the sources the config asks for. A source that cannot be opened is logged once
 * and reported down; only -ENOMEM fails. */
int sampler_new(const struct config *cfg, struct snapshot_slot *slot, struct sampler **ret);
struct sampler *sampler_free(struct sampler *s);

/* One tick. Returns 0 or -ENOMEM (energy is never dropped: see gpu_accounting.h). */
int sampler_tick(struct sampler *s, const struct tick_time *t);

/*
 * Between two ticks: keeps the GPUs' new utilisation samples for the next tick. The driver
 * answers with only each process's newest sample (one per ~167 ms period), so a tick once
 * a second alone would see one period in six; polls every sampler_poll_interval_ns() see
 * them all. Cheap: one driver call per GPU.
 */
void sampler_poll(struct sampler *s, const struct tick_time *t);
/* min(--sample-interval, 100 ms). */
uint64_t sampler_poll_interval_ns(const struct config *cfg);

/* The tick time now, from the real clocks. */
struct tick_time sampler_now(void);

/* Background thread: ticks at the configured interval until sampler_stop(). */
int sampler_start(struct sampler *s);
void sampler_stop(struct sampler *s);

/* Sees every GPU window as it is split (replay --trace). Call before the first tick. */
void sampler_set_window_observer(struct sampler *s, gpu_window_observer_fn fn, void *userdata);

/* The parent, at its exec, of the program pid that started at start_time_seconds (unix
 * time; < 0: any), and its start time (field 22 of its stat), as the kernel's exec events
 * told (serve, run): for a process gone before a scan saw it. Returns 0, -ESRCH (not
 * known) or -ENODEV (no exec events). */
int sampler_exec_parent(struct sampler *s, uint32_t pid, double start_time_seconds,
                        uint32_t *ret_ppid, uint64_t *ret_starttime);

/* A process's start (field 22 of its stat) as unix time, by the same conversion as the
 * series' start_time_seconds; < 0 when no procfs is read. */
double sampler_start_time_seconds(const struct sampler *s, uint64_t starttime);

/* Stops following exec events (run, before its report: the watch's thread logs nothing
 * into it). */
void sampler_stop_exec_watch(struct sampler *s);

/* Overrides the process resolver (tests, replay). */
void sampler_set_resolver(struct sampler *s, process_resolve_fn fn, void *userdata);

/* The Kubernetes API options of the config (the watcher, `check`). */
struct kube_labels_options;
void sampler_kube_options(const struct config *cfg, struct kube_labels_options *ret);

/* True while the process scan reads the eBPF task iterator. Not thread-safe: before the
 * sampler thread starts. */
bool sampler_uses_bpf(const struct sampler *s);

/* True when the last tick is recent (for /healthz). */
bool sampler_healthy(struct sampler *s);
