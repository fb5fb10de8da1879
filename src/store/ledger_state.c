/* SPDX-License-Identifier: MIT */
#include "ledger_state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger_past.h"
#include "macro.h"
#include "parse_num.h"
#include "strbuf.h"

#define STATE_MAGIC "joulestat-state 2"
/* Written before the boot clock and the end line: still read, as it was written. */
#define STATE_MAGIC_1 "joulestat-state 1"
#define MAX_FIELDS 64
/* A kind of entry (or of workload) a newer version wrote: skipped where the file has a sum
 * (written by a version that knows to add one), so a rollback keeps the rest. */
#define UNKNOWN_KIND 1
/* Set in a restored process's start time after a reboot: a tick count of the last boot,
 * which a process of this one may have again, so that no live process takes its entry (a
 * reused pid with the same labels still continues its series). */
#define START_TICKS_LAST_BOOT (UINT64_C(1) << 63)
/* An age (a RAPL reading's, a dropped workload's) over a century is not one, and keeps the
 * clock arithmetic in range. */
#define AGE_MAX_US (UINT64_C(100) * 366 * 86400 * 1000000)
#define CPU_DOMAIN_KEYS "d0", "d1", "d2", "d3", "d4"
#define FNV1A_64_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV1A_64_PRIME UINT64_C(0x100000001b3)

static const char *const cpu_domain_keys[SNAP_CPU_DOMAINS] = {CPU_DOMAIN_KEYS};

/* FNV-1a of the text before the end line: a digit flipped on disk, or a line repeated,
 * is not taken for a counter. Not a defence against someone who can write the file. */
static uint64_t text_sum(const char *text, size_t len) {
    uint64_t h = FNV1A_64_OFFSET;

    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)text[i]) * FNV1A_64_PRIME;
    return h;
}

/* ---- writing ----------------------------------------------------------------------- */

static void put_escaped(struct strbuf *out, const char *key, const char *value) {
    strbuf_printf(out, "\t%s=", key);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (*p <= 0x20 || *p == 0x7f || *p == '%')
            strbuf_printf(out, "%%%02X", *p);
        else
            strbuf_putc(out, (char)*p);
    }
}

/* A die's raw counter field: "raw" for die 0 (the only one before dies were told apart),
 * "raw_die1" ... for the others. */
static void rapl_raw_field(unsigned die, char *buf, size_t size) {
    if (die == 0)
        (void)snprintf(buf, size, "raw");
    else
        (void)snprintf(buf, size, "raw_die%u", die);
}

/* How long before the save each die's raw counter was read: "raw_age_us", "raw_age_us_die1"... */
static void rapl_age_field(unsigned die, char *buf, size_t size) {
    if (die == 0)
        (void)snprintf(buf, size, "raw_age_us");
    else
        (void)snprintf(buf, size, "raw_age_us_die%u", die);
}

static void put_u64(struct strbuf *out, const char *key, uint64_t v) {
    strbuf_printf(out, "\t%s=%" PRIu64, key, v);
}

static void put_reasons(struct strbuf *out, const uint64_t *uj) {
    for (unsigned k = 0; k < _UNATTR_MAX; k++)
        put_u64(out, unattributed_reason_to_string(k), uj[k]);
}

static void put_split(struct strbuf *out, enum split_method m, uint64_t windows) {
    strbuf_printf(out, "\tsplit_%s=%" PRIu64, split_method_to_string(m), windows);
}

/* The idle observations as one field: "idle_mw=41000,40500,...". */
static void put_idle(struct strbuf *out, const struct gpu_baseline *b) {
    unsigned n = MIN(b->n_idle, (unsigned)GPU_BASELINE_IDLE_MAX);

    strbuf_puts(out, "\tidle_mw=");
    for (unsigned k = 0; k < n; k++)
        strbuf_printf(out, k ? ",%" PRIu64 : "%" PRIu64, b->idle_mw[k]);
}

static void put_labels(struct strbuf *out, const struct snap_identity *id) {
    for (enum label_field f = 0; f < _LABEL_FIELD_MAX; f++)
        if (id && label_value(id, f)[0])
            put_escaped(out, label_fields[f].label, label_value(id, f));
}

