/* SPDX-License-Identifier: MIT */
#pragma once

#include "config.h"

/* `joulestat serve`: the sampler thread and the HTTP server until SIGTERM or SIGINT.
 * Returns 0 on a clean stop, or -errno when it could not start (e.g. the listen address
 * is unusable), after logging why. */
int serve_run(const struct config *cfg);
