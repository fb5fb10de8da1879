/* SPDX-License-Identifier: MIT */
/* The GPU source (gpu.h) over the backends of gpu_backend.h: device handles, lost-device
 * backoff and the readings array are the same for every vendor. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_backend.h"
#include "log.h"
#include "macro.h"
#include "strbuf.h"

/* A lost GPU is retried after 1 s, then at doubling intervals up to one minute. */
#define GPU_BACKOFF_INITIAL_US (UINT64_C(1) * 1000000)
#define GPU_BACKOFF_MAX_US (UINT64_C(60) * 1000000)

#define GPU_BACKEND_ENTRY(name) &gpu_backend_##name,
static const struct gpu_backend *const gpu_backends[] = {GPU_BACKENDS(GPU_BACKEND_ENTRY)};

struct gpu_device_slot {
    bool have_handle;
    bool refused_said;    /* its handle was refused (not ours to read), and that was said */
    uint64_t retry_at_us; /* without a handle: next attempt at or after this time */
    uint64_t backoff_us;  /* current retry interval; 0 while the device is healthy */
};

struct gpu_source {
    const struct gpu_backend *backend;
    void *state;
    size_t n_devices;
    struct gpu_device_slot *slots;
    struct gpu_device_reading *readings;
    struct gpu_poll_reading *polls; /* n_devices */
};

static void clear_reading(struct gpu_device_reading *rd) {
    rd->energy_valid = false;
    rd->energy_mj = 0;
    rd->power_valid = false;
    rd->power_mw = 0;
    rd->mig_enabled = false;
    rd->compute_mode = -1;
    rd->n_processes = 0;
    rd->accounting = false;
    rd->n_finished = 0;
    rd->n_unsampled = 0;
    rd->utils_supported = false;
    rd->n_utils = 0;
}

/* The device is unusable (lost, or no handle): retry later, each time waiting twice as long. */
static void mark_down(struct gpu_source *s, size_t i, int error, uint64_t now_us) {
    struct gpu_device_slot *d = &s->slots[i];
    struct gpu_device_reading *rd = &s->readings[i];

    if (d->have_handle)
        s->backend->device_close(s->state, i);
    d->have_handle = false;
    d->backoff_us =
        d->backoff_us ? MIN(d->backoff_us * 2, GPU_BACKOFF_MAX_US) : GPU_BACKOFF_INITIAL_US;
    d->retry_at_us = now_us + d->backoff_us;
    rd->up = false;
    rd->error = error;
}

static int read_device(struct gpu_source *s, size_t i, uint64_t now_us) {
    const struct gpu_backend *b = s->backend;
    struct gpu_device_reading *rd = &s->readings[i];
    int r;

    clear_reading(rd);
    r = b->read_energy(s->state, i, now_us, rd);
    if (r >= 0)
        r = b->read_processes(s->state, i, rd);
    if (r >= 0)
        r = b->read_samples(s->state, i, now_us, rd);
    return r;
}

static int sample_device(struct gpu_source *s, size_t i, uint64_t now_us) {
    struct gpu_device_slot *d = &s->slots[i];
    struct gpu_device_reading *rd = &s->readings[i];
    int r;

    if (!d->have_handle) {
        if (now_us < d->retry_at_us)
            return 0; /* still waiting; the reading keeps up = false and its error */
        r = s->backend->device_open(s->state, i, rd);
        if (r < 0) {
            if ((r == -EACCES || r == -EPERM) && !d->refused_said) {
                log_info("%s: GPU %zu may not be opened (%s): not ours to measure here (a "
                         "device cgroup?); it is left out",
                         s->backend->name, i, strerror(-r));
                d->refused_said = true;
            }
            clear_reading(rd);
            mark_down(s, i, r, now_us);
            return 0;
        }
        d->have_handle = true;
    }

    r = read_device(s, i, now_us);
    if (r == -ENOMEM)
        return r;
    if (r == -ENODEV) {
        log_debug("%s: GPU %zu lost; retrying with backoff", s->backend->name, i);
        clear_reading(rd);
        mark_down(s, i, r, now_us);
        return 0;
    }
    if (r < 0) {
        rd->up = false;
        rd->error = r;
        return 0;
    }
    rd->up = true;
    rd->error = 0;
    d->backoff_us = 0;
    return 0;
}

int gpu_source_sample(struct gpu_source *s, uint64_t now_us,
                      const struct gpu_device_reading **ret_devices, size_t *ret_n) {
    for (size_t i = 0; i < s->n_devices; i++) {
        int r = sample_device(s, i, now_us);
        if (r < 0)
            return r;
    }
    *ret_devices = s->readings;
    *ret_n = s->n_devices;
    return 0;
}

