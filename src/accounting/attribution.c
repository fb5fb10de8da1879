/* SPDX-License-Identifier: MIT */
#include "attribution.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const policy_names[_IDLE_POLICY_MAX] = {
    [IDLE_POLICY_EVEN] = "even",
    [IDLE_POLICY_SHARE] = "share",
    [IDLE_POLICY_MEMORY] = "memory",
    [IDLE_POLICY_UNATTRIBUTED] = "unattributed",
    [IDLE_POLICY_ALLOCATION] = "allocation",
};

const char *idle_policy_to_string(enum idle_policy p) {
    return (unsigned)p < _IDLE_POLICY_MAX ? policy_names[p] : NULL;
}

int idle_policy_from_string(const char *s) {
    for (unsigned i = 0; i < _IDLE_POLICY_MAX; i++)
        if (strcmp(s, policy_names[i]) == 0)
            return (int)i;
    return -EINVAL;
}

int split_scratch_reserve(struct split_scratch *s, size_t n) {
    uint64_t **arrays[] = {&s->keys, &s->weights, &s->shares};
    uint32_t *order;
    unsigned __int128 *rem;

    if (n <= s->cap)
        return 0;
    if (n > SPLIT_MAX_CONSUMERS)
        return -EINVAL;
    order = reallocarray(s->order, n, sizeof(*order));
    if (!order)
        return -ENOMEM;
    s->order = order;
    rem = reallocarray(s->rem, n, sizeof(*rem));
    if (!rem)
        return -ENOMEM;
    s->rem = rem;
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
        uint64_t *p = reallocarray(*arrays[i], n, sizeof(*p));

        if (!p)
            return -ENOMEM;
        *arrays[i] = p;
    }
    s->cap = n;
    return 0;
}

void split_scratch_done(struct split_scratch *s) {
    free(s->order);
    free(s->rem);
    free(s->keys);
    free(s->weights);
    free(s->shares);
    *s = (struct split_scratch){0};
}

struct rank_ctx {
    const unsigned __int128 *rem;
    const uint64_t *keys;
};

/* Consumer i ranks before j: larger remainder first; equal remainders by smaller key, then
 * by index. A strict total order, so "the k best" is one well-defined set. */
static inline bool ranks_before(const struct rank_ctx *c, uint32_t i, uint32_t j) {
    if (c->rem[i] != c->rem[j])
        return c->rem[i] > c->rem[j];
    if (c->keys && c->keys[i] != c->keys[j])
        return c->keys[i] < c->keys[j];
    return i < j;
}

static int compare_rank(const void *a, const void *b, void *userdata) {
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

    return i == j ? 0 : ranks_before(userdata, i, j) ? -1 : 1;
}

static inline void swap_u32(uint32_t *a, uint32_t *b) {
    uint32_t t = *a;

    *a = *b;
    *b = t;
}

/*
 * Moves the k best ranked of order[0..n) to its front, in no particular order: only that
 * set gets a leftover unit, so a full sort (up to 64 consumers per GPU, ten times a second)
 * is not needed. Quickselect on a median-of-three pivot (~2 log2 n rounds on any input
 * seen here); a range still open after 64 rounds is sorted instead, which bounds the work
 * on an input that splits badly at n log n.
 */
static void select_best(uint32_t *order, size_t n, size_t k, struct rank_ctx *c) {
    size_t lo = 0, hi = n; /* the boundary between best and rest lies within [lo, hi) */
    unsigned tries = 64;

    while (hi - lo > 1 && k > lo && k < hi) {
        size_t mid = lo + (hi - lo) / 2, store = lo;
        uint32_t pivot;

        if (tries-- == 0) {
            qsort_r(order + lo, hi - lo, sizeof(*order), compare_rank, c);
            return;
        }
        /* Median of three to the end, as the pivot. */
        if (ranks_before(c, order[mid], order[lo]))
            swap_u32(&order[mid], &order[lo]);
        if (ranks_before(c, order[hi - 1], order[lo]))
            swap_u32(&order[hi - 1], &order[lo]);
        if (ranks_before(c, order[mid], order[hi - 1]))
            swap_u32(&order[mid], &order[hi - 1]);
        pivot = order[hi - 1];
        for (size_t i = lo; i < hi - 1; i++)
            if (ranks_before(c, order[i], pivot))
                swap_u32(&order[i], &order[store++]);
        swap_u32(&order[store], &order[hi - 1]);
        /* [lo, store) rank before the pivot, (store, hi) after it. */
        if (store == k || store + 1 == k)
            return;
        if (store < k)
            lo = store + 1;
        else
            hi = store;
    }
}

/* The floors of total x w_i / W into out, the remainders into scratch->rem; returns the
 * units left over (< n), or -errno. *ret_sum is W (n when every weight is zero). */
