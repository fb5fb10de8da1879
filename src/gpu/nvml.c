/* SPDX-License-Identifier: MIT */
/* The NVML backend of the GPU source (gpu_backend.h): NVML loaded with dlopen(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "nvml_internal.h"
#include "parse_num.h"

#define NVML_MODES_REFRESH_US (UINT64_C(10) * 1000000)

int nvml_feature_record(struct nvml_device *d, enum gpu_feature f, nvmlReturn_t code) {
    struct nvml_feature_status *st = &d->features[f];
    int r = nvml_errno(code);

    switch (r) {
    case 0:
        st->state = GPU_FEATURE_WORKS;
        st->suspect = false;
        return 0;
    case -EOPNOTSUPP:
    case -EPROTO: /* our struct version is not one this driver takes */
        st->state = GPU_FEATURE_UNSUPPORTED;
        break;
    case -EACCES:
    case -EPERM:
        st->state = GPU_FEATURE_NO_PERMISSION;
        break;
    case -ENOSYS:
        st->state = GPU_FEATURE_ABSENT;
        break;
    default:
        st->state = GPU_FEATURE_FAILING;
        break;
    }
    if (st->state != GPU_FEATURE_FAILING)
        log_debug("NVML: %s disabled on this device: %s", gpu_feature_name(f),
                  gpu_feature_state_name(st->state));
    st->code = code;
    return r;
}

bool nvml_mode_changed(struct nvml_device *d, enum gpu_feature f, nvmlReturn_t code) {
    struct nvml_feature_status *st = &d->features[f];

    if (nvml_errno(code) != -EOPNOTSUPP || st->state != GPU_FEATURE_WORKS || st->suspect)
        return false;
    st->suspect = true;
    d->modes_read_at_us = 0;
    return true;
}

bool nvml_feature_usable(const struct nvml_device *d, enum gpu_feature f) {
    enum gpu_feature_state st = d->features[f].state;
    return st == GPU_FEATURE_UNTRIED || st == GPU_FEATURE_WORKS || st == GPU_FEATURE_FAILING;
}

/* Drivers 535.43.02 - 535.86.05 write 32-byte entries from the _v3 process lists. */
static bool driver_has_wide_v3_entries(const char *version) {
    char major[16] = "", minor[16] = "";
    const char *dot1 = strchr(version, '.');
    if (!dot1 || (size_t)(dot1 - version) >= sizeof(major))
        return false;
    const char *dot2 = strchr(dot1 + 1, '.');
    size_t minor_len = dot2 ? (size_t)(dot2 - dot1 - 1) : strlen(dot1 + 1);
    if (minor_len >= sizeof(minor))
        return false;
    memcpy(major, version, (size_t)(dot1 - version));
    memcpy(minor, dot1 + 1, minor_len);

    uint32_t ma = 0, mi = 0;
    if (safe_atou32(major, &ma) < 0 || safe_atou32(minor, &mi) < 0)
        return false;
    return ma == 535 && mi >= 43 && mi <= 86;
}

static void choose_process_lists(struct nvml_state *s) {
    const struct nvml_api *api = s->api;
    nvml_process_list_fn *v3[_NVML_LIST_MAX] = {api->compute_processes_v3,
                                                api->graphics_processes_v3, api->mps_processes_v3};
    nvml_process_list_fn *v2[_NVML_LIST_MAX] = {api->compute_processes_v2,
                                                api->graphics_processes_v2, api->mps_processes_v2};
    bool wide = driver_has_wide_v3_entries(s->driver_version);

    for (size_t l = 0; l < _NVML_LIST_MAX; l++) {
        s->list_stride[l] = sizeof(nvmlProcessInfo_t);
        if (!wide)
            s->lists[l] = v3[l] ? v3[l] : v2[l];
        else if (v2[l])
            s->lists[l] = v2[l];
        else {
            s->lists[l] = v3[l];
            s->list_stride[l] = sizeof(nvmlProcessDetail_v1_t);
        }
    }
    if (wide)
        log_debug("NVML: driver %s writes 32-byte process entries from _v3; compensating",
                  s->driver_version);
}

