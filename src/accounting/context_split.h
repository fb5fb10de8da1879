/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "attribution.h"

/*
 * A window's split in which the context uplift (the power a GPU draws above its
 * no-context idle because some process holds a context: P0 clocks) goes to the processes
 * holding a context, evenly over time: each holder's part is in proportion to how long it
 * held its context in the window (held_us[i]; 0 = not a holder), so a process that held
 * the GPU the whole window gets the whole uplift, two such processes half each, and one
 * that started 300 ms before the window's end a part for its 300 ms. This holds under
 * every idle policy. The rest of the window is split by split_energy() as before: active
 * energy by weight, the no-context idle by the policy.
 *
 * parts[i] = its part of the uplift + its part of the rest. The uplift is capped at
 * req->energy_uj; the parts plus the result's unattributed and allocated energy add up to
 * req->energy_uj exactly. With one consumer, no holder or no uplift this is split_energy()
 * itself (one consumer keeps the whole delta, measured). With req->carries the uplift's
 * leftover units follow the carries too.
 *
 * Returns as split_energy(), or -EINVAL when context_uj > 0 with more than one consumer
 * and held_us is NULL.
 */
int split_with_context(const struct split_request *req, uint64_t context_uj,
                       const uint64_t *held_us, struct split_scratch *scratch, uint64_t *parts,
                       struct split_result *ret_result);