static int64_t distribute_floors(uint64_t total, size_t n, const uint64_t *weights,
                                 struct split_scratch *scratch, uint64_t *out,
                                 unsigned __int128 *ret_sum) {
    unsigned __int128 sum = 0;
    uint64_t assigned = 0;
    bool even;

    if (!out || n > SPLIT_MAX_CONSUMERS)
        return -EINVAL;
    if (scratch->cap < n)
        return -ENOBUFS;

    if (weights)
        for (size_t i = 0; i < n; i++)
            sum += weights[i];
    even = sum == 0;
    if (even)
        sum = n;

    /* total < 2^64 and w < 2^64, so total * w < 2^128: no overflow in 128 bits. */
    for (size_t i = 0; i < n; i++) {
        unsigned __int128 q = (unsigned __int128)total * (even ? 1 : weights[i]);

        out[i] = (uint64_t)(q / sum);
        scratch->rem[i] = q % sum;
        assigned += out[i];
    }
    *ret_sum = even ? 0 : sum;
    /* Sum of floors is within n of total, so at most n-1 units are left over. */
    return (int64_t)(total - assigned);
}

/* Gives one unit each to the `left` consumers ranked best by scratch->rem, ties by key. */
static void give_leftover(size_t n, uint64_t left, const uint64_t *keys,
                          struct split_scratch *scratch, uint64_t *out) {
    for (size_t i = 0; i < n; i++)
        scratch->order[i] = (uint32_t)i;
    select_best(scratch->order, n, (size_t)left, &(struct rank_ctx){scratch->rem, keys});
    for (uint64_t k = 0; k < left; k++)
        out[scratch->order[k]]++;
}

int distribute(uint64_t total, size_t n, const uint64_t *weights, const uint64_t *keys,
               struct split_scratch *scratch, uint64_t *out) {
    unsigned __int128 sum;
    int64_t left;

    if (n == 0)
        return total == 0 ? 0 : -EINVAL;
    left = distribute_floors(total, n, weights, scratch, out, &sum);
    if (left <= 0)
        return (int)left;
    give_leftover(n, (uint64_t)left, keys, scratch, out);
    return 0;
}

static inline int64_t clamp_carry(int64_t c) {
    return c > SPLIT_CARRY_MAX ? SPLIT_CARRY_MAX : c < -SPLIT_CARRY_MAX ? -SPLIT_CARRY_MAX : c;
}

int distribute_carried(uint64_t total, size_t n, const uint64_t *weights, const uint64_t *keys,
                       int64_t *carries, struct split_scratch *scratch, uint64_t *out) {
    unsigned __int128 sum;
    int64_t left;

    if (n == 0)
        return total == 0 ? 0 : -EINVAL;
    if (!carries)
        return -EINVAL;
    left = distribute_floors(total, n, weights, scratch, out, &sum);
    if (left < 0)
        return (int)left;

    /*
     * Each taking part consumer's carry grows by the fraction its floor left out (in
     * 2^-32 uJ); the rank is that new carry, shifted to be at least 1, so it sorts above
     * the consumers that do not take part (rank 0). The fraction is rem / W < 1, and
     * rem < W <= 2^80, so rem x 2^32 fits in 128 bits.
     */
    for (size_t i = 0; i < n; i++) {
        bool takes_part = sum == 0 || weights[i] > 0;
        int64_t frac = sum == 0 ? (int64_t)((scratch->rem[i] << 32) / n)
                                : (int64_t)((scratch->rem[i] << 32) / sum);

        if (!takes_part) {
            scratch->rem[i] = 0;
            continue;
        }
        carries[i] = clamp_carry(carries[i] + frac);
        scratch->rem[i] = (unsigned __int128)(carries[i] + SPLIT_CARRY_MAX + 1);
    }
    if (left == 0)
        return 0;
    give_leftover(n, (uint64_t)left, keys, scratch, out);
    for (int64_t k = 0; k < left; k++)
        carries[scratch->order[k]] = clamp_carry(carries[scratch->order[k]] - SPLIT_CARRY_ONE);
    return 0;
}

enum split_field {
    FIELD_NONE,   /* even */
    FIELD_WEIGHT, /* by weight (all zero: even) */
    FIELD_MEMORY, /* by used memory (all zero: even) */
};

/* Distributes `total` among n consumers by one field, adding into parts; with carries
 * (NULL: none), carried remainders decide the leftover units. */
static int add_distribution_to(uint64_t total, size_t n, const struct split_consumer *consumers,
                               enum split_field field, int64_t *carries, struct split_scratch *s,
                               uint64_t *parts) {
    int r;

    if (total == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const struct split_consumer *c = &consumers[i];

        s->keys[i] = c->key;
        s->weights[i] = field == FIELD_WEIGHT ? c->weight : field == FIELD_MEMORY ? c->memory : 0;
    }
    r = carries ? distribute_carried(total, n, s->weights, s->keys, carries, s, s->shares)
                : distribute(total, n, s->weights, s->keys, s, s->shares);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++)
        parts[i] += s->shares[i];
    return 0;
}

static int add_distribution(uint64_t total, const struct split_request *req, enum split_field field,
                            struct split_scratch *s, uint64_t *parts) {
    return add_distribution_to(total, req->n, req->consumers, field, req->carries, s, parts);
}

