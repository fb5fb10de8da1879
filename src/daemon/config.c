/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "exposition.h"
#include "kube_labels.h"
#include "macro.h"
#include "options.h"
#include "server.h"
#include "parse_num.h"
#include "promtext.h"
#include "rapl.h"
#include "server.h"

void config_usage(const char *program) {
    options_print_help(stdout, program);
}

static int parse_bool(const char *s, bool *ret) {
    if (!s || strcmp(s, "true") == 0 || strcmp(s, "1") == 0 || strcmp(s, "yes") == 0) {
        *ret = true;
        return 0;
    }
    if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0 || strcmp(s, "no") == 0) {
        *ret = false;
        return 0;
    }
    return -EINVAL;
}

static int bad(const char *flag, const char *value, const char *why) {
    fprintf(stderr, "joulestat: invalid value '%s' for --%s: %s\n", value ? value : "", flag, why);
    return -EINVAL;
}

static int parse_positive_duration(const char *flag, const char *value, uint64_t *ret) {
    uint64_t ns;

    if (parse_duration_ns(value, &ns) < 0)
        return bad(flag, value, "expected a duration such as 500ms, 10s or 5m");
    if (ns == 0)
        return bad(flag, value, "must be greater than zero");
    *ret = ns;
    return 0;
}

/* The longest process scan interval with RAPL on: the smallest counter range (AMD's 2^32
 * units of 2^-16 J, 65 kJ) at the 1000 W bound joulestat assumes for any domain. */
#define RAPL_SCAN_INTERVAL_MAX_NS (60 * NSEC_PER_SEC)
#define INTERVAL_MAX_NS (3600 * NSEC_PER_SEC)

/* A sampling or scan interval: the clocks involved count in microseconds and the driver
 * updates its readings every 100 ms, so below a millisecond is a mistake (and a replay
 * would never move on). */
static int parse_interval(const char *flag, const char *value, uint64_t *ret) {
    uint64_t ns;
    int r = parse_positive_duration(flag, value, &ns);

    if (r < 0)
        return r;
    if (ns < NSEC_PER_MSEC)
        return bad(flag, value, "must be at least 1ms");
    /* Far beyond any use, and well inside what the deadlines derived from it can hold. */
    if (ns > INTERVAL_MAX_NS)
        return bad(flag, value, "must be at most 1h");
    *ret = ns;
    return 0;
}

static int parse_policy(const char *flag, const char *value, bool cpu, enum idle_policy *ret) {
    int p = idle_policy_from_string(value);

    if (p < 0 || (cpu && (p == IDLE_POLICY_MEMORY || p == IDLE_POLICY_ALLOCATION)))
        return bad(flag, value,
                   cpu ? "expected even, share or unattributed"
                       : "expected even, share, memory, unattributed or allocation");
    *ret = (enum idle_policy)p;
    return 0;
}

static void config_defaults(struct config *cfg) {
    *cfg = (struct config){
        .command = COMMAND_SERVE,
        .sample_interval_ns = NSEC_PER_SEC,
        .process_scan_interval_ns = 10 * NSEC_PER_SEC,
        .slurm_watch = true,
        .metric_retention_ns = 300 * NSEC_PER_SEC,
        .metric_prefix = "joulestat_gpu_process",
        .listen_address = HTTP_DEFAULT_LISTEN,
        .metrics_path = "/metrics",
        .log_level = LOG_LEVEL_INFO,
        .kubernetes_enabled = true,
        .pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock",
        .kubernetes_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token",
        .kubernetes_ca_file = KUBE_DEFAULT_CA_FILE,
        .procfs = "/proc",
        .sysfs = "/sys",
        .devfs = "/dev",
        .gpu_enabled = true,
        .seccomp = true,
        .drop_capabilities = true,
        .gpu_idle_power_watts = -1,
        .gpu_idle_policy = IDLE_POLICY_EVEN,
        .cpu_idle_policy = IDLE_POLICY_UNATTRIBUTED,
        .rapl_source = "auto",
    };
}

