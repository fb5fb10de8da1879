/* SPDX-License-Identifier: MIT */
/* Writes the sample snapshot's exposition with the given prefix to stdout (for promtool). */
#include <stdio.h>

#include "exposition.h"
#include "sample-snapshot.h"

int main(int argc, char **argv) {
    /* The server's own counters too, so promtool sees those families. */
    const struct exposition_http http = {.connections_open = 3,
                                         .closed_header_deadline = 2,
                                         .closed_idle = 4,
                                         .closed_make_room = 1,
                                         .closed_slow_reply = 4};
    struct exposition_options o = {.metric_prefix = argc > 1 ? argv[1] : NULL,
                                   .scrape_duration_valid = true,
                                   .scrape_duration_seconds = 0.001,
                                   .http = &http};
    struct snapshot *s = sample_snapshot_new();
    struct strbuf sb;
    int r;

    if (!s)
        return 1;
    strbuf_init(&sb);
    r = exposition_render(s, &o, &sb);
    if (r >= 0)
        (void)fwrite(sb.buf, 1, sb.len, stdout);
    strbuf_done(&sb);
    snapshot_unref(s);
    return r < 0 ? 1 : 0;
}
