/* SPDX-License-Identifier: MIT */
/*
 * DCGM's client library as a node running nv-hostengine answers it (scenario key dcgm=on):
 * the MIG hierarchy, one watched field, DCGM_FI_PROF_SM_ACTIVE of GPU instances, sampled
 * by the model every watch period (model_profiling.c) and handed out by
 * dcgmGetValuesSince_v2 as the engine's cache would. With dcgm=off the library is there
 * but no engine answers. Entity ids of GPU instances are the engine's own numbering (not
 * the NVML instance ids), so a client has to map them through the hierarchy.
 */
#include <stdio.h>
#include <string.h>

#include "dcgm_abi.h"
#include "sim.h"

#define SIM_DCGM_HANDLE ((dcgmHandle_t)0x5555)
#define SIM_DCGM_GROUPS 8
#define SIM_DCGM_GROUP_ENTITIES 64
#define SIM_DCGM_FIELDS 16
#define SIM_DCGM_MIN_PERIOD_US 100000 /* the profiling module's shortest period */

struct sim_dcgm_group {
    bool used;
    size_t n;
    dcgmGroupEntityPair_t entities[SIM_DCGM_GROUP_ENTITIES];
};

struct sim_dcgm_fields {
    bool used;
    int n;
    unsigned short ids[SIM_DCGM_FIELDS];
};

/* Under the simulator lock. */
static struct {
    unsigned inits;
    bool connected;
    struct sim_dcgm_group groups[SIM_DCGM_GROUPS];
    struct sim_dcgm_fields fields[SIM_DCGM_GROUPS];
    dcgmFieldValue_v1 values[SIM_PROF_RING];
} dcgm;

/* The engine's numbering: GPU g's k-th MIG slot is GPU instance entity g * 8 + k + 100 when
 * it is the first slot of its GPU instance. */
#define GI_ENTITY(g, k) ((dcgm_field_eid_t)((g)*8u + (k) + 100u))
#define CI_ENTITY(g, k) ((dcgm_field_eid_t)((g)*8u + (k) + 500u))

static bool first_of_instance(const struct sim_gpu *sg, size_t k) {
    for (size_t j = 0; j < k; j++)
        if (sg->mig_instances[j].gpu_instance == sg->mig_instances[k].gpu_instance)
            return false;
    return true;
}

/* The GPU and MIG slot of a GPU instance entity; false when there is none. */
static bool find_gi(const struct sim_state *st, dcgm_field_eid_t e, unsigned *ret_gpu,
                    size_t *ret_slot) {
    unsigned g = e >= 100 ? (e - 100) / 8 : UINT32_MAX;
    size_t k = e >= 100 ? (e - 100) % 8 : 0;

    if (g >= st->sc->n_gpus || !st->sc->gpus[g].mig || k >= st->sc->gpus[g].n_mig ||
        !first_of_instance(&st->sc->gpus[g], k))
        return false;
    *ret_gpu = g;
    *ret_slot = k;
    return true;
}

static bool usable(const struct sim_state *st, dcgmHandle_t h) {
    /* a scenario loaded since with dcgm=off: the engine went away */
    return dcgm.inits > 0 && dcgm.connected && h == SIM_DCGM_HANDLE && st->sc && st->sc->dcgm &&
           st->model && st->started;
}

