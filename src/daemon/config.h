/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "attribution.h"
#include "log.h"

/* --procfs-keep-fds: keep each process's <pid>/stat open between scans. */
enum procfs_keep_fds {
    PROCFS_KEEP_FDS_AUTO, /* on a real procfs only */
    PROCFS_KEEP_FDS_ON,   /* also on other trees (rewritten in place, like the bench's) */
    PROCFS_KEEP_FDS_OFF,
};

enum command {
    COMMAND_SERVE,
    COMMAND_CHECK,
    COMMAND_PS,
    COMMAND_REPLAY,
    COMMAND_RUN,
    COMMAND_TOP,
    COMMAND_VERSION,
    COMMAND_HELP,
    COMMAND_HELP_MAN, /* the man page in roff (a build step) */
};

/* Everything the command line says, immutable once parsed. Strings point into argv or
 * static defaults. */
struct config {
    enum command command;

    uint64_t sample_interval_ns;       /* --sample-interval, --dcgm-update-frequency */
    uint64_t process_scan_interval_ns; /* --process-scan-interval */
    uint64_t metric_retention_ns;      /* --metric-retention */
    const char *metric_prefix;         /* --metric-prefix */
    const char *listen_address;        /* --listen-address, --web.listen-address */
    const char *metrics_path;          /* --metrics-path, --web.telemetry-path */
    const char *web_config_file;       /* --web.config.file */
    enum log_level log_level;          /* --log-level */
    bool seccomp;                      /* serve: the allow-list; --no-seccomp turns it off */
    bool drop_capabilities;            /* serve: drop them after start; --keep-capabilities */

    bool kubernetes_enabled;           /* --kubernetes-enabled */
    const char *pod_resources_socket;  /* --pod-resources-socket */
    bool pod_resources_socket_given;   /* the flag was given: poll even if absent now */
    const char *kubernetes_api_url;    /* --kubernetes-api-url; NULL: in-cluster env */
    const char *kubernetes_token_file; /* --kubernetes-token-file */
    const char *kubernetes_ca_file;    /* --kubernetes-ca-file */
    const char *node_name;             /* --node-name; NULL: $NODE_NAME, else hostname */

    const char *procfs;       /* --path.procfs */
    const char *exec_records; /* replay: the simulated node's programs as at their exec */
    const char *sysfs;        /* --path.sysfs */
    const char *devfs;        /* --path.dev */
    const char *nvml_library; /* --nvml-library; NULL: the default sonames */
    const char *dcgm_address; /* --dcgm; NULL: 127.0.0.1; "off" */
    const char *dcgm_library; /* --dcgm-library; NULL: the default sonames */
    bool gpu_enabled;         /* --no-gpu turns the GPU source off */

    enum procfs_keep_fds procfs_keep_fds; /* --procfs-keep-fds */
    bool process_bpf_off;                 /* --process-bpf=off */

    double gpu_idle_power_watts;      /* --gpu-idle-power; < 0: learned */
    enum idle_policy gpu_idle_policy; /* --gpu-idle-policy */
    bool gpu_split_sm_share;          /* --gpu-split=sm-share */
    const char *state_dir;            /* --state-dir; NULL: none */
    enum idle_policy cpu_idle_policy; /* --cpu-idle-policy */
    const char *rapl_source;          /* --rapl-source=auto|powercap|msr|perf|off */
    bool cpu_process_metrics;         /* --cpu-process-metrics (cardinality: opt-in) */
    bool slurm_watch;                 /* --slurm-watch: SLURM job cgroups with inotify */

    const char *scenario;        /* replay --scenario FILE */
    const char *trace_file;      /* replay, serve --trace FILE */
    char **run_argv;             /* run -- CMD ARGS...: NULL-terminated (argv's tail) */
    const char *top_url;         /* top URL: a /metrics to read; NULL: the local sources */
    uint64_t replay_duration_ns; /* replay --duration (default: the scenario's) */

    bool json; /* ps --json */
    bool all;  /* ps --all */
};

/* Fills cfg from argv. Returns 0, or -EINVAL after printing what is wrong to stderr. */
int config_parse(int argc, char **argv, struct config *cfg);

/* Prints usage to stdout. */
void config_usage(const char *program);
