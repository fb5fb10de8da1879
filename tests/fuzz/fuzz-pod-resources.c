/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "pod_resources_decode.h"
#include "pod_resources_gpu.h"

/* Whatever the bytes: no crash, a known error, and a GPU table that holds together. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct podres_list *l = NULL;
    struct gpu_alloc_table *t = NULL;
    size_t bytes = 0;
    int r;

    r = podres_list_decode(data, size, &l);
    FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -E2BIG || r == -ENOMEM);
    if (r < 0) {
        FUZZ_CHECK(l == NULL);
        return 0;
    }
    /* Every string is NUL-terminated and every array as long as it says. */
    for (size_t i = 0; i < l->response->n_pod_resources; i++) {
        const V1__PodResources *p = l->response->pod_resources[i];

        bytes += strlen(p->name) + strlen(p->namespace_);
        for (size_t j = 0; j < p->n_containers; j++) {
            const V1__ContainerResources *c = p->containers[j];

            bytes += strlen(c->name) + c->n_cpu_ids * sizeof(*c->cpu_ids);
            for (size_t k = 0; k < c->n_devices; k++)
                for (size_t m = 0; m < c->devices[k]->n_device_ids; m++)
                    bytes += strlen(c->devices[k]->device_ids[m]);
        }
    }
    FUZZ_CHECK(bytes <= PODRES_MAX_DECODED);

    r = gpu_alloc_table_build(l, &t);
    FUZZ_CHECK(r == 0 || r == -ENOMEM);
    if (r == 0) {
        for (size_t i = 0; i < t->n; i++) {
            const struct gpu_alloc *a = &t->allocs[i];

            FUZZ_CHECK(a->replicas >= 1);
            FUZZ_CHECK(strncmp(a->device, "GPU-", 4) == 0 || strncmp(a->device, "MIG-", 4) == 0);
            FUZZ_CHECK(a->gpu_uuid[0] == '\0' || strncmp(a->gpu_uuid, "GPU-", 4) == 0);
            FUZZ_CHECK(a->mig || strcmp(a->device, a->gpu_uuid) == 0);
            if (i > 0)
                FUZZ_CHECK(strcmp(t->allocs[i - 1].gpu_uuid, a->gpu_uuid) <= 0);
        }
        gpu_alloc_table_free(t);
    }
    podres_list_free(l);
    return 0;
}
