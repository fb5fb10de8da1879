/* SPDX-License-Identifier: MIT */
/*
 * A client of nv-hostengine for the SM activity of MIG GPU instances (dcgm.h). One group of
 * GPU-instance entities and one field group {DCGM_FI_PROF_SM_ACTIVE} are watched; the group
 * is made again when an instance joins. Each update asks for the values since the newest
 * one seen, so nothing is read twice and nothing between two updates is missed.
 */
#include "dcgm.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "dcgm_abi.h"
#include "dl_symbols.h"
#include "log.h"
#include "macro.h"

#define DCGM_MAX_INSTANCES 64 /* 8 GPUs x 7 GPU instances */
/* Instances change rarely: the hierarchy is read again this soon after one was missed or a
 * watch failed, and at the latest this late (one destroyed is not asked for again). */
#define DCGM_HIERARCHY_RETRY_US (UINT64_C(10) * 1000000)
#define DCGM_HIERARCHY_REFRESH_US (UINT64_C(60) * 1000000)
#define DCGM_KEEP_AGE_S 30.0
#define DCGM_CONNECT_TIMEOUT_MS 1000 /* the sampler waits for it: at most once a minute */

struct dcgm_api {
    void *dl;
    dcgmInit_fn *init;
    dcgmShutdown_fn *shutdown;
    dcgmConnect_v2_fn *connect;
    dcgmDisconnect_fn *disconnect;
    dcgmGroupCreate_fn *group_create;
    dcgmGroupDestroy_fn *group_destroy;
    dcgmGroupAddEntity_fn *group_add_entity;
    dcgmFieldGroupCreate_fn *field_group_create;
    dcgmFieldGroupDestroy_fn *field_group_destroy;
    dcgmWatchFields_fn *watch_fields;
    dcgmGetValuesSince_v2_fn *values_since;
    dcgmGetGpuInstanceHierarchy_fn *hierarchy;
    errorString_fn *error_string;
};

static const struct dl_symbol dcgm_symbols[] = {
    DL_SYMBOL(struct dcgm_api, init, dcgmInit),
    DL_SYMBOL(struct dcgm_api, shutdown, dcgmShutdown),
    DL_SYMBOL(struct dcgm_api, connect, dcgmConnect_v2),
    DL_SYMBOL(struct dcgm_api, disconnect, dcgmDisconnect),
    DL_SYMBOL(struct dcgm_api, group_create, dcgmGroupCreate),
    DL_SYMBOL(struct dcgm_api, group_destroy, dcgmGroupDestroy),
    DL_SYMBOL(struct dcgm_api, group_add_entity, dcgmGroupAddEntity),
    DL_SYMBOL(struct dcgm_api, field_group_create, dcgmFieldGroupCreate),
    DL_SYMBOL(struct dcgm_api, field_group_destroy, dcgmFieldGroupDestroy),
    DL_SYMBOL(struct dcgm_api, watch_fields, dcgmWatchFields),
    DL_SYMBOL(struct dcgm_api, values_since, dcgmGetValuesSince_v2),
    DL_SYMBOL(struct dcgm_api, hierarchy, dcgmGetGpuInstanceHierarchy),
    DL_SYMBOL(struct dcgm_api, error_string, errorString),
};

/* One soname per DCGM major version; their ABI is the same for what we call. */
static const char *const dcgm_sonames[] = {"libdcgm.so.4", "libdcgm.so.3"};

static const struct dl_table_spec dcgm_spec = {
    .library = "libdcgm",
    .sonames = dcgm_sonames,
    .n_sonames = ARRAY_SIZE(dcgm_sonames),
    .symbols = dcgm_symbols,
    .n_symbols = ARRAY_SIZE(dcgm_symbols),
    .size = sizeof(struct dcgm_api),
    .missing = "DCGM is not installed: no libdcgm.so.4 or libdcgm.so.3",
    .unloadable = "the DCGM library exists but cannot be loaded",
    .lacking = "the DCGM library lacks a required function (DCGM older than 2.0?)",
};

