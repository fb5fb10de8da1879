/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "macro.h"
#include "parse_num.h"
#include "promtext.h"
#include "rapl.h"

enum {
    OPT_SAMPLE_INTERVAL = 0x100,
    OPT_PROCESS_SCAN_INTERVAL,
    OPT_METRIC_RETENTION,
    OPT_METRIC_PREFIX,
    OPT_LISTEN_ADDRESS,
    OPT_METRICS_PATH,
    OPT_WEB_CONFIG,
    OPT_LOG_LEVEL,
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
    OPT_NVML_LIBRARY,
    OPT_NO_GPU,
    OPT_GPU_IDLE_POWER,
    OPT_GPU_IDLE_POLICY,
    OPT_CPU_IDLE_POLICY,
    OPT_RAPL_SOURCE,
    OPT_CPU_PROCESS_METRICS,
    OPT_SCENARIO,
    OPT_DURATION,
    OPT_JSON,
    OPT_ALL,
    OPT_ENERGY_ESTIMATION,
    OPT_HELP,
    OPT_VERSION,
};

static const struct option options[] = {
    {"sample-interval", required_argument, NULL, OPT_SAMPLE_INTERVAL},
    {"dcgm-update-frequency", required_argument, NULL, OPT_SAMPLE_INTERVAL},
    {"process-scan-interval", required_argument, NULL, OPT_PROCESS_SCAN_INTERVAL},
    {"metric-retention", required_argument, NULL, OPT_METRIC_RETENTION},
    {"metric-prefix", required_argument, NULL, OPT_METRIC_PREFIX},
    {"listen-address", required_argument, NULL, OPT_LISTEN_ADDRESS},
    {"web.listen-address", required_argument, NULL, OPT_LISTEN_ADDRESS},
    {"metrics-path", required_argument, NULL, OPT_METRICS_PATH},
    {"web.telemetry-path", required_argument, NULL, OPT_METRICS_PATH},
    {"web.config.file", required_argument, NULL, OPT_WEB_CONFIG},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"log.level", required_argument, NULL, OPT_LOG_LEVEL},
    {"kubernetes-enabled", optional_argument, NULL, OPT_KUBERNETES},
    {"pod-resources-socket", required_argument, NULL, OPT_POD_RESOURCES},
    {"kubernetes-api-url", required_argument, NULL, OPT_KUBERNETES_API_URL},
    {"kubernetes-token-file", required_argument, NULL, OPT_KUBERNETES_TOKEN_FILE},
    {"kubernetes-ca-file", required_argument, NULL, OPT_KUBERNETES_CA_FILE},
    {"node-name", required_argument, NULL, OPT_NODE_NAME},
    {"path.procfs", required_argument, NULL, OPT_PROCFS},
    {"path.sysfs", required_argument, NULL, OPT_SYSFS},
    {"path.dev", required_argument, NULL, OPT_DEVFS},
    {"procfs-keep-fds", required_argument, NULL, OPT_PROCFS_KEEP_FDS},
    {"nvml-library", required_argument, NULL, OPT_NVML_LIBRARY},
    {"no-gpu", no_argument, NULL, OPT_NO_GPU},
    {"gpu-idle-power", required_argument, NULL, OPT_GPU_IDLE_POWER},
    {"gpu-idle-policy", required_argument, NULL, OPT_GPU_IDLE_POLICY},
    {"cpu-idle-policy", required_argument, NULL, OPT_CPU_IDLE_POLICY},
    {"rapl-source", required_argument, NULL, OPT_RAPL_SOURCE},
    {"cpu-process-metrics", optional_argument, NULL, OPT_CPU_PROCESS_METRICS},
    {"enable-energy-estimation", optional_argument, NULL, OPT_ENERGY_ESTIMATION},
    {"scenario", required_argument, NULL, OPT_SCENARIO},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"json", no_argument, NULL, OPT_JSON},
    {"all", no_argument, NULL, OPT_ALL},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {},
};

static const struct {
    const char *name;
    enum command command;
} commands[] = {
    {"serve", COMMAND_SERVE},   {"check", COMMAND_CHECK},     {"ps", COMMAND_PS},
    {"replay", COMMAND_REPLAY}, {"version", COMMAND_VERSION}, {"help", COMMAND_HELP},
};

