/* SPDX-License-Identifier: MIT */
#include "auth_queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct auth_queue {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
    bool stopped;          /* threads joined */
    struct auth_job *jobs; /* a ring of max_jobs */
    size_t max_jobs, head, n;
    pthread_t *threads;
    unsigned n_threads;
};

static void job_finish(struct auth_job *job, int result) {
    struct MHD_Connection *conn = job->conn;

    if (job->password) {
        explicit_bzero(job->password, strlen(job->password));
        free(job->password);
    }
    free(job->user);
    web_config_free(job->config);
    *job->ret_result = result;
    /* Last: from here the connection's worker may answer, and the request (with the
     * result slot) may be gone. */
    MHD_resume_connection(conn);
}

static void *worker(void *arg) {
    struct auth_queue *q = arg;

    for (;;) {
        struct auth_job job;
        int r;

        (void)pthread_mutex_lock(&q->lock);
        while (!q->stopping && q->n == 0)
            (void)pthread_cond_wait(&q->wake, &q->lock);
        if (q->n == 0) {
            (void)pthread_mutex_unlock(&q->lock);
            return NULL;
        }
        job = q->jobs[q->head];
        q->head = (q->head + 1) % q->max_jobs;
        q->n--;
        (void)pthread_mutex_unlock(&q->lock);

        /* During a stop, auth_queue_free() answers the waiting jobs; a job a worker took
         * first is still checked. */
        r = web_config_check_password(job.config, job.user, job.password);
        job_finish(&job, r);
    }
}

int auth_queue_new(unsigned threads, size_t max_jobs, struct auth_queue **ret) {
    struct auth_queue *q;
    int r;

    if (threads == 0 || max_jobs == 0 || !ret)
        return -EINVAL;
    q = calloc(1, sizeof(*q));
    if (!q)
        return -ENOMEM;
    q->jobs = calloc(max_jobs, sizeof(*q->jobs));
    q->threads = calloc(threads, sizeof(*q->threads));
    if (!q->jobs || !q->threads) {
        free(q->jobs);
        free(q->threads);
        free(q);
        return -ENOMEM;
    }
    q->max_jobs = max_jobs;
    (void)pthread_mutex_init(&q->lock, NULL);
    (void)pthread_cond_init(&q->wake, NULL);
    for (; q->n_threads < threads; q->n_threads++) {
        r = -pthread_create(&q->threads[q->n_threads], NULL, worker, q);
        if (r < 0) {
            auth_queue_free(q);
            return r;
        }
    }
    *ret = q;
    return 0;
}

/* Under the lock: whether client has its share of the waiting jobs. */
static bool client_full(const struct auth_queue *q, const uint8_t client[16]) {
    size_t share = q->max_jobs / 4 > 0 ? q->max_jobs / 4 : 1, n = 0;

    for (size_t i = 0; i < q->n; i++)
        if (memcmp(q->jobs[(q->head + i) % q->max_jobs].client, client, 16) == 0)
            n++;
    return n >= share;
}

int auth_queue_submit(struct auth_queue *q, struct auth_job *job) {
    int r = 0;

    (void)pthread_mutex_lock(&q->lock);
    if (q->stopping || q->n == q->max_jobs || client_full(q, job->client)) {
        r = -EBUSY;
    } else {
        q->jobs[(q->head + q->n) % q->max_jobs] = *job;
        q->n++;
        (void)pthread_cond_signal(&q->wake);
    }
    (void)pthread_mutex_unlock(&q->lock);
    return r;
}

void auth_queue_stop(struct auth_queue *q) {
    if (!q || q->stopped)
        return;
    (void)pthread_mutex_lock(&q->lock);
    q->stopping = true;
    (void)pthread_cond_broadcast(&q->wake);
    (void)pthread_mutex_unlock(&q->lock);
    /* The waiting jobs: answered now, not after every check before them (each resumed
     * outside the lock, as the workers do). */
    for (;;) {
        struct auth_job job;

        (void)pthread_mutex_lock(&q->lock);
        if (q->n == 0) {
            (void)pthread_mutex_unlock(&q->lock);
            break;
        }
        job = q->jobs[q->head];
        q->head = (q->head + 1) % q->max_jobs;
        q->n--;
        (void)pthread_mutex_unlock(&q->lock);
        job_finish(&job, -EBUSY);
    }
    for (unsigned i = 0; i < q->n_threads; i++)
        (void)pthread_join(q->threads[i], NULL);
    q->stopped = true;
}

struct auth_queue *auth_queue_free(struct auth_queue *q) {
    if (!q)
        return NULL;
    auth_queue_stop(q);
    (void)pthread_cond_destroy(&q->wake);
    (void)pthread_mutex_destroy(&q->lock);
    free(q->threads);
    free(q->jobs);
    free(q);
    return NULL;
}