static void put_host(struct strbuf *out, const struct state_clock *now) {
    strbuf_puts(out, "host");
    if (now->boot_id[0])
        put_escaped(out, "boot_id", now->boot_id);
    put_u64(out, "boot_us", now->boot_us);
    put_u64(out, "wall_us", now->wall_us);
    strbuf_putc(out, '\n');
}

static void put_rapl_raw(struct strbuf *out, const struct ledger_rapl *r, uint64_t now_ns) {
    for (unsigned die = 0; die < LEDGER_RAPL_MAX_DIES; die++) {
        char name[24];

        if (!(r->raw_valid & (1u << die)))
            continue;
        rapl_raw_field(die, name, sizeof(name));
        put_u64(out, name, r->raw[die]);
        rapl_age_field(die, name, sizeof(name));
        put_u64(out, name,
                (int64_t)now_ns > r->raw_read_ns[die]
                    ? (uint64_t)((int64_t)now_ns - r->raw_read_ns[die]) / 1000
                    : 0);
    }
    put_u64(out, "modulus", r->modulus);
    put_u64(out, "unit_num", r->unit_num);
    put_u64(out, "unit_den", r->unit_den);
    if (r->raw_stale & r->raw_valid)
        put_u64(out, "raw_stale", r->raw_stale & r->raw_valid);
}

/* A workload, or one retention dropped past_age_us ago (kept to go on if it comes back; an
 * older version reads it as a workload not seen since, which it drops after retention). */
static void put_workload(struct strbuf *out, const struct ledger_workload *w, bool past,
                         uint64_t past_age_us) {
    strbuf_puts(out, "workload");
    put_escaped(out, "kind", workload_kinds[w->kind].name);
    put_u64(out, "gpu_uj", w->gpu_uj);
    put_u64(out, "cpu_uj", w->cpu_uj);
    if (w->cpu_unseen_valid)
        for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++)
            put_u64(out, cpu_domain_keys[d], w->cpu_unseen_uj[d]);
    if (past)
        put_u64(out, "past_age_us", past_age_us);
    put_labels(out, w->id);
    strbuf_putc(out, '\n');
}