dcgmReturn_t dcgmInit(void) {
    SIM_LOCKED;
    (void)st; /* the lock guards the engine's state */
    dcgm.inits++;
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmShutdown(void) {
    SIM_LOCKED;
    (void)st;
    if (dcgm.inits > 0 && --dcgm.inits == 0)
        memset(&dcgm, 0, offsetof(__typeof__(dcgm), values));
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmConnect_v2(const char *ipAddress, dcgmConnectV2Params_t *connectParams,
                            dcgmHandle_t *pDcgmHandle) {
    SIM_LOCKED;
    if (dcgm.inits == 0)
        return DCGM_ST_UNINITIALIZED;
    if (!ipAddress || !connectParams || !pDcgmHandle)
        return DCGM_ST_BADPARAM;
    if (connectParams->version != dcgmConnectV2Params_version)
        return DCGM_ST_VER_MISMATCH;
    if (!st->sc || !st->sc->dcgm || !st->started)
        return DCGM_ST_CONNECTION_NOT_VALID;
    dcgm.connected = true;
    *pDcgmHandle = SIM_DCGM_HANDLE;
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmDisconnect(dcgmHandle_t pDcgmHandle) {
    SIM_LOCKED;
    if (!usable(st, pDcgmHandle))
        return DCGM_ST_CONNECTION_NOT_VALID;
    dcgm.connected = false;
    for (unsigned g = 0; g < st->sc->n_gpus; g++) /* persistAfterDisconnect 0 */
        sim_model_watch_profiling(&st->model->gpus[g], 0);
    memset(dcgm.groups, 0, sizeof(dcgm.groups));
    memset(dcgm.fields, 0, sizeof(dcgm.fields));
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmGroupCreate(dcgmHandle_t pDcgmHandle, unsigned int type, const char *groupName,
                             dcgmGpuGrp_t *pDcgmGrpId) {
    SIM_LOCKED;
    if (!usable(st, pDcgmHandle))
        return DCGM_ST_CONNECTION_NOT_VALID;
    if (type != DCGM_GROUP_EMPTY || !groupName || !pDcgmGrpId)
        return DCGM_ST_BADPARAM;
    for (size_t i = 0; i < SIM_DCGM_GROUPS; i++)
        if (!dcgm.groups[i].used) {
            dcgm.groups[i] = (struct sim_dcgm_group){.used = true};
            *pDcgmGrpId = i + 1;
            return DCGM_ST_OK;
        }
    return DCGM_ST_MAX_LIMIT;
}

static struct sim_dcgm_group *group_of(dcgmGpuGrp_t id) {
    return id >= 1 && id <= SIM_DCGM_GROUPS && dcgm.groups[id - 1].used ? &dcgm.groups[id - 1]
                                                                        : NULL;
}

static struct sim_dcgm_fields *fields_of(dcgmFieldGrp_t id) {
    return id >= 1 && id <= SIM_DCGM_GROUPS && dcgm.fields[id - 1].used ? &dcgm.fields[id - 1]
                                                                        : NULL;
}

dcgmReturn_t dcgmGroupDestroy(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId) {
    SIM_LOCKED;
    struct sim_dcgm_group *grp = group_of(groupId);

    if (!usable(st, pDcgmHandle))
        return DCGM_ST_CONNECTION_NOT_VALID;
    if (!grp)
        return DCGM_ST_BADPARAM;
    grp->used = false;
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmGroupAddEntity(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                                unsigned int entityGroupId, dcgm_field_eid_t entityId) {
    SIM_LOCKED;
    struct sim_dcgm_group *grp = group_of(groupId);
    unsigned gpu;
    size_t slot;

    if (!usable(st, pDcgmHandle))
        return DCGM_ST_CONNECTION_NOT_VALID;
    if (!grp)
        return DCGM_ST_BADPARAM;
    if (entityGroupId != DCGM_FE_GPU_I || !find_gi(st, entityId, &gpu, &slot))
        return DCGM_ST_INSTANCE_NOT_FOUND;
    if (grp->n == SIM_DCGM_GROUP_ENTITIES)
        return DCGM_ST_MAX_LIMIT;
    grp->entities[grp->n++] = (dcgmGroupEntityPair_t){entityGroupId, entityId};
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t dcgmHandle, int numFieldIds,
                                  unsigned short *fieldIds, const char *fieldGroupName,
                                  dcgmFieldGrp_t *dcgmFieldGroupId) {
    SIM_LOCKED;
    if (!usable(st, dcgmHandle))
        return DCGM_ST_CONNECTION_NOT_VALID;
    if (numFieldIds < 1 || numFieldIds > SIM_DCGM_FIELDS || !fieldIds || !fieldGroupName ||
        !dcgmFieldGroupId)
        return DCGM_ST_BADPARAM;
    for (size_t i = 0; i < SIM_DCGM_GROUPS; i++)
        if (!dcgm.fields[i].used) {
            dcgm.fields[i] = (struct sim_dcgm_fields){.used = true, .n = numFieldIds};
            memcpy(dcgm.fields[i].ids, fieldIds, (size_t)numFieldIds * sizeof(*fieldIds));
            *dcgmFieldGroupId = i + 1;
            return DCGM_ST_OK;
        }
    return DCGM_ST_MAX_LIMIT;
}

dcgmReturn_t dcgmFieldGroupDestroy(dcgmHandle_t dcgmHandle, dcgmFieldGrp_t dcgmFieldGroupId) {
    SIM_LOCKED;
    struct sim_dcgm_fields *f = fields_of(dcgmFieldGroupId);

    if (!usable(st, dcgmHandle))
        return DCGM_ST_CONNECTION_NOT_VALID;
    if (!f)
        return DCGM_ST_BADPARAM;
    f->used = false;
    return DCGM_ST_OK;
}

static bool has_sm_active(const struct sim_dcgm_fields *f) {
    for (int i = 0; i < f->n; i++)
        if (f->ids[i] == DCGM_FI_PROF_SM_ACTIVE)
            return true;
    return false;
}

dcgmReturn_t dcgmWatchFields(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                             dcgmFieldGrp_t fieldGroupId, long long updateFreq, double maxKeepAge,
                             int maxKeepSamples) {
    SIM_LOCKED;
    struct sim_dcgm_group *grp = group_of(groupId);
    struct sim_dcgm_fields *f = fields_of(fieldGroupId);
    uint64_t period =
        updateFreq > SIM_DCGM_MIN_PERIOD_US ? (uint64_t)updateFreq : SIM_DCGM_MIN_PERIOD_US;

    (void)maxKeepAge;
    (void)maxKeepSamples; /* the model keeps SIM_PROF_RING samples */
    if (!usable(st, pDcgmHandle))
        return DCGM_ST_CONNECTION_NOT_VALID;
    if (!grp || !f)
        return DCGM_ST_BADPARAM;
    if (!has_sm_active(f))
        return DCGM_ST_OK;
    for (size_t i = 0; i < grp->n; i++) {
        unsigned gpu;
        size_t slot;
        struct sim_gpu_model *g;

        if (!find_gi(st, grp->entities[i].entityId, &gpu, &slot))
            continue;
        g = &st->model->gpus[gpu];
        sim_sync_gpu(st, gpu);
        if (g->prof.period != period) /* a watch already running keeps its samples */
            sim_model_watch_profiling(g, period);
    }
    return DCGM_ST_OK;
}

/* The instance's activity in one sample: the mean over its compute instances' slots. */
static double sample_activity(const struct sim_gpu *sg, size_t slot,
                              const struct sim_prof_sample *s) {
    uint64_t sum = 0;
    unsigned n = 0;

    for (size_t k = 0; k < sg->n_mig; k++)
        if (sg->mig_instances[k].gpu_instance == sg->mig_instances[slot].gpu_instance) {
            sum += s->active_ppm[k + 1];
            n++;
        }
    return (double)sum / n / 1e6;
}

dcgmReturn_t dcgmGetValuesSince_v2(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                                   dcgmFieldGrp_t fieldGroupId, long long sinceTimestamp,
                                   long long *nextSinceTimestamp,
                                   dcgmFieldValueEntityEnumeration_f enumCB, void *userData) {
    SIM_LOCKED;
    struct sim_dcgm_group *grp = group_of(groupId);
    struct sim_dcgm_fields *f = fields_of(fieldGroupId);
    long long next = sinceTimestamp;

    if (!usable(st, pDcgmHandle))
        return DCGM_ST_CONNECTION_NOT_VALID;
    if (!grp || !f || !enumCB || !nextSinceTimestamp)
        return DCGM_ST_BADPARAM;
    for (size_t i = 0; i < grp->n && has_sm_active(f); i++) {
        const struct sim_profiling *p;
        unsigned gpu;
        size_t slot;
        int n = 0;

        if (!find_gi(st, grp->entities[i].entityId, &gpu, &slot))
            continue;
        sim_sync_gpu(st, gpu);
        p = &st->model->gpus[gpu].prof;
        for (size_t j = 0; j < p->len; j++) {
            const struct sim_prof_sample *s = &p->ring[(p->head + j) % SIM_PROF_RING];
            long long ts = (long long)(st->t0_us + s->t_us);
            dcgmFieldValue_v1 *v = &dcgm.values[n];

            if (ts <= sinceTimestamp || sim_gpu_lost_at(&st->sc->gpus[gpu], s->t_us))
                continue;
            *v = (dcgmFieldValue_v1){.version = dcgmFieldValue_version1,
                                     .fieldId = DCGM_FI_PROF_SM_ACTIVE,
                                     .fieldType = DCGM_FT_DOUBLE,
                                     .ts = ts};
            v->value.dbl = sample_activity(&st->sc->gpus[gpu], slot, s);
            n++;
            if (ts > next)
                next = ts;
        }
        if (n > 0 && enumCB(DCGM_FE_GPU_I, grp->entities[i].entityId, dcgm.values, n, userData) < 0)
            break;
    }
    *nextSinceTimestamp = next;
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmGetGpuInstanceHierarchy(dcgmHandle_t dcgmHandle, dcgmMigHierarchy_v2 *hierarchy) {
    SIM_LOCKED;
    unsigned n = 0;

    if (!usable(st, dcgmHandle))
        return DCGM_ST_CONNECTION_NOT_VALID;
    if (!hierarchy)
        return DCGM_ST_BADPARAM;
    if (hierarchy->version != dcgmMigHierarchy_version2)
        return DCGM_ST_VER_MISMATCH;
    for (unsigned g = 0; g < st->sc->n_gpus; g++) {
        const struct sim_gpu *sg = &st->sc->gpus[g];

        for (size_t k = 0; sg->mig && k < sg->n_mig && n + 2 <= DCGM_MAX_HIERARCHY_INFO; k++) {
            const struct sim_mig *m = &sg->mig_instances[k];
            dcgmMigHierarchyInfo_v2 *e = &hierarchy->entityList[n];
            size_t gi_slot = k;

            while (!first_of_instance(sg, gi_slot)) /* its GPU instance's first slot */
                gi_slot--;
            if (first_of_instance(sg, k)) {
                *e = (dcgmMigHierarchyInfo_v2){
                    .entity = {DCGM_FE_GPU_I, GI_ENTITY(g, k)},
                    .parent = {DCGM_FE_GPU, g},
                    .info = {.nvmlGpuIndex = g,
                             .nvmlInstanceId = m->gpu_instance,
                             .nvmlComputeInstanceId = UINT32_MAX},
                };
                (void)snprintf(e->info.gpuUuid, sizeof(e->info.gpuUuid), "%s", sg->uuid);
                e++;
                n++;
            }
            *e = (dcgmMigHierarchyInfo_v2){
                .entity = {DCGM_FE_GPU_CI, CI_ENTITY(g, k)},
                .parent = {DCGM_FE_GPU_I, GI_ENTITY(g, gi_slot)},
                .info = {.nvmlGpuIndex = g,
                         .nvmlInstanceId = m->gpu_instance,
                         .nvmlComputeInstanceId = m->compute_instance},
            };
            (void)snprintf(e->info.gpuUuid, sizeof(e->info.gpuUuid), "%s", sg->uuid);
            n++;
        }
    }
    hierarchy->count = n;
    return DCGM_ST_OK;
}

const char *errorString(dcgmReturn_t result) {
    switch (result) {
    case DCGM_ST_OK:
        return "Success";
    case DCGM_ST_BADPARAM:
        return "Bad parameter passed to function";
    case DCGM_ST_CONNECTION_NOT_VALID:
        return "Host engine connection invalid/disconnected";
    case DCGM_ST_VER_MISMATCH:
        return "Version mismatch";
    case DCGM_ST_INSTANCE_NOT_FOUND:
        return "The requested GPU instance could not be found";
    default:
        return "Unknown error";
    }
}
