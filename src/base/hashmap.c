/* SPDX-License-Identifier: MIT */
#include "hashmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

uint64_t hash_u64(uint64_t x) {
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

/* Eight bytes per step (ids are 36-64 characters, hashed at every scan); the length is
 * mixed in, so "a" and "a\0" differ. */
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed) {
    const unsigned char *p = data;
    uint64_t h = hash_u64(seed ^ (len * UINT64_C(0x9e3779b97f4a7c15)));
    uint64_t w;

    for (; len >= 8; p += 8, len -= 8) {
        memcpy(&w, p, 8);
        h = hash_u64(h ^ w);
    }
    if (len > 0) {
        w = 0;
        memcpy(&w, p, len);
        h = hash_u64(h ^ w ^ UINT64_C(0x8000000000000000));
    }
    return h;
}

void hashmap_init(struct hashmap *m) {
    *m = (struct hashmap){0};
}

void hashmap_done(struct hashmap *m) {
    free(m->slots);
    hashmap_init(m);
}

static size_t slot_of(const struct hashmap *m, uint64_t key) {
    return (size_t)hash_u64(key) & (m->cap - 1);
}

void *hashmap_get(const struct hashmap *m, uint64_t key) {
    if (m->cap == 0)
        return NULL;
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (!m->slots[i].value)
            return NULL;
        if (m->slots[i].key == key)
            return m->slots[i].value;
    }
}

static void insert_slot(struct hashmap *m, uint64_t key, void *value) {
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (!m->slots[i].value) {
            m->slots[i] = (struct hashmap_entry){key, value};
            m->size++;
            return;
        }
        if (m->slots[i].key == key) {
            m->slots[i].value = value;
            return;
        }
    }
}

static int rehash(struct hashmap *m, size_t new_cap) {
    struct hashmap_entry *old = m->slots;
    size_t old_cap = m->cap;

    m->slots = calloc(new_cap, sizeof(*m->slots));
    if (!m->slots) {
        m->slots = old;
        return -ENOMEM;
    }
    m->cap = new_cap;
    m->size = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].value)
            insert_slot(m, old[i].key, old[i].value);
    free(old);
    return 0;
}

int hashmap_put(struct hashmap *m, uint64_t key, void *value) {
    if (!value)
        return -EINVAL;
    /* Keep the load factor under 3/4. */
    if ((m->size + 1) * 4 > m->cap * 3) {
        int r = rehash(m, m->cap ? m->cap * 2 : 16);
        if (r < 0)
            return r;
    }
    insert_slot(m, key, value);
    return 0;
}

void *hashmap_remove(struct hashmap *m, uint64_t key) {
    size_t i, j;
    void *value;

    if (m->cap == 0)
        return NULL;
    for (i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (!m->slots[i].value)
            return NULL;
        if (m->slots[i].key == key)
            break;
    }
    value = m->slots[i].value;
    m->slots[i].value = NULL;
    m->size--;
    /* Backward shift: move later entries of the probe run into the hole. */
    for (j = (i + 1) & (m->cap - 1); m->slots[j].value; j = (j + 1) & (m->cap - 1)) {
        size_t home = slot_of(m, m->slots[j].key);
        bool between = i <= j ? (i < home && home <= j) : (i < home || home <= j);

        if (between)
            continue;
        m->slots[i] = m->slots[j];
        m->slots[j].value = NULL;
        i = j;
    }
    return value;
}

int hashmap_next(const struct hashmap *m, size_t *iter, uint64_t *ret_key, void **ret_value) {
    for (size_t i = *iter; i < m->cap; i++)
        if (m->slots[i].value) {
            *iter = i + 1;
            if (ret_key)
                *ret_key = m->slots[i].key;
            if (ret_value)
                *ret_value = m->slots[i].value;
            return 1;
        }
    *iter = m->cap;
    return 0;
}

void hashmap_clear(struct hashmap *m) {
    if (m->slots)
        memset(m->slots, 0, m->cap * sizeof(*m->slots));
    m->size = 0;
}
