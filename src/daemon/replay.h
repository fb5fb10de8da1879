/* SPDX-License-Identifier: MIT */
#pragma once

#include "config.h"

/* `joulestat replay --scenario FILE`: runs the real sampler and attribution against the
 * simulated GPU node on a virtual clock and prints the final exposition, then a comment
 * block comparing each process's attributed energy with the scenario's ground truth.
 * Returns 0 or -errno. */
int replay_run(const struct config *cfg);
