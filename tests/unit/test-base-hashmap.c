/* SPDX-License-Identifier: MIT */
/* The u64-keyed open-addressing map, against a plain reference array under churn. */
#include "testutil.h"

#include <errno.h>
#include <stdbool.h>

#include "hashmap.h"
#include "macro.h"

/* Values are addresses inside this array, so every one is distinct and non-NULL. */
static char tokens[64];

static void test_basic(void **state) {
    struct hashmap m;

    hashmap_init(&m);
    assert_null(hashmap_get(&m, 1));
    assert_null(hashmap_remove(&m, 1));
    ASSERT_ERRNO(hashmap_put(&m, 1, NULL), EINVAL);
    assert_int_equal(m.size, 0);

    ASSERT_OK(hashmap_put(&m, 1, &tokens[1]));
    ASSERT_OK(hashmap_put(&m, 0, &tokens[0])); /* key 0 is an ordinary key */
    ASSERT_OK(hashmap_put(&m, UINT64_MAX, &tokens[2]));
    assert_int_equal(m.size, 3);
    assert_ptr_equal(hashmap_get(&m, 1), &tokens[1]);
    assert_ptr_equal(hashmap_get(&m, 0), &tokens[0]);
    assert_ptr_equal(hashmap_get(&m, UINT64_MAX), &tokens[2]);
    assert_null(hashmap_get(&m, 2));

    /* Replacing keeps the size. */
    ASSERT_OK(hashmap_put(&m, 1, &tokens[3]));
    assert_int_equal(m.size, 3);
    assert_ptr_equal(hashmap_get(&m, 1), &tokens[3]);

    assert_ptr_equal(hashmap_remove(&m, 1), &tokens[3]);
    assert_null(hashmap_remove(&m, 1));
    assert_null(hashmap_get(&m, 1));
    assert_int_equal(m.size, 2);

    hashmap_done(&m);
    assert_int_equal(m.cap, 0);
    assert_null(m.slots);
    hashmap_done(&m);
}

/* Keys that all land in the same home slot form one long probe run; removing from its
 * middle must shift the rest back, or later keys become unreachable. */
static void test_collisions_backward_shift(void **state) {
    struct hashmap m;
    uint64_t keys[8];
    size_t found = 0;

    hashmap_init(&m);
    /* With 16 slots the home is the low 4 bits of the hash: collect keys sharing one. */
    keys[found++] = 1;
    for (uint64_t k = 2; found < ARRAY_SIZE(keys); k++)
        if (((hash_u64(k) ^ hash_u64(1)) & 15) == 0)
            keys[found++] = k;

    /* Six keys in a 16-slot table, all with the same home: slots h..h+5. */
    for (size_t i = 0; i < 6; i++)
        ASSERT_OK(hashmap_put(&m, keys[i], &tokens[i]));
    assert_int_equal(m.cap, 16);
    assert_ptr_equal(hashmap_remove(&m, keys[1]), &tokens[1]);
    assert_ptr_equal(hashmap_remove(&m, keys[3]), &tokens[3]);
    for (size_t i = 0; i < 6; i++)
        assert_ptr_equal(hashmap_get(&m, keys[i]), i == 1 || i == 3 ? NULL : &tokens[i]);
    /* No holes left in the run: the remaining four fill h..h+3. */
    size_t home = (size_t)hash_u64(keys[0]) & 15, in_run = 0;
    for (size_t j = 0; j < 4; j++)
        in_run += m.slots[(home + j) & 15].value != NULL;
    assert_int_equal(in_run, 4);
    assert_null(m.slots[(home + 4) & 15].value);
    hashmap_done(&m);
}

static uint64_t key_with_home(size_t home, uint64_t start) {
    uint64_t k = start;

    while ((hash_u64(k) & 15) != home)
        k++;
    return k;
}

/* A probe run that wraps from the last slot to the first: removing the entry in the last
 * slot must leave an entry whose home is slot 0 where it is. */