static void init_features(struct nvml_state *s, struct nvml_device *d) {
    const struct nvml_api *api = s->api;
    const bool present[_GPU_FEATURE_MAX] = {
        [GPU_FEATURE_ENERGY] = api->device_get_total_energy,
        [GPU_FEATURE_POWER] = api->device_get_power_usage,
        [GPU_FEATURE_COMPUTE_PROCESSES] = s->lists[NVML_LIST_COMPUTE],
        [GPU_FEATURE_GRAPHICS_PROCESSES] = s->lists[NVML_LIST_GRAPHICS],
        [GPU_FEATURE_MPS_PROCESSES] = s->lists[NVML_LIST_MPS],
        [GPU_FEATURE_UTILIZATION_INFO] = api->processes_utilization_info,
        [GPU_FEATURE_UTILIZATION_LEGACY] = api->process_utilization,
        [GPU_FEATURE_MIG_MODE] = api->device_get_mig_mode,
        [GPU_FEATURE_COMPUTE_MODE] = api->device_get_compute_mode,
        [GPU_FEATURE_MIG_INSTANCES] = api->device_get_max_mig_count && api->device_get_mig_handle &&
                                      api->device_get_gpu_instance_id,
        [GPU_FEATURE_MIG_ACTIVITY] = api->gpm_query_support && api->gpm_sample_alloc &&
                                     api->gpm_sample_free && api->gpm_mig_sample_get &&
                                     api->gpm_metrics_get,
        [GPU_FEATURE_ACCOUNTING] =
            api->accounting_mode && api->accounting_pids && api->accounting_stats,
    };
    for (size_t f = 0; f < _GPU_FEATURE_MAX; f++)
        d->features[f].state = present[f] ? GPU_FEATURE_UNTRIED : GPU_FEATURE_ABSENT;
}

/* Gets the handle of device `index` and its identity. */
static int nvml_device_open(void *state, size_t index, struct gpu_device_reading *rd) {
    struct nvml_state *s = state;
    struct nvml_device *d = &s->devices[index];
    nvmlDevice_t handle = NULL;
    nvmlReturn_t code;

    code = s->api->device_get_handle_by_index((unsigned)index, &handle);
    if (code != NVML_SUCCESS)
        return log_debug_errno(nvml_errno(code), "NVML: no handle for GPU %zu: %s", index,
                               nvml_error_text(s->api, code));

    if (s->api->device_get_uuid) {
        char uuid[sizeof(rd->uuid)] = "";

        /* Not read this time: the GPU keeps the UUID it had (empty at the first open), so
         * that its series keep their labels. */
        code = s->api->device_get_uuid(handle, uuid, sizeof(uuid));
        if (code == NVML_ERROR_GPU_IS_LOST)
            return -ENODEV;
        if (code == NVML_SUCCESS)
            memcpy(rd->uuid, uuid, sizeof(uuid));
    }
    if (s->api->device_get_name) {
        char name[sizeof(rd->name)] = "";

        /* As the UUID: not read this time, the name it had stays (a model label that went
         * empty would change every series of the GPU). */
        code = s->api->device_get_name(handle, name, sizeof(name));
        if (code == NVML_ERROR_GPU_IS_LOST)
            return -ENODEV;
        if (code == NVML_SUCCESS)
            memcpy(rd->name, name, sizeof(name));
    }
    d->handle = handle;
    d->modes_read_at_us = 0; /* a reset GPU may come back in other modes */
    return 0;
}

static void nvml_device_close(void *state, size_t index) {
    struct nvml_state *s = state;

    nvml_mig_forget(s, &s->devices[index]);
    nvml_accounting_forget(&s->devices[index]);
    s->devices[index].handle = NULL;
    s->devices[index].n_pending = 0;
}

/* Modes: a transient failure leaves the value unknown for this tick and is retried at the
 * next; an unsupported call is not asked again; a lost GPU fails the tick. */