void config_usage(const char *program) {
    printf("Usage: %s [serve|check|ps|replay|version] [OPTIONS]\n"
           "\n"
           "Measures GPU and CPU energy and splits it exactly among processes, containers,\n"
           "pods and SLURM jobs; exports Prometheus counters.\n"
           "\n"
           "Commands:\n"
           "  serve                      run the exporter (default)\n"
           "  check                      say which sources work here, and why not\n"
           "  ps [--json] [--all]        processes using GPUs and CPU, with identity and energy\n"
           "  replay --scenario FILE     play a simulated GPU node on a virtual clock, print\n"
           "                             the exposition\n"
           "  version                    print the version\n"
           "\n"
           "Sampling and attribution:\n"
           "  --sample-interval D        GPU sampling period (default 1s; alias\n"
           "                             --dcgm-update-frequency)\n"
           "  --process-scan-interval D  process and CPU scan period (default 10s)\n"
           "  --gpu-idle-power W         GPU idle power in watts (default: learned)\n"
           "  --gpu-idle-policy P        even|share|memory|unattributed|allocation (default even)\n"
           "  --cpu-idle-policy P        even|share|unattributed (default unattributed)\n"
           "  --rapl-source S            auto|powercap|msr|perf|off (default auto)\n"
           "  --cpu-process-metrics      export CPU energy per process (cardinality)\n"
           "  --nvml-library PATH        NVML library to load (default libnvidia-ml.so.1)\n"
           "  --no-gpu                   do not use NVML\n"
           "\n"
           "Exporter:\n"
           "  --listen-address ADDR      default :9400 (alias --web.listen-address)\n"
           "  --metrics-path PATH        default /metrics (alias --web.telemetry-path)\n"
           "  --web.config.file FILE     TLS and basic auth (exporter-toolkit format)\n"
           "  --metric-prefix P          per-process GPU family prefix (default\n"
           "                             joulestat_gpu_process; my_gpu_process for\n"
           "                             my-gpu-exporter compatibility)\n"
           "  --metric-retention D       keep exited processes this long (default 5m)\n"
           "  --kubernetes-enabled[=B]   map processes to pods (default true)\n"
           "  --pod-resources-socket P   kubelet pod-resources socket\n"
           "  --kubernetes-api-url URL   API server (default: in-cluster, from\n"
           "                             KUBERNETES_SERVICE_HOST/PORT)\n"
           "  --kubernetes-token-file F  service-account token (default in-cluster path)\n"
           "  --kubernetes-ca-file F     API server CA (default in-cluster path)\n"
           "  --node-name N              this node (default $NODE_NAME, else hostname)\n"
           "  --log-level L              debug|info|warn|error (default info)\n"
           "\n"
           "Paths (for containers and tests):\n"
           "  --path.procfs P  --path.sysfs P  --path.dev P   (defaults /proc, /sys, /dev)\n"
           "  --procfs-keep-fds M        auto|on|off: keep <pid>/stat open between scans\n"
           "                             (default auto: on a real procfs only; on: also on\n"
           "                             trees whose files are rewritten in place)\n"
           "\n"
           "Durations take units: 100ms, 10s, 5m, 1h30m.\n",
           program);
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
        .metric_retention_ns = 300 * NSEC_PER_SEC,
        .metric_prefix = "joulestat_gpu_process",
        .listen_address = ":9400",
        .metrics_path = "/metrics",
        .log_level = LOG_LEVEL_INFO,
        .kubernetes_enabled = true,
        .pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock",
        .kubernetes_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token",
        .kubernetes_ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
        .procfs = "/proc",
        .sysfs = "/sys",
        .devfs = "/dev",
        .gpu_enabled = true,
        .gpu_idle_power_watts = -1,
        .gpu_idle_policy = IDLE_POLICY_EVEN,
        .cpu_idle_policy = IDLE_POLICY_UNATTRIBUTED,
        .rapl_source = "auto",
    };
}

static int apply_option(struct config *cfg, int opt, const char *arg) {
    const char *name = NULL;
    int r;

    for (size_t i = 0; options[i].name; i++)
        if (options[i].val == opt) {
            name = options[i].name;
            break;
        }

    switch (opt) {
    case OPT_SAMPLE_INTERVAL:
        return parse_positive_duration(name, arg, &cfg->sample_interval_ns);
    case OPT_PROCESS_SCAN_INTERVAL:
        return parse_positive_duration(name, arg, &cfg->process_scan_interval_ns);
    case OPT_METRIC_RETENTION:
        if (parse_duration_ns(arg, &cfg->metric_retention_ns) < 0)
            return bad(name, arg, "expected a duration such as 5m");
        return 0;
    case OPT_METRIC_PREFIX:
        if (!promtext_name_valid(arg))
            return bad(name, arg, "not a valid Prometheus metric name prefix");
        cfg->metric_prefix = arg;
        return 0;
    case OPT_LISTEN_ADDRESS:
        cfg->listen_address = arg;
        return 0;
    case OPT_METRICS_PATH:
        if (arg[0] != '/')
            return bad(name, arg, "must start with '/'");
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
    case OPT_NVML_LIBRARY:
        cfg->nvml_library = arg;
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
    case OPT_VERSION:
        cfg->command = COMMAND_VERSION;
        return 0;
    default:
        return -EINVAL;
    }
}

int config_parse(int argc, char **argv, struct config *cfg) {
    struct config c;
    bool have_command = false;
    int opt, r;

    config_defaults(&c);
    /* Go-style single-dash long flags (-listen-address=:9400) work too, as with the Go
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

            if (have_command) {
                fprintf(stderr, "joulestat: unexpected argument '%s'\n", argv[next]);
                return -EINVAL;
            }
            for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
                if (strcmp(argv[next], commands[i].name) == 0) {
                    c.command = commands[i].command;
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
        opt = getopt_long_only(argc, argv, "+", options, NULL);
        if (opt == -1)
            break;
        if (opt == '?' || opt == ':') {
            fprintf(stderr, "joulestat: unknown or incomplete option '%s' (try --help)\n",
                    argv[optind - 1]);
            return -EINVAL;
        }
        r = apply_option(&c, opt, optarg);
        if (r < 0)
            return r;
    }
    if (c.command == COMMAND_REPLAY && !c.scenario) {
        fprintf(stderr, "joulestat: replay needs --scenario FILE\n");
        return -EINVAL;
    }
    *cfg = c;
    return 0;
}
