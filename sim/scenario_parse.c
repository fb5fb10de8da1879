/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "macro.h"
#include "parse_num.h"
#include "scenario.h"
#include "scenario_lex.h"
#include "scenario_parser.h"
#include "scenario_values.h"

#define SCENARIO_MAX_SIZE (16u << 20)

int parser_copy_string(struct parser *p, const struct sim_token *t, char *dst, size_t size) {
    size_t n = strlen(t->value);
    if (n == 0 || n >= size)
        return sim_lexer_fail(&p->lx, t->line, "'%s' must be 1..%zu characters", t->key, size - 1);
    memcpy(dst, t->value, n + 1);
    return 0;
}

int parser_unknown_key(struct parser *p, const struct sim_directive *d, const struct sim_token *t) {
    if (!t->key)
        return sim_lexer_fail(&p->lx, t->line, "%s: unexpected word '%s'", d->keyword, t->value);
    return sim_lexer_fail(&p->lx, t->line, "%s: unknown key '%s'", d->keyword, t->key);
}

/* The positional argument (first token, no key), parsed as an unsigned number. */
int parser_positional_u32(struct parser *p, const struct sim_directive *d, const char *what,
                          uint32_t *ret) {
    if (d->n_tokens == 0 || d->tokens[0].key)
        return sim_lexer_fail(&p->lx, d->line, "%s: missing %s after '%s'", d->keyword, what,
                              d->keyword);
    if (safe_atou32(d->tokens[0].value, ret) < 0)
        return sim_lexer_fail(&p->lx, d->line, "%s: invalid %s '%s'", d->keyword, what,
                              d->tokens[0].value);
    return 0;
}

static int parse_header(struct parser *p, const struct sim_directive *d) {
    struct sim_scenario *s = p->s;
    bool have_duration = false;

    if (p->have_header)
        return sim_lexer_fail(&p->lx, d->line, "scenario: declared twice");
    p->have_header = true;
    for (size_t i = 0; i < d->n_tokens; i++) {
        const struct sim_token *t = &d->tokens[i];
        int r = 0;
        if (!t->key)
            return parser_unknown_key(p, d, t);
        if (!strcmp(t->key, "name"))
            r = parser_copy_string(p, t, s->name, sizeof s->name);
        else if (!strcmp(t->key, "duration")) {
            CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &s->duration_us));
            have_duration = true;
        } else if (!strcmp(t->key, "sample-period")) {
            CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &s->sample_period_us));
            if (s->sample_period_us < 1000)
                return sim_lexer_fail(&p->lx, t->line, "scenario: sample-period below 1ms");
        } else if (!strcmp(t->key, "sample-phase")) {
            if (!strcmp(t->value, "spread"))
                s->sample_phase = SIM_SAMPLE_PHASE_SPREAD;
            else if (!strcmp(t->value, "aligned"))
                s->sample_phase = SIM_SAMPLE_PHASE_ALIGNED;
            else
                return sim_lexer_fail(&p->lx, t->line,
                                      "scenario: sample-phase is 'spread' or 'aligned', not '%s'",
                                      t->value);
        } else if (!strcmp(t->key, "util-entries")) {
            if (!strcmp(t->value, "every-sample"))
                s->util_entries = SIM_UTIL_EVERY_SAMPLE;
            else if (!strcmp(t->value, "per-process"))
                s->util_entries = SIM_UTIL_PER_PROCESS;
            else
                return sim_lexer_fail(
                    &p->lx, t->line,
                    "scenario: util-entries is 'every-sample' or 'per-process', not '%s'",
                    t->value);
        } else if (!strcmp(t->key, "seed")) {
            if (s->n_gpus > 0) /* the GPUs' driver phases derive from it */
                return sim_lexer_fail(&p->lx, t->line, "scenario: must come before the GPUs");
            CHECK_VALUE(p, t, d, safe_atou64(t->value, &s->seed));
        } else if (!strcmp(t->key, "driver"))
            r = parser_copy_string(p, t, s->driver, sizeof s->driver);
        else if (!strcmp(t->key, "uptime"))
            CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &s->uptime_us));
        else if (!strcmp(t->key, "dcgm"))
            CHECK_VALUE(p, t, d, sim_parse_bool(t->value, &s->dcgm));
        else if (!strcmp(t->key, "tags"))
            continue; /* free-form labels for people and docs */
        else
            return parser_unknown_key(p, d, t);
        if (r < 0)
            return r;
    }
    if (!have_duration)
        return sim_lexer_fail(&p->lx, d->line, "scenario: missing 'duration'");
    return 0;
}

/* Resolves a "gpu=N" token to a declared GPU. */
int parser_gpu_ref(struct parser *p, const struct sim_token *t, unsigned *ret) {
    uint32_t idx;
    if (safe_atou32(t->value, &idx) < 0)
        return sim_lexer_fail(&p->lx, t->line, "invalid gpu '%s'", t->value);
    if (idx >= p->s->n_gpus)
        return sim_lexer_fail(&p->lx, t->line, "gpu %u is not declared (declare GPUs first)", idx);
    *ret = idx;
    return 0;
}