static int read_modes(struct nvml_state *s, struct nvml_device *d, uint64_t now_us) {
    bool complete = true;
    int r;

    if (d->modes_read_at_us != 0 && now_us - d->modes_read_at_us < NVML_MODES_REFRESH_US)
        return 0;
    d->compute_mode = -1;
    if (nvml_feature_usable(d, GPU_FEATURE_MIG_MODE)) {
        unsigned current = 0, pending = 0;
        r = nvml_feature_record(d, GPU_FEATURE_MIG_MODE,
                                s->api->device_get_mig_mode(d->handle, &current, &pending));
        if (r == -ENODEV)
            return r;
        /* A failure for now keeps what was read last: a MIG GPU taken for a whole one
         * for a tick would be asked for per-process samples it cannot give. */
        if (r == 0)
            d->mig_enabled = current == NVML_DEVICE_MIG_ENABLE;
        else if (!nvml_feature_usable(d, GPU_FEATURE_MIG_MODE))
            d->mig_enabled = false;
        complete = complete && (r == 0 || !nvml_feature_usable(d, GPU_FEATURE_MIG_MODE));
    }
    d->accounting_enabled = false;
    if (nvml_feature_usable(d, GPU_FEATURE_ACCOUNTING)) {
        nvmlEnableState_t mode = NVML_FEATURE_DISABLED;
        nvmlReturn_t code = s->api->accounting_mode(d->handle, &mode);

        if (code == NVML_ERROR_GPU_IS_LOST)
            return -ENODEV;
        /* off is asked again at the next refresh: an administrator may turn it on */
        if (code == NVML_SUCCESS)
            d->accounting_enabled = mode == NVML_FEATURE_ENABLED;
        else if (nvml_errno(code) == -EOPNOTSUPP)
            (void)nvml_feature_record(d, GPU_FEATURE_ACCOUNTING, code);
    }
    if (nvml_feature_usable(d, GPU_FEATURE_COMPUTE_MODE)) {
        nvmlComputeMode_t mode = 0;
        r = nvml_feature_record(d, GPU_FEATURE_COMPUTE_MODE,
                                s->api->device_get_compute_mode(d->handle, &mode));
        if (r == -ENODEV)
            return r;
        if (r == 0 && mode <= NVML_COMPUTEMODE_EXCLUSIVE_PROCESS)
            d->compute_mode = (int)mode;
        complete = complete && (r == 0 || !nvml_feature_usable(d, GPU_FEATURE_COMPUTE_MODE));
    }
    if (complete)
        d->modes_read_at_us = MAX(now_us, UINT64_C(1));
    return 0;
}

/* Energy and power: unsupported means "not valid" from now on; a transient error fails the
 * tick (the counter is cumulative, so the next good tick loses nothing), but a failed power
 * read beside a good energy read costs only the power gauge: the window is measured, and
 * failing it would book it as no data. */
static int read_meters(struct nvml_state *s, struct nvml_device *d, struct gpu_device_reading *rd) {
    int r;

    if (nvml_feature_usable(d, GPU_FEATURE_ENERGY)) {
        unsigned long long mj = 0;
        r = nvml_feature_record(d, GPU_FEATURE_ENERGY,
                                s->api->device_get_total_energy(d->handle, &mj));
        if (r == 0) {
            rd->energy_valid = true;
            rd->energy_mj = mj;
        } else if (nvml_feature_usable(d, GPU_FEATURE_ENERGY))
            return r;
    }
    if (nvml_feature_usable(d, GPU_FEATURE_POWER)) {
        unsigned mw = 0;
        r = nvml_feature_record(d, GPU_FEATURE_POWER,
                                s->api->device_get_power_usage(d->handle, &mw));
        if (r == 0) {
            rd->power_valid = true;
            rd->power_mw = mw;
        } else if (nvml_feature_usable(d, GPU_FEATURE_POWER) && (!rd->energy_valid || r == -ENODEV))
            return r;
    }
    return 0;
}

/* Modes first: MIG mode decides whether per-process utilisation exists. A UUID the open
 * could not read (a transient error) is asked for again until it is known: pod
 * allocations, DCGM and the state file find the board by it. */
static int nvml_read_energy(void *state, size_t index, uint64_t now_us,
                            struct gpu_device_reading *rd) {
    struct nvml_state *s = state;
    struct nvml_device *d = &s->devices[index];
    int r;

    if (!rd->uuid[0] && s->api->device_get_uuid) {
        char uuid[sizeof(rd->uuid)] = "";
        nvmlReturn_t code = s->api->device_get_uuid(d->handle, uuid, sizeof(uuid));

        if (code == NVML_ERROR_GPU_IS_LOST)
            return -ENODEV;
        if (code == NVML_SUCCESS)
            memcpy(rd->uuid, uuid, sizeof(uuid));
    }
    r = read_modes(s, d, now_us);
    if (r < 0)
        return r;
    rd->mig_enabled = d->mig_enabled;
    rd->compute_mode = d->compute_mode;
    return read_meters(s, d, rd);
}

