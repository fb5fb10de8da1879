/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The exact split of one device's energy over one window among its consumers.
 *
 * Integers only: energy in microjoules, weights in any unit. The parts plus the
 * unattributed energy always add up to the input energy exactly. Rounding is by largest
 * remainder, ties broken by the consumer key (never by position), so the result does not
 * depend on the order in which consumers are listed.
 */

enum idle_policy {
    IDLE_POLICY_EVEN,         /* idle energy split evenly among the consumers (default) */
    IDLE_POLICY_SHARE,        /* idle energy split by the same weights as active energy */
    IDLE_POLICY_MEMORY,       /* idle energy split by used memory */
    IDLE_POLICY_UNATTRIBUTED, /* idle energy kept at device level */
    IDLE_POLICY_ALLOCATION,   /* idle energy to the pods holding the device (pod-resources) */
    _IDLE_POLICY_MAX,
};

const char *idle_policy_to_string(enum idle_policy p);
/* Returns the policy (>= 0) or -EINVAL. */
int idle_policy_from_string(const char *s);

struct split_consumer {
    uint64_t key;    /* stable identity, for deterministic tie-breaks */
    uint64_t weight; /* share of active energy */
    uint64_t memory; /* used memory, for IDLE_POLICY_MEMORY */
};

struct split_request {
    uint64_t energy_uj; /* measured delta of the device in the window */
    uint64_t idle_uj;   /* idle power x window length; capped at energy_uj */
    enum idle_policy policy;
    size_t n;
    const struct split_consumer *consumers;
    /* IDLE_POLICY_ALLOCATION: the holders of the device (pods with a GPU allocation,
     * weight = replicas held), and where their parts go (written, n_holders entries).
     * Idle energy, and all of it in a window without consumers, is split among them by
     * weight. With no holders the policy falls back to even. */
    size_t n_holders;
    const struct split_consumer *holders;
    uint64_t *holder_parts;
    /* Optional (NULL: none): each consumer's carried sub-microjoule remainder, read and
     * updated by every split among the consumers (see distribute_carried()). */
    int64_t *carries;
};

struct split_result {
    uint64_t active_uj;                   /* energy_uj - idle part */
    uint64_t idle_uj;                     /* min(idle_uj, energy_uj) */
    uint64_t unattributed_idle_uj;        /* idle kept at device level by policy */
    uint64_t unattributed_no_consumer_uj; /* nobody used the device */
    bool exclusive;                       /* one consumer: its part is measured, not split */
    bool even_fallback;                   /* all weights zero: active energy split evenly */
    uint64_t allocated_uj;                /* given to holders (IDLE_POLICY_ALLOCATION) */
    bool allocation_fallback; /* IDLE_POLICY_ALLOCATION without holders: split as even */
};

/* Caller-owned scratch, reused between calls so the tick does not allocate. */
struct split_scratch {
    size_t cap;
    uint32_t *order;
    unsigned __int128 *rem;
    uint64_t *keys;
    uint64_t *weights;
    uint64_t *shares;
};

/* Makes room for n consumers (and n holders). Returns 0 or -ENOMEM. */
int split_scratch_reserve(struct split_scratch *s, size_t n);
void split_scratch_done(struct split_scratch *s);

/* Largest upper bound on consumers per split. */
#define SPLIT_MAX_CONSUMERS 65536U

/*
 * Splits req->energy_uj. parts[0..n) receive each consumer's energy (active + idle).
 * Returns 0, -EINVAL (bad policy, n or n_holders over the limit, NULL arrays with n > 0
 * or n_holders > 0) or -ENOBUFS (scratch smaller than n or n_holders). ret_result is written only
 * on success; parts may hold partial results after a failure.
 */
int split_energy(const struct split_request *req, struct split_scratch *scratch, uint64_t *parts,
                 struct split_result *ret_result);

/*
 * Largest-remainder distribution of `total` by `weights` (all zero: evenly), ties by key.
 * out[i] = floor(total * w_i / W) plus one for the (total - sum of floors) consumers with
 * the largest remainders. Exposed for tests and for the CPU split.
 */
int distribute(uint64_t total, size_t n, const uint64_t *weights, const uint64_t *keys,
               struct split_scratch *scratch, uint64_t *out);

/* One microjoule in the unit of carries: 2^-32 uJ. */
#define SPLIT_CARRY_ONE (INT64_C(1) << 32)
/* Carries are kept within +-SPLIT_CARRY_MAX: a consumer is never owed or ahead by more. */
#define SPLIT_CARRY_MAX (2 * SPLIT_CARRY_ONE)

/*
 * distribute() with carried remainders, so that a consumer whose share is always below
 * 1 uJ still gets its energy over time. carries[i] is what consumer i is owed from earlier
 * windows, in 2^-32 uJ (signed), kept by the caller with the consumer's identity between
 * windows (0 for a new consumer). Every consumer still gets floor(share) or floor(share)
 * + 1 and the parts add up to `total` exactly; but the leftover units go to the consumers
 * with the largest (carry + fractional part of the share), and each carry then becomes
 * carry + fraction - (1 if it got a unit). A consumer with a share of 0.3 uJ per window
 * thus gets a unit about every third window instead of never. Only consumers with a
 * weight (all, when every weight is zero) take part: a zero weight still gets zero, its
 * carry waits. Per window, a larger weight may get one unit less than a smaller one that
 * was owed more; over many windows each consumer's sum stays within about 1 uJ of its
 * exact share. Returns as distribute().
 */
int distribute_carried(uint64_t total, size_t n, const uint64_t *weights, const uint64_t *keys,
                       int64_t *carries, struct split_scratch *scratch, uint64_t *out);
