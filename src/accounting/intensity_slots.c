/* SPDX-License-Identifier: MIT */
/* The learner's class slots: growing the per-slot tables, finding a class's slot, and
 * evicting the least recently seen class when the table is full. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "intensity_internal.h"

/* Grows *p (n_old elements, none when NULL) to n_new, the new ones zeroed. The old block
 * stays valid on failure. */
static int grow_zeroed(void *p, size_t n_old, size_t n_new, size_t size) {
    void **pp = p;
    char *q = realloc(*pp, n_new * size);

    if (!q)
        return -ENOMEM;
    if (!*pp)
        n_old = 0;
    memset(q + n_old * size, 0, (n_new - n_old) * size);
    *pp = q;
    return 0;
}

int intensity_grow_slots(struct intensity_gpu *g, size_t new_cap) {
    size_t old_cap = g->cap, old_dim = g->dim, new_dim = PARAM_CLASS0 + new_cap;
    int r;

    r = grow_zeroed(&g->m, normal_size(old_dim), normal_size(new_dim), sizeof(*g->m));
    if (r >= 0)
        r = grow_zeroed(&g->classes, old_cap, new_cap, sizeof(*g->classes));
    if (r >= 0)
        r = grow_zeroed(&g->b, old_dim, new_dim, sizeof(*g->b));
    if (r >= 0)
        r = grow_zeroed(&g->theta, old_dim, new_dim, sizeof(*g->theta));
    if (r >= 0)
        r = grow_zeroed(&g->memory, old_dim, new_dim, sizeof(*g->memory));
    if (r >= 0)
        r = grow_zeroed(&g->se, old_dim, new_dim, sizeof(*g->se));
    if (r >= 0)
        r = grow_zeroed(&g->has_memory, old_dim, new_dim, sizeof(*g->has_memory));
    if (r >= 0)
        r = grow_zeroed(&g->learned, old_dim, new_dim, sizeof(*g->learned));
    if (r >= 0)
        r = grow_zeroed(&g->cur.act, old_cap, new_cap, sizeof(*g->cur.act));
    if (r >= 0)
        r = grow_zeroed(&g->cur.touched, old_cap, new_cap, sizeof(*g->cur.touched));
    if (r >= 0)
        r = grow_zeroed(&g->pending.act, old_cap, new_cap, sizeof(*g->pending.act));
    if (r >= 0)
        r = grow_zeroed(&g->pending.touched, old_cap, new_cap, sizeof(*g->pending.touched));
    if (r >= 0)
        r = grow_zeroed(&g->win_act, old_cap, new_cap, sizeof(*g->win_act));
    if (r >= 0)
        r = grow_zeroed(&g->win_touched, old_cap, new_cap, sizeof(*g->win_touched));
    if (r >= 0)
        r = grow_zeroed(&g->win_kappa, old_cap, new_cap, sizeof(*g->win_kappa));
    if (r >= 0)
        r = grow_zeroed(&g->win_est, old_cap, new_cap, sizeof(*g->win_est));
    if (r < 0)
        return r;
    g->cap = new_cap;
    g->dim = new_dim;
    return 0;
}

/* The oldest open row's start: classes seen since then are in a row and are not evicted. */
static double protected_since(const struct intensity_gpu *g) {
    if (g->pending.open)
        return g->pending.end_s - g->pending.dt_s;
    if (g->cur.open)
        return g->cur.end_s - g->cur.dt_s;
    return g->clock_s;
}

/* Forgets slot s entirely: its rows and columns, its estimate and its memory. Its rows keep
 * its energy as its own: folded in as known, its last estimate x its activity (as a class
 * left out of a solve enters it), not left as energy without activity for the idle, the
 * uplift or the classes beside it to take. */
static void clear_slot(struct intensity_gpu *g, size_t s) {
    size_t p = PARAM_CLASS0 + s;
    double th = g->theta[p];

    if (th > 0) { /* estimates are never negative */
        g->syy = MAX(g->syy - 2 * th * g->b[p] + th * th * g->m[normal_at(p, p)], 0.0);
        for (size_t i = 0; i < g->dim; i++)
            if (i != p)
                g->b[i] -= g->m[normal_at(i, p)] * th;
    }
    (void)hashmap_remove(&g->index, g->classes[s].key);
    intensity_family_leave(g, (uint32_t)s);
    for (size_t i = 0; i < g->dim; i++)
        g->m[normal_at(i, p)] = 0;
    g->b[p] = g->theta[p] = g->memory[p] = g->se[p] = 0;
    g->has_memory[p] = g->learned[p] = false;
    g->classes[s] = (struct intensity_class){0};
    g->n_used--;
}

/* Whether slot s has activity in an open row: evicted, that activity would be learned as
 * its next occupant's. (The row's start, rebuilt from its end, may round a hair past the
 * time its first window stamped on the class.) */
static bool in_open_row(const struct intensity_gpu *g, size_t s) {
    return (g->pending.open && g->pending.act[s] > 0) || (g->cur.open && g->cur.act[s] > 0);
}

/* A free slot: an unused one, a new one, or the least recently seen class evicted.
 * NO_SLOT when every class was seen in an open row. */
static int free_slot(struct intensity_gpu *g, uint32_t *ret) {
    double since = protected_since(g), oldest = since;
    uint32_t victim = NO_SLOT;
    int r;

    if (g->n_used == g->cap && g->cap < g->opt.max_classes) {
        size_t want = g->cap ? 2 * g->cap : INITIAL_SLOTS;

        r = intensity_grow_slots(g, want < g->opt.max_classes ? want : g->opt.max_classes);
        if (r < 0)
            return r;
    }
    for (size_t s = 0; s < g->cap; s++) {
        if (!g->classes[s].in_use) {
            *ret = (uint32_t)s;
            return 0;
        }
        if (g->classes[s].last_seen_s < oldest && !in_open_row(g, s)) {
            oldest = g->classes[s].last_seen_s;
            victim = (uint32_t)s;
        }
    }
    if (victim != NO_SLOT)
        clear_slot(g, victim);
    *ret = victim;
    return 0;
}

int intensity_class_slot(struct intensity_gpu *g, uint64_t key, uint32_t hint, uint32_t *ret) {
    uintptr_t v;
    uint32_t s;
    int r;

    if (hint != NO_SLOT && hint < g->cap && g->classes[hint].in_use &&
        g->classes[hint].key == key) {
        g->classes[hint].last_seen_s = g->clock_s;
        *ret = hint;
        return 0;
    }
    v = (uintptr_t)hashmap_get(&g->index, key);
    if (v) {
        s = (uint32_t)(v - 1);
        g->classes[s].last_seen_s = g->clock_s;
        *ret = s;
        return 0;
    }
    r = free_slot(g, &s);
    if (r < 0)
        return r;
    if (s != NO_SLOT) {
        r = hashmap_put(&g->index, key, (void *)(uintptr_t)(s + 1));
        if (r < 0)
            return r;
        g->classes[s] =
            (struct intensity_class){.key = key, .in_use = true, .last_seen_s = g->clock_s};
        /* Until it is learned, a new class is assumed to be like the others. */
        g->theta[PARAM_CLASS0 + s] = g->kappa_ref;
        g->n_used++;
    }
    *ret = s;
    return 0;
}
