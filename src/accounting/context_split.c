/* SPDX-License-Identifier: MIT */
#include "context_split.h"

#include <errno.h>

int split_with_context(const struct split_request *req, uint64_t context_uj,
                       const uint64_t *held_us, struct split_scratch *scratch, uint64_t *parts,
                       struct split_result *ret_result) {
    struct split_request rest;
    struct split_result res;
    size_t n_holding = 0;
    uint64_t uplift;
    int r;

    if (context_uj == 0 || req->n <= 1)
        return split_energy(req, scratch, parts, ret_result);
    if (!held_us)
        return -EINVAL;
    for (size_t i = 0; i < req->n; i++)
        n_holding += held_us[i] > 0;
    if (n_holding == 0)
        return split_energy(req, scratch, parts, ret_result);

    uplift = context_uj < req->energy_uj ? context_uj : req->energy_uj;
    rest = *req;
    rest.energy_uj = req->energy_uj - uplift;
    r = split_energy(&rest, scratch, parts, &res);
    if (r < 0)
        return r;

    /* By time held: the others have weight 0 and get nothing of it. */
    for (size_t i = 0; i < req->n; i++) {
        scratch->keys[i] = req->consumers[i].key;
        scratch->weights[i] = held_us[i];
    }
    r = req->carries
            ? distribute_carried(uplift, req->n, scratch->weights, scratch->keys, req->carries,
                                 scratch, scratch->shares)
            : distribute(uplift, req->n, scratch->weights, scratch->keys, scratch, scratch->shares);
    if (r < 0)
        return r;
    for (size_t i = 0; i < req->n; i++)
        parts[i] += scratch->shares[i];
    *ret_result = res;
    return 0;
}
