/* SPDX-License-Identifier: MIT */
#pragma once

/* The NVML backend (gpu_backend_nvml): shared between nvml.c (lifecycle, device reads),
 * nvml_processes.c and nvml_describe.c. */

#include <stdbool.h>
#include <stdint.h>

#include "dcgm.h"
#include "gpu.h"
#include "gpu_backend.h"
#include "nvml.h"
#include "nvml_abi.h"
#include "nvml_loader.h"

/* INSUFFICIENT_SIZE answers are followed by at most this many larger retries per call. */
#define NVML_SIZE_RETRIES 4

enum nvml_list { NVML_LIST_COMPUTE, NVML_LIST_GRAPHICS, NVML_LIST_MPS, _NVML_LIST_MAX };

struct nvml_feature_status {
    enum gpu_feature_state state;
    nvmlReturn_t code; /* of the last failing call */
    bool suspect;      /* worked, then "not supported": asked once more after the modes */
};

/* A MIG GPU instance as the device keeps it: its public view and its GPM samples. */
#define NVML_MIG_MAX 8u
struct nvml_mig_slot {
    struct gpu_mig_instance view;
    nvmlGpmSample_t samples[2]; /* the previous and the next, alternately */
    unsigned next;              /* index of the sample the next reading goes into */
    bool have_previous;         /* samples[next ^ 1] holds a reading */
};

struct nvml_device {
    nvmlDevice_t handle; /* NULL while the source holds none (gpu_backend.h) */

    struct nvml_feature_status features[_GPU_FEATURE_MAX];
    uint64_t last_seen_us; /* newest utilisation sample accepted so far */
    size_t n_pending;      /* samples polls kept in utils for the next reading */

    /* MIG mode changes only with a GPU reset and compute mode by an administrator's
     * nvidia-smi, so they are asked for every NVML_MODES_REFRESH_US, not every tick. */
    uint64_t modes_read_at_us; /* 0: not read since the handle was acquired */
    bool mig_enabled;
    int compute_mode;

    /* MIG: the GPU instances, listed again every NVML_MODES_REFRESH_US (nvml_mig.c). */
    uint64_t mig_listed_at_us; /* 0: not listed since the handle was acquired */
    size_t n_mig;
    struct nvml_mig_slot mig[NVML_MIG_MAX];
    struct gpu_mig_instance mig_views[NVML_MIG_MAX]; /* the reading's array */

    /* Accounting mode (nvml_accounting.c): pids of the buffer known to have finished and
     * been reported, sorted, and the reading's finished processes. */
    bool accounting_enabled; /* read with the modes */
    bool accounting_primed;  /* the buffer was read once: what finished before is known */
    uint32_t *accounted, *accounted_next;
    size_t n_accounted, accounted_cap, accounted_next_cap;
    struct gpu_finished_process *finished;
    size_t finished_cap;
    /* The last reading's running pids, sorted (running_next: the next one's, being made),
     * and the reading's unsampled processes (nvml_read_unsampled()). */
    bool running_primed;
    uint32_t *running, *running_next;
    size_t n_running, running_cap, running_next_cap;
    struct gpu_unsampled_process *unsampled;
    size_t unsampled_cap;

    /* The reading's arrays, reused across ticks. */
    struct gpu_process *processes;
    size_t processes_cap;
    struct gpu_util_sample *utils;
    size_t utils_cap;
};

struct nvml_state {
    struct nvml_api *api;
    bool initialized;
    char driver_version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];

    nvml_process_list_fn *lists[_NVML_LIST_MAX];
    size_t list_stride[_NVML_LIST_MAX]; /* bytes per entry the list function writes */

    size_t n_devices;
    struct nvml_device *devices;

    /* Raw NVML buffers shared by all devices, reused across ticks. */
    unsigned char *raw_processes; /* entries of up to sizeof(nvmlProcessDetail_v1_t) bytes */
    size_t raw_processes_cap;
    nvmlProcessUtilizationSample_t *raw_legacy;
    size_t raw_legacy_cap;
    nvmlProcessUtilizationInfo_v1_t *raw_info;
    size_t raw_info_cap;
    nvmlGpmMetricsGet_t *gpm_request; /* allocated at the first GPM reading (13 KiB) */
    unsigned *raw_pids;               /* the accounting buffer's pids */
    size_t raw_pids_cap;

    /* DCGM (nvml_dcgm.c): the SM activity of MIG instances on GPUs without GPM, from the
     * node's nv-hostengine; loaded at the first need, connected again after a failure. */
    const char *dcgm_library, *dcgm_address;
    bool dcgm_off;
    bool dcgm_unusable; /* the library is missing or does not load: not tried again */
    struct dcgm_client *dcgm;
    uint64_t dcgm_retry_at_us;
    const char *dcgm_reason; /* why it is not connected (static text); NULL: it is, or untried */
};

