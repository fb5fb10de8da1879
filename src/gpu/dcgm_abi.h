/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Our own declarations of the part of NVIDIA DCGM's client ABI that joulestat uses (no
 * dcgm_agent.h): connecting to nv-hostengine and reading the profiling module's SM activity
 * of each MIG GPU instance. Shared by the loader (dcgm.c) and the simulated node's library
 * (sim/dcgm_engine.c), so both sides are checked against the same layouts.
 *
 * The facts, from DCGM's public headers (dcgmlib/dcgm_agent.h, dcgm_structs.h,
 * dcgm_fields.h and the library's export list dcgmlib.linux_def), the same for DCGM 3.x
 * (libdcgm.so.3) and 4.x (libdcgm.so.4) for everything below:
 * - entry points are plain C functions under their own names (dcgmConnect_v2 is a symbol of
 *   its own, no macro maps it), unversioned; the error text is errorString(), there is no
 *   dcgmErrorString;
 * - handles and group ids are uintptr_t; entity ids unsigned int; enums 4 bytes;
 * - a versioned struct's version is its size | (version << 24);
 * - the per-entity callback of dcgmGetValuesSince_v2 gets dcgmFieldValue_v1 records.
 * Enum-typed fields are declared as unsigned int, so -fshort-enums cannot move them.
 */

#include <stddef.h>
#include <stdint.h>

typedef int dcgmReturn_t;
#define DCGM_ST_OK 0
#define DCGM_ST_BADPARAM (-1)
#define DCGM_ST_GENERIC_ERROR (-3)
#define DCGM_ST_NOT_SUPPORTED (-6)
#define DCGM_ST_UNINITIALIZED (-10)
#define DCGM_ST_VER_MISMATCH (-12)
#define DCGM_ST_NO_DATA (-14)
#define DCGM_ST_NOT_WATCHED (-16)
#define DCGM_ST_NO_PERMISSION (-17)
#define DCGM_ST_GPU_IS_LOST (-18)
#define DCGM_ST_CONNECTION_NOT_VALID (-21)
#define DCGM_ST_MAX_LIMIT (-24)
#define DCGM_ST_PROFILING_NOT_SUPPORTED (-36)
#define DCGM_ST_PROFILING_LIBRARY_ERROR (-37)
#define DCGM_ST_INSTANCE_NOT_FOUND (-45)

typedef uintptr_t dcgmHandle_t;
typedef uintptr_t dcgmGpuGrp_t;
typedef uintptr_t dcgmFieldGrp_t;
typedef unsigned int dcgm_field_eid_t;

/* dcgm_field_entity_group_t */
#define DCGM_FE_GPU 1u
#define DCGM_FE_GPU_I 4u
#define DCGM_FE_GPU_CI 5u

/* dcgmGroupType_t */
#define DCGM_GROUP_EMPTY 1u

#define DCGM_HE_PORT_NUMBER 5555
#define DCGM_MAX_STR_LENGTH 256
#define DCGM_MAX_BLOB_LENGTH 4096

/* The ratio of cycles an SM had at least one warp assigned, a double in [0, 1]. */
#define DCGM_FI_PROF_SM_ACTIVE 1002
#define DCGM_FT_DOUBLE 'd'
/* A double at or above this is a blank (no data, not supported, ...), not a value. */
#define DCGM_FP64_BLANK 140737488355328.0

#define DCGM_MAKE_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((unsigned long)(ver) << 24U)))

typedef struct {
    unsigned int version;
    unsigned int persistAfterDisconnect; /* 0: the engine drops our watches when we go */
    unsigned int timeoutMs;
    unsigned int addressIsUnixSocket; /* 1: the address is a socket's path */
} dcgmConnectV2Params_t;
#define dcgmConnectV2Params_version DCGM_MAKE_VERSION(dcgmConnectV2Params_t, 2)

typedef struct {
    unsigned int version;
    unsigned short fieldId;
    unsigned short fieldType; /* DCGM_FT_* */
    int status;               /* dcgmReturn_t of this value */
    int64_t ts;               /* µs since the epoch */
    union {
        int64_t i64;
        double dbl;
        char str[DCGM_MAX_STR_LENGTH];
        char blob[DCGM_MAX_BLOB_LENGTH];
    } value;
} dcgmFieldValue_v1;
#define dcgmFieldValue_version1 DCGM_MAKE_VERSION(dcgmFieldValue_v1, 1)

typedef struct {
    unsigned int entityGroupId; /* DCGM_FE_* */
    dcgm_field_eid_t entityId;
} dcgmGroupEntityPair_t;

typedef struct {
    char gpuUuid[128];
    unsigned int nvmlGpuIndex;
    unsigned int nvmlInstanceId;        /* the GPU instance id; all ones for a GPU */
    unsigned int nvmlComputeInstanceId; /* all ones for a GPU or GPU instance */
    unsigned int nvmlMigProfileId;
    unsigned int nvmlProfileSlices;
} dcgmMigEntityInfo_t;

