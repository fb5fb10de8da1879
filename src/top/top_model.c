/* SPDX-License-Identifier: MIT */
#include "top_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse_num.h"
#include "prom_parse.h"

static const char *const level_names[_TOP_LEVEL_MAX] = {
    [TOP_LEVEL_PROCESS] = "process", [TOP_LEVEL_CONTAINER] = "container", [TOP_LEVEL_POD] = "pod",
    [TOP_LEVEL_JOB] = "job",         [TOP_LEVEL_SERVICE] = "service",
};

/* The workload families (docs/METRICS.md, "Workloads"): their names do not change with
 * --metric-prefix. */
static const char *const workload_family[_TOP_LEVEL_MAX] = {
    [TOP_LEVEL_CONTAINER] = "joulestat_container_energy_joules_total",
    [TOP_LEVEL_POD] = "joulestat_pod_energy_joules_total",
    [TOP_LEVEL_JOB] = "joulestat_slurm_job_energy_joules_total",
    [TOP_LEVEL_SERVICE] = "joulestat_systemd_service_energy_joules_total",
};

static const char *const level_plurals[_TOP_LEVEL_MAX] = {
    [TOP_LEVEL_PROCESS] = "processes", [TOP_LEVEL_CONTAINER] = "containers",
    [TOP_LEVEL_POD] = "pods",          [TOP_LEVEL_JOB] = "jobs",
    [TOP_LEVEL_SERVICE] = "services",
};

const char *top_level_to_string(enum top_level l) {
    return l < _TOP_LEVEL_MAX ? level_names[l] : "?";
}

const char *top_level_plural(enum top_level l) {
    return l < _TOP_LEVEL_MAX ? level_plurals[l] : "?";
}

double top_row_power(const struct top_row *r) {
    double w = 0;

    for (unsigned c = 0; c < _TOP_COMPONENT_MAX; c++)
        if (r->power_valid[c])
            w += r->power_w[c];
    return w;
}

double top_row_energy(const struct top_row *r) {
    return r->energy_j[TOP_GPU] + r->energy_j[TOP_CPU];
}

void top_model_init(struct top_model *m) {
    *m = (struct top_model){0};
    for (unsigned l = 0; l < _TOP_LEVEL_MAX; l++)
        hashmap_init(&m->levels[l].index);
}

void top_model_done(struct top_model *m) {
    for (unsigned l = 0; l < _TOP_LEVEL_MAX; l++) {
        free(m->levels[l].rows);
        hashmap_done(&m->levels[l].index);
    }
    free(m->obs);
    *m = (struct top_model){0};
}

/* A row's key is indexed under the first of its TABLE_PROBES hashes that no other key
 * holds: a look-up of a key that is not there stops at the first free one, so a page of a
 * million new series costs a million look-ups, not a scan of every row for each. */
#define TABLE_PROBES 8

static uint64_t key_hash(const char *key, unsigned probe) {
    return hash_bytes(key, strlen(key), 0x746f70 + probe) | 1; /* never 0 */
}

/* Keys are kept cut to their field: a longer one is looked up as kept. */
static struct top_row *table_find(struct top_table *t, const char *key) {
    char kept[sizeof(t->rows[0].key)];

    copy_cut(kept, sizeof(kept), key);
    for (unsigned probe = 0; probe < TABLE_PROBES; probe++) {
        void *v = hashmap_get(&t->index, key_hash(kept, probe));
        struct top_row *r;

        if (!v)
            return NULL;
        r = &t->rows[(uintptr_t)v - 1];
        if (strcmp(r->key, kept) == 0)
            return r;
    }
    return NULL;
}

/* Indexes row i under its first free hash. With every probe taken (eight 64-bit
 * collisions) the row is not found again and a new one is made each frame: wrong, but
 * bounded by the page. */
static int table_index(struct top_table *t, size_t i) {
    for (unsigned probe = 0; probe < TABLE_PROBES; probe++) {
        uint64_t h = key_hash(t->rows[i].key, probe);

        if (!hashmap_get(&t->index, h))
            return hashmap_put(&t->index, h, (void *)(uintptr_t)(i + 1));
    }
    return 0;
}

