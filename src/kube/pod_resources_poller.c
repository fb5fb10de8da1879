/* SPDX-License-Identifier: MIT */
/* The polling thread and the published state of the pod-resources source. */
#include "pod_resources_client.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "macro.h"
#include "stopper.h"

struct podres_source {
    char *socket_path;
    uint64_t interval_ns;
    uint64_t timeout_ns;

    pthread_mutex_t lock; /* guards state */
    struct podres_state *state;
    struct stopper stopper;
    pthread_t thread;
    bool thread_started;
    /* written by the polling side only (one poller at a time: the thread, or the caller
     * before start / after stop) */
    uint64_t polls, errors, generation;
};

struct podres_state *podres_state_ref(struct podres_state *s) {
    if (s)
        atomic_fetch_add(&s->refs, 1);
    return s;
}

struct podres_state *podres_state_unref(struct podres_state *s) {
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
        gpu_alloc_table_free(s->table);
        free(s);
    }
    return NULL;
}

int podres_source_new(const struct podres_source_options *o, struct podres_source **ret) {
    struct podres_source *s = calloc(1, sizeof(*s));

    if (!s)
        return -ENOMEM;
    s->socket_path = strdup(o->socket_path ? o->socket_path : PODRES_DEFAULT_SOCKET);
    if (!s->socket_path) {
        free(s);
        return -ENOMEM;
    }
    s->interval_ns = o->interval_ns ? o->interval_ns : 10 * NSEC_PER_SEC;
    s->timeout_ns = o->timeout_ns ? o->timeout_ns : PODRES_DEFAULT_TIMEOUT_NS;
    (void)pthread_mutex_init(&s->lock, NULL);
    stopper_init(&s->stopper);
    *ret = s;
    return 0;
}

struct podres_source *podres_source_free(struct podres_source *s) {
    if (!s)
        return NULL;
    podres_source_stop(s);
    podres_state_unref(s->state);
    stopper_done(&s->stopper);
    (void)pthread_mutex_destroy(&s->lock);
    free(s->socket_path);
    free(s);
    return NULL;
}

/* One List call, decoded into a GPU table. */
static int fetch_table(struct podres_source *s, struct gpu_alloc_table **ret, char *errbuf,
                       size_t errlen) {
    _cleanup_(freep) uint8_t *msg = NULL;
    struct podres_list *list = NULL;
    size_t len = 0;
    int r;

    r = podres_call_list(s->socket_path, s->timeout_ns, PODRES_MAX_RESPONSE, &msg, &len, errbuf,
                         errlen);
    if (r < 0)
        return r;
    r = podres_list_decode(msg, len, &list);
    if (r < 0) {
        (void)snprintf(errbuf, errlen, "List answer from %s: %s", s->socket_path,
                       r == -E2BIG ? "too many entries" : "malformed protobuf");
        return r;
    }
    r = gpu_alloc_table_build(list, ret);
    podres_list_free(list);
    if (r < 0)
        (void)snprintf(errbuf, errlen, "building the GPU table: %s", strerror(-r));
    return r;
}

int podres_source_poll(struct podres_source *s) {
    struct gpu_alloc_table *table = NULL;
    struct podres_state *next, *prev;
    char errbuf[sizeof(next->message)];
    int r;

    r = fetch_table(s, &table, errbuf, sizeof(errbuf));
    next = calloc(1, sizeof(*next));
    if (!next) {
        gpu_alloc_table_free(table);
        return -ENOMEM;
    }
    atomic_init(&next->refs, 1);
    s->polls++;
    (void)pthread_mutex_lock(&s->lock);
    prev = s->state;
    if (r >= 0) {
        next->up = true;
        next->table = table;
        next->generation = ++s->generation;
    } else {
        s->errors++;
        next->error = r;
        (void)snprintf(next->message, sizeof(next->message), "%s", errbuf);
        next->generation = s->generation;
        /* Keep the last good allocations: the kubelet restarting does not free GPUs. */
        if (prev && prev->table && gpu_alloc_table_copy(prev->table, &next->table) < 0) {
            (void)pthread_mutex_unlock(&s->lock);
            podres_state_unref(next);
            return -ENOMEM;
        }
    }
    next->polls = s->polls;
    next->errors = s->errors;
    s->state = next;
    (void)pthread_mutex_unlock(&s->lock);
    podres_state_unref(prev);
    log_debug("pod-resources: poll %" PRIu64 ": %s", next->polls, next->up ? "ok" : next->message);
    return r;
}

struct podres_state *podres_source_get(struct podres_source *s) {
    struct podres_state *st;

    (void)pthread_mutex_lock(&s->lock);
    st = podres_state_ref(s->state);
    (void)pthread_mutex_unlock(&s->lock);
    return st;
}

static void *poll_thread(void *userdata) {
    struct podres_source *s = userdata;
    uint64_t next = clock_monotonic_ns();

    for (;;) {
        (void)podres_source_poll(s);
        next = schedule_next(next, s->interval_ns);
        if (stopper_sleep_until(&s->stopper, next))
            return NULL;
    }
}

int podres_source_start(struct podres_source *s) {
    int r;

    if (s->thread_started)
        return 0;
    stopper_rearm(&s->stopper);
    r = pthread_create(&s->thread, NULL, poll_thread, s);
    if (r != 0)
        return -r;
    s->thread_started = true;
    return 0;
}

void podres_source_stop(struct podres_source *s) {
    if (!s->thread_started)
        return;
    stopper_stop(&s->stopper);
    (void)pthread_join(s->thread, NULL);
    s->thread_started = false;
}
