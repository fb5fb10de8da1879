/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"

/*
 * One GPU vendor's library behind one ops table. The GPU source (gpu_source.c) owns what
 * is the same for every vendor: it opens the first backend that finds devices, keeps one
 * struct gpu_device_reading per device, reads each device every tick through these ops,
 * and retries a lost device (-ENODEV) with backoff. A backend only talks to its library.
 *
 * Contract for every op that reads a device: i < the device count open() returned; it
 * fills its fields of rd (which the source cleared at the start of the tick) and returns
 * 0, -ENODEV when the device is lost (its handle is then released and reacquired later),
 * -ENOMEM, or another -errno that makes this tick's reading of the device invalid.
 * A backend never logs above debug.
 *
 * A second vendor is a new file that defines a `const struct gpu_backend gpu_backend_X`
 * and one line in GPU_BACKENDS below.
 */
struct gpu_backend {
    const char *name; /* "nvml": log prefix */

    /* Loads the library (dl_symbols.h) and counts the devices. Returns 0 with the
     * backend's state and the device count (> 0), or -errno with *ret_reason (static
     * text): -ENOENT no library, -ELIBBAD not usable, -ENXIO init failed, -ENODEV no
     * devices, -ENOMEM. */
    int (*open)(const struct gpu_source_options *o, void **ret_state, size_t *ret_n_devices,
                const char **ret_reason);
    /* Releases everything open() made. Accepts a state with devices never opened. */
    void (*close)(void *state);

    /* Lists device i: acquires its handle and writes its identity (rd->uuid, rd->name). */
    int (*device_open)(void *state, size_t i, struct gpu_device_reading *rd);
    /* Forgets device i's handle after it was lost. */
    void (*device_close)(void *state, size_t i);

    /* The device's modes (MIG, compute mode), energy counter and power. */
    int (*read_energy)(void *state, size_t i, uint64_t now_us, struct gpu_device_reading *rd);
    /* The processes on the device (rd->processes: sorted by pid, each once). */
    int (*read_processes)(void *state, size_t i, struct gpu_device_reading *rd);
    /* Per-process utilisation samples newer than the last call's and not after now_us
     * (rd->utils, rd->utils_supported). */
    int (*read_samples)(void *state, size_t i, uint64_t now_us, struct gpu_device_reading *rd);
    /* Optional, between two readings: reads the samples newer than the last now and keeps
     * them for the next read_samples (the driver returns only a process's newest sample per
     * call, so reading once a second would see one sample period in six); on a device
     * without an energy counter also its power (ret->power_valid, ret->power_mw). */
    int (*poll)(void *state, size_t i, uint64_t now_us, struct gpu_poll_reading *ret);

    /* `joulestat check`: the library line, then the features of one device. */
    void (*describe)(const void *state, size_t n_devices, struct strbuf *out);
    void (*describe_device)(const void *state, size_t i, const struct gpu_device_reading *rd,
                            struct strbuf *out);
};

/* Every backend, tried in this order; the first that opens with devices is used. */
#define GPU_BACKENDS(X) X(nvml)

#define GPU_BACKEND_DECLARE(name) extern const struct gpu_backend gpu_backend_##name;
GPU_BACKENDS(GPU_BACKEND_DECLARE)

/* gpu_source_open() with one given backend (the registered ones, or a test's). */
int gpu_source_open_backend(const struct gpu_backend *backend,
                            const struct gpu_source_options *opts, struct gpu_source **ret_source,
                            const char **ret_reason);

/* The state of the source's backend when it is `b`, else NULL (tests, nvml.h queries). */
const void *gpu_source_backend_state(const struct gpu_source *s, const struct gpu_backend *b);