static void gpu_source_closep(struct gpu_source **s) {
    gpu_source_close(*s);
}

/* Lists the devices of an opened backend; each is read (and, without a handle, retried)
 * from the first sample on. */
static int open_devices(struct gpu_source *s, size_t n, const char **ret_reason) {
    s->slots = calloc(n, sizeof(*s->slots));
    s->readings = calloc(n, sizeof(*s->readings));
    s->polls = calloc(n, sizeof(*s->polls));
    if (!s->slots || !s->readings || !s->polls) {
        *ret_reason = "out of memory";
        return -ENOMEM;
    }
    s->n_devices = n;
    for (size_t i = 0; i < n; i++) {
        struct gpu_device_reading *rd = &s->readings[i];
        int r;

        rd->index = (unsigned)i;
        clear_reading(rd);
        r = s->backend->device_open(s->state, i, rd);
        s->slots[i].have_handle = r >= 0;
        rd->up = r >= 0;
        rd->error = MIN(r, 0);
    }
    return 0;
}

int gpu_source_open_backend(const struct gpu_backend *backend,
                            const struct gpu_source_options *opts, struct gpu_source **ret_source,
                            const char **ret_reason) {
    _cleanup_(gpu_source_closep) struct gpu_source *s = NULL;
    size_t n = 0;
    int r;

    s = calloc(1, sizeof(*s));
    if (!s) {
        *ret_reason = "out of memory";
        return -ENOMEM;
    }
    r = backend->open(opts, &s->state, &n, ret_reason);
    if (r < 0)
        return r;
    s->backend = backend;
    r = open_devices(s, n, ret_reason);
    if (r < 0)
        return r;
    *ret_source = TAKE_PTR(s);
    return 0;
}

int gpu_source_open(const struct gpu_source_options *opts, struct gpu_source **ret_source,
                    const char **ret_reason) {
    const char *first_reason = NULL;
    int first_error = 0;

    for (size_t b = 0; b < ARRAY_SIZE(gpu_backends); b++) {
        const char *reason = NULL;
        int r;

        r = gpu_source_open_backend(gpu_backends[b], opts, ret_source, &reason);
        if (r >= 0)
            return r;
        if (r == -ENOMEM) {
            *ret_reason = reason;
            return r;
        }
        /* The first backend whose library exists says best why there is no GPU. */
        if (first_error == 0 || (first_error == -ENOENT && r != -ENOENT)) {
            first_error = r;
            first_reason = reason;
        }
    }
    *ret_reason = first_reason;
    return first_error < 0 ? first_error : -ENODEV;
}

void gpu_source_poll(struct gpu_source *s, uint64_t now_us,
                     const struct gpu_poll_reading **ret_polls, size_t *ret_n) {
    size_t n = 0;

    for (size_t i = 0; s->backend->poll && i < s->n_devices; i++) {
        struct gpu_poll_reading *p = &s->polls[n];

        if (!s->slots[i].have_handle || !s->readings[i].up)
            continue;
        *p = (struct gpu_poll_reading){.index = s->readings[i].index};
        if (s->backend->poll(s->state, i, now_us, p) >= 0)
            n++;
    }
    *ret_polls = s->polls;
    *ret_n = n;
}

struct gpu_source *gpu_source_close(struct gpu_source *s) {
    if (!s)
        return NULL;
    if (s->backend)
        s->backend->close(s->state);
    free(s->slots);
    free(s->readings);
    free(s->polls);
    free(s);
    return NULL;
}

void gpu_source_describe(const struct gpu_source *s, struct strbuf *out) {
    s->backend->describe(s->state, s->n_devices, out);
    for (size_t i = 0; i < s->n_devices; i++) {
        const struct gpu_device_reading *rd = &s->readings[i];

        strbuf_printf(out, "GPU %zu: %s %s: ", i, rd->uuid[0] ? rd->uuid : "(no uuid)",
                      rd->name[0] ? rd->name : "(no name)");
        if (!s->slots[i].have_handle || (!rd->up && rd->error < 0)) {
            strbuf_printf(out, "down (%s); retried with backoff\n",
                          rd->error < 0 ? strerror(-rd->error) : "no handle");
            continue;
        }
        strbuf_puts(out, "up\n");
        s->backend->describe_device(s->state, i, rd, out);
    }
}

const void *gpu_source_backend_state(const struct gpu_source *s, const struct gpu_backend *b) {
    return s && s->backend == b ? s->state : NULL;
}
