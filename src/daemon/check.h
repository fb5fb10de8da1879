/* SPDX-License-Identifier: MIT */
#pragma once

#include "config.h"

/* `joulestat check`: which sources work on this node, and for each that does not, why
 * and how to fix it. Prints to stdout. Returns 0 when at least one energy source works,
 * -ENODEV when none does. */
int check_run(const struct config *cfg);
