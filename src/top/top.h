/* SPDX-License-Identifier: MIT */
#pragma once

#include "config.h"

/*
 * src/top: `joulestat top`, a live terminal view of the workloads (processes, containers,
 * pods, SLURM jobs, systemd services) with their power now, energy so far, GPU and CPU
 * parts and learned intensity, sorted and filtered, refreshed every --sample-interval;
 * from the local sources or from a running exporter's /metrics URL (top_source.h).
 *
 * Runs until the user quits (q) or SIGINT/SIGTERM. Returns 0, or a negative errno after
 * saying why on stderr (no terminal, no ncursesw, TERM=dumb, the URL does not answer at
 * start).
 */
int top_run(const struct config *cfg);