/* The row of key, created (is_new) when the level has none. NULL on ENOMEM. */
static struct top_row *table_get(struct top_table *t, const char *key) {
    struct top_row *r = table_find(t, key);

    if (r) {
        if (!r->seen) { /* the first sample of this frame: start its sums again */
            r->seen = true;
            r->gpus = 0;
            r->processes = 0;
            r->energy_j[TOP_GPU] = r->energy_j[TOP_CPU] = 0;
            r->series[TOP_GPU] = r->series[TOP_CPU] = 0;
            r->intensity_sum = r->intensity_weight = 0;
        }
        return r;
    }
    if (t->n >= TOP_ROWS_MAX) {
        t->dropped++;
        return NULL;
    }
    if (grow_array(&t->rows, &t->cap, t->n + 1, sizeof(*t->rows)) < 0)
        return NULL;
    r = &t->rows[t->n];
    *r = (struct top_row){.seen = true, .is_new = true};
    copy_cut(r->key, sizeof(r->key), key);
    if (table_index(t, t->n) < 0)
        return NULL;
    t->n++;
    return r;
}

/* One series' counter, summed into the row's energy of component c. */
static void add_energy(struct top_row *r, unsigned c, double value) {
    r->energy_j[c] += value;
    r->series[c]++;
}

/* Drops the rows no sample named in this frame, and re-indexes. */
static int table_sweep(struct top_table *t) {
    size_t kept = 0;

    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].seen)
            t->rows[kept++] = t->rows[i];
    t->n = kept;
    hashmap_clear(&t->index);
    for (size_t i = 0; i < t->n; i++)
        if (table_index(t, i) < 0)
            return -ENOMEM;
    return 0;
}

static const char *label(const struct prom_sample *s, const char *name) {
    const char *v = prom_sample_label(s, name);

    return v ? v : "";
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Copies the labels a process series carries onto its row (only those it has). */
static void process_labels(struct top_row *r, const struct prom_sample *s) {
    static const struct {
        const char *label;
        size_t offset, size;
    } fields[] = {
        {"pod", offsetof(struct top_row, pod), TOP_TEXT_MAX},
        {"namespace", offsetof(struct top_row, namespace_), TOP_ID_MAX},
        {"container", offsetof(struct top_row, container), TOP_ID_MAX},
        {"pod_uid", offsetof(struct top_row, pod_uid), TOP_ID_MAX},
        {"container_id", offsetof(struct top_row, container_id), TOP_ID_MAX},
        {"job_id", offsetof(struct top_row, job), TOP_ID_MAX},
        {"unit", offsetof(struct top_row, unit), TOP_TEXT_MAX},
    };

    for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
        const char *v = prom_sample_label(s, fields[i].label);

        if (v && v[0])
            copy_cut((char *)r + fields[i].offset, fields[i].size, v);
    }
}

static struct top_row *process_row(struct top_model *m, const struct prom_sample *s) {
    const char *pid_text = label(s, "pid"), *name = label(s, "process_name");
    char key[2 * TOP_TEXT_MAX];
    struct top_row *r;
    uint32_t pid;

    if (safe_atou32(pid_text, &pid) < 0)
        return NULL;
    (void)snprintf(key, sizeof(key), "%u %s", pid, name);
    r = table_get(&m->levels[TOP_LEVEL_PROCESS], key);
    if (r) {
        r->pid = pid;
        copy_cut(r->name, sizeof(r->name), name);
        process_labels(r, s);
    }
    return r;
}

