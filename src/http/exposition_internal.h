/* SPDX-License-Identifier: MIT */
#pragma once

/* Rendering helpers shared by the exposition's parts (exposition.c: GPUs, processes,
 * self-metrics; exposition_cpu.c: RAPL, CPU processes, workloads). Not a public API. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "exposition.h"
#include "promtext.h"
#include "snapshot.h"
#include "strbuf.h"

struct family {
    const char *prefix; /* "joulestat_" or the per-process prefix */
    const char *suffix;
    const char *type;
    const char *help;
};

/* HELP/TYPE are written lazily at a family's first series, so an empty family (no GPUs,
 * no RAPL) leaves nothing behind and each family appears exactly once. */
struct render {
    struct strbuf *out;
    /* With a sink, out is handed over and emptied at a series' start once it holds
     * sink->chunk bytes. */
    const struct exposition_sink *sink;
    /* An object's label set, escaped once for its several series (labels_begin()). */
    struct strbuf labels;
    const struct family *fam;
    bool header_done;
    size_t series;
    /* prefix + suffix of the family, joined once for its series; name_len 0: too long,
     * written in two parts. */
    char name[128];
    size_t name_len;
};

static inline void family_begin(struct render *r, const struct family *f) {
    size_t p = strlen(f->prefix), s = strlen(f->suffix);

    r->fam = f;
    r->header_done = false;
    r->name_len = 0;
    if (p + s < sizeof(r->name)) {
        memcpy(r->name, f->prefix, p);
        memcpy(r->name + p, f->suffix, s);
        r->name_len = p + s;
    }
}

static inline void put_name(struct render *r) {
    if (r->name_len > 0) {
        strbuf_append(r->out, r->name, r->name_len);
        return;
    }
    strbuf_puts(r->out, r->fam->prefix);
    strbuf_puts(r->out, r->fam->suffix);
}

void render_flush(struct render *r);

static inline void series_begin(struct render *r) {
    if (r->sink && r->out->len >= r->sink->chunk)
        render_flush(r);
    if (!r->header_done) {
        strbuf_append(r->out, "# HELP ", 7);
        put_name(r);
        strbuf_putc(r->out, ' ');
        strbuf_puts(r->out, r->fam->help);
        strbuf_append(r->out, "\n# TYPE ", 8);
        put_name(r);
        strbuf_putc(r->out, ' ');
        strbuf_puts(r->out, r->fam->type);
        strbuf_putc(r->out, '\n');
        r->header_done = true;
    }
    put_name(r);
    r->series++;
}

/* name="value" with a leading comma unless it is the first label. */
static inline void put_label_n(struct strbuf *sb, bool first, const char *name, size_t name_len,
                               const char *value, size_t max) {
    if (!first)
        strbuf_putc(sb, ',');
    strbuf_append(sb, name, name_len);
    strbuf_append(sb, "=\"", 2);
    promtext_put_label_value(sb, value, max);
    strbuf_putc(sb, '"');
}

static inline void put_label(struct strbuf *sb, bool first, const char *name, const char *value,
                             size_t max) {
    put_label_n(sb, first, name, strlen(name), value, max);
}

/* A label of the identity's field f. */
static inline void put_field(struct strbuf *sb, bool first, const struct snap_identity *id,
                             enum label_field f) {
    put_label_n(sb, first, label_fields[f].label, label_fields[f].label_len, label_value(id, f),
                label_fields[f].size);
}

static inline void put_label_u64(struct strbuf *sb, bool first, const char *name, uint64_t value) {
    if (!first)
        strbuf_putc(sb, ',');
    strbuf_puts(sb, name);
    strbuf_append(sb, "=\"", 2);
    strbuf_put_u64(sb, value);
    strbuf_putc(sb, '"');
}

#define PUT_LABEL(sb, first, name, field) put_label(sb, first, name, field, sizeof(field))

/* The buffer to write an object's label set into, once, for labels_put() at each of its
 * series: one copy instead of escaping every value again. */
static inline struct strbuf *labels_begin(struct render *r) {
    strbuf_reset(&r->labels);
    return &r->labels;
}

static inline void labels_put(struct render *r) {
    if (r->labels.error) /* never a cut label set: the render fails instead */
        r->out->error = r->labels.error;
    else
        strbuf_append(r->out, r->labels.buf, r->labels.len);
}

static inline void end_u64(struct render *r, uint64_t v) {
    strbuf_append(r->out, "} ", 2);
    strbuf_put_u64(r->out, v);
    strbuf_putc(r->out, '\n');
}

static inline void end_micro(struct render *r, uint64_t micro) {
    strbuf_append(r->out, "} ", 2);
    strbuf_put_micro(r->out, micro);
    strbuf_putc(r->out, '\n');
}

static inline void end_double(struct render *r, double v) {
    strbuf_append(r->out, "} ", 2);
    promtext_put_double(r->out, v);
    strbuf_putc(r->out, '\n');
}

/* A series without labels. */
static inline void plain_series_double(struct render *r, const struct family *f, double v) {
    family_begin(r, f);
    series_begin(r);
    strbuf_putc(r->out, ' ');
    promtext_put_double(r->out, v);
    strbuf_putc(r->out, '\n');
}

/* The label sets (struct snap_identity, ~700 bytes each, one allocation per process or
 * workload) are cold at each render: their loads, not the text, were most of a render's
 * time. Asking for one set a few objects ahead hides that. */
#define IDENTITY_PREFETCH_AHEAD 4

static inline void prefetch_identity(const struct snap_identity *id) {
    for (size_t off = 0; off < sizeof(*id); off += 64)
        __builtin_prefetch((const char *)id + off);
}

void exposition_render_rapl(struct render *r, const struct snapshot *s);
void exposition_render_cpu_processes(struct render *r, const struct snapshot *s);
void exposition_render_workloads(struct render *r, const struct snapshot *s);
