/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Our own declarations of the part of the NVML ABI that joulestat uses (no nvml.h). Shared by
 * the dlopen() loader and by every library that pretends to be NVML (tests/fakes, sim/), so
 * both sides are checked against the same layouts at compile time.
 *
 * Type names follow NVML's so an implementation can define the exact exported symbols.
 * Enum-typed struct fields are declared as unsigned int: the layout then cannot depend on
 * -fshort-enums. Layouts are LP64 (x86_64, aarch64); the static assertions below pin them.
 *
 * Each entry point has a function type named <symbol>_fn. An implementation checks itself
 * with NVML_CHECK_SIGNATURE(symbol) after defining the function.
 */

#include <stddef.h>

typedef enum nvmlReturn_enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
    NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

/* Opaque handle; also used for MIG device handles. */
typedef struct nvmlDevice_st *nvmlDevice_t;

/* ---- constants ---- */

#define NVML_INIT_FLAG_NO_GPUS 1u
#define NVML_INIT_FLAG_NO_ATTACH 2u

#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80u
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80u
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96u
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96u
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32u
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16u

/* All ones in whatever integer it is stored into: "value not available". */
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFull
#define NVML_VALUE_NOT_AVAILABLE_UINT 0xFFFFFFFFu

/* First field of a versioned struct: its size with the version number in the top byte. */
#define NVML_STRUCT_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((unsigned int)(ver) << 24)))

/* nvmlComputeMode_t */
#define NVML_COMPUTEMODE_DEFAULT 0u
#define NVML_COMPUTEMODE_EXCLUSIVE_THREAD 1u
#define NVML_COMPUTEMODE_PROHIBITED 2u
#define NVML_COMPUTEMODE_EXCLUSIVE_PROCESS 3u
typedef unsigned int nvmlComputeMode_t;

/* nvmlEnableState_t */
#define NVML_FEATURE_DISABLED 0u
#define NVML_FEATURE_ENABLED 1u
typedef unsigned int nvmlEnableState_t;

/* MIG mode values of nvmlDeviceGetMigMode */
#define NVML_DEVICE_MIG_DISABLE 0u
#define NVML_DEVICE_MIG_ENABLE 1u

/* ---- structs ---- */

/* Legacy 16-byte process entry of the unversioned list symbols (old ABI; not used by us). */
typedef struct nvmlProcessInfo_v1_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* 24-byte process entry of the _v2 and _v3 list symbols. */
typedef struct nvmlProcessInfo_v2_st {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* bytes; NVML_VALUE_NOT_AVAILABLE_ULL if unknown */
    unsigned int gpuInstanceId;       /* 0xFFFFFFFF when MIG is off */
    unsigned int computeInstanceId;   /* 0xFFFFFFFF when MIG is off */
} nvmlProcessInfo_v2_t;
typedef nvmlProcessInfo_v2_t nvmlProcessInfo_t;

/* 32-byte layout that _v3 wrote on drivers 535.43.02 - 535.86.05 (the ABI break). */
typedef struct nvmlProcessDetail_v1_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
    unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessDetail_v1_t;

