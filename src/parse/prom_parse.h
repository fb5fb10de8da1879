/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Reads the Prometheus text exposition format 0.0.4 (what /metrics serves) back into
 * samples: a metric name, its labels with their values unescaped, and the value. Comments
 * (# HELP, # TYPE) and blank lines are skipped. Pure: no allocation, no I/O.
 *
 * Names and label values longer than the slots below are cut (a label value at
 * PROM_VALUE_MAX - 1 bytes, never inside an escape); a sample with more labels than
 * PROM_LABELS_MAX keeps the first ones.
 */

#define PROM_NAME_MAX 128
#define PROM_VALUE_MAX 256
#define PROM_LABELS_MAX 16

struct prom_label {
    char name[PROM_NAME_MAX];
    char value[PROM_VALUE_MAX];
};

struct prom_sample {
    char name[PROM_NAME_MAX];
    size_t n_labels;
    struct prom_label labels[PROM_LABELS_MAX];
    double value; /* NaN, +Inf and -Inf as written */
    bool has_timestamp;
    long long timestamp_ms;
};

/*
 * Parses one line (without its newline; a trailing '\r' is ignored). Returns 1 and fills
 * *ret for a sample, 0 for a comment or a blank line (*ret untouched), or -EBADMSG for a
 * line that is not valid exposition (*ret untouched).
 */
int prom_parse_line(const char *line, size_t len, struct prom_sample *ret);

/* The value of label `name`, or NULL when the sample has none. */
const char *prom_sample_label(const struct prom_sample *s, const char *name);

/*
 * Calls fn for each sample of text[0..len), in order; malformed lines are skipped and
 * counted in *ret_bad (may be NULL). Stops at fn's first negative return and returns it;
 * otherwise returns the number of samples.
 */
typedef int (*prom_sample_fn)(const struct prom_sample *s, void *userdata);
int prom_parse_text(const char *text, size_t len, prom_sample_fn fn, void *userdata,
                    size_t *ret_bad);