static int parse_fault(struct parser *p, const struct sim_directive *d) {
    static const char *const kinds[] = {"gpu-lost",   "counter-reset", "no-energy-counter",
                                        "list-grows", "power-error",   "no-permission"};
    enum {
        KIND_GPU_LOST,
        KIND_COUNTER_RESET,
        KIND_NO_COUNTER,
        KIND_LIST_GROWS,
        KIND_POWER_ERROR,
        KIND_NO_PERMISSION
    };
    size_t kind = ARRAY_SIZE(kinds);
    unsigned gpu = 0;
    bool have_gpu = false, have_at = false, have_until = false;
    uint64_t at = 0, until = SIM_TIME_NEVER;
    int r;

    if (d->n_tokens == 0 || d->tokens[0].key)
        return sim_lexer_fail(&p->lx, d->line, "fault: missing kind after 'fault'");
    for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
        if (!strcmp(d->tokens[0].value, kinds[k]))
            kind = k;
    if (kind == ARRAY_SIZE(kinds))
        return sim_lexer_fail(&p->lx, d->line, "fault: unknown kind '%s'", d->tokens[0].value);

    for (size_t i = 1; i < d->n_tokens; i++) {
        const struct sim_token *t = &d->tokens[i];
        if (!t->key)
            return parser_unknown_key(p, d, t);
        if (!strcmp(t->key, "gpu")) {
            r = parser_gpu_ref(p, t, &gpu);
            if (r < 0)
                return r;
            have_gpu = true;
        } else if (!strcmp(t->key, "at") &&
                   (kind <= KIND_COUNTER_RESET || kind == KIND_POWER_ERROR)) {
            CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &at));
            have_at = true;
        } else if (!strcmp(t->key, "until") &&
                   (kind == KIND_GPU_LOST || kind == KIND_POWER_ERROR)) {
            CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &until));
            have_until = true;
        } else
            return parser_unknown_key(p, d, t);
    }
    if (!have_gpu)
        return sim_lexer_fail(&p->lx, d->line, "fault %s: missing 'gpu'", kinds[kind]);
    if ((kind <= KIND_COUNTER_RESET || kind == KIND_POWER_ERROR) && !have_at)
        return sim_lexer_fail(&p->lx, d->line, "fault %s: missing 'at'", kinds[kind]);
    if (have_until && until <= at)
        return sim_lexer_fail(&p->lx, d->line, "fault %s: 'until' must be after 'at'", kinds[kind]);

    struct sim_gpu *g = &p->s->gpus[gpu];
    if (kind == KIND_NO_COUNTER) {
        g->energy_supported = false;
        return 0;
    }
    if (kind == KIND_LIST_GROWS) {
        g->list_grows_once = true;
        return 0;
    }
    if (kind == KIND_NO_PERMISSION) {
        g->no_permission = true;
        return 0;
    }
    if (g->n_faults >= SIM_MAX_FAULTS)
        return sim_lexer_fail(&p->lx, d->line, "fault: more than %u timed faults on gpu %u",
                              SIM_MAX_FAULTS, gpu);
    /* keep the list sorted by time (insertion sort; it is tiny) */
    size_t pos = g->n_faults;
    while (pos > 0 && g->faults[pos - 1].at_us > at) {
        g->faults[pos] = g->faults[pos - 1];
        pos--;
    }
    g->faults[pos] = (struct sim_fault){
        .kind = kind == KIND_GPU_LOST        ? SIM_FAULT_GPU_LOST
                : kind == KIND_COUNTER_RESET ? SIM_FAULT_COUNTER_RESET
                                             : SIM_FAULT_POWER_ERROR,
        .at_us = at,
        .until_us = until,
    };
    g->n_faults++;
    return 0;
}

static int parse_mig(struct parser *p, const struct sim_directive *d) {
    struct sim_mig m = {0};
    unsigned gpu = 0;
    bool have_gpu = false, have_gi = false, have_ci = false, have_uuid = false;
    int r;

    for (size_t i = 0; i < d->n_tokens; i++) {
        const struct sim_token *t = &d->tokens[i];
        r = 0;
        if (!t->key)
            return parser_unknown_key(p, d, t);
        if (!strcmp(t->key, "gpu")) {
            r = parser_gpu_ref(p, t, &gpu);
            have_gpu = true;
        } else if (!strcmp(t->key, "gi")) {
            CHECK_VALUE(p, t, d, safe_atou32(t->value, &m.gpu_instance));
            have_gi = true;
        } else if (!strcmp(t->key, "ci")) {
            CHECK_VALUE(p, t, d, safe_atou32(t->value, &m.compute_instance));
            have_ci = true;
        } else if (!strcmp(t->key, "uuid")) {
            r = parser_copy_string(p, t, m.uuid, sizeof m.uuid);
            have_uuid = true;
        } else if (!strcmp(t->key, "name"))
            r = parser_copy_string(p, t, m.name, sizeof m.name);
        else
            return parser_unknown_key(p, d, t);
        if (r < 0)
            return r;
    }
    if (!have_gpu || !have_gi || !have_ci || !have_uuid)
        return sim_lexer_fail(&p->lx, d->line, "mig: needs gpu, gi, ci and uuid");
    struct sim_gpu *g = &p->s->gpus[gpu];
    if (!g->mig)
        return sim_lexer_fail(&p->lx, d->line, "mig: gpu %u does not have mig=on", gpu);
    if (g->n_mig >= SIM_MAX_MIG)
        return sim_lexer_fail(&p->lx, d->line, "mig: more than %u instances on gpu %u", SIM_MAX_MIG,
                              gpu);
    for (size_t i = 0; i < g->n_mig; i++)
        if (g->mig_instances[i].gpu_instance == m.gpu_instance &&
            g->mig_instances[i].compute_instance == m.compute_instance)
            return sim_lexer_fail(&p->lx, d->line, "mig: gi %u ci %u declared twice",
                                  m.gpu_instance, m.compute_instance);
    if (!m.name[0])
        (void)snprintf(m.name, sizeof m.name, "%.60s MIG %u.%u", g->name, m.gpu_instance,
                       m.compute_instance);
    else if (!strstr(m.name, " MIG "))
        return sim_lexer_fail(&p->lx, d->line,
                              "mig: name must hold \" MIG \" and the profile, as the driver's "
                              "do (\"NVIDIA A100-SXM4-40GB MIG 3g.20gb\")");
    g->mig_instances[g->n_mig++] = m;
    return 0;
}