/* A joulestat_<kind>_energy_joules_total sample: the workload's row, by its id label. */
static int workload_sample(struct top_model *m, enum top_level l, const struct prom_sample *s) {
    const char *component = label(s, "component");
    char key[2 * TOP_TEXT_MAX];
    const char *name;
    struct top_row *r;

    switch (l) {
    case TOP_LEVEL_CONTAINER:
        name = label(s, "container");
        (void)snprintf(key, sizeof(key), "%s", label(s, "container_id"));
        break;
    case TOP_LEVEL_POD:
        name = label(s, "pod");
        (void)snprintf(key, sizeof(key), "%s", label(s, "pod_uid"));
        break;
    case TOP_LEVEL_JOB:
        name = label(s, "job_id");
        (void)snprintf(key, sizeof(key), "%s", name);
        break;
    default:
        name = label(s, "unit");
        (void)snprintf(key, sizeof(key), "%s", name);
        break;
    }
    if (!key[0])
        return 0;
    r = table_get(&m->levels[l], key);
    if (!r)
        return m->levels[l].n >= TOP_ROWS_MAX ? 0 : -ENOMEM; /* past the cap: not kept */
    /* The GPU and CPU series of a workload may not carry its names alike (one made before
     * the API server answered): a name, once known, is kept. Until the API names it, a
     * pod is known by its UID alone. */
    if (name[0])
        copy_cut(r->name, sizeof(r->name), name);
    else if (!r->name[0] || (l == TOP_LEVEL_POD && strcmp(r->name, key) == 0))
        copy_cut(r->name, sizeof(r->name), l == TOP_LEVEL_POD ? key : name);
    process_labels(r, s);
    if (strcmp(component, "gpu") == 0)
        add_energy(r, TOP_GPU, s->value);
    else if (strcmp(component, "cpu") == 0)
        add_energy(r, TOP_CPU, s->value);
    return 0;
}

static bool cpu_total_domain(const char *domain) {
    /* package and DRAM: the domains that do not contain each other (METRICS.md). */
    return strcmp(domain, "package") == 0 || strcmp(domain, "dram") == 0;
}

static int on_sample(const struct prom_sample *s, void *userdata) {
    struct top_model *m = userdata;
    struct top_row *r;

    m->samples++;
    if (!(s->value >= 0 && s->value < 1e300))
        return 0; /* NaN, infinities and negative values mean nothing here */
    if (strcmp(s->name, "joulestat_last_sample_timestamp_seconds") == 0) {
        m->frame_has_time = true;
        m->frame_time = s->value;
        return 0;
    }
    if (strcmp(s->name, "joulestat_gpu_energy_joules_total") == 0) {
        m->frame_node_valid[TOP_GPU] = true;
        m->frame_node_j[TOP_GPU] += s->value;
        return 0;
    }
    if (strcmp(s->name, "joulestat_rapl_energy_joules_total") == 0) {
        m->frame_node_valid[TOP_CPU] = true;
        if (cpu_total_domain(label(s, "domain")))
            m->frame_node_j[TOP_CPU] += s->value;
        return 0;
    }
    if (strcmp(s->name, "joulestat_cpu_process_energy_joules_total") == 0) {
        if (!cpu_total_domain(label(s, "domain")))
            return 0;
        r = process_row(m, s);
        if (r)
            add_energy(r, TOP_CPU, s->value);
        return 0;
    }
    for (unsigned l = TOP_LEVEL_CONTAINER; l < _TOP_LEVEL_MAX; l++)
        if (strcmp(s->name, workload_family[l]) == 0)
            return workload_sample(m, (enum top_level)l, s);
    /* The per-process GPU families have the --metric-prefix of the exporter, which top
     * does not know: they are the ones with a pid (and for energy, energy_estimated). */
    if (!prom_sample_label(s, "pid"))
        return 0;
    /* With my-gpu-exporter's prefix the same energy is served under its README's name too
     * (no _total): counted once, by the _total one that every exporter serves. */
    if (ends_with(s->name, "_energy_joules_total") && prom_sample_label(s, "energy_estimated")) {
        uint32_t gpu;

        r = process_row(m, s);
        if (!r)
            return 0;
        add_energy(r, TOP_GPU, s->value);
        if (safe_atou32(label(s, "gpu"), &gpu) >= 0 && gpu < 64)
            r->gpus |= UINT64_C(1) << gpu;
        return 0;
    }
    if (ends_with(s->name, "_power_intensity_watts")) {
        struct top_intensity_obs *o;
        uint32_t pid;

        if (safe_atou32(label(s, "pid"), &pid) < 0)
            return 0;
        if (m->n_obs >= TOP_ROWS_MAX) /* as many as rows are kept */
            return 0;
        if (grow_array(&m->obs, &m->cap_obs, m->n_obs + 1, sizeof(*m->obs)) < 0)
            return -ENOMEM;
        o = &m->obs[m->n_obs++];
        o->pid = pid;
        copy_cut(o->name, sizeof(o->name), label(s, "process_name"));
        o->watts = s->value;
    }
    return 0;
}

