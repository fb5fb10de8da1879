/* SPDX-License-Identifier: MIT */
#include "stopper.h"

#include <errno.h>
#include <time.h>

#include "clock.h"

void stopper_init(struct stopper *st) {
    pthread_condattr_t attr;

    (void)pthread_mutex_init(&st->lock, NULL);
    (void)pthread_condattr_init(&attr);
    (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    (void)pthread_cond_init(&st->wake, &attr);
    (void)pthread_condattr_destroy(&attr);
    atomic_init(&st->stopping, false);
    st->kicked = false;
}

void stopper_done(struct stopper *st) {
    (void)pthread_cond_destroy(&st->wake);
    (void)pthread_mutex_destroy(&st->lock);
}

bool stopper_sleep_until(struct stopper *st, uint64_t deadline_ns) {
    struct timespec ts = {.tv_sec = (time_t)(deadline_ns / NSEC_PER_SEC),
                          .tv_nsec = (long)(deadline_ns % NSEC_PER_SEC)};
    bool stopping;

    (void)pthread_mutex_lock(&st->lock);
    /* Spurious wake-ups go back to sleep; only the deadline, a kick or a stop end it. */
    while (!atomic_load(&st->stopping) && !st->kicked &&
           pthread_cond_timedwait(&st->wake, &st->lock, &ts) != ETIMEDOUT)
        ;
    st->kicked = false;
    stopping = atomic_load(&st->stopping);
    (void)pthread_mutex_unlock(&st->lock);
    return stopping;
}

void stopper_kick(struct stopper *st) {
    (void)pthread_mutex_lock(&st->lock);
    st->kicked = true;
    (void)pthread_cond_broadcast(&st->wake);
    (void)pthread_mutex_unlock(&st->lock);
}

void stopper_stop(struct stopper *st) {
    (void)pthread_mutex_lock(&st->lock);
    atomic_store(&st->stopping, true);
    (void)pthread_cond_broadcast(&st->wake);
    (void)pthread_mutex_unlock(&st->lock);
}

void stopper_rearm(struct stopper *st) {
    atomic_store(&st->stopping, false);
}

uint64_t schedule_next(uint64_t next, uint64_t interval_ns) {
    uint64_t now = clock_monotonic_ns();

    next += interval_ns;
    return next < now ? now + interval_ns : next;
}
