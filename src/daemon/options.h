/* SPDX-License-Identifier: MIT */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"

/*
 * The command line in one table: getopt's option list, `--help` and the joulestat(8) man
 * page (`--help-man`, written at build time) are all generated from it, so they cannot
 * drift apart.
 */

enum option_id {
    OPT_SAMPLE_INTERVAL = 0x100,
    OPT_PROCESS_SCAN_INTERVAL,
    OPT_METRIC_RETENTION,
    OPT_METRIC_PREFIX,
    OPT_LISTEN_ADDRESS,
    OPT_METRICS_PATH,
    OPT_WEB_CONFIG,
    OPT_LOG_LEVEL,
    OPT_NO_SECCOMP,
    OPT_KEEP_CAPABILITIES,
    OPT_KUBERNETES,
    OPT_POD_RESOURCES,
    OPT_KUBERNETES_API_URL,
    OPT_KUBERNETES_TOKEN_FILE,
    OPT_KUBERNETES_CA_FILE,
    OPT_NODE_NAME,
    OPT_PROCFS,
    OPT_SYSFS,
    OPT_DEVFS,
    OPT_PROCFS_KEEP_FDS,
    OPT_PROCESS_BPF,
    OPT_NVML_LIBRARY,
    OPT_DCGM,
    OPT_DCGM_LIBRARY,
    OPT_NO_GPU,
    OPT_GPU_IDLE_POWER,
    OPT_GPU_IDLE_POLICY,
    OPT_GPU_SPLIT,
    OPT_STATE_DIR,
    OPT_CPU_IDLE_POLICY,
    OPT_RAPL_SOURCE,
    OPT_CPU_PROCESS_METRICS,
    OPT_SLURM_WATCH,
    OPT_SCENARIO,
    OPT_TRACE,
    OPT_DURATION,
    OPT_JSON,
    OPT_ALL,
    OPT_ENERGY_ESTIMATION,
    OPT_HELP,
    OPT_HELP_MAN,
    OPT_VERSION,
};

enum option_group {
    OPTION_GROUP_SAMPLING,
    OPTION_GROUP_EXPORTER,
    OPTION_GROUP_KUBERNETES,
    OPTION_GROUP_PATHS,
    OPTION_GROUP_COMMANDS,
    OPTION_GROUP_GENERAL,
    _OPTION_GROUP_MAX,
};

struct option_doc {
    enum option_id id;
    const char *name;  /* the long name, without "--" */
    const char *alias; /* a second name (my-gpu-exporter's or exporter-toolkit's), or NULL */
    int has_arg;       /* getopt's no_argument, required_argument, optional_argument */
    const char *arg;   /* the value's placeholder in --help and the man page, or NULL */
    enum option_group group;
    const char *help; /* one or more sentences; wrapped when printed */
    bool hidden;      /* accepted, not listed (build-time helpers) */
};

struct command_doc {
    const char *name;
    enum command command;
    const char *synopsis; /* what follows the name in the usage line, or "" */
    const char *help;
};

extern const struct option_doc option_docs[];
extern const size_t n_option_docs;
extern const struct command_doc command_docs[];
extern const size_t n_command_docs;
extern const char *const option_group_titles[_OPTION_GROUP_MAX];

/* The option's documentation, or NULL for an id that has none. */
const struct option_doc *option_doc_find(int id);

/* Writes getopt_long's table (every name and alias, then the zero entry) into out, which
 * must hold options_getopt_size() entries. */
size_t options_getopt_size(void);
void options_getopt_fill(struct option *out);

/* --help, for a terminal. */
void options_print_help(FILE *f, const char *program);
/* joulestat(8) in roff, from the same table and texts as --help. */
void options_print_man(FILE *f);
