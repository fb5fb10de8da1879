/* SPDX-License-Identifier: MIT */
/*
 * Families: the classes (workloads) of one command on a GPU. A job that runs for 80 ms is
 * its own workload and never learned alone, but the thirty runs of one inference command,
 * each a job of its own, tell together what the command draws. Each class's estimate adds
 * to its family weighted by its precision (1/se^2); a class uses the family's pooled
 * estimate as a prior, from the other members only, with the spread between members (what
 * is left of it beyond their noise) as its uncertainty: the runs of one command that draw
 * alike pool strongly, a family of unlike programs ("python") hardly at all.
 */
#include <errno.h>
#include <stdlib.h>

#include "intensity_internal.h"

/* Other members a family needs before its estimate is used. */
#define FAMILY_MIN_OTHERS 3U

void intensity_families_free(struct intensity_gpu *g) {
    hashmap_done(&g->family_index);
    free(g->families);
    g->families = NULL;
    g->n_families = g->families_cap = 0;
}

/* The family no tracked class belongs to that was seen least recently. There always is one
 * when the table is full: it holds max_classes families, and the class about to join holds
 * a slot already, so at most max_classes - 1 other classes can keep a family tracked. */
static uint32_t family_victim(const struct intensity_gpu *g) {
    uint32_t victim = 0;

    for (uint32_t f = 0; f < g->n_families; f++)
        if (g->families[f].tracked == 0 &&
            (g->families[victim].tracked > 0 ||
             g->families[f].last_seen_s < g->families[victim].last_seen_s))
            victim = f;
    return victim;
}

static int family_slot(struct intensity_gpu *g, uint64_t key, uint32_t *ret) {
    uintptr_t v = (uintptr_t)hashmap_get(&g->family_index, key);
    int r;

    if (v) {
        *ret = (uint32_t)(v - 1);
        return 0;
    }
    /* Full: a command gone from the GPU makes room for a new one, so a node that runs
     * more commands over its life than the table holds keeps pooling the new ones. */
    if (g->n_families == g->opt.max_classes) {
        uint32_t old = family_victim(g);

        r = hashmap_put(&g->family_index, key, (void *)(uintptr_t)(old + 1));
        if (r < 0)
            return r;
        (void)hashmap_remove(&g->family_index, g->families[old].key);
        g->families[old] = (struct intensity_family){.key = key};
        *ret = old;
        return 0;
    }
    if (g->n_families == g->families_cap) {
        size_t cap = g->families_cap ? 2 * g->families_cap : 8;
        struct intensity_family *f = reallocarray(g->families, cap, sizeof(*f));

        if (!f)
            return -ENOMEM;
        g->families = f;
        g->families_cap = cap;
    }
    r = hashmap_put(&g->family_index, key, (void *)(uintptr_t)(g->n_families + 1));
    if (r < 0)
        return r;
    g->families[g->n_families] = (struct intensity_family){.key = key};
    *ret = (uint32_t)g->n_families++;
    return 0;
}

int intensity_family_join(struct intensity_gpu *g, uint32_t s, uint64_t family_key) {
    struct intensity_class *c = &g->classes[s];
    uint32_t f;
    int r;

    if (c->family) {
        g->families[c->family - 1].last_seen_s = g->clock_s;
        return 0;
    }
    if (family_key == 0)
        return 0;
    r = family_slot(g, family_key, &f);
    if (r < 0)
        return r;
    c->family = f + 1;
    c->fam_w = c->fam_wt = c->fam_wtt = 0;
    g->families[f].tracked++;
    g->families[f].last_seen_s = g->clock_s;
    return 0;
}

void intensity_family_leave(struct intensity_gpu *g, uint32_t s) {
    struct intensity_class *c = &g->classes[s];

    if (c->family && g->families[c->family - 1].tracked > 0)
        g->families[c->family - 1].tracked--;
    c->family = 0;
}

void intensity_family_update(struct intensity_gpu *g, uint32_t s, double theta, double se) {
    struct intensity_class *c = &g->classes[s];
    struct intensity_family *f;
    double w;

    if (!c->family || !(se > 0))
        return;
    f = &g->families[c->family - 1];
    w = 1 / (se * se);
    if (c->fam_w <= 0)
        f->members++;
    f->w += w - c->fam_w;
    f->wt += w * theta - c->fam_wt;
    f->wtt += w * theta * theta - c->fam_wtt;
    c->fam_w = w;
    c->fam_wt = w * theta;
    c->fam_wtt = w * theta * theta;
}

bool intensity_family_estimate(const struct intensity_gpu *g, uint32_t s, double *ret_kappa,
                               double *ret_var) {
    const struct intensity_class *c = &g->classes[s];
    const struct intensity_family *f;
    double w, wt, wtt, mean, spread, noise, between;
    unsigned others;

    if (!c->family)
        return false;
    f = &g->families[c->family - 1];
    others = f->members - (c->fam_w > 0);
    w = f->w - c->fam_w;
    wt = f->wt - c->fam_wt;
    wtt = f->wtt - c->fam_wtt;
    if (others < FAMILY_MIN_OTHERS || !(w > 0))
        return false;
    mean = wt / w;
    /* Method of moments: the weighted spread of the members' estimates less their own
     * noise (each member's se^2 weighted by 1/se^2 is one: others / w). */
    spread = wtt / w - mean * mean;
    noise = (double)others / w;
    between = spread > noise ? spread - noise : 0;
    *ret_kappa = mean > 0 ? mean : 0;
    *ret_var = between + 1 / w;
    return true;
}