void ledger_state_format(const struct ledger *l, const struct gpu_baseline *baselines,
                         const struct state_clock *now, struct strbuf *out) {
    size_t begin = out->len;
    struct ledger_workload past;
    uint64_t entries = 0, past_age_us;
    void *v;

    strbuf_puts(out, STATE_MAGIC "\n");
    put_host(out, now);
    for (unsigned i = 0; i < LEDGER_MAX_GPUS; i++) {
        const struct ledger_gpu *g = &l->gpus[i];

        if (!g->present)
            continue;
        strbuf_puts(out, "gpu");
        put_u64(out, "index", i);
        put_escaped(out, "uuid", g->uuid);
        put_escaped(out, "model", g->model);
        put_u64(out, "energy_uj", g->energy_uj);
        put_reasons(out, g->unattributed_uj);
        if (g->allocated_uj)
            put_u64(out, "allocated_uj", g->allocated_uj);
        for (unsigned m = 0; m < _SPLIT_METHOD_MAX; m++)
            if (g->split_windows[m])
                put_split(out, m, g->split_windows[m]);
        if (baselines && baselines[i].valid) {
            put_u64(out, "raw_mj", baselines[i].raw_mj);
            put_u64(out, "at_us", baselines[i].at_us);
        }
        if (baselines && baselines[i].n_idle > 0)
            put_idle(out, &baselines[i]);
        strbuf_putc(out, '\n');
        entries++;
    }
    for (size_t i = 0; i < l->n_rapl; i++) {
        strbuf_puts(out, "rapl");
        put_u64(out, "package", l->rapl[i].package);
        put_escaped(out, "domain", l->rapl[i].domain);
        put_u64(out, "energy_uj", l->rapl[i].energy_uj);
        put_reasons(out, l->rapl[i].unattributed_uj);
        if (l->rapl[i].downtime_unknown_us)
            put_u64(out, "downtime_unknown_us", l->rapl[i].downtime_unknown_us);
        if (l->rapl[i].raw_valid)
            put_rapl_raw(out, &l->rapl[i], now->mono_ns);
        strbuf_putc(out, '\n');
        entries++;
    }
    for (size_t i = 0; hashmap_next(&l->processes, &i, NULL, &v);) {
        const struct ledger_process *p = v;

        strbuf_puts(out, "process");
        put_u64(out, "gpu", p->gpu);
        put_u64(out, "pid", p->pid);
        put_u64(out, "start_ticks", p->start_ticks);
        put_u64(out, "start_us", (uint64_t)(p->start_time_seconds * 1e6));
        put_u64(out, "measured_uj", p->measured_uj);
        put_u64(out, "estimated_uj", p->estimated_uj);
        if (p->gpu_instance != LEDGER_NO_INSTANCE) {
            put_u64(out, "gpu_instance", p->gpu_instance);
            put_u64(out, "compute_instance", p->compute_instance);
            put_escaped(out, "mig_profile", p->mig_profile);
        }
        put_labels(out, p->id);
        strbuf_putc(out, '\n');
        entries++;
    }
    for (size_t i = 0; hashmap_next(&l->cpu_processes, &i, NULL, &v);) {
        const struct ledger_cpu_process *p = v;

        strbuf_puts(out, "cpu_process");
        put_u64(out, "pid", p->pid);
        put_u64(out, "start_ticks", p->start_ticks);
        for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++)
            put_u64(out, cpu_domain_keys[d], p->energy_uj[d]);
        put_labels(out, p->id);
        strbuf_putc(out, '\n');
        entries++;
    }
    for (size_t i = 0; hashmap_next(&l->allocations, &i, NULL, &v);) {
        const struct ledger_allocation *a = v;

        strbuf_puts(out, "allocation");
        put_u64(out, "gpu", a->gpu);
        put_escaped(out, "namespace", a->namespace_);
        put_escaped(out, "pod", a->pod);
        put_escaped(out, "pod_uid", a->pod_uid);
        put_u64(out, "replicas", a->replicas);
        put_u64(out, "energy_uj", a->energy_uj);
        strbuf_putc(out, '\n');
        entries++;
    }
    for (size_t i = 0; hashmap_next(&l->workloads, &i, NULL, &v);) {
        put_workload(out, v, false, 0);
        entries++;
    }
    for (size_t i = 0; ledger_past_next(l, &i, now->mono_ns, &past, &past_age_us);) {
        put_workload(out, &past, true, past_age_us);
        entries++;
    }
    /* Older versions read the end line's entries and ignore the sum. */
    strbuf_printf(out, "end\tentries=%" PRIu64 "\tsum=%016" PRIx64 "\n", entries,
                  out->buf ? text_sum(out->buf + begin, out->len - begin) : 0);
}

/* ---- reading ----------------------------------------------------------------------- */

struct fields {
    size_t n;
    char *key[MAX_FIELDS];
    char *value[MAX_FIELDS];
};

static int hex(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Undoes put_escaped() in place. */
static int unescape(char *s) {
    char *w = s;

    for (char *p = s; *p; p++) {
        if (*p != '%') {
            *w++ = *p;
            continue;
        }
        if (hex(p[1]) < 0 || hex(p[2]) < 0)
            return -EBADMSG;
        *w++ = (char)(hex(p[1]) * 16 + hex(p[2]));
        p += 2;
    }
    *w = '\0';
    return 0;
}

/* Splits a line (modified in place) into its kind and fields. */
static int split_line(char *line, char **ret_kind, struct fields *f) {
    char *save = NULL, *tok = strtok_r(line, "\t", &save);

    if (!tok)
        return -EBADMSG;
    *ret_kind = tok;
    f->n = 0;
    while ((tok = strtok_r(NULL, "\t", &save))) {
        char *eq = strchr(tok, '=');

        if (!eq || eq == tok || f->n == MAX_FIELDS)
            return -EBADMSG;
        *eq = '\0';
        if (unescape(eq + 1) < 0)
            return -EBADMSG;
        f->key[f->n] = tok;
        f->value[f->n++] = eq + 1;
    }
    return 0;
}

static const char *get(const struct fields *f, const char *key) {
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->key[i], key) == 0)
            return f->value[i];
    return NULL;
}