struct dcgm_instance {
    char gpu_uuid[128];
    uint32_t gpu_instance;
    dcgm_field_eid_t entity;
    bool watched; /* in the watched group */
    double sum;   /* of this update's samples */
    unsigned n;
    bool valid; /* the last update had samples: activity is their mean */
    double activity;
};

struct dcgm_client {
    struct dcgm_api *api;
    const char *address;
    bool initialized, connected;
    dcgmHandle_t handle;
    bool have_group, have_fields;
    dcgmGpuGrp_t group;
    dcgmFieldGrp_t fields;
    bool rewatch; /* the group is not the instances' set */
    bool stale;   /* a watch failed: the hierarchy may have changed */
    long long since;
    uint64_t updated_at_us, hierarchy_at_us;
    bool hierarchy_read;
    dcgmMigHierarchy_v2 *hierarchy; /* 72 KiB: allocated once */
    size_t n;
    struct dcgm_instance inst[DCGM_MAX_INSTANCES];
    char error[160];
};

static void note_error(struct dcgm_client *c, const char *what, dcgmReturn_t code) {
    const char *text = c->api->error_string(code);

    (void)snprintf(c->error, sizeof(c->error), "%s: %s (%d)", what, text ? text : "error", code);
    log_debug("DCGM: %s", c->error);
}

static void drop_watch(struct dcgm_client *c) {
    if (c->have_group)
        (void)c->api->group_destroy(c->handle, c->group);
    c->have_group = false;
    for (size_t i = 0; i < c->n; i++)
        c->inst[i].watched = false;
}

/* Forgets the connection and everything the engine held for it (gone with the engine, or
 * dropped by it when we disconnect). */
static void disconnect(struct dcgm_client *c, bool tell_engine) {
    if (!c->connected)
        return;
    if (tell_engine) {
        drop_watch(c);
        if (c->have_fields)
            (void)c->api->field_group_destroy(c->handle, c->fields);
    }
    /* The library keeps its side of the handle until told, whether or not the engine is
     * still there to hear it. */
    (void)c->api->disconnect(c->handle);
    c->connected = c->have_group = c->have_fields = false;
    c->hierarchy_read = false;
    c->n = 0;
    c->since = 0;
}

struct dcgm_client *dcgm_client_free(struct dcgm_client *c) {
    if (!c)
        return NULL;
    disconnect(c, true);
    if (c->initialized)
        (void)c->api->shutdown();
    dl_table_free(c->api);
    free(c->hierarchy);
    free(c);
    return NULL;
}

static void dcgm_client_freep(struct dcgm_client **c) {
    dcgm_client_free(*c);
}

int dcgm_client_connect(struct dcgm_client *c, const char **ret_reason) {
    dcgmConnectV2Params_t params = {.version = dcgmConnectV2Params_version,
                                    .timeoutMs = DCGM_CONNECT_TIMEOUT_MS};
    dcgmReturn_t code;

    if (c->connected)
        return 0;
    params.addressIsUnixSocket = c->address[0] == '/';
    code = c->api->connect(c->address, &params, &c->handle);
    if (code != DCGM_ST_OK) {
        note_error(c, "connect", code);
        *ret_reason = code == DCGM_ST_CONNECTION_NOT_VALID
                          ? "no nv-hostengine answers at the DCGM address"
                          : "connecting to nv-hostengine failed";
        return code == DCGM_ST_CONNECTION_NOT_VALID ? -ECONNREFUSED : -EIO;
    }
    c->connected = true;
    c->error[0] = '\0';
    return 0;
}

bool dcgm_client_connected(const struct dcgm_client *c) {
    return c && c->connected;
}

int dcgm_client_open(const char *library, const char *address, struct dcgm_client **ret_client,
                     const char **ret_reason) {
    _cleanup_(dcgm_client_freep) struct dcgm_client *c = calloc(1, sizeof(*c));
    dcgmReturn_t code;
    int r;

    if (!c || !(c->hierarchy = malloc(sizeof(*c->hierarchy)))) {
        *ret_reason = "out of memory";
        return -ENOMEM;
    }
    r = dl_table_open(&dcgm_spec, library, (void **)&c->api, ret_reason);
    if (r < 0)
        return r;
    code = c->api->init();
    if (code != DCGM_ST_OK) {
        note_error(c, "init", code);
        *ret_reason = "dcgmInit failed";
        return -EIO;
    }
    c->initialized = true;
    c->address = address ? address : "127.0.0.1";
    *ret_client = TAKE_PTR(c);
    return 0;
}

