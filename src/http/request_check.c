/* SPDX-License-Identifier: MIT */
#include "request_check.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

struct header_count {
    unsigned hosts;
    unsigned lengths;
    const char *first_length;
    bool lengths_differ;
    bool body;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value) {
    struct header_count *h = cls;

    (void)kind;
    if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
        h->hosts++;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        h->body = true;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (value && value[strspn(value, "0")] != '\0')
            h->body = true;
        if (h->lengths++ == 0)
            h->first_length = value;
        else if (!value || !h->first_length || strcmp(value, h->first_length) != 0)
            h->lengths_differ = true;
    }
    return MHD_YES;
}

unsigned request_check(struct MHD_Connection *conn, const char *method, const char *version,
                       const char **ret_reason) {
    struct header_count h = {0};

    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        *ret_reason = "method not allowed\n";
        return MHD_HTTP_METHOD_NOT_ALLOWED;
    }
    (void)MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &h);
    if (h.lengths_differ) {
        *ret_reason = "conflicting Content-Length headers\n";
        return MHD_HTTP_BAD_REQUEST;
    }
    if (h.body) {
        *ret_reason = "GET and HEAD take no body\n";
        return MHD_HTTP_BAD_REQUEST;
    }
    if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 && h.hosts != 1) {
        *ret_reason = h.hosts ? "more than one Host header\n" : "HTTP/1.1 request without Host\n";
        return MHD_HTTP_BAD_REQUEST;
    }
    return 0;
}
