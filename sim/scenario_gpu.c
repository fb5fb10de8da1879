/* SPDX-License-Identifier: MIT */
/* The `gpu N` directive: identity, physics keys, and what NVML reports by GPU family. */
#include <errno.h>
#include <string.h>

#include "macro.h"
#include "parse_num.h"
#include "scenario_parser.h"
#include "scenario_values.h"

#define MS 1000u
#define SEC 1000000u
#define POWER_UPDATE_US (100 * MS) /* the sensor's update period (model.h) */
#define POWER_AVERAGE_MAX_US (60 * SEC)
#define ENERGY_STEP_MAX_US (10 * SEC)
#define ENERGY_STEP_MIN_US UINT64_C(1000)
/* 10^12 J, 45 years at 700 W: the counter (this + the model's energy) stays far from 2^64 mJ. */
#define ENERGY_START_MAX_MJ UINT64_C(1000000000000000)
#define POWER_NOISE_MAX_PPM (SIM_PPM / 2)
/* Longer than any driver setting (short, medium, long are a few ms). */
#define TIME_SLICE_MAX_US UINT64_C(100000)
#define TIME_SLICE_MIN_US UINT64_C(100)

/*
 * What the driver reports of a GPU, by a word of its product name. Sources, in
 * docs/SCENARIOS.md: the NVML reference (1 s average on Ampere except GA100 and newer,
 * instantaneous on GA100 and older), Yang et al. SC'24 (the A100 and H100 sensors see 25 %
 * of the time), the energy counter updating about every 100 ms (Volta and newer). A name
 * not listed reports exactly what the model draws.
 */
struct gpu_family {
    const char *word;
    uint64_t average_us;
    uint32_t duty_ppm;
    uint64_t step_us;
    bool gpm; /* GPU performance monitoring: Hopper and later (NVML reference, GPM) */
};

#define AVG_1S SEC
#define FULL SIM_PPM
#define QUARTER (SIM_PPM / 4)
#define STEP (100 * MS)

static const struct gpu_family families[] = {
    /* GA100: instantaneous readings */
    {"A100", 0, QUARTER, STEP},
    {"A30", 0, FULL, STEP},
    {"A800", 0, FULL, STEP},
    /* Hopper and Blackwell: newer than Ampere, 1 s average */
    {"H100", AVG_1S, QUARTER, STEP, true},
    {"H200", AVG_1S, FULL, STEP, true},
    {"H800", AVG_1S, FULL, STEP, true},
    {"H20", AVG_1S, FULL, STEP, true},
    {"GH200", AVG_1S, FULL, STEP, true},
    {"B100", AVG_1S, FULL, STEP, true},
    {"B200", AVG_1S, FULL, STEP, true},
    {"GB200", AVG_1S, FULL, STEP, true},
    /* Ampere other than GA100, and Ada: 1 s average */
    {"A2", AVG_1S, FULL, STEP},
    {"A10", AVG_1S, FULL, STEP},
    {"A10G", AVG_1S, FULL, STEP},
    {"A16", AVG_1S, FULL, STEP},
    {"A40", AVG_1S, FULL, STEP},
    {"A4000", AVG_1S, FULL, STEP},
    {"A5000", AVG_1S, FULL, STEP},
    {"A6000", AVG_1S, FULL, STEP},
    {"L4", AVG_1S, FULL, STEP},
    {"L40", AVG_1S, FULL, STEP},
    {"L40S", AVG_1S, FULL, STEP},
    {"Ada", AVG_1S, FULL, STEP},
    /* Volta and Turing: instantaneous readings, a stepped counter */
    {"V100", 0, FULL, STEP},
    {"T4", 0, FULL, STEP},
};

static bool is_word_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The family of the first word of the name found in the table, or NULL. */
static const struct gpu_family *family_of(const char *name) {
    const char *p = name;
    while (*p) {
        size_t n = 0;
        while (*p && !is_word_char(*p))
            p++;
        while (is_word_char(p[n]))
            n++;
        for (size_t i = 0; i < ARRAY_SIZE(families); i++)
            if (strlen(families[i].word) == n && !strncmp(p, families[i].word, n))
                return &families[i];
        p += n;
    }
    return NULL;
}

static int parse_compute_mode(const char *v, uint32_t *ret) {
    static const char *const names[] = {"default", "exclusive-thread", "prohibited",
                                        "exclusive-process"};
    for (uint32_t i = 0; i < ARRAY_SIZE(names); i++)
        if (!strcmp(v, names[i])) {
            *ret = i;
            return 0;
        }
    return -EINVAL;
}

/* Reporting keys written in the directive; the others come from the GPU family. */
struct reporting_set {
    bool average, duty, step, phase, gpm;
};

