/* SPDX-License-Identifier: MIT */
#include "options.h"

#include "macro.h"

#define S OPTION_GROUP_SAMPLING
#define E OPTION_GROUP_EXPORTER
#define K OPTION_GROUP_KUBERNETES
#define P OPTION_GROUP_PATHS
#define C OPTION_GROUP_COMMANDS
#define G OPTION_GROUP_GENERAL

const struct option_doc option_docs[] = {
    {OPT_SAMPLE_INTERVAL, "sample-interval", "dcgm-update-frequency", required_argument, "D", S,
     "GPU sampling period (default 1s, 1ms to 1h; at most 60s while RAPL is read). check "
     "samples twice this far apart; top refreshes this often."},
    {OPT_PROCESS_SCAN_INTERVAL, "process-scan-interval", NULL, required_argument, "D", S,
     "Process, cgroup and RAPL scan period (default 10s, 1ms to 1h; at most 60s while RAPL is "
     "read)."},
    {OPT_GPU_IDLE_POWER, "gpu-idle-power", NULL, required_argument, "W", S,
     "GPU idle power in watts (default: learned from the readings)."},
    {OPT_GPU_IDLE_POLICY, "gpu-idle-policy", NULL, required_argument, "P", S,
     "Who gets a GPU's idle energy: even, share, memory, unattributed or allocation "
     "(default even)."},
    {OPT_STATE_DIR, "state-dir", NULL, required_argument, "DIR", S,
     "serve: keep every counter in DIR/joulestat.state (saved before each snapshot is "
     "published, every 5 s, and at exit) and restore it at start, so no counter goes back "
     "across a restart, even a crash while saves work (default: none)."},
    {OPT_GPU_SPLIT, "gpu-split", NULL, required_argument, "M", S,
     "How a shared GPU's energy is split: learned (each process by its learned watts per "
     "unit of SM time, SM share until learned) or sm-share (default learned)."},
    {OPT_CPU_IDLE_POLICY, "cpu-idle-policy", NULL, required_argument, "P", S,
     "Who gets the CPU's idle energy: even, share or unattributed (default unattributed)."},
    {OPT_RAPL_SOURCE, "rapl-source", NULL, required_argument, "S", S,
     "CPU energy from auto, powercap, msr, perf or off (default auto: powercap, then perf, "
     "then msr)."},
    {OPT_CPU_PROCESS_METRICS, "cpu-process-metrics", NULL, optional_argument, "[=B]", S,
     "Also export CPU energy per process (one series per process: opt-in)."},
    {OPT_SLURM_WATCH, "slurm-watch", NULL, optional_argument, "[=B]", S,
     "Follow SLURM job cgroups with inotify, so a job's CPU time is read to its end and a "
     "job shorter than a scan is seen (default true; docs/SLURM.md)."},
    {OPT_NVML_LIBRARY, "nvml-library", NULL, required_argument, "PATH", S,
     "NVML library to load (default libnvidia-ml.so.1)."},
    {OPT_DCGM, "dcgm", NULL, required_argument, "ADDR", S,
     "nv-hostengine (DCGM) to ask for the SM activity of MIG instances on GPUs without GPM "
     "(A100, A30): HOST[:PORT], a unix socket's /path, or off (default 127.0.0.1:5555, asked "
     "only for such a GPU)."},
    {OPT_DCGM_LIBRARY, "dcgm-library", NULL, required_argument, "PATH", S,
     "DCGM library to load (default libdcgm.so.4, then libdcgm.so.3)."},
    {OPT_NO_GPU, "no-gpu", NULL, no_argument, NULL, S,
     "Do not use NVML: for nodes without NVIDIA GPUs. The GPU source is then not exported "
     "at all, so no alert fires for it."},
    {OPT_ENERGY_ESTIMATION, "enable-energy-estimation", NULL, optional_argument, "[=B]", S,
     "Accepted for my-gpu-exporter; energy of shared windows is always split and labelled "
     "energy_estimated=\"true\"."},

    {OPT_LISTEN_ADDRESS, "listen-address", "web.listen-address", required_argument, "ADDR", E,
     "Address to serve on: :PORT, HOST:PORT or [IPv6]:PORT (default :19400). It is bound "
     "before any source starts; use :9400 in place of my-gpu-exporter."},
    {OPT_METRICS_PATH, "metrics-path", "web.telemetry-path", required_argument, "PATH", E,
     "Path of the metrics (default /metrics)."},
    {OPT_WEB_CONFIG, "web.config.file", NULL, required_argument, "FILE", E,
     "TLS and basic auth, in the exporter-toolkit format; re-read on SIGHUP and when it "
     "changes."},
    {OPT_METRIC_PREFIX, "metric-prefix", NULL, required_argument, "P", E,
     "Prefix of the per-process GPU families (default joulestat_gpu_process; my_gpu_process "
     "gives my-gpu-exporter's names)."},
    {OPT_METRIC_RETENTION, "metric-retention", NULL, required_argument, "D", E,
     "Keep exited processes this long, with _active 0 (default 5m)."},
    {OPT_LOG_LEVEL, "log-level", "log.level", required_argument, "L", E,
     "debug, info, warn or error (default info)."},
    {OPT_NO_SECCOMP, "no-seccomp", NULL, no_argument, NULL, E,
     "serve: no system-call filter once the sources are open (default: a seccomp allow-list; "
     "docs/DEPLOY.md)."},
    {OPT_KEEP_CAPABILITIES, "keep-capabilities", NULL, no_argument, NULL, E,
     "serve: keep every capability after start (default: all but CAP_SYS_PTRACE, and "
     "CAP_DAC_READ_SEARCH with --web.config.file, are dropped once the sources are open)."},

    {OPT_KUBERNETES, "kubernetes-enabled", NULL, optional_argument, "[=B]", K,
     "Map processes to pods (default true)."},
    {OPT_POD_RESOURCES, "pod-resources-socket", NULL, required_argument, "PATH", K,
     "kubelet pod-resources socket (default /var/lib/kubelet/pod-resources/kubelet.sock)."},
    {OPT_KUBERNETES_API_URL, "kubernetes-api-url", NULL, required_argument, "URL", K,
     "API server (default: in-cluster, from KUBERNETES_SERVICE_HOST and _PORT)."},
    {OPT_KUBERNETES_TOKEN_FILE, "kubernetes-token-file", NULL, required_argument, "FILE", K,
     "Service-account token (default: the in-cluster path)."},
    {OPT_KUBERNETES_CA_FILE, "kubernetes-ca-file", NULL, required_argument, "FILE", K,
     "API server CA (default: the in-cluster path)."},
    {OPT_NODE_NAME, "node-name", NULL, required_argument, "N", K,
     "This node's name (default $NODE_NAME, else the host name)."},

    {OPT_PROCFS, "path.procfs", NULL, required_argument, "PATH", P, "procfs root (default /proc)."},
    {OPT_SYSFS, "path.sysfs", NULL, required_argument, "PATH", P,
     "sysfs root (default /sys): powercap RAPL, perf PMUs, cgroups."},
    {OPT_DEVFS, "path.dev", NULL, required_argument, "PATH", P,
     "devices root (default /dev): only RAPL through MSRs reads it (cpu/N/msr)."},
    {OPT_PROCFS_KEEP_FDS, "procfs-keep-fds", NULL, required_argument, "M", P,
     "auto, on or off: keep each <pid>/stat open between scans (default auto: on a real "
     "procfs only; on: also on trees whose files are rewritten in place)."},
    {OPT_PROCESS_BPF, "process-bpf", NULL, required_argument, "M", P,
     "auto or off: read every process's CPU time in one read of an eBPF task iterator "
     "(default auto: where the kernel and the build allow it, on the kernel's procfs; "
     "off: list /proc and read each process's files)."},

    {OPT_SCENARIO, "scenario", NULL, required_argument, "FILE", C, "replay: the scenario to play."},
    {OPT_DURATION, "duration", NULL, required_argument, "D", C,
     "replay: how much of the scenario to play (default: all of it)."},
    {OPT_TRACE, "trace", NULL, required_argument, "FILE", C,
     "replay, serve: also write every GPU window (energy, idle, each process's SM activity) "
     "to FILE, for scripts/accuracy-score's baselines."},
    {OPT_JSON, "json", NULL, no_argument, NULL, C, "ps, run: JSON instead of a table."},
    {OPT_ALL, "all", NULL, no_argument, NULL, C,
     "ps: every process, also those with no energy yet."},

    {OPT_HELP, "help", NULL, no_argument, NULL, G, "Print this help."},
    {OPT_VERSION, "version", NULL, no_argument, NULL, G, "Print the version."},
    {OPT_HELP_MAN, "help-man", NULL, no_argument, NULL, G, "Print the man page in roff.", true},
};
const size_t n_option_docs = ARRAY_SIZE(option_docs);