const char *dcgm_client_error(const struct dcgm_client *c) {
    return c ? c->error : "";
}

static struct dcgm_instance *find_instance(struct dcgm_client *c, const char *gpu_uuid,
                                           uint32_t gpu_instance) {
    for (size_t i = 0; i < c->n; i++)
        if (c->inst[i].gpu_instance == gpu_instance && !strcmp(c->inst[i].gpu_uuid, gpu_uuid))
            return &c->inst[i];
    return NULL;
}

static struct dcgm_instance *find_entity(struct dcgm_client *c, dcgm_field_eid_t entity) {
    for (size_t i = 0; i < c->n; i++)
        if (c->inst[i].entity == entity)
            return &c->inst[i];
    return NULL;
}

/* The GPU instances of the engine's hierarchy, which an administrator may have made anew
 * (with new entity ids) or destroyed since the last reading: the set changes, and the
 * group is made again, when any instance comes, goes or changes its entity id. */
static void read_hierarchy(struct dcgm_client *c, uint64_t now_us) {
    dcgmMigHierarchy_v2 *h = c->hierarchy;
    struct dcgm_instance next[DCGM_MAX_INSTANCES];
    size_t n = 0;
    dcgmReturn_t code;

    c->hierarchy_at_us = now_us;
    c->hierarchy_read = true;
    c->stale = false;
    memset(h, 0, sizeof(*h));
    h->version = dcgmMigHierarchy_version2;
    code = c->api->hierarchy(c->handle, h);
    if (code != DCGM_ST_OK) {
        note_error(c, "GPU instance hierarchy", code);
        return;
    }
    for (unsigned i = 0; i < MIN(h->count, (unsigned)DCGM_MAX_HIERARCHY_INFO); i++) {
        const dcgmMigHierarchyInfo_v2 *e = &h->entityList[i];
        const struct dcgm_instance *old;
        struct dcgm_instance *m;

        if (e->entity.entityGroupId != DCGM_FE_GPU_I || n == DCGM_MAX_INSTANCES)
            continue;
        m = &next[n++];
        *m = (struct dcgm_instance){.gpu_instance = e->info.nvmlInstanceId,
                                    .entity = e->entity.entityId};
        memcpy(m->gpu_uuid, e->info.gpuUuid, sizeof(m->gpu_uuid));
        m->gpu_uuid[sizeof(m->gpu_uuid) - 1] = '\0';
        old = find_instance(c, m->gpu_uuid, m->gpu_instance);
        if (old && old->entity == m->entity)
            *m = *old; /* watched still, with this update's samples */
        else
            c->rewatch = true;
    }
    if (n != c->n) /* one went */
        c->rewatch = true;
    memcpy(c->inst, next, n * sizeof(*next));
    c->n = n;
}

/* Watches every known instance: a new group, the one field group, every 100 ms. */
static int watch(struct dcgm_client *c, uint64_t now_us) {
    unsigned short field = DCGM_FI_PROF_SM_ACTIVE;
    dcgmReturn_t code;

    drop_watch(c);
    c->rewatch = false;
    if (!c->have_fields) {
        /* Field group names are the engine's, shared by its clients, and a second one of
         * the same name is refused: a joulestat check or top beside the daemon, or two
         * daemons, each name theirs by pid. */
        char name[48];

        (void)snprintf(name, sizeof(name), "joulestat-sm-active-%ld", (long)getpid());
        code = c->api->field_group_create(c->handle, 1, &field, name, &c->fields);
        if (code != DCGM_ST_OK) {
            note_error(c, "field group", code);
            return -EIO;
        }
        c->have_fields = true;
    }
    code = c->api->group_create(c->handle, DCGM_GROUP_EMPTY, "joulestat-mig", &c->group);
    if (code != DCGM_ST_OK) {
        note_error(c, "group", code);
        return -EIO;
    }
    c->have_group = true;
    for (size_t i = 0; i < c->n; i++) {
        code = c->api->group_add_entity(c->handle, c->group, DCGM_FE_GPU_I, c->inst[i].entity);
        if (code != DCGM_ST_OK) { /* the instance was destroyed since */
            note_error(c, "group entity", code);
            c->stale = true;
            return -EIO;
        }
    }
    code = c->api->watch_fields(c->handle, c->group, c->fields, DCGM_WATCH_PERIOD_US,
                                DCGM_KEEP_AGE_S, 0);
    if (code != DCGM_ST_OK) { /* PROFILING_LIBRARY_ERROR: another engine holds the counters */
        note_error(c, "watch SM activity", code);
        c->stale = true;
        return -EIO;
    }
    for (size_t i = 0; i < c->n; i++)
        c->inst[i].watched = true;
    if (c->since == 0) /* not what another client's watch kept from before */
        c->since = (long long)now_us;
    return 0;
}

