/* SPDX-License-Identifier: MIT */
#pragma once

/* Private to the scenario parser (scenario_parse.c, scenario_process.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scenario.h"
#include "scenario_lex.h"

struct parser {
    struct sim_lexer lx;
    struct sim_scenario *s;
    size_t cap_gpus;
    size_t cap_procs;
    bool have_header;
};

/* Value conversion with a uniform message: "<directive>: invalid value 'x' for 'key'". */
#define CHECK_VALUE(p, t, d, expr)                                                                 \
    do {                                                                                           \
        if ((expr) < 0)                                                                            \
            return sim_lexer_fail(&(p)->lx, (t)->line, "%s: invalid value '%s' for '%s'",          \
                                  (d)->keyword, (t)->value, (t)->key);                             \
    } while (0)

int parser_copy_string(struct parser *p, const struct sim_token *t, char *dst, size_t size);
int parser_unknown_key(struct parser *p, const struct sim_directive *d, const struct sim_token *t);
int parser_positional_u32(struct parser *p, const struct sim_directive *d, const char *what,
                          uint32_t *ret);
int parser_gpu_ref(struct parser *p, const struct sim_token *t, unsigned *ret);

/* A `gpu N` directive (scenario_gpu.c). */
int parser_gpu(struct parser *p, const struct sim_directive *d);
int parser_process(struct parser *p, const struct sim_directive *d);
/* After all directives: sorts processes by start and checks pid reuse and MIG references. */
int parser_check_processes(struct parser *p);
