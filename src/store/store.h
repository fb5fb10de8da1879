/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * src/store: what is exported, and how it crosses from the sampler to the scrapes.
 *
 *   workload_kind.h  the workload kinds table (container, pod, SLURM job, systemd
 *                    service): recognition, labels, families;
 *   labels.h         immutable, reference-counted label sets;
 *   ledger.h         the cumulative counters per process, workload, GPU and RAPL domain,
 *                    with retention; owned by the sampler thread;
 *   snapshot.h       an immutable picture of the ledger sharing its label sets, published
 *                    with a reference count; the HTTP thread renders from it;
 *   split_method.h   how a GPU window was split (learned intensity or SM share, and why);
 *   ledger_state.h   the ledger's counters as text, restored after a restart;
 *   ledger_restart.h how long joulestat was down, from the clocks of the save and now.
 *
 * Contract: no I/O. The ledger is single-threaded; snapshots and label sets are
 * immutable once published and freed by whichever thread drops the last reference.
 * Other folders include this header's headers only.
 */
#include "labels.h"         /* IWYU pragma: export */
#include "ledger.h"         /* IWYU pragma: export */
#include "ledger_restart.h" /* IWYU pragma: export */
#include "ledger_state.h"   /* IWYU pragma: export */
#include "snapshot.h"       /* IWYU pragma: export */
#include "split_method.h"   /* IWYU pragma: export */
#include "workload_kind.h"  /* IWYU pragma: export */