static int finish(struct parser *p) {
    struct sim_scenario *s = p->s;
    if (!p->have_header)
        return sim_lexer_fail(&p->lx, 1, "missing 'scenario' line");
    if (s->n_gpus == 0)
        return sim_lexer_fail(&p->lx, p->lx.line > 1 ? p->lx.line - 1 : 1, "no 'gpu' declared");
    return 0;
}

int sim_scenario_parse(const char *text, const char *origin, struct sim_scenario **ret_scenario,
                       char *err, size_t err_size) {
    struct parser p = {0};
    struct sim_directive d = {0};
    int r;

    if (err && err_size > 0)
        err[0] = '\0';
    r = sim_lexer_init(&p.lx, text, origin, err, err_size);
    if (r < 0)
        return r;
    p.s = calloc(1, sizeof(*p.s));
    if (!p.s) {
        r = -ENOMEM;
        goto finish;
    }
    strcpy(p.s->name, "unnamed");
    strcpy(p.s->driver, "550.54.14");
    p.s->sample_period_us = 167000;
    p.s->uptime_us = UINT64_C(86400) * 1000000;

    while ((r = sim_lexer_next(&p.lx, &d)) > 0) {
        if (!strcmp(d.keyword, "scenario"))
            r = parse_header(&p, &d);
        else if (!strcmp(d.keyword, "gpu"))
            r = parser_gpu(&p, &d);
        else if (!strcmp(d.keyword, "process"))
            r = parser_process(&p, &d);
        else if (!strcmp(d.keyword, "fault"))
            r = parse_fault(&p, &d);
        else if (!strcmp(d.keyword, "mig"))
            r = parse_mig(&p, &d);
        else
            r = sim_lexer_fail(&p.lx, d.line, "unknown directive '%s'", d.keyword);
        if (r < 0)
            goto finish;
    }
    if (r < 0)
        goto finish;
    r = finish(&p);
    if (r < 0)
        goto finish;
    r = parser_check_processes(&p);
    if (r < 0)
        goto finish;
    *ret_scenario = TAKE_PTR(p.s);
    r = 0;
finish:
    free(d.tokens);
    sim_lexer_done(&p.lx);
    sim_scenario_free(p.s);
    return r;
}

int sim_scenario_load(const char *path, struct sim_scenario **ret_scenario, char *err,
                      size_t err_size) {
    _cleanup_(freep) char *text = NULL;
    int r = read_virtual_file_at(AT_FDCWD, path, SCENARIO_MAX_SIZE, &text, NULL);
    if (r < 0) {
        if (err && err_size > 0)
            (void)snprintf(err, err_size, "%s: cannot read: %s", path, strerror(-r));
        return r;
    }
    return sim_scenario_parse(text, path, ret_scenario, err, err_size);
}

struct sim_scenario *sim_scenario_free(struct sim_scenario *s) {
    if (!s)
        return NULL;
    for (size_t i = 0; i < s->n_procs; i++)
        free(s->procs[i].cgroup);
    free(s->procs);
    free(s->gpus);
    free(s);
    return NULL;
}

/* Whether a timed fault of this kind holds at scenario time t. */
static bool fault_holds(const struct sim_gpu *g, enum sim_fault_kind kind, uint64_t t) {
    for (size_t i = 0; i < g->n_faults; i++) {
        const struct sim_fault *f = &g->faults[i];
        if (f->kind == kind && t >= f->at_us && t < f->until_us)
            return true;
    }
    return false;
}

bool sim_gpu_power_error_at(const struct sim_gpu *g, uint64_t t) {
    return fault_holds(g, SIM_FAULT_POWER_ERROR, t);
}

bool sim_gpu_lost_at(const struct sim_gpu *g, uint64_t t) {
    return fault_holds(g, SIM_FAULT_GPU_LOST, t);
}