typedef struct {
    dcgmGroupEntityPair_t entity;
    dcgmGroupEntityPair_t parent;
    dcgmMigEntityInfo_t info;
} dcgmMigHierarchyInfo_v2;

#define DCGM_MAX_HIERARCHY_INFO (32 * 14) /* devices x instances per GPU */
typedef struct {
    unsigned int version;
    unsigned int count;
    dcgmMigHierarchyInfo_v2 entityList[DCGM_MAX_HIERARCHY_INFO];
} dcgmMigHierarchy_v2;
#define dcgmMigHierarchy_version2 DCGM_MAKE_VERSION(dcgmMigHierarchy_v2, 2)

/* Returns 0 to go on, < 0 to stop; the values live only during the call. */
typedef int (*dcgmFieldValueEntityEnumeration_f)(unsigned int entityGroupId,
                                                 dcgm_field_eid_t entityId,
                                                 dcgmFieldValue_v1 *values, int numValues,
                                                 void *userData);

typedef dcgmReturn_t dcgmInit_fn(void);
typedef dcgmReturn_t dcgmShutdown_fn(void);
typedef dcgmReturn_t dcgmConnect_v2_fn(const char *ipAddress, dcgmConnectV2Params_t *connectParams,
                                       dcgmHandle_t *pDcgmHandle);
typedef dcgmReturn_t dcgmDisconnect_fn(dcgmHandle_t pDcgmHandle);
typedef dcgmReturn_t dcgmGroupCreate_fn(dcgmHandle_t pDcgmHandle, unsigned int type,
                                        const char *groupName, dcgmGpuGrp_t *pDcgmGrpId);
typedef dcgmReturn_t dcgmGroupDestroy_fn(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId);
typedef dcgmReturn_t dcgmGroupAddEntity_fn(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                                           unsigned int entityGroupId, dcgm_field_eid_t entityId);
typedef dcgmReturn_t dcgmFieldGroupCreate_fn(dcgmHandle_t dcgmHandle, int numFieldIds,
                                             unsigned short *fieldIds, const char *fieldGroupName,
                                             dcgmFieldGrp_t *dcgmFieldGroupId);
typedef dcgmReturn_t dcgmFieldGroupDestroy_fn(dcgmHandle_t dcgmHandle,
                                              dcgmFieldGrp_t dcgmFieldGroupId);
/* updateFreq in µs, maxKeepAge in s, maxKeepSamples 0: no limit. */
typedef dcgmReturn_t dcgmWatchFields_fn(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                                        dcgmFieldGrp_t fieldGroupId, long long updateFreq,
                                        double maxKeepAge, int maxKeepSamples);
typedef dcgmReturn_t dcgmGetValuesSince_v2_fn(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                                              dcgmFieldGrp_t fieldGroupId, long long sinceTimestamp,
                                              long long *nextSinceTimestamp,
                                              dcgmFieldValueEntityEnumeration_f enumCB,
                                              void *userData);
typedef dcgmReturn_t dcgmGetGpuInstanceHierarchy_fn(dcgmHandle_t dcgmHandle,
                                                    dcgmMigHierarchy_v2 *hierarchy);
typedef const char *errorString_fn(dcgmReturn_t result);

/* The layouts DCGM's headers define (x86_64, aarch64). */
_Static_assert(sizeof(dcgmConnectV2Params_t) == 16, "dcgmConnectV2Params_v2");
_Static_assert(dcgmConnectV2Params_version == 0x02000010u, "dcgmConnectV2Params_version2");
_Static_assert(offsetof(dcgmFieldValue_v1, ts) == 16 && offsetof(dcgmFieldValue_v1, value) == 24,
               "dcgmFieldValue_v1");
_Static_assert(dcgmFieldValue_version1 == 0x01001018u, "dcgmFieldValue_version1");
_Static_assert(sizeof(dcgmMigHierarchyInfo_v2) == 164, "dcgmMigHierarchyInfo_v2");
_Static_assert(dcgmMigHierarchy_version2 == 0x02011F08u, "dcgmMigHierarchy_version2");

/* The entry points, declared with their types: the loader's symbol table checks its slots
 * against them, and an implementation (sim/dcgm_engine.c) its definitions. */
dcgmInit_fn dcgmInit;
dcgmShutdown_fn dcgmShutdown;
dcgmConnect_v2_fn dcgmConnect_v2;
dcgmDisconnect_fn dcgmDisconnect;
dcgmGroupCreate_fn dcgmGroupCreate;
dcgmGroupDestroy_fn dcgmGroupDestroy;
dcgmGroupAddEntity_fn dcgmGroupAddEntity;
dcgmFieldGroupCreate_fn dcgmFieldGroupCreate;
dcgmFieldGroupDestroy_fn dcgmFieldGroupDestroy;
dcgmWatchFields_fn dcgmWatchFields;
dcgmGetValuesSince_v2_fn dcgmGetValuesSince_v2;
dcgmGetGpuInstanceHierarchy_fn dcgmGetGpuInstanceHierarchy;
errorString_fn errorString;
