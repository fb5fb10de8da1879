/* SPDX-License-Identifier: MIT */
/* NVML: device identity, energy, power, memory, modes and MIG instances. */
#include <stdio.h>
#include <string.h>

#include "nvml_exports.h"
#include "sim.h"

/* Opens a device call: lock, checks, and the device brought up to now. */
#define DEVICE_CALL(device, d)                                                                     \
    struct sim_dev d;                                                                              \
    SIM_LOCKED;                                                                                    \
    nvmlReturn_t rc = sim_device(st, (device), &d);                                                \
    if (rc != NVML_SUCCESS)                                                                        \
    return rc

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    DEVICE_CALL(device, d);
    return sim_copy_out(uuid, length, d.mig >= 0 ? d.sg->mig_instances[d.mig].uuid : d.sg->uuid);
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetUUID);

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    DEVICE_CALL(device, d);
    return sim_copy_out(name, length, d.mig >= 0 ? d.sg->mig_instances[d.mig].name : d.sg->name);
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetName);

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index) {
    DEVICE_CALL(device, d);
    if (!index)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* a MIG handle's index is its slot under the parent */
    *index = d.mig >= 0 ? (unsigned int)d.mig : d.gpu;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetIndex);

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber) {
    DEVICE_CALL(device, d);
    if (!minorNumber)
        return NVML_ERROR_INVALID_ARGUMENT;
    *minorNumber = d.sg->minor;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetMinorNumber);

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
    DEVICE_CALL(device, d);
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    pci->bus = d.sg->pci_bus & 0xffu;
    pci->pciDeviceId = 0x20B010DEu; /* device 0x20B0, vendor NVIDIA */
    pci->pciSubSystemId = 0x134F10DEu;
    (void)snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
    (void)snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetPciInfo_v3);

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy) {
    DEVICE_CALL(device, d);
    if (!energy)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* no per-instance energy exists; pre-Volta boards have no counter */
    if (d.mig >= 0 || !d.sg->energy_supported)
        return NVML_ERROR_NOT_SUPPORTED;
    *energy = sim_model_counter_mj(d.g);
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetTotalEnergyConsumption);

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power) {
    DEVICE_CALL(device, d);
    if (!power)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (d.mig >= 0)
        return NVML_ERROR_NOT_SUPPORTED;
    if (sim_gpu_power_error_at(d.sg, d.t))
        return NVML_ERROR_UNKNOWN; /* a transient read failure ("ERR!" in nvidia-smi) */
    *power = sim_model_power_mw(d.g);
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetPowerUsage);

/* Memory held by running processes on the device (or the MIG instance). */
static unsigned long long used_memory(const struct sim_dev *d) {
    unsigned long long used = 0;
    for (size_t i = 0; i < d->g->n_active; i++) {
        const struct sim_proc_state *ps = d->g->active[i];
        const struct sim_process *p = ps->proc;
        if (!ps->running)
            continue;
        if (d->mig >= 0 && (p->gpu_instance != d->sg->mig_instances[d->mig].gpu_instance ||
                            p->compute_instance != d->sg->mig_instances[d->mig].compute_instance))
            continue;
        used += p->memory_bytes;
    }
    return used;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
    DEVICE_CALL(device, d);
    if (!memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned long long used = used_memory(&d), total = d.sg->memory_total;
    memory->total = total;
    memory->used = used < total ? used : total;
    memory->free = total - memory->used;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetMemoryInfo);

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory) {
    DEVICE_CALL(device, d);
    if (!memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    unsigned long long used = used_memory(&d), total = d.sg->memory_total;
    memory->total = total;
    memory->reserved = 0;
    memory->used = used < total ? used : total;
    memory->free = total - memory->used;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetMemoryInfo_v2);

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode) {
    DEVICE_CALL(device, d);
    if (!mode)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* MIG forces the default mode */
    *mode = d.sg->mig ? NVML_COMPUTEMODE_DEFAULT : d.sg->compute_mode;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetComputeMode);

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode) {
    DEVICE_CALL(device, d);
    if (!currentMode || !pendingMode)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (d.mig >= 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *currentMode = *pendingMode = d.sg->mig ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetMigMode);

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count) {
    DEVICE_CALL(device, d);
    if (!count || d.mig >= 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = d.sg->mig ? SIM_MAX_MIG : 0;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetMaxMigDeviceCount);

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *migDevice) {
    DEVICE_CALL(device, d);
    if (!migDevice || d.mig >= 0 || index >= SIM_MAX_MIG)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!d.sg->mig)
        return NVML_ERROR_NOT_SUPPORTED;
    if (index >= d.sg->n_mig)
        return NVML_ERROR_NOT_FOUND; /* empty slot */
    *migDevice = sim_mig_handle(d.gpu, index);
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetMigDeviceHandleByIndex);

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice) {
    DEVICE_CALL(device, d);
    if (!isMigDevice)
        return NVML_ERROR_INVALID_ARGUMENT;
    *isMigDevice = d.mig >= 0;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceIsMigDeviceHandle);

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id) {
    DEVICE_CALL(device, d);
    if (!id)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (d.mig < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *id = d.sg->mig_instances[d.mig].gpu_instance;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetGpuInstanceId);

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id) {
    DEVICE_CALL(device, d);
    if (!id)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (d.mig < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *id = d.sg->mig_instances[d.mig].compute_instance;
    return NVML_SUCCESS;
}
NVML_CHECK_SIGNATURE(nvmlDeviceGetComputeInstanceId);