/* Keys of the physical model and of its reporting. 1 = not one of them. */
static int physics_key(struct parser *p, const struct sim_directive *d, const struct sim_token *t,
                       struct sim_gpu *g, struct reporting_set *set) {
    if (!strcmp(t->key, "context-idle"))
        CHECK_VALUE(p, t, d, sim_parse_power_mw(t->value, &g->context_idle_mw));
    else if (!strcmp(t->key, "idle-drift"))
        CHECK_VALUE(p, t, d, sim_parse_drift(t->value, &g->idle_drift_mw, &g->idle_drift_tau_us));
    else if (!strcmp(t->key, "slice-overhead")) {
        CHECK_VALUE(p, t, d, sim_parse_fraction_ppm(t->value, &g->slice_overhead_ppm));
        if (g->slice_overhead_ppm >= SIM_PPM)
            return sim_lexer_fail(&p->lx, t->line, "gpu: slice-overhead must be below 100%%");
    } else if (!strcmp(t->key, "time-slice")) {
        CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &g->time_slice_us));
        if (g->time_slice_us > TIME_SLICE_MAX_US ||
            (g->time_slice_us > 0 && g->time_slice_us < TIME_SLICE_MIN_US))
            return sim_lexer_fail(&p->lx, t->line, "gpu: time-slice must be 0 or 100us to 100ms");
    } else if (!strcmp(t->key, "power-noise")) {
        CHECK_VALUE(p, t, d, sim_parse_fraction_ppm(t->value, &g->power_noise_ppm));
        if (g->power_noise_ppm > POWER_NOISE_MAX_PPM)
            return sim_lexer_fail(&p->lx, t->line, "gpu: power-noise above 50%%");
    } else if (!strcmp(t->key, "power-average")) {
        CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &g->power_average_us));
        if (g->power_average_us % POWER_UPDATE_US || g->power_average_us > POWER_AVERAGE_MAX_US)
            return sim_lexer_fail(&p->lx, t->line,
                                  "gpu: power-average must be 0 or a multiple of 100ms up to 60s");
        set->average = true;
    } else if (!strcmp(t->key, "power-sensor-duty")) {
        CHECK_VALUE(p, t, d, sim_parse_fraction_ppm(t->value, &g->sensor_duty_ppm));
        if (g->sensor_duty_ppm == 0)
            return sim_lexer_fail(&p->lx, t->line, "gpu: power-sensor-duty must not be 0");
        set->duty = true;
    } else if (!strcmp(t->key, "energy-step")) {
        CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &g->energy_step_us));
        if (g->energy_step_us > ENERGY_STEP_MAX_US ||
            (g->energy_step_us > 0 && g->energy_step_us < ENERGY_STEP_MIN_US))
            return sim_lexer_fail(&p->lx, t->line, "gpu: energy-step must be 0 or 1ms to 10s");
        set->step = true;
    } else if (!strcmp(t->key, "gpm")) {
        CHECK_VALUE(p, t, d, sim_parse_bool(t->value, &g->gpm));
        set->gpm = true;
    } else if (!strcmp(t->key, "driver-phase")) {
        CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &g->driver_phase_us));
        if (g->driver_phase_us >= POWER_UPDATE_US)
            return sim_lexer_fail(&p->lx, t->line, "gpu: driver-phase must be below 100ms");
        set->phase = true;
    } else
        return 1;
    return 0;
}

/* The driver's timers started when it loaded, not at t = 0: a phase of its own per GPU. */
static uint64_t default_phase_us(uint64_t seed, unsigned index) {
    uint64_t x = seed ^ (UINT64_C(0x9e3779b97f4a7c15) * (index + 1));
    x = (x ^ (x >> 31)) * UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 29;
    return x % POWER_UPDATE_US;
}

static void apply_family(struct sim_gpu *g, const struct reporting_set *set, uint64_t seed,
                         unsigned index) {
    const struct gpu_family *f = family_of(g->name);
    if (!set->phase)
        g->driver_phase_us = default_phase_us(seed, index);
    if (!set->average)
        g->power_average_us = f ? f->average_us : 0;
    if (!set->duty)
        g->sensor_duty_ppm = f ? f->duty_ppm : SIM_PPM;
    if (!set->step)
        g->energy_step_us = f ? f->step_us : 0;
    if (!set->gpm)
        g->gpm = f && f->gpm;
}