/* A number field; a missing optional one is 0. */
static int get_u64(const struct fields *f, const char *key, bool required, uint64_t *ret) {
    const char *v = get(f, key);

    if (!v) {
        *ret = 0;
        return required ? -EBADMSG : 0;
    }
    return safe_atou64(v, ret) < 0 ? -EBADMSG : 0;
}

static int get_labels(const struct fields *f, struct snap_identity *id) {
    *id = (struct snap_identity){0};
    for (enum label_field lf = 0; lf < _LABEL_FIELD_MAX; lf++) {
        const char *v = get(f, label_fields[lf].label);

        if (v)
            copy_cut((char *)id + label_fields[lf].offset, label_fields[lf].size, v);
    }
    labels_make_valid(id); /* keyed as a live one is (a file written before this) */
    return 0;
}

static int get_reasons(const struct fields *f, uint64_t *uj) {
    for (unsigned k = 0; k < _UNATTR_MAX; k++)
        if (get_u64(f, unattributed_reason_to_string(k), false, &uj[k]) < 0)
            return -EBADMSG;
    return 0;
}

/* No board idles above this: a bigger saved idle is not a state joulestat wrote (restored,
 * every window would be all idle). */
#define IDLE_MW_MAX (5000U * 1000U)

/* Parses put_idle()'s list into b. */
static int get_idle(const char *list, struct gpu_baseline *b) {
    char item[24];

    b->n_idle = 0;
    while (*list) {
        size_t len = strcspn(list, ",");

        if (len == 0 || len >= sizeof(item) || b->n_idle == GPU_BASELINE_IDLE_MAX)
            return -EBADMSG;
        memcpy(item, list, len);
        item[len] = '\0';
        if (safe_atou64(item, &b->idle_mw[b->n_idle]) < 0 || b->idle_mw[b->n_idle] > IDLE_MW_MAX)
            return -EBADMSG;
        b->n_idle++;
        list += len;
        if (*list == ',' && *++list == '\0')
            return -EBADMSG; /* a trailing comma */
    }
    return 0;
}

static int restore_gpu(struct ledger *l, const struct fields *f, const struct ledger_restart *rs,
                       struct gpu_baseline *baselines) {
    uint64_t index, raw, at;
    struct ledger_gpu *g;
    const char *uuid = get(f, "uuid"), *model = get(f, "model");

    if (get_u64(f, "index", true, &index) < 0 || index >= LEDGER_MAX_GPUS || !uuid)
        return -EBADMSG;
    g = ledger_gpu(l, (unsigned)index);
    g->present = true;
    g->index = (unsigned)index;
    copy_cut(g->uuid, sizeof(g->uuid), uuid);
    copy_cut(g->model, sizeof(g->model), model ? model : "");
    if (get_u64(f, "energy_uj", true, &g->energy_uj) < 0 ||
        get_reasons(f, g->unattributed_uj) < 0 ||
        get_u64(f, "allocated_uj", false, &g->allocated_uj) < 0)
        return -EBADMSG;
    for (unsigned m = 0; m < _SPLIT_METHOD_MAX; m++) {
        char key[48];

        (void)snprintf(key, sizeof(key), "split_%s", split_method_to_string(m));
        if (get_u64(f, key, false, &g->split_windows[m]) < 0)
            return -EBADMSG;
    }
    if (get_u64(f, "raw_mj", false, &raw) < 0 || get_u64(f, "at_us", false, &at) < 0)
        return -EBADMSG;
    if (!baselines)
        return 0;
    /* A time down that is unknown (no boot id, and a wall clock behind the save) is not
     * bridged, as RAPL's is not: the counter starts over at its first reading. */
    if (get(f, "raw_mj") && get(f, "at_us") && (rs->counting || rs->rebooted)) {
        baselines[index].valid = true;
        /* After a reboot the counter counts from the driver's load, all of it while down. */
        baselines[index].raw_mj = rs->rebooted ? 0 : raw;
        baselines[index].at_us = ledger_restart_wall_us(rs, at);
    }
    copy_cut(baselines[index].uuid, sizeof(baselines[index].uuid), uuid);
    return get(f, "idle_mw") ? get_idle(get(f, "idle_mw"), &baselines[index]) : 0;
}

