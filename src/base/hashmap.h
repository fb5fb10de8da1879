/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Open-addressing map from a 64-bit key to a pointer, linear probing with backward-shift
 * deletion (no tombstones, so lookups stay short after churn). Not thread-safe.
 * The map never owns the values.
 */
struct hashmap_entry {
    uint64_t key;
    void *value; /* NULL marks an empty slot: values must be non-NULL */
};

struct hashmap {
    struct hashmap_entry *slots;
    size_t cap; /* a power of two, or 0 */
    size_t size;
};

void hashmap_init(struct hashmap *m);
void hashmap_done(struct hashmap *m);
void *hashmap_get(const struct hashmap *m, uint64_t key);
/* Inserts or replaces. Returns 0 or -ENOMEM / -EINVAL (NULL value). */
int hashmap_put(struct hashmap *m, uint64_t key, void *value);
/* Removes and returns the value, or NULL if absent. */
void *hashmap_remove(struct hashmap *m, uint64_t key);

/* Iteration: `for (size_t i = 0; hashmap_next(m, &i, &k, &v);)`. Removing the entry
 * just returned is not allowed while iterating; collect keys first. */
int hashmap_next(const struct hashmap *m, size_t *iter, uint64_t *ret_key, void **ret_value);

/* A 64-bit mix (splitmix64 finaliser) for building keys from several fields. */
uint64_t hash_u64(uint64_t x);
/* A byte string, eight bytes per hash_u64() round, seeded and length-salted. */
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);

/* Empties the map, keeping its memory for reuse. */
void hashmap_clear(struct hashmap *m);
