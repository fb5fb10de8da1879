/* SPDX-License-Identifier: MIT */
#pragma once

#include "workload_kind.h"

/*
 * One label set shared by the ledger and every snapshot that shows it: immutable once
 * made, reference counted (atomically: the last snapshot holding one may be dropped by
 * the HTTP thread). A ledger entry holds one reference; building a snapshot takes another
 * instead of copying the labels; new labels (names from the Kubernetes API) are a new
 * set that replaces the entry's, never a change to a shared one.
 */

/* A new set with a copy of id and one reference, or NULL on ENOMEM. */
const struct snap_identity *labels_new(const struct snap_identity *id);
/* Another reference to the same set. Accepts NULL. */
const struct snap_identity *labels_ref(const struct snap_identity *id);
/* Drops a reference; frees on the last. Accepts NULL; returns NULL. */
const struct snap_identity *labels_unref(const struct snap_identity *id);
