/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "top_model.h"

/* What the user chose to see: the level, the sort column and the filter. */

enum top_sort {
    TOP_SORT_POWER, /* total power now (the default) */
    TOP_SORT_GPU_POWER,
    TOP_SORT_CPU_POWER,
    TOP_SORT_ENERGY,
    TOP_SORT_GPU_ENERGY,
    TOP_SORT_CPU_ENERGY,
    TOP_SORT_INTENSITY,
    TOP_SORT_NAME,
    _TOP_SORT_MAX,
};

/* The column header of a sort key ("POWER_W", ..., "NAME"). */
const char *top_sort_to_string(enum top_sort s);

#define TOP_FILTER_MAX 64

struct top_view {
    enum top_level level;
    enum top_sort sort;
    bool reverse; /* ascending numbers, descending names */
    char filter[TOP_FILTER_MAX];
};

/* True when the filter (case-insensitive) is in one of the row's texts: its name, pid,
 * pod, namespace, container, job or unit. An empty filter matches every row. */
bool top_row_matches(const struct top_row *r, const char *filter);

/*
 * The rows of the view's level that match its filter, sorted: numbers largest first and
 * names in order (reverse turns both round), ties by name then key. *ret_rows (free() it)
 * points into the model, valid until its next update. Returns 0 or -ENOMEM; ret_rows and
 * ret_n are written only on success.
 */
int top_view_rows(const struct top_model *m, const struct top_view *v,
                  const struct top_row ***ret_rows, size_t *ret_n);
