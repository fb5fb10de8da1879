/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"

/*
 * What `joulestat top` shows, built from the exposition joulestat serves (local or
 * remote, the same text): one table of rows per workload level, each row with its energy
 * so far (the counters' values), its power now (the counters' deltas between refreshes),
 * the GPUs it used and its learned power intensity. No I/O: the caller hands in the text.
 *
 * Power is the delta over the last window in which the component's device counters moved:
 * the GPU part between the last two frames whose joulestat_gpu_energy_joules_total
 * changed, the CPU part between the last two whose joulestat_rapl_energy_joules_total
 * changed. An exporter that scans the CPU every 10 s thus shows the CPU power of its last
 * 10 s, not 0 for nine frames and ten times the power in the tenth.
 */

enum top_level {
    TOP_LEVEL_PROCESS,
    TOP_LEVEL_CONTAINER,
    TOP_LEVEL_POD,
    TOP_LEVEL_JOB,
    TOP_LEVEL_SERVICE,
    _TOP_LEVEL_MAX,
};

/* "process", "container", "pod", "job", "service". */
const char *top_level_to_string(enum top_level l);
/* "processes", "containers", "pods", "jobs", "services". */
const char *top_level_plural(enum top_level l);

enum top_component {
    TOP_GPU,
    TOP_CPU,
    _TOP_COMPONENT_MAX,
};

#define TOP_TEXT_MAX 128
#define TOP_ID_MAX 80

struct top_row {
    char key[2 * TOP_TEXT_MAX]; /* unique within the level */
    uint32_t pid;               /* processes only */
    char name[TOP_TEXT_MAX];    /* process name, container, pod, job id or unit */
    char pod[TOP_TEXT_MAX];
    char namespace_[TOP_ID_MAX];
    char container[TOP_ID_MAX];
    /* The workloads a process belongs to (keys of the other levels' rows), from its labels. */
    char pod_uid[TOP_ID_MAX];
    char container_id[TOP_ID_MAX];
    char job[TOP_ID_MAX];
    char unit[TOP_TEXT_MAX];

    uint64_t gpus;      /* bit g: has energy on GPU g (g < 64) */
    unsigned processes; /* processes of the group (the process rows that name it) */
    double energy_j[_TOP_COMPONENT_MAX];
    bool power_valid[_TOP_COMPONENT_MAX];
    double power_w[_TOP_COMPONENT_MAX];
    bool intensity_valid;
    double intensity_w; /* GPU-energy-weighted mean of its processes' learned intensities */

    /* Bookkeeping between frames. */
    double fresh_j[_TOP_COMPONENT_MAX]; /* energy at the component's last fresh frame */
    /* Series summed into energy_j in this frame, and at the last fresh frame: a sum that
     * fell with fewer series lost one (no rate), with as many was reset (from 0). */
    unsigned series[_TOP_COMPONENT_MAX], fresh_series[_TOP_COMPONENT_MAX];
    double intensity_sum, intensity_weight;
    bool seen, is_new;
};

/* Rows kept per level: a node has thousands of processes at most, and a page of a million
 * series (a hostile or misconfigured /metrics, 64 MiB) would otherwise cost gigabytes. */
#define TOP_ROWS_MAX 100000

struct top_table {
    struct top_row *rows;
    size_t n, cap;
    size_t dropped;       /* rows of this frame beyond TOP_ROWS_MAX, not shown */
    struct hashmap index; /* hash of key -> row index + 1 */
};

/* One learned-intensity series, kept until the energies of the frame are known. */
struct top_intensity_obs {
    uint32_t pid;
    char name[TOP_TEXT_MAX];
    double watts;
};

struct top_model {
    struct top_table levels[_TOP_LEVEL_MAX];
    bool primed;          /* a first frame was taken */
    double frame_seconds; /* the last frame's time */
    double fresh_seconds[_TOP_COMPONENT_MAX];
    bool node_valid[_TOP_COMPONENT_MAX]; /* the node's counters are in the exposition */
    double node_j[_TOP_COMPONENT_MAX];   /* GPUs' energy; RAPL package + DRAM */
    bool node_power_valid[_TOP_COMPONENT_MAX];
    double node_power_w[_TOP_COMPONENT_MAX];
    size_t samples, bad_lines; /* of the last frame */

    /* Scratch of one frame. */
    struct top_intensity_obs *obs;
    size_t n_obs, cap_obs;
    bool frame_has_time;
    double frame_time;
    bool frame_node_valid[_TOP_COMPONENT_MAX];
    double frame_node_j[_TOP_COMPONENT_MAX];
};

void top_model_init(struct top_model *m);
void top_model_done(struct top_model *m);

/*
 * Takes one frame: the exposition text[0..len), scraped at now_seconds (used when the
 * exposition has no joulestat_last_sample_timestamp_seconds). Returns 0, -ENODATA when
 * the text holds no sample at all (the model is then unchanged), or -ENOMEM.
 */
int top_model_update(struct top_model *m, const char *text, size_t len, double now_seconds);

/* Total power of a row (the valid parts), and total energy. */
double top_row_power(const struct top_row *r);
double top_row_energy(const struct top_row *r);
