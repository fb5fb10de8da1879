/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse_num.h"
#include "scenario_parser.h"
#include "scenario_values.h"
#include "strbuf.h"

#define DEFAULT_CGROUP "0::/user.slice/user-1000.slice/session-1.scope"
#define NO_INSTANCE 0xFFFFFFFFu
#define PERIOD_MIN_US 1000

/* Profile keys as written; checked against the profile kind once the directive is read. */
struct profile_keys {
    const struct sim_token *level, *low, *period, *on, *phase, *from, *to, *over;
};

static int parse_kinds(const char *v, uint32_t *ret) {
    static const struct {
        const char *name;
        uint32_t kinds;
    } table[] = {
        {"compute", SIM_KIND_COMPUTE},
        {"graphics", SIM_KIND_GRAPHICS},
        {"mps", SIM_KIND_MPS},
        {"compute+graphics", SIM_KIND_COMPUTE | SIM_KIND_GRAPHICS},
    };
    for (size_t i = 0; i < ARRAY_SIZE(table); i++)
        if (!strcmp(v, table[i].name)) {
            *ret = table[i].kinds;
            return 0;
        }
    return -EINVAL;
}

/* "300W" or "300W,120W@90s,250W@150s": a coefficient from each offset after the process
 * start on (the first at 0, the offsets increasing). */
static int parse_coef_list(const char *v, struct sim_process *proc) {
    const char *p = v;
    size_t n = 0;

    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        uint64_t at_us = 0;
        uint32_t mw;
        int r;

        if (len == 0 || len >= sizeof item || n >= SIM_MAX_COEF_PHASES)
            return -EINVAL;
        memcpy(item, p, len);
        item[len] = '\0';
        char *at = strchr(item, '@');
        if (at) {
            *at = '\0';
            r = sim_parse_duration_us(at + 1, &at_us);
            if (r < 0)
                return r;
        }
        if (n == 0 ? at_us != 0 : !at || at_us <= proc->coef_at_us[n - 1])
            return -EINVAL;
        r = sim_parse_power_mw(item, &mw);
        if (r < 0)
            return r;
        proc->coef_mw[n] = mw;
        proc->coef_at_us[n] = at_us;
        n++;
        if (!comma)
            break;
        p = comma + 1;
    }
    proc->n_coef = n;
    return 0;
}

/* The largest coefficient of a process: what the board must have room for. */
static uint32_t peak_coef_mw(const struct sim_process *proc) {
    uint32_t peak = 0;
    for (size_t i = 0; i < proc->n_coef; i++)
        peak = MAX(peak, proc->coef_mw[i]);
    return peak;
}

static int want_absent(struct parser *p, const struct sim_token *t, const char *profile) {
    if (!t)
        return 0;
    return sim_lexer_fail(&p->lx, t->line, "process: '%s' does not apply to sm=%s", t->key,
                          profile);
}