const struct command_doc command_docs[] = {
    {"serve", COMMAND_SERVE, "", "Run the exporter (the default command)."},
    {"check", COMMAND_CHECK, "",
     "Sample every source twice and say, per source, what works, what does not and what "
     "to do about it. Exits 1 when no energy source works."},
    {"ps", COMMAND_PS, "[--json] [--all]",
     "Processes using the GPUs and CPUs, with their identity and energy."},
    {"replay", COMMAND_REPLAY, "--scenario FILE",
     "Play a simulated GPU node on a virtual clock and print the exposition."},
    {"run", COMMAND_RUN, "[--json] -- CMD [ARGS...]",
     "Run a command and print the GPU and CPU energy it and its children used (like perf "
     "stat), then exit with its status."},
    {"top", COMMAND_TOP, "[URL]",
     "A live view of the workloads in the terminal: power now, energy so far, GPU and CPU, "
     "learned intensity, per process, container, pod, job or service; sorted and "
     "filtered, refreshed every --sample-interval. From the local sources, or from a "
     "running exporter's metrics URL (http://host:19400/metrics). Keys: q quit, g level, "
     "< > sort column, r reverse, / filter."},
    {"version", COMMAND_VERSION, "", "Print the version."},
    {"help", COMMAND_HELP, "", "Print the help."},
};
const size_t n_command_docs = ARRAY_SIZE(command_docs);

