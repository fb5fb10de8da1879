/* SPDX-License-Identifier: MIT */
/*
 * The NVML backend's use of DCGM (dcgm.h): on a MIG-enabled GPU whose NVML has no GPM (the
 * A100 and A30), the SM activity of each GPU instance comes from the node's nv-hostengine
 * when one runs. Without it the instances are weighted by their size (nvml_mig.c), and
 * `joulestat check` says why.
 */
#include <errno.h>

#include "log.h"
#include "nvml_internal.h"
#include "strbuf.h"

/* An engine started after joulestat (a DaemonSet's order is not ours) is found this late. */
#define NVML_DCGM_RETRY_US (UINT64_C(60) * 1000000)

/* A connected client: the library loaded once (never again once it failed to), the engine
 * connected again at most every NVML_DCGM_RETRY_US. */
static bool have_client(struct nvml_state *s, uint64_t now_us) {
    const char *reason = NULL;
    int r;

    if (s->dcgm_off || s->dcgm_unusable)
        return false;
    if (!s->dcgm) {
        r = dcgm_client_open(s->dcgm_library, s->dcgm_address, &s->dcgm, &reason);
        if (r < 0) {
            log_debug_errno(r, "DCGM: %s", reason);
            s->dcgm_unusable = true;
            s->dcgm_reason = reason;
            return false;
        }
    }
    if (dcgm_client_connected(s->dcgm))
        return true;
    if (s->dcgm_reason && now_us < s->dcgm_retry_at_us)
        return false;
    s->dcgm_retry_at_us = now_us + NVML_DCGM_RETRY_US;
    r = dcgm_client_connect(s->dcgm, &reason);
    if (r < 0) {
        log_debug_errno(r, "DCGM: %s", reason);
        s->dcgm_reason = reason;
        return false;
    }
    s->dcgm_reason = NULL;
    return true;
}

void nvml_dcgm_read(struct nvml_state *s, struct nvml_device *d, const char *gpu_uuid,
                    uint64_t now_us) {
    int r;

    if (!have_client(s, now_us))
        return;
    r = dcgm_client_update(s->dcgm, now_us);
    if (r < 0) { /* the engine went away: connect again later */
        s->dcgm_reason = "the connection to nv-hostengine was lost";
        s->dcgm_retry_at_us = now_us + NVML_DCGM_RETRY_US;
        return;
    }
    for (size_t i = 0; i < d->n_mig; i++) {
        struct gpu_mig_instance *v = &d->mig[i].view;

        v->activity_valid = dcgm_client_instance_activity(s->dcgm, gpu_uuid, v->gpu_instance,
                                                          now_us, &v->sm_activity);
    }
}

void nvml_dcgm_describe(const struct nvml_state *s, size_t index, struct strbuf *out) {
    const char *error = dcgm_client_error(s->dcgm);

    strbuf_printf(out, "GPU %zu: MIG instance activity (DCGM): ", index);
    if (s->dcgm_off)
        strbuf_puts(out, "off (--dcgm=off); instances are weighted by their size\n");
    else if (dcgm_client_connected(s->dcgm))
        strbuf_printf(out, "connected to nv-hostengine at %s%s%s\n",
                      s->dcgm_address ? s->dcgm_address : "127.0.0.1", error[0] ? "; last: " : "",
                      error);
    else if (s->dcgm_reason)
        strbuf_printf(out,
                      "not available (%s); instances are weighted by their size; run "
                      "nv-hostengine (DCGM) on the node, or set --dcgm\n",
                      s->dcgm_reason);
    else
        strbuf_puts(out, "not tried yet\n");
}

void nvml_dcgm_close(struct nvml_state *s) {
    s->dcgm = dcgm_client_free(s->dcgm);
}