/* Turns the sm= value and its companion keys into a profile. */
static int build_profile(struct parser *p, const struct sim_directive *d,
                         const struct sim_token *sm, const struct profile_keys *k,
                         struct sim_profile *ret) {
    struct sim_profile prof = {.kind = SIM_PROFILE_CONSTANT};
    int r;

    if (!strcmp(sm->value, "duty")) {
        prof.kind = SIM_PROFILE_DUTY;
        prof.level = 100;
        if ((r = want_absent(p, k->from, "duty")) < 0 || (r = want_absent(p, k->to, "duty")) < 0 ||
            (r = want_absent(p, k->over, "duty")) < 0)
            return r;
        if (!k->period || !k->on)
            return sim_lexer_fail(&p->lx, sm->line, "process: sm=duty needs 'period' and 'on'");
        CHECK_VALUE(p, k->period, d, sim_parse_duration_us(k->period->value, &prof.period_us));
        if (prof.period_us < PERIOD_MIN_US) /* each period is a segment of the model's */
            return sim_lexer_fail(&p->lx, k->period->line, "process: period below 1ms");
        if (strchr(k->on->value, '%')) {
            uint32_t pct;
            CHECK_VALUE(p, k->on, d, sim_parse_percent(k->on->value, &pct));
            prof.on_us = prof.period_us * pct / 100;
        } else {
            CHECK_VALUE(p, k->on, d, sim_parse_duration_us(k->on->value, &prof.on_us));
            if (prof.on_us > prof.period_us)
                return sim_lexer_fail(&p->lx, k->on->line, "process: 'on' longer than 'period'");
        }
        if (k->level)
            CHECK_VALUE(p, k->level, d, sim_parse_percent(k->level->value, &prof.level));
        if (k->low)
            CHECK_VALUE(p, k->low, d, sim_parse_percent(k->low->value, &prof.low));
        if (k->phase)
            CHECK_VALUE(p, k->phase, d, sim_parse_duration_us(k->phase->value, &prof.phase_us));
    } else if (!strcmp(sm->value, "ramp")) {
        prof.kind = SIM_PROFILE_RAMP;
        prof.level = 100;
        if ((r = want_absent(p, k->level, "ramp")) < 0 ||
            (r = want_absent(p, k->low, "ramp")) < 0 ||
            (r = want_absent(p, k->period, "ramp")) < 0 ||
            (r = want_absent(p, k->on, "ramp")) < 0 || (r = want_absent(p, k->phase, "ramp")) < 0)
            return r;
        if (!k->over)
            return sim_lexer_fail(&p->lx, sm->line, "process: sm=ramp needs 'over'");
        CHECK_VALUE(p, k->over, d, sim_parse_duration_us(k->over->value, &prof.ramp_us));
        if (prof.ramp_us < 1000)
            return sim_lexer_fail(&p->lx, k->over->line, "process: 'over' below 1ms");
        if (k->from)
            CHECK_VALUE(p, k->from, d, sim_parse_percent(k->from->value, &prof.low));
        if (k->to)
            CHECK_VALUE(p, k->to, d, sim_parse_percent(k->to->value, &prof.level));
    } else {
        const struct sim_token *extra[] = {k->level, k->low,  k->period, k->on,
                                           k->phase, k->from, k->to,     k->over};
        for (size_t i = 0; i < ARRAY_SIZE(extra); i++)
            if ((r = want_absent(p, extra[i], "<constant>")) < 0)
                return r;
        CHECK_VALUE(p, sm, d, sim_parse_percent(sm->value, &prof.level));
    }
    *ret = prof;
    return 0;
}

static int process_key(struct parser *p, const struct sim_directive *d, const struct sim_token *t,
                       struct sim_process *proc, struct strbuf *cgroup, const struct sim_token **sm,
                       struct profile_keys *k, bool *have_gpu, bool *have_coef, bool *have_name) {
    const char *key = t->key;
    int r = 0;

    if (!key)
        return parser_unknown_key(p, d, t);
    if (!strcmp(key, "gpu")) {
        r = parser_gpu_ref(p, t, &proc->gpu);
        *have_gpu = true;
    } else if (!strcmp(key, "name")) {
        size_t n = strlen(t->value);
        if (n == 0)
            return sim_lexer_fail(&p->lx, t->line, "process: empty name");
        /* the kernel keeps the first 15 bytes of a command name */
        n = MIN(n, (size_t)SIM_COMM_MAX - 1);
        memcpy(proc->comm, t->value, n);
        proc->comm[n] = '\0';
        *have_name = true;
    } else if (!strcmp(key, "ppid"))
        CHECK_VALUE(p, t, d, safe_atou32(t->value, &proc->ppid));
    else if (!strcmp(key, "start"))
        CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &proc->start_us));
    else if (!strcmp(key, "stop"))
        CHECK_VALUE(p, t, d, sim_parse_duration_us(t->value, &proc->stop_us));
    else if (!strcmp(key, "cgroup")) {
        if (!t->value[0] || strchr(t->value, '\n'))
            return sim_lexer_fail(&p->lx, t->line, "process: bad cgroup line");
        strbuf_puts(cgroup, t->value);
        strbuf_putc(cgroup, '\n');
    } else if (!strcmp(key, "memory"))
        CHECK_VALUE(p, t, d, sim_parse_bytes(t->value, &proc->memory_bytes));
    else if (!strcmp(key, "sm"))
        *sm = t;
    else if (!strcmp(key, "level"))
        k->level = t;
    else if (!strcmp(key, "low"))
        k->low = t;
    else if (!strcmp(key, "period"))
        k->period = t;
    else if (!strcmp(key, "on"))
        k->on = t;
    else if (!strcmp(key, "phase"))
        k->phase = t;
    else if (!strcmp(key, "from"))
        k->from = t;
    else if (!strcmp(key, "to"))
        k->to = t;
    else if (!strcmp(key, "over"))
        k->over = t;
    else if (!strcmp(key, "mem-util"))
        CHECK_VALUE(p, t, d, sim_parse_percent(t->value, &proc->mem_ratio));
    else if (!strcmp(key, "coef")) {
        CHECK_VALUE(p, t, d, parse_coef_list(t->value, proc));
        *have_coef = true;
    } else if (!strcmp(key, "type"))
        CHECK_VALUE(p, t, d, parse_kinds(t->value, &proc->kinds));
    else if (!strcmp(key, "gi"))
        CHECK_VALUE(p, t, d, safe_atou32(t->value, &proc->gpu_instance));
    else if (!strcmp(key, "ci"))
        CHECK_VALUE(p, t, d, safe_atou32(t->value, &proc->compute_instance));
    else
        return parser_unknown_key(p, d, t);
    return r;
}