const char *const option_group_titles[_OPTION_GROUP_MAX] = {
    [OPTION_GROUP_SAMPLING] = "Sampling and attribution",
    [OPTION_GROUP_EXPORTER] = "Exporter",
    [OPTION_GROUP_KUBERNETES] = "Kubernetes",
    [OPTION_GROUP_PATHS] = "Paths (for containers and tests)",
    [OPTION_GROUP_COMMANDS] = "Options of ps and replay",
    [OPTION_GROUP_GENERAL] = "General",
};

const struct option_doc *option_doc_find(int id) {
    for (size_t i = 0; i < n_option_docs; i++)
        if ((int)option_docs[i].id == id)
            return &option_docs[i];
    return NULL;
}

size_t options_getopt_size(void) {
    size_t n = 1;

    for (size_t i = 0; i < n_option_docs; i++)
        n += option_docs[i].alias ? 2 : 1;
    return n;
}

void options_getopt_fill(struct option *out) {
    size_t n = 0;

    for (size_t i = 0; i < n_option_docs; i++) {
        const struct option_doc *d = &option_docs[i];

        out[n++] = (struct option){d->name, d->has_arg, NULL, (int)d->id};
        if (d->alias)
            out[n++] = (struct option){d->alias, d->has_arg, NULL, (int)d->id};
    }
    out[n] = (struct option){0};
}