/* The rows of the workloads a process belongs to (NULL where the level has no row). */
static struct top_row *group_of(struct top_model *m, const struct top_row *p, enum top_level l) {
    const char *key = l == TOP_LEVEL_CONTAINER ? p->container_id
                      : l == TOP_LEVEL_POD     ? p->pod_uid
                      : l == TOP_LEVEL_JOB     ? p->job
                                               : p->unit;

    return key[0] ? table_find(&m->levels[l], key) : NULL;
}

static void add_intensity(struct top_row *r, double watts, double weight) {
    r->intensity_sum += watts * weight;
    r->intensity_weight += weight;
}

/* A workload's names from one of its processes, where its own series carry none (a
 * label set made before the API server answered, kept by the exporter). */
static void names_from(struct top_row *g, const struct top_row *p, enum top_level l) {
    const char *name = l == TOP_LEVEL_CONTAINER ? p->container : l == TOP_LEVEL_POD ? p->pod : "";
    bool unnamed = !g->name[0] || (l == TOP_LEVEL_POD && strcmp(g->name, g->key) == 0);

    if (unnamed && name[0])
        copy_cut(g->name, sizeof(g->name), name);
    if (!g->namespace_[0] && p->namespace_[0])
        copy_cut(g->namespace_, sizeof(g->namespace_), p->namespace_);
    if (l == TOP_LEVEL_CONTAINER && !g->pod[0] && p->pod[0])
        copy_cut(g->pod, sizeof(g->pod), p->pod);
}

/* What the groups learn from their processes: count, GPUs, intensity, missing names. */
static void roll_up(struct top_model *m) {
    struct top_table *procs = &m->levels[TOP_LEVEL_PROCESS];

    for (size_t i = 0; i < procs->n; i++) {
        struct top_row *p = &procs->rows[i];

        if (!p->seen)
            continue;
        p->processes = 1;
        for (unsigned l = TOP_LEVEL_CONTAINER; l < _TOP_LEVEL_MAX; l++) {
            struct top_row *g = group_of(m, p, (enum top_level)l);

            if (g && g->seen) {
                g->processes++;
                g->gpus |= p->gpus;
                names_from(g, p, (enum top_level)l);
            }
        }
    }
    for (size_t i = 0; i < m->n_obs; i++) {
        char key[2 * TOP_TEXT_MAX];
        struct top_row *p;
        double weight;

        (void)snprintf(key, sizeof(key), "%u %s", m->obs[i].pid, m->obs[i].name);
        p = table_find(procs, key);
        if (!p || !p->seen)
            continue;
        /* Weighted by GPU energy: the intensity of the processes that drew the most. */
        weight = p->energy_j[TOP_GPU] + 1e-9;
        add_intensity(p, m->obs[i].watts, weight);
        for (unsigned l = TOP_LEVEL_CONTAINER; l < _TOP_LEVEL_MAX; l++) {
            struct top_row *g = group_of(m, p, (enum top_level)l);

            if (g && g->seen)
                add_intensity(g, m->obs[i].watts, weight);
        }
    }
    for (unsigned l = 0; l < _TOP_LEVEL_MAX; l++)
        for (size_t i = 0; i < m->levels[l].n; i++) {
            struct top_row *r = &m->levels[l].rows[i];

            r->intensity_valid = r->intensity_weight > 0;
            r->intensity_w = r->intensity_valid ? r->intensity_sum / r->intensity_weight : 0;
        }
}

/* A counter's increase: a counter that went down was reset, and counts from 0 again. */
static double increase(double now, double before) {
    return now >= before ? now - before : now;
}

