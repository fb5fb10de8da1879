/* SPDX-License-Identifier: MIT */
#pragma once

#include "cgroup_path.h"
#include "hashmap.h"

/*
 * The scanner's identities, one copy per distinct identity: the processes of a container
 * share theirs instead of each carrying ~330 bytes. Reference-counted; used by the
 * scanner's thread only. An identity is immutable once in the pool.
 */
struct identity_pool {
    struct hashmap by_hash; /* identity hash -> first pooled identity with that hash */
};

void identity_pool_init(struct identity_pool *p);
/* Frees the pool; every identity must have been put back. */
void identity_pool_done(struct identity_pool *p);

/* Returns the pooled copy of *id (a new reference) in *ret: 0 or -ENOMEM. */
int identity_pool_get(struct identity_pool *p, const struct workload_identity *id,
                      const struct workload_identity **ret);
/* Drops a reference taken by identity_pool_get(). Accepts NULL. */
void identity_pool_put(struct identity_pool *p, const struct workload_identity *id);