static int apply_option(struct config *cfg, int opt, const char *arg) {
    const struct option_doc *doc = option_doc_find(opt);
    const char *name = doc ? doc->name : "";
    int r;

    switch (opt) {
    case OPT_SAMPLE_INTERVAL:
        return parse_interval(name, arg, &cfg->sample_interval_ns);
    case OPT_PROCESS_SCAN_INTERVAL:
        return parse_interval(name, arg, &cfg->process_scan_interval_ns);
    case OPT_METRIC_RETENTION:
        if (parse_duration_ns(arg, &cfg->metric_retention_ns) < 0)
            return bad(name, arg, "expected a duration such as 5m");
        return 0;
    case OPT_METRIC_PREFIX:
        if (!promtext_name_valid(arg))
            return bad(name, arg, "not a valid Prometheus metric name prefix");
        /* joulestat_gpu would make joulestat_gpu_energy_joules_total twice, one family
         * per GPU and one per process: the exporter's own names are kept for it. */
        if (strncmp(arg, "joulestat_", strlen("joulestat_")) == 0 &&
            strcmp(arg, EXPOSITION_DEFAULT_PREFIX) != 0)
            return bad(name, arg, "joulestat_ names are the exporter's own families");
        cfg->metric_prefix = arg;
        return 0;
    case OPT_LISTEN_ADDRESS:
        cfg->listen_address = arg;
        return 0;
    case OPT_METRICS_PATH:
        if (arg[0] != '/')
            return bad(name, arg, "must start with '/'");
        if (!http_metrics_path_valid(arg))
            return bad(name, arg,
                       "must name a path other than / and /healthz, in printable ASCII "
                       "without quotes, <, >, &, \\, ?, # or %");
        cfg->metrics_path = arg;
        return 0;
    case OPT_WEB_CONFIG:
        cfg->web_config_file = arg;
        return 0;
    case OPT_LOG_LEVEL:
        if (log_level_from_string(arg, &cfg->log_level) < 0)
            return bad(name, arg, "expected debug, info, warn or error");
        return 0;
    case OPT_KUBERNETES:
        if (parse_bool(arg, &cfg->kubernetes_enabled) < 0)
            return bad(name, arg, "expected true or false");
        return 0;
    case OPT_ENERGY_ESTIMATION: {
        bool ignored;

        /* my-gpu-exporter's switch; joulestat always splits shared windows (and says so). */
        if (parse_bool(arg, &ignored) < 0)
            return bad(name, arg, "expected true or false");
        return 0;
    }
    case OPT_POD_RESOURCES:
        cfg->pod_resources_socket = arg;
        cfg->pod_resources_socket_given = true;
        return 0;
    case OPT_KUBERNETES_API_URL:
        cfg->kubernetes_api_url = arg;
        return 0;
    case OPT_KUBERNETES_TOKEN_FILE:
        cfg->kubernetes_token_file = arg;
        return 0;
    case OPT_KUBERNETES_CA_FILE:
        cfg->kubernetes_ca_file = arg;
        return 0;
    case OPT_NODE_NAME:
        cfg->node_name = arg;
        return 0;
    case OPT_PROCFS:
        cfg->procfs = arg;
        return 0;
    case OPT_SYSFS:
        cfg->sysfs = arg;
        return 0;
    case OPT_DEVFS:
        cfg->devfs = arg;
        return 0;
    case OPT_PROCFS_KEEP_FDS:
        if (strcmp(arg, "auto") == 0)
            cfg->procfs_keep_fds = PROCFS_KEEP_FDS_AUTO;
        else if (strcmp(arg, "on") == 0)
            cfg->procfs_keep_fds = PROCFS_KEEP_FDS_ON;
        else if (strcmp(arg, "off") == 0)
            cfg->procfs_keep_fds = PROCFS_KEEP_FDS_OFF;
        else
            return bad(name, arg, "expected auto, on or off");
        return 0;
    case OPT_PROCESS_BPF:
        if (strcmp(arg, "auto") == 0)
            cfg->process_bpf_off = false;
        else if (strcmp(arg, "off") == 0)
            cfg->process_bpf_off = true;
        else
            return bad(name, arg, "expected auto or off");
        return 0;
    case OPT_NVML_LIBRARY:
        cfg->nvml_library = arg;
        return 0;
    case OPT_DCGM:
        if (arg[0] == '\0')
            return bad(name, arg, "expected HOST[:PORT], /socket/path or off");
        cfg->dcgm_address = arg;
        return 0;
    case OPT_DCGM_LIBRARY:
        cfg->dcgm_library = arg;
        return 0;
    case OPT_NO_SECCOMP:
        cfg->seccomp = false;
        return 0;
    case OPT_KEEP_CAPABILITIES:
        cfg->drop_capabilities = false;
        return 0;
    case OPT_NO_GPU:
        cfg->gpu_enabled = false;
        return 0;
    case OPT_GPU_IDLE_POWER:
        r = safe_atod(arg, &cfg->gpu_idle_power_watts);
        if (r < 0 || cfg->gpu_idle_power_watts < 0 || cfg->gpu_idle_power_watts > 10000)
            return bad(name, arg, "expected watts between 0 and 10000");
        return 0;
    case OPT_GPU_IDLE_POLICY:
        return parse_policy(name, arg, false, &cfg->gpu_idle_policy);
    case OPT_STATE_DIR:
        if (!arg[0])
            return bad(name, arg, "expected a directory");
        cfg->state_dir = arg;
        return 0;
    case OPT_GPU_SPLIT:
        if (strcmp(arg, "learned") == 0 || strcmp(arg, "sm-share") == 0) {
            cfg->gpu_split_sm_share = strcmp(arg, "sm-share") == 0;
            return 0;
        }
        return bad(name, arg, "expected learned or sm-share");
    case OPT_CPU_IDLE_POLICY:
        return parse_policy(name, arg, true, &cfg->cpu_idle_policy);
    case OPT_RAPL_SOURCE:
        /* The sources' own names: the sampler and check parse the same string. */
        if (rapl_mode_from_string(arg) < 0)
            return bad(name, arg, "expected auto, powercap, msr, perf or off");
        cfg->rapl_source = arg;
        return 0;
    case OPT_CPU_PROCESS_METRICS:
        if (parse_bool(arg, &cfg->cpu_process_metrics) < 0)
            return bad(name, arg, "expected true or false");
        return 0;
    case OPT_SLURM_WATCH:
        if (parse_bool(arg, &cfg->slurm_watch) < 0)
            return bad(name, arg, "expected true or false");
        return 0;
    case OPT_TRACE:
        cfg->trace_file = arg;
        return 0;
    case OPT_SCENARIO:
        cfg->scenario = arg;
        return 0;
    case OPT_DURATION:
        return parse_positive_duration(name, arg, &cfg->replay_duration_ns);
    case OPT_JSON:
        cfg->json = true;
        return 0;
    case OPT_ALL:
        cfg->all = true;
        return 0;
    case OPT_HELP:
        cfg->command = COMMAND_HELP;
        return 0;
    case OPT_HELP_MAN:
        cfg->command = COMMAND_HELP_MAN;
        return 0;
    case OPT_VERSION:
        cfg->command = COMMAND_VERSION;
        return 0;
    default:
        return -EINVAL;
    }
}