/* Powers of one component, on a frame where its device counters moved (fresh) or not. */
static void update_power(struct top_model *m, unsigned c, bool fresh, double t) {
    double dt = t - m->fresh_seconds[c];

    for (unsigned l = 0; l < _TOP_LEVEL_MAX; l++)
        for (size_t i = 0; i < m->levels[l].n; i++) {
            struct top_row *r = &m->levels[l].rows[i];

            if (!m->primed) {
                r->fresh_j[c] = r->energy_j[c];
                r->fresh_series[c] = r->series[c];
                r->power_valid[c] = false;
            } else if (fresh && dt > 0) {
                /* A row new in this window: its counter started in it, at 0. A sum that
                 * went down with fewer series lost one (a GPU the process left, aged
                 * out): no rate this window, rather than its whole energy over one
                 * window; with as many, a counter was reset and counts from 0. */
                double before = r->is_new ? 0 : r->fresh_j[c];
                bool lost = r->energy_j[c] < before && r->series[c] < r->fresh_series[c];

                r->power_valid[c] = !lost;
                r->power_w[c] = lost ? 0 : increase(r->energy_j[c], before) / dt;
                r->fresh_j[c] = r->energy_j[c];
                r->fresh_series[c] = r->series[c];
            } else if (r->is_new) {
                /* Not moved since the last fresh frame: its energy is from before it. */
                r->fresh_j[c] = r->energy_j[c];
                r->fresh_series[c] = r->series[c];
                r->power_valid[c] = false;
            }
        }
    if (m->primed && fresh && dt > 0 && m->frame_node_valid[c] && m->node_valid[c]) {
        m->node_power_w[c] = increase(m->frame_node_j[c], m->node_j[c]) / dt;
        m->node_power_valid[c] = true;
    }
    if (!m->primed || (fresh && dt > 0))
        m->fresh_seconds[c] = t;
}

int top_model_update(struct top_model *m, const char *text, size_t len, double now_seconds) {
    double t;
    int n;

    m->samples = 0;
    m->n_obs = 0;
    m->frame_has_time = false;
    for (unsigned c = 0; c < _TOP_COMPONENT_MAX; c++) {
        m->frame_node_valid[c] = false;
        m->frame_node_j[c] = 0;
    }
    for (unsigned l = 0; l < _TOP_LEVEL_MAX; l++) {
        m->levels[l].dropped = 0;
        for (size_t i = 0; i < m->levels[l].n; i++)
            m->levels[l].rows[i].seen = false;
    }
    n = prom_parse_text(text, len, on_sample, m, &m->bad_lines);
    if (n < 0)
        return n;
    if (n == 0) {
        /* Nothing to show: keep the last frame (its rows are all still there). */
        for (unsigned l = 0; l < _TOP_LEVEL_MAX; l++)
            for (size_t i = 0; i < m->levels[l].n; i++)
                m->levels[l].rows[i].seen = true;
        return -ENODATA;
    }
    for (unsigned l = 0; l < _TOP_LEVEL_MAX; l++)
        if (table_sweep(&m->levels[l]) < 0)
            return -ENOMEM;
    roll_up(m);
    t = m->frame_has_time ? m->frame_time : now_seconds;
    /* The clock went back (stepped, or another exporter behind the same URL): no rate
     * spans it, and this frame is a new start. (Waiting for the clock to pass the last
     * fresh frame froze every power column meanwhile.) */
    if (m->primed && t < m->frame_seconds)
        m->primed = false;
    for (unsigned c = 0; c < _TOP_COMPONENT_MAX; c++) {
        /* Fresh: a later sample whose device counters moved (or, without them, any). */
        bool fresh = t > m->fresh_seconds[c] &&
                     (!m->frame_node_valid[c] || !m->node_valid[c] ||
                      m->frame_node_j[c] < m->node_j[c] || m->frame_node_j[c] > m->node_j[c]);

        update_power(m, c, fresh, t);
        if (!m->primed || fresh || !m->node_valid[c]) {
            m->node_valid[c] = m->frame_node_valid[c];
            m->node_j[c] = m->frame_node_j[c];
        }
    }
    for (unsigned l = 0; l < _TOP_LEVEL_MAX; l++)
        for (size_t i = 0; i < m->levels[l].n; i++)
            m->levels[l].rows[i].is_new = false;
    m->frame_seconds = t;
    m->primed = true;
    return 0;
}
