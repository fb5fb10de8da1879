/* SPDX-License-Identifier: MIT */
#include "ledger_restart.h"

#include <string.h>

#include "macro.h"

void ledger_restart_begin(const struct state_clock *saved, uint64_t file_wall_us,
                          const struct state_clock *now, struct ledger_restart *ret) {
    uint64_t saved_wall_us = saved ? saved->wall_us : file_wall_us;
    bool wall_known = now->wall_us >= saved_wall_us;
    struct ledger_restart r = {
        .have_saved = saved != NULL,
        .saved_wall_us = saved_wall_us,
        .now_wall_us = now->wall_us,
        .now_mono_ns = now->mono_ns,
    };
    bool counting;

    if (saved && saved->boot_id[0] && now->boot_id[0] &&
        strcmp(saved->boot_id, now->boot_id) == 0) {
        counting = now->boot_us >= saved->boot_us;
        r.downtime_us = counting ? now->boot_us - saved->boot_us : 0;
    } else if (saved && saved->boot_id[0] && now->boot_id[0]) {
        /* Down at least since the boot; the counters count from it, not from the save. */
        counting = false;
        r.rebooted = true;
        r.downtime_us = MAX(wall_known ? now->wall_us - saved_wall_us : 0, now->boot_us);
    } else {
        counting = wall_known;
        r.downtime_us = wall_known ? now->wall_us - saved_wall_us : 0;
    }
    r.counting = counting;
    *ret = r;
}

int64_t ledger_restart_read_ns(const struct ledger_restart *r, uint64_t age_us) {
    uint64_t ago_us = age_us > UINT64_MAX - r->downtime_us ? UINT64_MAX : r->downtime_us + age_us;

    /* Before this run's monotonic zero where it was read long ago: kept signed, with room
     * left for the differences taken from it. */
    if (ago_us > (uint64_t)INT64_MAX / 4000)
        ago_us = (uint64_t)INT64_MAX / 4000;
    return (int64_t)r->now_mono_ns - (int64_t)(ago_us * 1000);
}

uint64_t ledger_restart_wall_us(const struct ledger_restart *r, uint64_t at_us) {
    uint64_t age_us, ago_us;

    if (!r->have_saved)
        return at_us;
    age_us = r->saved_wall_us > at_us ? r->saved_wall_us - at_us : 0;
    ago_us = r->downtime_us + age_us;
    return r->now_wall_us > ago_us ? r->now_wall_us - ago_us : 0;
}
