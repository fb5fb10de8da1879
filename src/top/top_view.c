/* SPDX-License-Identifier: MIT */
#include "top_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sort_names[_TOP_SORT_MAX] = {
    [TOP_SORT_POWER] = "POWER_W",         [TOP_SORT_GPU_POWER] = "GPU_W",
    [TOP_SORT_CPU_POWER] = "CPU_W",       [TOP_SORT_ENERGY] = "ENERGY_J",
    [TOP_SORT_GPU_ENERGY] = "GPU_J",      [TOP_SORT_CPU_ENERGY] = "CPU_J",
    [TOP_SORT_INTENSITY] = "INTENSITY_W", [TOP_SORT_NAME] = "NAME",
};

const char *top_sort_to_string(enum top_sort s) {
    return s < _TOP_SORT_MAX ? sort_names[s] : "?";
}

bool top_row_matches(const struct top_row *r, const char *filter) {
    const char *texts[] = {r->name, r->pod, r->namespace_, r->container, r->job, r->unit};
    char pid[16];

    if (!filter[0])
        return true;
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        if (strcasestr(texts[i], filter))
            return true;
    if (r->pid) {
        (void)snprintf(pid, sizeof(pid), "%u", r->pid);
        if (strstr(pid, filter))
            return true;
    }
    return false;
}

static double sort_value(const struct top_row *r, enum top_sort s) {
    switch (s) {
    case TOP_SORT_POWER:
        return top_row_power(r);
    case TOP_SORT_GPU_POWER:
        return r->power_valid[TOP_GPU] ? r->power_w[TOP_GPU] : 0;
    case TOP_SORT_CPU_POWER:
        return r->power_valid[TOP_CPU] ? r->power_w[TOP_CPU] : 0;
    case TOP_SORT_ENERGY:
        return top_row_energy(r);
    case TOP_SORT_GPU_ENERGY:
        return r->energy_j[TOP_GPU];
    case TOP_SORT_CPU_ENERGY:
        return r->energy_j[TOP_CPU];
    case TOP_SORT_INTENSITY:
        return r->intensity_valid ? r->intensity_w : -1; /* unknown last */
    default:
        return 0;
    }
}

static int compare(const void *a, const void *b, void *userdata) {
    const struct top_row *x = *(const struct top_row *const *)a;
    const struct top_row *y = *(const struct top_row *const *)b;
    const struct top_view *v = userdata;
    int d = 0;

    if (v->sort != TOP_SORT_NAME) {
        double vx = sort_value(x, v->sort), vy = sort_value(y, v->sort);

        d = (vx < vy) - (vx > vy); /* largest first */
    }
    if (d == 0)
        d = strcmp(x->name, y->name);
    if (v->reverse)
        d = -d;
    if (d == 0)
        d = (x->pid > y->pid) - (x->pid < y->pid);
    return d ? d : strcmp(x->key, y->key);
}

int top_view_rows(const struct top_model *m, const struct top_view *v,
                  const struct top_row ***ret_rows, size_t *ret_n) {
    const struct top_table *t = &m->levels[v->level < _TOP_LEVEL_MAX ? v->level : 0];
    const struct top_row **rows = calloc(t->n ? t->n : 1, sizeof(*rows));
    size_t n = 0;

    if (!rows)
        return -ENOMEM;
    for (size_t i = 0; i < t->n; i++)
        if (top_row_matches(&t->rows[i], v->filter))
            rows[n++] = &t->rows[i];
    struct top_view sort_as = *v; /* qsort_r passes a mutable pointer */

    qsort_r(rows, n, sizeof(*rows), compare, &sort_as);
    *ret_rows = rows;
    *ret_n = n;
    return 0;
}