static int take_values(unsigned int group, dcgm_field_eid_t entity, dcgmFieldValue_v1 *values,
                       int n, void *userdata) {
    const struct dcgm_client *c = userdata;
    struct dcgm_instance *m = group == DCGM_FE_GPU_I ? find_entity(userdata, entity) : NULL;

    for (int i = 0; m && i < n; i++) {
        const dcgmFieldValue_v1 *v = &values[i];

        /* the last update's newest again, should an engine count "since" inclusively */
        if (v->ts <= c->since || v->fieldId != DCGM_FI_PROF_SM_ACTIVE || v->status != DCGM_ST_OK ||
            v->fieldType != DCGM_FT_DOUBLE || !(v->value.dbl >= 0.0) ||
            v->value.dbl >= DCGM_FP64_BLANK)
            continue;
        m->sum += MIN(v->value.dbl, 1.0); /* MIG values above 1 have been seen */
        m->n++;
    }
    return 0;
}

int dcgm_client_update(struct dcgm_client *c, uint64_t now_us) {
    long long next = 0;
    dcgmReturn_t code;

    if (!c->connected)
        return -ENOTCONN;
    if (c->updated_at_us == now_us)
        return 0;
    c->updated_at_us = now_us;
    for (size_t i = 0; i < c->n; i++) {
        c->inst[i].sum = 0.0;
        c->inst[i].n = 0;
        c->inst[i].valid = false;
    }
    if (c->rewatch && watch(c, now_us) < 0) {
        c->rewatch = true; /* tried again at the next update */
        return 0;          /* the instances fall back this window */
    }
    if (!c->have_group)
        return 0;
    code = c->api->values_since(c->handle, c->group, c->fields, c->since, &next, take_values, c);
    if (code == DCGM_ST_CONNECTION_NOT_VALID) {
        note_error(c, "values", code);
        disconnect(c, false);
        return -ECONNRESET;
    }
    if (code != DCGM_ST_OK && code != DCGM_ST_NO_DATA) {
        note_error(c, "values", code);
        return 0;
    }
    if (next > c->since)
        c->since = next;
    for (size_t i = 0; i < c->n; i++)
        if (c->inst[i].n > 0) {
            c->inst[i].valid = true;
            c->inst[i].activity = c->inst[i].sum / c->inst[i].n;
        }
    return 0;
}

bool dcgm_client_instance_activity(struct dcgm_client *c, const char *gpu_uuid,
                                   uint32_t gpu_instance, uint64_t now_us, double *ret_activity) {
    struct dcgm_instance *m = find_instance(c, gpu_uuid, gpu_instance);
    uint64_t age = now_us - c->hierarchy_at_us;

    if (!c->connected)
        return false;
    if (!c->hierarchy_read || ((!m || c->stale) && age >= DCGM_HIERARCHY_RETRY_US) ||
        age >= DCGM_HIERARCHY_REFRESH_US) {
        read_hierarchy(c, now_us);
        m = find_instance(c, gpu_uuid, gpu_instance);
    }
    if (!m)
        return false;
    if (!m->watched) {
        c->rewatch = true;
        return false;
    }
    if (!m->valid)
        return false;
    *ret_activity = m->activity;
    return true;
}