int config_parse(int argc, char **argv, struct config *cfg) {
    _cleanup_(freep) struct option *longopts = calloc(options_getopt_size(), sizeof(*longopts));
    struct config c;
    bool have_command = false;
    int opt, r;

    if (!longopts)
        return -ENOMEM;
    options_getopt_fill(longopts);
    config_defaults(&c);
    /* Go-style single-dash long flags (-listen-address=:19400) work too, as with the Go
     * exporters people migrate from. */
    optind = 0;
    opterr = 0;
    for (;;) {
        /* optind 0 asks getopt to start over; the first argument is then argv[1]. */
        int next = optind == 0 ? 1 : optind;

        if (next >= argc)
            break;
        if (argv[next][0] != '-') {
            bool found = false;

            if (have_command && c.command == COMMAND_RUN) {
                c.run_argv = &argv[next]; /* the command, without a "--" before it */
                break;
            }
            if (have_command && c.command == COMMAND_TOP && !c.top_url) {
                c.top_url = argv[next];
                optind = next + 1;
                continue;
            }
            if (have_command) {
                fprintf(stderr, "joulestat: unexpected argument '%s'\n", argv[next]);
                return -EINVAL;
            }
            for (size_t i = 0; i < n_command_docs; i++)
                if (strcmp(argv[next], command_docs[i].name) == 0) {
                    c.command = command_docs[i].command;
                    found = true;
                }
            if (!found) {
                fprintf(stderr, "joulestat: unknown command '%s' (try --help)\n", argv[next]);
                return -EINVAL;
            }
            have_command = true;
            optind = next + 1;
            continue;
        }
        opt = getopt_long_only(argc, argv, "+", longopts, NULL);
        if (opt == -1) {
            if (c.command == COMMAND_RUN && optind < argc)
                c.run_argv = &argv[optind]; /* after "--" */
            else if (optind < argc) {
                /* "--", or a word that is not an option, where nothing more is taken:
                 * what follows would be dropped without a word. */
                fprintf(stderr, "joulestat: unexpected argument '%s' (try --help)\n", argv[optind]);
                return -EINVAL;
            }
            break;
        }
        if (opt == '?' || opt == ':') {
            fprintf(stderr, "joulestat: unknown or incomplete option '%s' (try --help)\n",
                    argv[optind - 1]);
            return -EINVAL;
        }
        r = apply_option(&c, opt, optarg);
        if (r < 0)
            return r;
    }
    if (c.command == COMMAND_RUN && (!c.run_argv || !c.run_argv[0])) {
        fprintf(stderr, "joulestat: run needs a command: joulestat run -- CMD [ARGS...]\n");
        return -EINVAL;
    }
    if (c.command == COMMAND_REPLAY && !c.scenario) {
        fprintf(stderr, "joulestat: replay needs --scenario FILE\n");
        return -EINVAL;
    }
    /* RAPL is read at each scan, and a scan comes at a tick: a counter may not wrap twice
     * in between. */
    if ((c.command == COMMAND_SERVE || c.command == COMMAND_TOP) &&
        strcmp(c.rapl_source, "off") != 0 &&
        MAX(c.process_scan_interval_ns, c.sample_interval_ns) > RAPL_SCAN_INTERVAL_MAX_NS) {
        fprintf(stderr,
                "joulestat: --process-scan-interval or --sample-interval above 60s with RAPL: "
                "its counters are read at each scan, at a tick, and may wrap more than once in "
                "between (an AMD package's range is 65 kJ, 65 s at 1000 W); scan more often, or "
                "--rapl-source=off\n");
        return -EINVAL;
    }
    *cfg = c;
    return 0;
}