/* Identity keys. 1 = not one of them. */
static int identity_key(struct parser *p, const struct sim_directive *d, const struct sim_token *t,
                        struct sim_gpu *g, unsigned *have) {
    int r = 0;
    if (!strcmp(t->key, "uuid")) {
        r = parser_copy_string(p, t, g->uuid, sizeof g->uuid);
        *have |= 1;
    } else if (!strcmp(t->key, "name")) {
        r = parser_copy_string(p, t, g->name, sizeof g->name);
        *have |= 2;
    } else if (!strcmp(t->key, "idle")) {
        CHECK_VALUE(p, t, d, sim_parse_power_mw(t->value, &g->idle_mw));
        *have |= 4;
    } else if (!strcmp(t->key, "max")) {
        CHECK_VALUE(p, t, d, sim_parse_power_mw(t->value, &g->max_mw));
        *have |= 8;
    } else if (!strcmp(t->key, "energy-start")) {
        CHECK_VALUE(p, t, d, safe_atou64(t->value, &g->energy_start_mj));
        if (g->energy_start_mj > ENERGY_START_MAX_MJ) /* the counter must not wrap */
            return sim_lexer_fail(&p->lx, t->line, "gpu: energy-start above 10^15 mJ");
    } else if (!strcmp(t->key, "memory"))
        CHECK_VALUE(p, t, d, sim_parse_bytes(t->value, &g->memory_total));
    else if (!strcmp(t->key, "compute-mode"))
        CHECK_VALUE(p, t, d, parse_compute_mode(t->value, &g->compute_mode));
    else if (!strcmp(t->key, "mig"))
        CHECK_VALUE(p, t, d, sim_parse_bool(t->value, &g->mig));
    else if (!strcmp(t->key, "accounting"))
        CHECK_VALUE(p, t, d, sim_parse_bool(t->value, &g->accounting));
    else if (!strcmp(t->key, "accounting-buffer")) {
        CHECK_VALUE(p, t, d, safe_atou32(t->value, &g->accounting_buffer));
        if (g->accounting_buffer == 0)
            return sim_lexer_fail(&p->lx, t->line, "gpu: accounting-buffer must not be 0");
    } else if (!strcmp(t->key, "pci-bus"))
        CHECK_VALUE(p, t, d, safe_atou32(t->value, &g->pci_bus));
    else if (!strcmp(t->key, "minor"))
        CHECK_VALUE(p, t, d, safe_atou32(t->value, &g->minor));
    else
        return 1;
    return r;
}

int parser_gpu(struct parser *p, const struct sim_directive *d) {
    struct sim_scenario *s = p->s;
    struct reporting_set set = {0};
    unsigned have = 0;
    uint32_t index;
    int r = parser_positional_u32(p, d, "index", &index);
    if (r < 0)
        return r;
    if (index != s->n_gpus)
        return sim_lexer_fail(&p->lx, d->line, "gpu: index %u out of order (expected %zu)", index,
                              s->n_gpus);
    if (s->n_gpus >= SIM_MAX_GPUS)
        return sim_lexer_fail(&p->lx, d->line, "gpu: more than %u GPUs", SIM_MAX_GPUS);
    r = grow_array(&s->gpus, &p->cap_gpus, s->n_gpus + 1, sizeof(*s->gpus));
    if (r < 0)
        return r;
    struct sim_gpu *g = &s->gpus[s->n_gpus];
    *g = (struct sim_gpu){
        .energy_supported = true,
        .accounting_buffer = 4000, /* nvmlDeviceGetAccountingBufferSize on current drivers */
        .time_slice_us = 2000,     /* the driver's default time-slice [Slicing] */
        .memory_total = UINT64_C(40) << 30,
        .pci_bus = index + 1,
        .minor = index,
    };

    for (size_t i = 1; i < d->n_tokens; i++) {
        const struct sim_token *t = &d->tokens[i];
        if (!t->key)
            return parser_unknown_key(p, d, t);
        r = identity_key(p, d, t, g, &have);
        if (r == 1)
            r = physics_key(p, d, t, g, &set);
        if (r == 1)
            return parser_unknown_key(p, d, t);
        if (r < 0)
            return r;
    }
    if (have != 15)
        return sim_lexer_fail(&p->lx, d->line, "gpu: needs uuid, name, idle and max");
    if (g->idle_mw > g->max_mw)
        return sim_lexer_fail(&p->lx, d->line, "gpu: idle power above max power");
    if ((uint64_t)g->idle_mw + g->idle_drift_mw + g->context_idle_mw > g->max_mw)
        return sim_lexer_fail(&p->lx, d->line,
                              "gpu: idle + idle-drift + context-idle above max power");
    for (size_t i = 0; i < s->n_gpus; i++)
        if (!strcmp(s->gpus[i].uuid, g->uuid))
            return sim_lexer_fail(&p->lx, d->line, "gpu: uuid '%s' already used by gpu %zu",
                                  g->uuid, i);
    apply_family(g, &set, s->seed, index);
    s->n_gpus++;
    return 0;
}
