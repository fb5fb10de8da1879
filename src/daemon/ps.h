/* SPDX-License-Identifier: MIT */
#pragma once

#include "config.h"

/* `joulestat ps [--json] [--all]`: processes using GPUs and CPU now, with identity and
 * energy so far. Returns 0 or -errno. */
int ps_run(const struct config *cfg);