static int restore_rapl(struct ledger *l, const struct fields *f, const struct ledger_restart *rs) {
    const char *domain = get(f, "domain");
    struct ledger_rapl *r;
    uint64_t package, stale;
    bool any_raw = false;
    int ret;

    if (get_u64(f, "package", true, &package) < 0 || package > UINT32_MAX || !domain)
        return -EBADMSG;
    ret = ledger_rapl_get(l, (unsigned)package, domain, &r);
    if (ret < 0)
        return ret;
    if (get_u64(f, "energy_uj", true, &r->energy_uj) < 0 ||
        get_reasons(f, r->unattributed_uj) < 0 ||
        get_u64(f, "downtime_unknown_us", false, &r->downtime_unknown_us) < 0)
        return -EBADMSG;
    /* The counters' last readings, a die each: they bridge the time joulestat was down. */
    for (unsigned die = 0; die < LEDGER_RAPL_MAX_DIES; die++) {
        char name[24];
        uint64_t age_us;

        rapl_raw_field(die, name, sizeof(name));
        if (!get(f, name))
            continue;
        if (get_u64(f, name, true, &r->raw[die]) < 0)
            return -EBADMSG;
        rapl_age_field(die, name, sizeof(name));
        if (get_u64(f, name, false, &age_us) < 0 || age_us > AGE_MAX_US)
            return -EBADMSG;
        r->raw_read_ns[die] = ledger_restart_read_ns(rs, age_us);
        r->raw_valid |= 1u << die;
        any_raw = true;
    }
    if (!any_raw)
        return 0;
    if (get_u64(f, "modulus", true, &r->modulus) < 0 ||
        get_u64(f, "unit_num", true, &r->unit_num) < 0 ||
        get_u64(f, "unit_den", true, &r->unit_den) < 0 || r->unit_num == 0 || r->unit_den == 0 ||
        get_u64(f, "raw_stale", false, &stale) < 0)
        return -EBADMSG;
    /* Saved before a reboot (or a time unknown) and not read since: never bridged, even
     * by a later restart in this boot. */
    r->raw_stale = ((uint32_t)stale | (rs->counting ? 0u : UINT32_MAX)) & r->raw_valid;
    for (unsigned die = 0; r->modulus && die < LEDGER_RAPL_MAX_DIES; die++)
        if ((r->raw_valid & (1u << die)) && r->raw[die] >= r->modulus)
            return -EBADMSG;
    r->restored = r->raw_valid;
    return 0;
}

/* A MIG process's instance: its series' labels. */
static int restore_instance(struct ledger_process *p, const struct fields *f) {
    const char *profile = get(f, "mig_profile");
    uint64_t gi, ci;

    if (!get(f, "gpu_instance"))
        return 0;
    if (get_u64(f, "gpu_instance", true, &gi) < 0 || gi >= LEDGER_NO_INSTANCE ||
        get_u64(f, "compute_instance", true, &ci) < 0 || ci >= LEDGER_NO_INSTANCE)
        return -EBADMSG;
    p->gpu_instance = (uint32_t)gi;
    p->compute_instance = (uint32_t)ci;
    copy_cut(p->mig_profile, sizeof(p->mig_profile), profile ? profile : "");
    return 0;
}

static int restore_process(struct ledger *l, const struct fields *f, uint64_t now_ns,
                           bool rebooted) {
    uint64_t gpu, pid, start_ticks, start_us, measured, estimated;
    struct ledger_process *p;
    struct snap_identity id;
    int r;

    if (get_u64(f, "gpu", true, &gpu) < 0 || gpu >= LEDGER_MAX_GPUS ||
        get_u64(f, "pid", true, &pid) < 0 || pid > UINT32_MAX ||
        get_u64(f, "start_ticks", true, &start_ticks) < 0 ||
        get_u64(f, "start_us", false, &start_us) < 0 ||
        get_u64(f, "measured_uj", true, &measured) < 0 ||
        get_u64(f, "estimated_uj", true, &estimated) < 0)
        return -EBADMSG;
    if (rebooted)
        start_ticks |= START_TICKS_LAST_BOOT;
    get_labels(f, &id);
    r = ledger_process_get(l, (unsigned)gpu, (uint32_t)pid, start_ticks, &id, &p);
    if (r < 0)
        return r;
    if (restore_instance(p, f) < 0)
        return -EBADMSG;
    /* Added: an entry of the same pid and labels restored before it is this one's now. */
    p->measured_uj += measured;
    p->estimated_uj += estimated;
    p->start_time_seconds = (double)start_us / 1e6;
    p->active = false;
    p->last_seen_ns = now_ns;
    return 0;
}