/* gi/ci only on a MIG GPU (its mig=on is known when the process is read). */
static int check_instance_given(struct parser *p, const struct sim_directive *d,
                                const struct sim_process *proc) {
    bool given = proc->gpu_instance != NO_INSTANCE || proc->compute_instance != NO_INSTANCE;

    if (given && !p->s->gpus[proc->gpu].mig)
        return sim_lexer_fail(&p->lx, d->line, "process: gi/ci on gpu %u without MIG", proc->gpu);
    return 0;
}

/* A process on a MIG GPU runs in a declared instance; once every line is read, so that a
 * mig line after its processes counts. Without any mig line, all are in instance 0.0. */
static int check_instance(struct parser *p, struct sim_process *proc) {
    const struct sim_gpu *g = &p->s->gpus[proc->gpu];
    bool given = proc->gpu_instance != NO_INSTANCE || proc->compute_instance != NO_INSTANCE;

    if (!g->mig)
        return 0;
    if (g->n_mig == 0) {
        if (!given)
            proc->gpu_instance = proc->compute_instance = 0;
        return 0;
    }
    if (proc->gpu_instance == NO_INSTANCE || proc->compute_instance == NO_INSTANCE)
        return sim_lexer_fail(&p->lx, proc->line, "process %u: gi and ci needed on gpu %u (MIG)",
                              proc->pid, proc->gpu);
    for (size_t i = 0; i < g->n_mig; i++)
        if (g->mig_instances[i].gpu_instance == proc->gpu_instance &&
            g->mig_instances[i].compute_instance == proc->compute_instance)
            return 0;
    return sim_lexer_fail(&p->lx, proc->line, "process: no MIG instance gi %u ci %u on gpu %u",
                          proc->gpu_instance, proc->compute_instance, proc->gpu);
}

