/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/*
 * The typical no-context idle power of known boards (P8, no process holding a context),
 * a prior for the learned split until joulestat sees the GPU with no context at all: on a
 * GPU that was busy since joulestat started, the idle power and the uplift a held context
 * adds (P0 clocks) only ever show together, and no reading tells them apart. The values
 * are approximate (a board's idle varies by some watts with temperature, firmware and
 * power cap); what is observed, or --gpu-idle-power, always takes precedence
 * (docs/ATTRIBUTION.md, "Idle before it is seen").
 *
 * Returns true and the watts when the model name (nvmlDeviceGetName) is known.
 */
bool gpu_typical_idle_watts(const char *model, double *ret_watts);