static int restore_cpu_process(struct ledger *l, const struct fields *f, uint64_t now_ns,
                               bool rebooted) {
    uint64_t pid, start_ticks, uj;
    struct snap_identity id;
    int r;

    if (get_u64(f, "pid", true, &pid) < 0 || pid > UINT32_MAX ||
        get_u64(f, "start_ticks", true, &start_ticks) < 0)
        return -EBADMSG;
    if (rebooted)
        start_ticks |= START_TICKS_LAST_BOOT;
    get_labels(f, &id);
    for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++) {
        if (get_u64(f, cpu_domain_keys[d], false, &uj) < 0)
            return -EBADMSG;
        r = ledger_add_cpu_process_energy(l, (uint32_t)pid, start_ticks, &id, d, uj, now_ns);
        if (r < 0)
            return r;
    }
    ledger_cpu_process_exited(l, (uint32_t)pid, start_ticks, &id, now_ns);
    return 0;
}

/* downtime_us: from the save to now, which a dropped workload's age adds. */
static int restore_workload(struct ledger *l, const struct fields *f, uint64_t now_ns,
                            uint64_t downtime_us) {
    const char *kind = get(f, "kind");
    uint64_t gpu_uj, cpu_uj, unseen[SNAP_CPU_DOMAINS], past_age_us;
    bool unseen_valid = get(f, cpu_domain_keys[0]) != NULL;
    struct snap_identity id;

    if (!kind || get_u64(f, "gpu_uj", true, &gpu_uj) < 0 ||
        get_u64(f, "cpu_uj", true, &cpu_uj) < 0 ||
        get_u64(f, "past_age_us", false, &past_age_us) < 0 || past_age_us > AGE_MAX_US)
        return -EBADMSG;
    for (unsigned d = 0; d < SNAP_CPU_DOMAINS; d++)
        if (get_u64(f, cpu_domain_keys[d], false, &unseen[d]) < 0)
            return -EBADMSG;
    get_labels(f, &id);
    for (enum workload_kind k = 0; k < _WORKLOAD_KIND_MAX; k++)
        if (strcmp(workload_kinds[k].name, kind) == 0)
            return get(f, "past_age_us")
                       ? ledger_past_restore(l, k, &id, gpu_uj, cpu_uj,
                                             unseen_valid ? unseen : NULL,
                                             past_age_us + MIN(downtime_us, AGE_MAX_US), now_ns)
                       : ledger_workload_restore(l, k, &id, gpu_uj, cpu_uj,
                                                 unseen_valid ? unseen : NULL, now_ns);
    return UNKNOWN_KIND;
}

static int restore_allocation(struct ledger *l, const struct fields *f, uint64_t now_ns) {
    const char *namespace_ = get(f, "namespace"), *pod = get(f, "pod"), *uid = get(f, "pod_uid");
    uint64_t gpu, replicas, uj;

    if (get_u64(f, "gpu", true, &gpu) < 0 || gpu >= LEDGER_MAX_GPUS ||
        get_u64(f, "replicas", false, &replicas) < 0 || replicas > UINT32_MAX ||
        get_u64(f, "energy_uj", true, &uj) < 0)
        return -EBADMSG;
    return ledger_allocation_restore(l, (unsigned)gpu, namespace_ ? namespace_ : "", pod ? pod : "",
                                     uid ? uid : "", (unsigned)replicas, uj, now_ns);
}

/* The end line's sum over the text before it; a state written before the sum had none. */
static bool sum_matches(const struct fields *f, const char *text, size_t len) {
    const char *v = get(f, "sum");
    char *end;
    uint64_t sum;

    if (!v)
        return true;
    if (strlen(v) != 16 || strspn(v, "0123456789abcdef") != 16)
        return false;
    errno = 0;
    sum = strtoull(v, &end, 16);
    return errno == 0 && *end == '\0' && sum == text_sum(text, len);
}

