/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "curl_loader.h"
#include "jansson_loader.h"
#include "kube_api.h"
#include "strbuf.h"

/*
 * One request to the API server for this node's pods, a LIST or a WATCH, with libcurl: the
 * URL and its query, the bearer token (re-read at each request: tokens rotate), timeouts,
 * the size limits of a body, and the outcome turned into a kube_report. A watch's stream
 * is handed to the caller a line (one event) at a time. Used by kube_api.c only.
 */
struct kube_request {
    /* Set by the caller. */
    const struct curl_api *cu;
    const struct jansson_api *js;
    const struct kube_api_options *o;
    bool watch;
    /* A watch's: where it starts. A LIST's, when set: "0" lets the API server answer
     * from its watch cache (indexed by node) instead of a quorum read of every pod. */
    const char *resource_version;
    struct kube_report *report; /* filled when the request fails */
    /* A watch: each complete line of the stream, without its newline; a negative return
     * ends the request with that error. */
    int (*on_line)(struct kube_request *req, const char *line, size_t len);
    /* A watch: after the complete lines of each piece of the stream were handled. */
    void (*on_lines_done)(struct kube_request *req);
    /* About once a second while the transfer runs (NULL: none); true stops it. */
    bool (*on_progress)(struct kube_request *req);
    void *userdata;
    struct strbuf body; /* initialised by the caller: the LIST body, the error body, or the
                           unfinished watch line */

    /* Set by kube_request_perform(). */
    CURL *curl;
    long status;
    int error; /* set by the write callback when it aborts */
    bool cancelled;
};

/* Sets *rep to a failure of kind f with its HTTP status and detail (NULL: none). */
void kube_fail(struct kube_report *rep, enum kube_failure f, long status, const char *detail);

/* Runs one LIST or WATCH. 0 when it completed with 200 (a watch that the server ended),
 * -ESTALE for 410 Gone on a watch, -ECANCELED when on_progress stopped it, else a negative
 * errno with req->report filled. */
int kube_request_perform(struct kube_request *req);