static void test_wraparound_run(void **state) {
    uint64_t a = key_with_home(15, 1), a2 = key_with_home(15, a + 1), b = key_with_home(0, 1);
    struct hashmap m;

    hashmap_init(&m);
    ASSERT_OK(hashmap_put(&m, a, &tokens[0]));  /* slot 15 */
    ASSERT_OK(hashmap_put(&m, b, &tokens[1]));  /* slot 0, its home */
    ASSERT_OK(hashmap_put(&m, a2, &tokens[2])); /* home 15: wraps past b to slot 1 */
    assert_int_equal(m.cap, 16);
    assert_ptr_equal(m.slots[1].value, &tokens[2]);

    assert_ptr_equal(hashmap_remove(&m, a), &tokens[0]);
    assert_ptr_equal(hashmap_get(&m, b), &tokens[1]);
    assert_ptr_equal(hashmap_get(&m, a2), &tokens[2]);
    /* b stayed home; a2 moved back into slot 15, nearer its own home. */
    assert_ptr_equal(m.slots[0].value, &tokens[1]);
    assert_ptr_equal(m.slots[15].value, &tokens[2]);
    assert_null(m.slots[1].value);
    hashmap_done(&m);
}

/* 100 000 random puts, replaces and removes over a small key space, checked against a
 * reference array after every operation, and fully at the end. */
static void test_churn_against_reference(void **state) {
    enum { KEYS = 3000, OPS = 100000 };
    void **ref = calloc(KEYS, sizeof(*ref));
    uint64_t rng = 0xb0b, salt = 0x1234567;
    size_t ref_size = 0, max_size = 0;
    struct hashmap m;

    assert_non_null(ref);
    hashmap_init(&m);
    for (unsigned op = 0; op < OPS; op++) {
        /* Key space changes over time so the map grows and shrinks. */
        size_t span = op < OPS / 2 ? KEYS : KEYS / 10;
        size_t i = (size_t)test_rand_below(&rng, span);
        uint64_t key = hash_u64(i + salt) ^ i; /* spread keys, some share low bits */
        void *value = &tokens[test_rand_below(&rng, ARRAY_SIZE(tokens))];

        if (test_rand_below(&rng, 100) < 55) {
            ASSERT_OK(hashmap_put(&m, key, value));
            ref_size += ref[i] == NULL;
            ref[i] = value;
        } else {
            assert_ptr_equal(hashmap_remove(&m, key), ref[i]);
            ref_size -= ref[i] != NULL;
            ref[i] = NULL;
        }
        assert_int_equal(m.size, ref_size);
        assert_ptr_equal(hashmap_get(&m, key), ref[i]);
        max_size = MAX(max_size, ref_size);
        /* Load factor stays under 3/4. */
        assert_true(m.size * 4 <= m.cap * 3);

        if (op % 100 == 99)
            for (size_t k = 0; k < KEYS; k++)
                assert_ptr_equal(hashmap_get(&m, hash_u64(k + salt) ^ k), ref[k]);
    }
    assert_true(max_size > 1000);

    /* Iteration visits each entry exactly once. */
    size_t seen = 0;
    uint64_t key;
    void *value;
    for (size_t it = 0; hashmap_next(&m, &it, &key, &value);) {
        bool match = false;

        for (size_t k = 0; k < KEYS && !match; k++)
            match = (hash_u64(k + salt) ^ k) == key && ref[k] == value;
        assert_true(match);
        seen++;
    }
    assert_int_equal(seen, ref_size);
    hashmap_done(&m);
    free(ref);
}

static void test_hash_functions(void **state) {
    /* splitmix64's finaliser: 0 maps to 0, and it is a bijection (spot check). */
    assert_int_equal(hash_u64(0), 0);
    assert_true(hash_u64(1) != hash_u64(2));
    assert_int_equal(hash_u64(1), UINT64_C(0x5692161d100b05e5));
    /* hash_bytes depends on every byte and on the seed. */
    assert_true(hash_bytes("abc", 3, 0) == hash_bytes("abc", 3, 0));
    assert_true(hash_bytes("abc", 3, 0) != hash_bytes("abd", 3, 0));
    assert_true(hash_bytes("abc", 3, 0) != hash_bytes("abc", 3, 1));
    assert_true(hash_bytes("abc", 2, 0) != hash_bytes("abc", 3, 0));
    assert_true(hash_bytes(NULL, 0, 7) == hash_bytes("", 0, 7));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),          cmocka_unit_test(test_collisions_backward_shift),
        cmocka_unit_test(test_wraparound_run), cmocka_unit_test(test_churn_against_reference),
        cmocka_unit_test(test_hash_functions),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