/* The save's clocks (the line after the first, from version 2 on). */
static int restore_host(const struct fields *f, struct state_clock *ret) {
    const char *boot_id = get(f, "boot_id");
    struct state_clock c = {0};

    if (get_u64(f, "boot_us", true, &c.boot_us) < 0 || get_u64(f, "wall_us", true, &c.wall_us) < 0)
        return -EBADMSG;
    copy_cut(c.boot_id, sizeof(c.boot_id), boot_id ? boot_id : "");
    *ret = c;
    return 0;
}

static int restore_entry(struct ledger *l, const char *kind, const struct fields *f,
                         const struct ledger_restart *rs, struct gpu_baseline *baselines) {
    uint64_t now_ns = rs->now_mono_ns;

    return strcmp(kind, "gpu") == 0           ? restore_gpu(l, f, rs, baselines)
           : strcmp(kind, "rapl") == 0        ? restore_rapl(l, f, rs)
           : strcmp(kind, "process") == 0     ? restore_process(l, f, now_ns, rs->rebooted)
           : strcmp(kind, "cpu_process") == 0 ? restore_cpu_process(l, f, now_ns, rs->rebooted)
           : strcmp(kind, "workload") == 0    ? restore_workload(l, f, now_ns, rs->downtime_us)
           : strcmp(kind, "allocation") == 0  ? restore_allocation(l, f, now_ns)
                                              : UNKNOWN_KIND;
}

int ledger_state_restore(struct ledger *l, const char *text, size_t size,
                         const struct state_clock *now, uint64_t file_wall_us,
                         struct gpu_baseline *baselines, struct ledger_restart *ret_restart,
                         unsigned *ret_bad_line) {
    _cleanup_(freep) char *copy = NULL;
    struct ledger_restart rs = {0};
    struct state_clock saved;
    char *save = NULL, *line;
    unsigned line_no = 0, unknown_line = 0;
    bool version_1 = false, ended = false, begun = false;
    uint64_t entries;
    int n = 0;

    /* A NUL inside, or a last line without its newline: cut short or not a state. */
    if (strlen(text) != size || size == 0 || text[size - 1] != '\n')
        goto bad;
    copy = strdup(text);
    if (!copy)
        return -ENOMEM;
    for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        struct fields f;
        char *kind;
        int r;

        line_no++;
        if (line_no == 1) {
            version_1 = strcmp(line, STATE_MAGIC_1) == 0;
            if (!version_1 && strcmp(line, STATE_MAGIC) != 0)
                goto bad;
            continue;
        }
        if (ended || split_line(line, &kind, &f) < 0)
            goto bad; /* nothing follows the end line */
        if (!begun) {
            begun = true;
            if (!version_1) { /* the save's clocks come first */
                if (strcmp(kind, "host") != 0 || restore_host(&f, &saved) < 0)
                    goto bad;
                ledger_restart_begin(&saved, file_wall_us, now, &rs);
                continue;
            }
            ledger_restart_begin(NULL, file_wall_us, now, &rs);
        }
        if (!version_1 && strcmp(kind, "end") == 0) {
            if (get_u64(&f, "entries", true, &entries) < 0 || entries != (uint64_t)n ||
                !sum_matches(&f, text, (size_t)(line - copy)))
                goto bad;
            if (unknown_line && !get(&f, "sum")) {
                line_no = unknown_line; /* not known to be a newer version's */
                goto bad;
            }
            ended = true;
            continue;
        }
        r = restore_entry(l, kind, &f, &rs, baselines);
        if (r == -ENOMEM)
            return r;
        if (r < 0 || (r == UNKNOWN_KIND && version_1))
            goto bad;
        if (r == UNKNOWN_KIND && !unknown_line)
            unknown_line = line_no;
        n++;
    }
    if (line_no == 0 || (!version_1 && !ended))
        goto bad;
    if (ret_restart)
        *ret_restart = rs;
    return n;

bad:
    *ret_bad_line = line_no ? line_no : 1;
    return -EBADMSG;
}