/* Legacy per-process utilisation sample (nvmlDeviceGetProcessUtilization). */
typedef struct nvmlProcessUtilizationSample_st {
    unsigned int pid;
    unsigned long long timeStamp; /* CPU time, microseconds since the Unix epoch */
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* New per-process utilisation entry (nvmlDeviceGetProcessesUtilizationInfo); note the order. */
typedef struct nvmlProcessUtilizationInfo_v1_st {
    unsigned long long timeStamp;
    unsigned int pid;
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
    unsigned int jpgUtil;
    unsigned int ofaUtil;
} nvmlProcessUtilizationInfo_v1_t;

typedef struct nvmlProcessesUtilizationInfo_v1_st {
    unsigned int version;             /* nvmlProcessesUtilizationInfo_v1 */
    unsigned int processSamplesCount; /* in: capacity; out: written, or needed on error 7 */
    unsigned long long lastSeenTimeStamp;
    nvmlProcessUtilizationInfo_v1_t *procUtilArray;
} nvmlProcessesUtilizationInfo_v1_t;
typedef nvmlProcessesUtilizationInfo_v1_t nvmlProcessesUtilizationInfo_t;
#define nvmlProcessesUtilizationInfo_v1 NVML_STRUCT_VERSION(nvmlProcessesUtilizationInfo_v1_t, 1)

typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
    unsigned int version; /* nvmlMemory_v2 */
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION(nvmlMemory_v2_t, 2)

typedef struct nvmlPciInfo_st {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

/* Accounting mode (nvidia-smi -am 1): lifetime statistics of processes, running or
 * finished, kept in a circular buffer per GPU. */
typedef struct nvmlAccountingStats_st {
    unsigned int gpuUtilization;    /* percent of the lifetime with a kernel running */
    unsigned int memoryUtilization; /* percent of the lifetime the memory was busy */
    unsigned long long maxMemoryUsage;
    unsigned long long time;      /* ms the context was active; 0 while it runs */
    unsigned long long startTime; /* CPU timestamp of the start, µs since the epoch */
    unsigned int isRunning;
    unsigned int reserved[5];
} nvmlAccountingStats_t;

/* GPU performance monitoring (GPM, Hopper and later): opaque sample buffers the library
 * allocates, and a request for metrics computed between two of them. */
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

#define NVML_GPM_METRIC_SM_UTIL 2u /* percent of the SMs busy, 0.0 - 100.0 */
/* The metrics array's length in the headers of drivers 550 and later (98 before); the
 * structure's version stayed 1, and the library reads only numMetrics entries. */
#define NVML_GPM_METRIC_MAX 333u
#define NVML_GPM_METRICS_GET_VERSION 1u
#define NVML_GPM_SUPPORT_VERSION 1u

typedef struct nvmlGpmMetric_st {
    unsigned int metricId;   /* in */
    nvmlReturn_t nvmlReturn; /* out: this metric's status */
    double value;            /* out: valid when nvmlReturn is SUCCESS */
    struct {
        char *shortName;
        char *longName;
        char *unit;
    } metricInfo; /* out, may be NULL */
} nvmlGpmMetric_t;

typedef struct nvmlGpmMetricsGet_st {
    unsigned int version;    /* NVML_GPM_METRICS_GET_VERSION */
    unsigned int numMetrics; /* entries of metrics[] to compute */
    nvmlGpmSample_t sample1; /* the earlier sample */
    nvmlGpmSample_t sample2; /* the later sample */
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct nvmlGpmSupport_st {
    unsigned int version; /* NVML_GPM_SUPPORT_VERSION */
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

/* ---- layout checks (LP64) ---- */

#define NVML_ABI_CHECK(type, size) _Static_assert(sizeof(type) == (size), #type " size")
#define NVML_ABI_OFFSET(type, field, off)                                                          \
    _Static_assert(offsetof(type, field) == (off), #type "." #field " offset")

NVML_ABI_CHECK(nvmlReturn_t, 4);
NVML_ABI_CHECK(nvmlProcessInfo_v1_t, 16);
NVML_ABI_CHECK(nvmlProcessInfo_v2_t, 24);
NVML_ABI_OFFSET(nvmlProcessInfo_v2_t, usedGpuMemory, 8);
NVML_ABI_OFFSET(nvmlProcessInfo_v2_t, gpuInstanceId, 16);
NVML_ABI_OFFSET(nvmlProcessInfo_v2_t, computeInstanceId, 20);
NVML_ABI_CHECK(nvmlProcessDetail_v1_t, 32);
NVML_ABI_OFFSET(nvmlProcessDetail_v1_t, usedGpuCcProtectedMemory, 24);
NVML_ABI_CHECK(nvmlProcessUtilizationSample_t, 32);
NVML_ABI_OFFSET(nvmlProcessUtilizationSample_t, timeStamp, 8);
NVML_ABI_OFFSET(nvmlProcessUtilizationSample_t, smUtil, 16);
NVML_ABI_OFFSET(nvmlProcessUtilizationSample_t, decUtil, 28);
NVML_ABI_CHECK(nvmlProcessUtilizationInfo_v1_t, 40);
NVML_ABI_OFFSET(nvmlProcessUtilizationInfo_v1_t, pid, 8);
NVML_ABI_OFFSET(nvmlProcessUtilizationInfo_v1_t, ofaUtil, 32);
NVML_ABI_CHECK(nvmlProcessesUtilizationInfo_v1_t, 24);
NVML_ABI_OFFSET(nvmlProcessesUtilizationInfo_v1_t, lastSeenTimeStamp, 8);
NVML_ABI_OFFSET(nvmlProcessesUtilizationInfo_v1_t, procUtilArray, 16);
_Static_assert(nvmlProcessesUtilizationInfo_v1 == 0x01000018u, "utilisation info version");
NVML_ABI_CHECK(nvmlMemory_t, 24);
NVML_ABI_CHECK(nvmlMemory_v2_t, 40);
NVML_ABI_OFFSET(nvmlMemory_v2_t, used, 32);
_Static_assert(nvmlMemory_v2 == 0x02000028u, "memory v2 version");
NVML_ABI_CHECK(nvmlPciInfo_t, 68);
NVML_ABI_OFFSET(nvmlPciInfo_t, busId, 36);
NVML_ABI_CHECK(nvmlAccountingStats_t, 56);
NVML_ABI_OFFSET(nvmlAccountingStats_t, time, 16);
NVML_ABI_OFFSET(nvmlAccountingStats_t, isRunning, 32);
NVML_ABI_CHECK(nvmlGpmMetric_t, 40);
NVML_ABI_OFFSET(nvmlGpmMetric_t, value, 8);
NVML_ABI_OFFSET(nvmlGpmMetricsGet_t, sample1, 8);
NVML_ABI_OFFSET(nvmlGpmMetricsGet_t, metrics, 24);
NVML_ABI_CHECK(nvmlGpmSupport_t, 8);

/* ---- entry points: one function type per exported symbol we resolve ---- */

/* Init / system */
typedef nvmlReturn_t nvmlInit_v2_fn(void);
typedef nvmlReturn_t nvmlInit_fn(void); /* legacy fallback only */
typedef nvmlReturn_t nvmlInitWithFlags_fn(unsigned int flags);
typedef nvmlReturn_t nvmlShutdown_fn(void);
typedef const char *nvmlErrorString_fn(nvmlReturn_t result);
typedef nvmlReturn_t nvmlSystemGetDriverVersion_fn(char *version, unsigned int length);
typedef nvmlReturn_t nvmlSystemGetNVMLVersion_fn(char *version, unsigned int length);

/* Enumeration and identity */
typedef nvmlReturn_t nvmlDeviceGetCount_v2_fn(unsigned int *deviceCount);
typedef nvmlReturn_t nvmlDeviceGetHandleByIndex_v2_fn(unsigned int index, nvmlDevice_t *device);
/* Legacy alternatives: same shape; the count skips GPUs the caller may not open. */
typedef nvmlReturn_t nvmlDeviceGetCount_fn(unsigned int *deviceCount);
typedef nvmlReturn_t nvmlDeviceGetHandleByIndex_fn(unsigned int index, nvmlDevice_t *device);
typedef nvmlReturn_t nvmlDeviceGetHandleByUUID_fn(const char *uuid, nvmlDevice_t *device);
typedef nvmlReturn_t nvmlDeviceGetUUID_fn(nvmlDevice_t device, char *uuid, unsigned int length);
typedef nvmlReturn_t nvmlDeviceGetName_fn(nvmlDevice_t device, char *name, unsigned int length);
typedef nvmlReturn_t nvmlDeviceGetIndex_fn(nvmlDevice_t device, unsigned int *index);
typedef nvmlReturn_t nvmlDeviceGetMinorNumber_fn(nvmlDevice_t device, unsigned int *minorNumber);
typedef nvmlReturn_t nvmlDeviceGetPciInfo_v3_fn(nvmlDevice_t device, nvmlPciInfo_t *pci);

/* Energy, power, memory */
typedef nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption_fn(nvmlDevice_t device,
                                                            unsigned long long *energy);
typedef nvmlReturn_t nvmlDeviceGetPowerUsage_fn(nvmlDevice_t device, unsigned int *power);
typedef nvmlReturn_t nvmlDeviceGetMemoryInfo_fn(nvmlDevice_t device, nvmlMemory_t *memory);
typedef nvmlReturn_t nvmlDeviceGetMemoryInfo_v2_fn(nvmlDevice_t device, nvmlMemory_v2_t *memory);

/* Modes */
typedef nvmlReturn_t nvmlDeviceGetComputeMode_fn(nvmlDevice_t device, nvmlComputeMode_t *mode);
typedef nvmlReturn_t nvmlDeviceGetMigMode_fn(nvmlDevice_t device, unsigned int *currentMode,
                                             unsigned int *pendingMode);

/* MIG instances (handles of a MIG-enabled parent) */
typedef nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount_fn(nvmlDevice_t device, unsigned int *count);
typedef nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex_fn(nvmlDevice_t device, unsigned int index,
                                                            nvmlDevice_t *migDevice);
typedef nvmlReturn_t nvmlDeviceIsMigDeviceHandle_fn(nvmlDevice_t device, unsigned int *isMigDevice);
typedef nvmlReturn_t nvmlDeviceGetGpuInstanceId_fn(nvmlDevice_t device, unsigned int *id);
typedef nvmlReturn_t nvmlDeviceGetComputeInstanceId_fn(nvmlDevice_t device, unsigned int *id);

/* Accounting mode */
typedef nvmlReturn_t nvmlDeviceGetAccountingMode_fn(nvmlDevice_t device, nvmlEnableState_t *mode);
typedef nvmlReturn_t nvmlDeviceGetAccountingPids_fn(nvmlDevice_t device, unsigned int *count,
                                                    unsigned int *pids);
typedef nvmlReturn_t nvmlDeviceGetAccountingStats_fn(nvmlDevice_t device, unsigned int pid,
                                                     nvmlAccountingStats_t *stats);
typedef nvmlReturn_t nvmlDeviceGetAccountingBufferSize_fn(nvmlDevice_t device,
                                                          unsigned int *bufferSize);

/* GPM: SM activity per GPU instance on a MIG-enabled parent */
typedef nvmlReturn_t nvmlGpmQueryDeviceSupport_fn(nvmlDevice_t device,
                                                  nvmlGpmSupport_t *gpmSupport);
typedef nvmlReturn_t nvmlGpmSampleAlloc_fn(nvmlGpmSample_t *gpmSample);
typedef nvmlReturn_t nvmlGpmSampleFree_fn(nvmlGpmSample_t gpmSample);
typedef nvmlReturn_t nvmlGpmSampleGet_fn(nvmlDevice_t device, nvmlGpmSample_t gpmSample);
typedef nvmlReturn_t nvmlGpmMigSampleGet_fn(nvmlDevice_t device, unsigned int gpuInstanceId,
                                            nvmlGpmSample_t gpmSample);
typedef nvmlReturn_t nvmlGpmMetricsGet_fn(nvmlGpmMetricsGet_t *metricsGet);

/* Running processes: identical parameters for every list and version (entry size differs). */
typedef nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3_fn(nvmlDevice_t device,
                                                                unsigned int *infoCount,
                                                                nvmlProcessInfo_t *infos);
typedef nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3_fn(nvmlDevice_t device,
                                                                 unsigned int *infoCount,
                                                                 nvmlProcessInfo_t *infos);
typedef nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3_fn(nvmlDevice_t device,
                                                                   unsigned int *infoCount,
                                                                   nvmlProcessInfo_t *infos);
typedef nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2_fn(nvmlDevice_t device,
                                                                unsigned int *infoCount,
                                                                nvmlProcessInfo_t *infos);
typedef nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2_fn(nvmlDevice_t device,
                                                                 unsigned int *infoCount,
                                                                 nvmlProcessInfo_t *infos);
typedef nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2_fn(nvmlDevice_t device,
                                                                   unsigned int *infoCount,
                                                                   nvmlProcessInfo_t *infos);
/* The common shape, used by the one helper that calls any of the above. */
typedef nvmlReturn_t nvml_process_list_fn(nvmlDevice_t device, unsigned int *infoCount,
                                          nvmlProcessInfo_t *infos);

/* Per-process utilisation */
typedef nvmlReturn_t nvmlDeviceGetProcessUtilization_fn(nvmlDevice_t device,
                                                        nvmlProcessUtilizationSample_t *utilization,
                                                        unsigned int *processSamplesCount,
                                                        unsigned long long lastSeenTimeStamp);
typedef nvmlReturn_t
nvmlDeviceGetProcessesUtilizationInfo_fn(nvmlDevice_t device,
                                         nvmlProcessesUtilizationInfo_t *procesesUtilInfo);

/*
 * Use after defining an implementation of `sym` (fake or simulated NVML): fails to compile
 * when its signature differs from the one the loader calls through.
 */
#define NVML_CHECK_SIGNATURE(sym)                                                                  \
    _Static_assert(__builtin_types_compatible_p(__typeof__(sym), sym##_fn),                        \
                   #sym " does not match nvml_abi.h")