/* Records the outcome of one call of feature f on device d; returns nvml_errno(code). */
int nvml_feature_record(struct nvml_device *d, enum gpu_feature f, nvmlReturn_t code);
/* A call that worked on this device now says "not supported": its mode may have changed
 * (MIG switched on, accounting off), which says nothing of what the driver can do. The
 * device's modes are read again at the next tick and the feature stays as it was; said
 * again after that, it is the answer. Returns whether the call is to be taken as failed
 * for now. */
bool nvml_mode_changed(struct nvml_device *d, enum gpu_feature f, nvmlReturn_t code);
/* Whether f may still be called on d. */
bool nvml_feature_usable(const struct nvml_device *d, enum gpu_feature f);

/* Fills rd->processes from the compute, graphics and MPS lists, merged by pid. Returns
 * 0, -ENOMEM, or the errno of a list that failed in a way that makes this tick invalid. */
int nvml_read_processes(void *state, size_t index, struct gpu_device_reading *rd);

/* Fills rd->utils with samples newer than the last accepted one and not after now_us + a
 * little slack; none in MIG mode. Returns 0, -ENOMEM or -ENODEV (device lost). */
/* Keeps the samples newer than the last for the next nvml_read_utilization(); the power of
 * a device without an energy counter (gpu_backend.h, poll). */
int nvml_poll(void *state, size_t index, uint64_t now_us, struct gpu_poll_reading *ret);
int nvml_read_utilization(void *state, size_t index, uint64_t now_us,
                          struct gpu_device_reading *rd);

/* nvml_mig.c: a MIG-enabled device's GPU instances and their SM activity over the window
 * since the last call (rd->n_mig, rd->mig). Returns 0, -ENODEV or -ENOMEM. */
int nvml_read_mig(struct nvml_state *s, struct nvml_device *d, uint64_t now_us,
                  struct gpu_device_reading *rd);
/* Frees the device's GPM samples and forgets its instances (handle lost or closed). */
void nvml_mig_forget(struct nvml_state *s, struct nvml_device *d);

/* nvml_dcgm.c: the activity of d's instances (d->mig) from DCGM, where a client can be
 * had; instances it has no samples for keep activity_valid false. */
void nvml_dcgm_read(struct nvml_state *s, struct nvml_device *d, const char *gpu_uuid,
                    uint64_t now_us);
/* `joulestat check`: the line for a MIG-enabled device without GPM. */
void nvml_dcgm_describe(const struct nvml_state *s, size_t index, struct strbuf *out);
void nvml_dcgm_close(struct nvml_state *s);

/* nvml_accounting.c: with accounting mode on, the processes of the driver's accounting
 * buffer that finished since the last call (rd->finished); rd->processes must be read.
 * Returns 0, -ENODEV or -ENOMEM. */
int nvml_read_finished(struct nvml_state *s, struct nvml_device *d, struct gpu_device_reading *rd);
/* With accounting mode on, the processes new to the running list since the last reading
 * that have no utilisation sample in this one, with their statistics so far
 * (rd->unsampled); rd->processes and rd->utils must be read. Returns 0, -ENODEV or
 * -ENOMEM. */
int nvml_read_unsampled(struct nvml_state *s, struct nvml_device *d, struct gpu_device_reading *rd);
/* Forgets what was reported (handle lost: the buffer may be a new driver's); frees. */
void nvml_accounting_forget(struct nvml_device *d);
void nvml_accounting_free(struct nvml_device *d);

/* `joulestat check` (nvml_describe.c). */
void nvml_describe(const void *state, size_t n_devices, struct strbuf *out);
void nvml_describe_device(const void *state, size_t index, const struct gpu_device_reading *rd,
                          struct strbuf *out);
