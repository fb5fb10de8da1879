/* SPDX-License-Identifier: MIT */
#pragma once

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "webconfig.h"

/*
 * bcrypt off the server's workers: a request whose credentials are not remembered is
 * suspended (MHD_suspend_connection()) and its check queued here; one of a few threads of
 * our own runs bcrypt, writes the answer and resumes the connection, whose worker then
 * answers it. A worker never waits for bcrypt, so no other connection does either, even one
 * that worker serves (a keep-alive scraper), and the server runs with any number of workers.
 *
 * At most `threads` checks run at once and `max_jobs` wait, of which a quarter (at least
 * one) from one client address: beyond, a check is refused (-EBUSY), as it is once the
 * queue is stopping. One client guessing passwords as fast as it can fills its own quarter,
 * not the queue a scraper's first check must wait in.
 */

struct auth_job {
    struct MHD_Connection *conn; /* suspended by the caller before auth_queue_submit() */
    struct web_config *config;   /* a reference */
    char *user, *password;       /* malloc'd; the password is wiped when freed */
    int *ret_result;             /* written before the resume: 1, 0, -errno */
    uint8_t client[16];          /* conn_guard_client_key() of its address */
};

struct auth_queue;

/* Starts the threads. Returns 0, -EINVAL, -ENOMEM, or pthread_create()'s error. */
int auth_queue_new(unsigned threads, size_t max_jobs, struct auth_queue **ret);
/*
 * Queues a job, taking its strings and reference on success. Returns 0, or -EBUSY when
 * full or stopping (the job stays the caller's, the connection suspended: the caller
 * resumes it).
 */
int auth_queue_submit(struct auth_queue *q, struct auth_job *job);
/*
 * Stops: the checks running finish; the jobs waiting are answered -EBUSY; every connection
 * is resumed, and later submissions are refused. Call before stopping the server (which
 * refuses to stop while a connection is suspended), and free after it stopped.
 */
void auth_queue_stop(struct auth_queue *q);
/* Stops if needed and frees. Accepts NULL; returns NULL. */
struct auth_queue *auth_queue_free(struct auth_queue *q);