static const char *init_failure_reason(nvmlReturn_t code) {
    switch (code) {
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "the NVIDIA kernel driver is not loaded";
    case NVML_ERROR_NO_PERMISSION:
        return "no permission to use the NVIDIA devices (/dev/nvidia*)";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        return "NVML library and kernel driver versions differ (reload the driver or reboot)";
    default:
        return "nvmlInit failed";
    }
}

static void nvml_close(void *state) {
    struct nvml_state *s = state;

    if (!s)
        return;
    for (size_t i = 0; s->devices && i < s->n_devices; i++) {
        nvml_mig_forget(s, &s->devices[i]);
        nvml_accounting_free(&s->devices[i]);
        free(s->devices[i].processes);
        free(s->devices[i].utils);
    }
    free(s->devices);
    free(s->raw_processes);
    free(s->raw_legacy);
    free(s->raw_info);
    free(s->gpm_request);
    free(s->raw_pids);
    nvml_dcgm_close(s);
    if (s->initialized)
        (void)s->api->shutdown();
    nvml_api_free(s->api);
    free(s);
}

static void nvml_closep(struct nvml_state **s) {
    nvml_close(*s);
}

static int nvml_open(const struct gpu_source_options *opts, void **ret_state, size_t *ret_n_devices,
                     const char **ret_reason) {
    _cleanup_(nvml_closep) struct nvml_state *s = NULL;
    const char *reason = NULL;
    unsigned count = 0;
    nvmlReturn_t code;
    int r;

    s = calloc(1, sizeof(*s));
    if (!s) {
        *ret_reason = "out of memory";
        return -ENOMEM;
    }
    if (opts) {
        s->dcgm_library = opts->dcgm_library;
        s->dcgm_off = opts->dcgm_address && !strcmp(opts->dcgm_address, "off");
        s->dcgm_address = s->dcgm_off ? NULL : opts->dcgm_address;
    }
    r = nvml_api_open(opts ? opts->library_path : NULL, &s->api, &reason);
    if (r < 0) {
        *ret_reason = reason;
        return r;
    }

    code = s->api->init();
    if (code != NVML_SUCCESS) {
        log_debug("NVML: init: %s", nvml_error_text(s->api, code));
        *ret_reason = init_failure_reason(code);
        return -ENXIO;
    }
    s->initialized = true;

    if (s->api->system_get_driver_version &&
        s->api->system_get_driver_version(s->driver_version, sizeof(s->driver_version)) !=
            NVML_SUCCESS)
        s->driver_version[0] = '\0';
    choose_process_lists(s);

    code = s->api->device_get_count(&count);
    if (code != NVML_SUCCESS) {
        log_debug("NVML: device count: %s", nvml_error_text(s->api, code));
        *ret_reason = "NVML could not count the GPUs";
        return -ENXIO;
    }
    if (count == 0) {
        *ret_reason = "no NVIDIA GPU found";
        return -ENODEV;
    }

    s->devices = calloc(count, sizeof(*s->devices));
    if (!s->devices) {
        *ret_reason = "out of memory";
        return -ENOMEM;
    }
    s->n_devices = count;
    for (size_t i = 0; i < count; i++)
        init_features(s, &s->devices[i]);

    *ret_n_devices = count;
    *ret_state = TAKE_PTR(s);
    return 0;
}

const struct gpu_backend gpu_backend_nvml = {
    .name = "NVML",
    .open = nvml_open,
    .close = nvml_close,
    .device_open = nvml_device_open,
    .device_close = nvml_device_close,
    .read_energy = nvml_read_energy,
    .read_processes = nvml_read_processes,
    .read_samples = nvml_read_utilization,
    .poll = nvml_poll,
    .describe = nvml_describe,
    .describe_device = nvml_describe_device,
};

enum gpu_feature_state gpu_source_feature_state(const struct gpu_source *source, size_t index,
                                                enum gpu_feature f) {
    const struct nvml_state *s = gpu_source_backend_state(source, &gpu_backend_nvml);

    if (!s || index >= s->n_devices || f >= _GPU_FEATURE_MAX)
        return GPU_FEATURE_ABSENT;
    return s->devices[index].features[f].state;
}

const char *gpu_source_driver_version(const struct gpu_source *source) {
    const struct nvml_state *s = gpu_source_backend_state(source, &gpu_backend_nvml);

    return s ? s->driver_version : "";
}
