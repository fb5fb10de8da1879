/* SPDX-License-Identifier: MIT */
/* `joulestat check`: one line per GPU feature, saying whether it works and how to fix it. */
#include <string.h>

#include "nvml_internal.h"
#include "strbuf.h"

static const char *const feature_names[_GPU_FEATURE_MAX] = {
    [GPU_FEATURE_ENERGY] = "energy counter",
    [GPU_FEATURE_POWER] = "power reading",
    [GPU_FEATURE_COMPUTE_PROCESSES] = "compute process list",
    [GPU_FEATURE_GRAPHICS_PROCESSES] = "graphics process list",
    [GPU_FEATURE_MPS_PROCESSES] = "MPS process list",
    [GPU_FEATURE_UTILIZATION_INFO] = "per-process utilisation (driver 550+ API)",
    [GPU_FEATURE_UTILIZATION_LEGACY] = "per-process utilisation (legacy API)",
    [GPU_FEATURE_MIG_MODE] = "MIG mode",
    [GPU_FEATURE_COMPUTE_MODE] = "compute mode",
    [GPU_FEATURE_MIG_INSTANCES] = "MIG instances",
    [GPU_FEATURE_MIG_ACTIVITY] = "MIG instance activity (GPM)",
    [GPU_FEATURE_ACCOUNTING] = "accounting mode",
};

/* What joulestat does without the feature, for the "not supported" line. */
static const char *const feature_fallbacks[_GPU_FEATURE_MAX] = {
    [GPU_FEATURE_ENERGY] = "; energy is integrated from power readings",
    [GPU_FEATURE_POWER] = "; no power readings",
    [GPU_FEATURE_UTILIZATION_INFO] = "; the legacy API is used",
    [GPU_FEATURE_UTILIZATION_LEGACY] = "; processes are weighted without utilisation",
    [GPU_FEATURE_MIG_MODE] = "; treated as MIG disabled",
    [GPU_FEATURE_MIG_INSTANCES] = "; the GPU's processes share it evenly",
    [GPU_FEATURE_MIG_ACTIVITY] = "; the DCGM line says what is used instead",
    [GPU_FEATURE_ACCOUNTING] = "; processes that exit between two polls are known by their "
                               "utilisation samples only (nvidia-smi -am 1 turns it on)",
};

const char *gpu_feature_name(enum gpu_feature f) {
    return f < _GPU_FEATURE_MAX ? feature_names[f] : "unknown feature";
}

const char *gpu_feature_state_name(enum gpu_feature_state st) {
    switch (st) {
    case GPU_FEATURE_UNTRIED:
        return "not tried yet";
    case GPU_FEATURE_WORKS:
        return "works";
    case GPU_FEATURE_FAILING:
        return "failing";
    case GPU_FEATURE_ABSENT:
        return "not provided by this NVML library";
    case GPU_FEATURE_UNSUPPORTED:
        return "not supported";
    case GPU_FEATURE_NO_PERMISSION:
        return "no permission";
    }
    return "unknown";
}

static bool is_utilization(enum gpu_feature f) {
    return f == GPU_FEATURE_UTILIZATION_INFO || f == GPU_FEATURE_UTILIZATION_LEGACY;
}

static bool is_mig_only(enum gpu_feature f) {
    return f == GPU_FEATURE_MIG_INSTANCES || f == GPU_FEATURE_MIG_ACTIVITY;
}

static void describe_feature(const struct nvml_state *s, size_t i,
                             const struct gpu_device_reading *rd, enum gpu_feature f,
                             struct strbuf *out) {
    const struct nvml_feature_status *st = &s->devices[i].features[f];

    if (is_mig_only(f) && !rd->mig_enabled)
        return; /* asked only of MIG-enabled GPUs */
    strbuf_printf(out, "GPU %zu: %s: ", i, feature_names[f]);
    if (is_utilization(f) && rd->mig_enabled) {
        strbuf_puts(out, "not available while MIG is enabled; processes are weighted "
                         "without utilisation\n");
        return;
    }
    if (f == GPU_FEATURE_ACCOUNTING && nvml_feature_usable(&s->devices[i], f) &&
        !s->devices[i].accounting_enabled) {
        strbuf_printf(out, "off%s\n", feature_fallbacks[f]);
        return;
    }
    strbuf_puts(out, gpu_feature_state_name(st->state));
    switch (st->state) {
    case GPU_FEATURE_FAILING:
        strbuf_printf(out, " (%s); retried every tick", nvml_error_text(s->api, st->code));
        break;
    case GPU_FEATURE_ABSENT:
        strbuf_puts(out, " (update the NVIDIA driver)");
        if (feature_fallbacks[f])
            strbuf_puts(out, feature_fallbacks[f]);
        break;
    case GPU_FEATURE_UNSUPPORTED:
        if (feature_fallbacks[f])
            strbuf_puts(out, feature_fallbacks[f]);
        break;
    case GPU_FEATURE_NO_PERMISSION:
        strbuf_puts(out, " (run joulestat as root, or in the host PID namespace with access to "
                         "/dev/nvidia*)");
        break;
    case GPU_FEATURE_UNTRIED:
    case GPU_FEATURE_WORKS:
        break;
    }
    strbuf_putc(out, '\n');
}

void nvml_describe(const void *state, size_t n_devices, struct strbuf *out) {
    const struct nvml_state *s = state;

    strbuf_printf(out, "NVML: driver %s, %zu GPU(s)\n",
                  s->driver_version[0] ? s->driver_version : "unknown", n_devices);
}

void nvml_describe_device(const void *state, size_t index, const struct gpu_device_reading *rd,
                          struct strbuf *out) {
    const struct nvml_state *s = state;

    for (enum gpu_feature f = 0; f < _GPU_FEATURE_MAX; f++)
        describe_feature(state, index, rd, f, out);
    if (rd->mig_enabled && !nvml_feature_usable(&s->devices[index], GPU_FEATURE_MIG_ACTIVITY))
        nvml_dcgm_describe(s, index, out);
}
