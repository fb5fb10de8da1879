/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "pod_resources.pb-c.h"

/*
 * The kubelet's ListPodResourcesResponse (pod_resources.proto), decoded by protobuf-c
 * from the C code protoc-c generates at build time. protobuf-c checks the wire format,
 * skips fields it does not know (older and newer kubelets carry different sets), takes
 * repeated scalars packed or not, and gives every string NUL-terminated ("" when absent;
 * a string holding a NUL byte reads up to it). Pure: no I/O.
 *
 * A hostile message cannot make us allocate without bound: a decode stops at
 * PODRES_MAX_DECODED bytes of decoded structures.
 */
#define PODRES_MAX_DECODED (32U << 20)

struct podres_list {
    /* The decoded response, read-only; its arrays and strings live as long as the list. */
    V1__ListPodResourcesResponse *response;
};

/*
 * Decodes buf[0..len). Returns 0 and *ret_list (free with podres_list_free), -EBADMSG for
 * a malformed message, -E2BIG when decoding it would take more than PODRES_MAX_DECODED
 * bytes, -EINVAL for buf == NULL with len > 0, or -ENOMEM. ret_list is written only on
 * success.
 */
int podres_list_decode(const uint8_t *buf, size_t len, struct podres_list **ret_list);

/* Accepts NULL; returns NULL. */
struct podres_list *podres_list_free(struct podres_list *l);