int parser_process(struct parser *p, const struct sim_directive *d) {
    struct sim_scenario *s = p->s;
    struct sim_process proc = {
        .ppid = 1,
        .stop_us = SIM_TIME_NEVER,
        .mem_ratio = 40,
        .kinds = SIM_KIND_COMPUTE,
        .gpu_instance = NO_INSTANCE,
        .compute_instance = NO_INSTANCE,
        .line = d->line,
    };
    struct profile_keys k = {0};
    const struct sim_token *sm = NULL;
    bool have_gpu = false, have_coef = false, have_name = false;
    _cleanup_(strbuf_done) struct strbuf cgroup;
    int r;

    strbuf_init(&cgroup);
    r = parser_positional_u32(p, d, "pid", &proc.pid);
    if (r < 0)
        return r;
    if (proc.pid == 0)
        return sim_lexer_fail(&p->lx, d->line, "process: pid 0 is not a process");
    for (size_t i = 1; i < d->n_tokens; i++) {
        r = process_key(p, d, &d->tokens[i], &proc, &cgroup, &sm, &k, &have_gpu, &have_coef,
                        &have_name);
        if (r < 0)
            return r;
    }
    if (!have_gpu || !have_coef || !have_name || !sm)
        return sim_lexer_fail(&p->lx, d->line, "process %u: needs gpu, name, sm and coef",
                              proc.pid);
    r = build_profile(p, d, sm, &k, &proc.sm);
    if (r < 0)
        return r;
    if (proc.stop_us <= proc.start_us)
        return sim_lexer_fail(&p->lx, d->line, "process %u: stop must be after start", proc.pid);
    const struct sim_gpu *g = &s->gpus[proc.gpu];
    uint64_t extra = (uint64_t)g->idle_drift_mw + g->context_idle_mw;
    uint64_t peak = g->idle_mw + extra + peak_coef_mw(&proc);
    if (peak > g->max_mw)
        return sim_lexer_fail(&p->lx, d->line,
                              "process %u: idle + %scoef (%llu mW) above gpu %u max power (%u mW)",
                              proc.pid, extra ? "idle-drift + context-idle + " : "",
                              (unsigned long long)peak, proc.gpu, g->max_mw);
    r = check_instance_given(p, d, &proc);
    if (r < 0)
        return r;

    if (cgroup.len == 0)
        strbuf_puts(&cgroup, DEFAULT_CGROUP "\n");
    proc.cgroup = strbuf_steal(&cgroup, NULL);
    if (!proc.cgroup)
        return -ENOMEM;
    r = grow_array(&s->procs, &p->cap_procs, s->n_procs + 1, sizeof(*s->procs));
    if (r < 0) {
        free(proc.cgroup);
        return r;
    }
    s->procs[s->n_procs++] = proc;
    return 0;
}

static int by_start(const void *a, const void *b) {
    const struct sim_process *x = a, *y = b;
    if (x->start_us != y->start_us)
        return x->start_us < y->start_us ? -1 : 1;
    return x->line < y->line ? -1 : (x->line > y->line);
}

static int by_pid(const void *a, const void *b) {
    const struct sim_process *x = *(const struct sim_process *const *)a;
    const struct sim_process *y = *(const struct sim_process *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return by_start(x, y);
}

int parser_check_processes(struct parser *p) {
    struct sim_scenario *s = p->s;
    if (s->n_procs == 0)
        return 0;
    for (size_t i = 0; i < s->n_procs; i++) {
        int r = check_instance(p, &s->procs[i]);
        if (r < 0)
            return r;
    }
    qsort(s->procs, s->n_procs, sizeof(*s->procs), by_start);

    _cleanup_(freep) const struct sim_process **v = calloc(s->n_procs, sizeof(*v));
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < s->n_procs; i++)
        v[i] = &s->procs[i];
    qsort(v, s->n_procs, sizeof(*v), by_pid);
    for (size_t i = 1; i < s->n_procs; i++) {
        const struct sim_process *a = v[i - 1], *b = v[i];
        if (a->pid != b->pid)
            continue;
        if (a->start_us == b->start_us) {
            /* one process using several GPUs */
            if (a->gpu == b->gpu)
                return sim_lexer_fail(&p->lx, b->line, "process %u: declared twice on gpu %u",
                                      b->pid, b->gpu);
            if (a->stop_us != b->stop_us || strcmp(a->comm, b->comm) ||
                strcmp(a->cgroup, b->cgroup))
                return sim_lexer_fail(&p->lx, b->line,
                                      "process %u: same start as line %u but a different "
                                      "stop, name or cgroup",
                                      b->pid, a->line);
        } else if (a->stop_us > b->start_us)
            return sim_lexer_fail(&p->lx, b->line,
                                  "process %u: starts before the process of line %u with the "
                                  "same pid stops",
                                  b->pid, a->line);
    }
    return 0;
}