/*
 * IDLE_POLICY_ALLOCATION with holders: active energy to the consumers by weight, idle
 * energy (all of it without consumers) to the holders by replicas.
 */
static int split_allocation(const struct split_request *req, struct split_scratch *scratch,
                            uint64_t *parts, struct split_result *res) {
    uint64_t to_holders = req->n == 0 ? req->energy_uj : res->idle_uj;
    bool any_weight = false;
    int r;

    for (size_t i = 0; i < req->n_holders; i++)
        req->holder_parts[i] = 0;
    for (size_t i = 0; i < req->n; i++) {
        parts[i] = 0;
        any_weight = any_weight || req->consumers[i].weight != 0;
    }
    if (req->n > 0) {
        res->even_fallback = !any_weight;
        /* Alone on the device and nothing cut off for idle: still a measurement. */
        res->exclusive = req->n == 1 && res->idle_uj == 0;
        r = add_distribution(res->active_uj, req, FIELD_WEIGHT, scratch, parts);
        if (r < 0)
            return r;
    }
    r = add_distribution_to(to_holders, req->n_holders, req->holders, FIELD_WEIGHT, NULL, scratch,
                            req->holder_parts);
    if (r < 0)
        return r;
    res->allocated_uj = to_holders;
    return 0;
}

int split_energy(const struct split_request *req, struct split_scratch *scratch, uint64_t *parts,
                 struct split_result *ret_result) {
    struct split_result res = {0};
    bool any_weight = false;
    enum split_field idle_field = FIELD_NONE;
    enum idle_policy policy = req->policy;
    bool holders = policy == IDLE_POLICY_ALLOCATION && req->n_holders > 0;
    int r;

    if ((unsigned)policy >= _IDLE_POLICY_MAX || req->n > SPLIT_MAX_CONSUMERS)
        return -EINVAL;
    if (req->n > 0 && (!req->consumers || !parts))
        return -EINVAL;
    if (holders && (req->n_holders > SPLIT_MAX_CONSUMERS || !req->holders || !req->holder_parts))
        return -EINVAL;
    if (scratch->cap < req->n || (holders && scratch->cap < req->n_holders))
        return -ENOBUFS;

    res.idle_uj = req->idle_uj < req->energy_uj ? req->idle_uj : req->energy_uj;
    res.active_uj = req->energy_uj - res.idle_uj;

    if (holders) {
        r = split_allocation(req, scratch, parts, &res);
        if (r < 0)
            return r;
        *ret_result = res;
        return 0;
    }
    if (policy == IDLE_POLICY_ALLOCATION) {
        /* Nobody is known to hold the device: split idle energy as even does. */
        res.allocation_fallback = true;
        policy = IDLE_POLICY_EVEN;
    }

    if (req->n == 0) {
        res.unattributed_no_consumer_uj = req->energy_uj;
        *ret_result = res;
        return 0;
    }
    if (req->n == 1) {
        /* Alone on the device: the whole measured delta is this consumer's, a measurement;
         * but idle the policy keeps at device level stays there, and the rest is then an
         * estimate (it depends on the idle power). */
        bool keep_idle = policy == IDLE_POLICY_UNATTRIBUTED && res.idle_uj > 0;

        parts[0] = keep_idle ? res.active_uj : req->energy_uj;
        res.unattributed_idle_uj = keep_idle ? res.idle_uj : 0;
        res.exclusive = !keep_idle;
        *ret_result = res;
        return 0;
    }

    for (size_t i = 0; i < req->n; i++) {
        parts[i] = 0;
        any_weight = any_weight || req->consumers[i].weight != 0;
    }
    res.even_fallback = !any_weight;

    if (policy == IDLE_POLICY_SHARE) {
        /* One distribution of the whole delta: exactly dE * w_i / sum(w), rounded once. */
        r = add_distribution(req->energy_uj, req, FIELD_WEIGHT, scratch, parts);
        if (r < 0)
            return r;
        *ret_result = res;
        return 0;
    }

    r = add_distribution(res.active_uj, req, FIELD_WEIGHT, scratch, parts);
    if (r < 0)
        return r;

    switch (policy) {
    case IDLE_POLICY_EVEN:
    case IDLE_POLICY_ALLOCATION: /* without holders (see above) */
        idle_field = FIELD_NONE;
        break;
    case IDLE_POLICY_SHARE: /* handled above */
        idle_field = FIELD_WEIGHT;
        break;
    case IDLE_POLICY_MEMORY:
        idle_field = FIELD_MEMORY;
        break;
    case IDLE_POLICY_UNATTRIBUTED:
    case _IDLE_POLICY_MAX:
        res.unattributed_idle_uj = res.idle_uj;
        *ret_result = res;
        return 0;
    }
    r = add_distribution(res.idle_uj, req, idle_field, scratch, parts);
    if (r < 0)
        return r;
    *ret_result = res;
    return 0;
}
