/* SPDX-License-Identifier: MIT */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * What a periodic worker thread sleeps on between rounds: a deadline on CLOCK_MONOTONIC,
 * cut short at once by stopper_stop() from another thread.
 */
struct stopper {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    atomic_bool stopping; /* also read without the lock, between steps of a long round */
    bool kicked;          /* under lock: stopper_kick() since the last wait ended */
};

void stopper_init(struct stopper *st);
void stopper_done(struct stopper *st);
/* Sleeps until CLOCK_MONOTONIC reaches deadline_ns or the stopper is stopped. Returns
 * true when stopping. */
bool stopper_sleep_until(struct stopper *st, uint64_t deadline_ns);
/* Ends the sleeper's wait early (stopper_sleep_until() returns false), or its next one when
 * it is not sleeping now: a worker whose next deadline moved closer. */
void stopper_kick(struct stopper *st);
/* Wakes the sleeper for good (until stopper_rearm()). */
void stopper_stop(struct stopper *st);
/* Clears a stop, for a thread started again. */
void stopper_rearm(struct stopper *st);

static inline bool stopper_stopping(struct stopper *st) {
    return atomic_load(&st->stopping);
}

/* The deadline after `next` on a fixed-rate schedule: one interval on, or one interval from
 * now when a round overran it (skipping ahead instead of running late rounds in a burst). */
uint64_t schedule_next(uint64_t next, uint64_t interval_ns);
