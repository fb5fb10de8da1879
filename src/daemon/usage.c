/* SPDX-License-Identifier: MIT */
/* --help and the joulestat(8) man page, both rendered from the tables in options.c and the
 * texts below: what --help says, the man page says too. */
#include <string.h>

#include "macro.h"
#include "options.h"

#ifndef JOULESTAT_SYSCONFDIR
#define JOULESTAT_SYSCONFDIR "/etc"
#endif
#ifndef JOULESTAT_DOCDIR
#define JOULESTAT_DOCDIR "/usr/share/doc/joulestat"
#endif

#define HELP_WIDTH 80
#define HELP_TEXT_COLUMN 29

static const char summary[] =
    "measures GPU and CPU energy and splits it exactly among processes, containers, pods "
    "and SLURM jobs; exports Prometheus counters";

static const char footer[] = "Durations take units: 100ms, 10s, 5m, 1h30m. Booleans: true or "
                             "false (also 1/0, yes/no). Every option also takes the Go form "
                             "-name=value.";

/* Man page sections after OPTIONS: a title, then paragraphs (a paragraph that starts with
 * "- " is an item of a list). */
static const struct {
    const char *title;
    const char *paragraphs[10];
} man_sections[] = {
    {"PRIVILEGES BY SOURCE",
     {"joulestat only reads. What each source needs, and what the shipped systemd unit "
      "grants (a user of its own, with only these capabilities):",
      "- GPU (NVML): read and write access to /dev/nvidiactl and /dev/nvidia<N> (the unit's "
      "DeviceAllow lines); no capability. --no-gpu where there is no NVIDIA GPU.",
      "- RAPL through powercap: read access to <sysfs>/class/powercap/intel-rapl*/energy_uj, "
      "mode 0400 root since Linux 5.10 (CVE-2020-8694): root, CAP_DAC_READ_SEARCH, or a "
      "udev or tmpfiles rule that opens the file to a group. Nothing under /dev.",
      "- RAPL through perf: CAP_PERFMON (or kernel.perf_event_paranoid <= 0) and a system "
      "call filter that allows perf_event_open.",
      "- RAPL through MSRs: CAP_SYS_RAWIO, the msr module and read access to "
      "<dev>/cpu/N/msr (--path.dev).",
      "- Processes and cgroups: nothing; /proc/<pid>/stat and cgroup files are readable by "
      "everyone. SLURM job ids found only in other users' /proc/<pid>/environ need "
      "CAP_SYS_PTRACE. Exec and exit events of the process connector (a job shorter than a "
      "scan keeps its cgroup and job) need CAP_NET_ADMIN to subscribe, and netlink sockets.",
      "- Kubernetes: a service-account token that may get, list and watch pods; write "
      "access to the kubelet pod-resources socket (root).",
      "joulestat check names, for each source, the privilege that is missing.",
      "Once the sources are open, serve drops every capability but CAP_SYS_PTRACE (and "
      "CAP_DAC_READ_SEARCH with --web.config.file, for reloads) in every thread, sets "
      "no-new-privileges and installs a seccomp allow-list; a call outside it fails with "
      "EPERM and is logged. --keep-capabilities and --no-seccomp turn these off."}},
    {"TOP",
     {"joulestat top shows the workloads in the terminal, refreshed every --sample-interval: "
      "per level (process, container, pod, job, service) the power now (POWER_W = GPU_W + "
      "CPU_W), the energy so far (ENERGY_J = GPU_J + CPU_J), the GPUs used and the learned "
      "power intensity (INTENSITY_W). Without a URL it opens the sources itself, with the "
      "same flags as serve; with one (http:// or https://, user:password@ for basic auth) "
      "it reads a running exporter. Power is the counters' increase over the last window in "
      "which the device counters moved.",
      "- g, G: next, previous level. Tab and Shift-Tab too.",
      "- <, >: previous, next sort column; r reverses it; P power, E energy, N name, I "
      "intensity (again: reversed).",
      "- /: type a filter, matched without case against the row's names and its pid; Enter "
      "keeps it, Esc drops it. Esc clears it.",
      "- Up, Down, PgUp, PgDn, Home, End: scroll. q or F10: quit.",
      "It needs a terminal that can move the cursor; under TERM=dumb or without a terminal it "
      "says so and exits 1. Log lines are printed after it quits."}},
    {"FILES",
     {JOULESTAT_SYSCONFDIR "/default/joulestat: the options of the systemd unit "
                           "(JOULESTAT_ARGS), read by its EnvironmentFile line.",
      "joulestat.service: the systemd unit; systemctl enable --now joulestat starts it."}},
    {"ENVIRONMENT",
     {"NODE_NAME: this node's name for the Kubernetes API (see --node-name).",
      "KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT: the in-cluster API server.",
      "JOURNAL_STREAM: set by systemd; when it names stderr, log lines carry syslog "
      "priority prefixes for the journal. Elsewhere (a terminal, a file) they are plain.",
      "JOULESTAT_SIM_SCENARIO: the scenario the simulated GPU node plays when it is loaded "
      "with --nvml-library."}},
    {"SIGNALS",
     {"SIGTERM and SIGINT stop serve. SIGHUP re-reads --web.config.file (as does a change of "
      "the file, seen within 3 s): new passwords apply "
      "to the next request; a file that does not load is logged and the running "
      "configuration kept; a new certificate, key or TLS versions serve new connections "
      "from a new server on the same socket."}},
    {"EXIT STATUS",
     {"0 on success and after SIGTERM or SIGINT; 1 when serving fails (for example an "
      "address that cannot be bound, reported before any source starts) or check finds no "
      "working energy source; 2 for a bad command line."}},
    {"SEE ALSO",
     {"README.md and the documents in " JOULESTAT_DOCDIR
      " (METRICS.md: every exported metric; DEPLOY.md: Kubernetes, systemd and the "
      "privileges; ATTRIBUTION.md: how energy is split), also under docs/ in the source."}},
};

/* Writes text from column `col` (the cursor's), wrapping at HELP_WIDTH with continuation
 * lines indented to `indent`. */
static void print_wrapped(FILE *f, const char *text, size_t col, size_t indent) {
    while (*text) {
        size_t word = strcspn(text, " ");

        if (col > indent && col + 1 + word > HELP_WIDTH) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fwrite(text, 1, word, f);
        col += word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', f);
}

/* "  LABEL" padded to the text column (or on a line of its own when too long), then text. */
static void print_item(FILE *f, const char *label, const char *text) {
    int n = fprintf(f, "  %s", label);

    if (n + 2 > HELP_TEXT_COLUMN) {
        fprintf(f, "\n%*s", HELP_TEXT_COLUMN, "");
        n = HELP_TEXT_COLUMN;
    } else {
        fprintf(f, "%*s", HELP_TEXT_COLUMN - n, "");
        n = HELP_TEXT_COLUMN;
    }
    print_wrapped(f, text, (size_t)n, HELP_TEXT_COLUMN);
}

static void option_label(const struct option_doc *d, char *buf, size_t size) {
    if (!d->arg)
        (void)snprintf(buf, size, "--%s", d->name);
    else if (d->has_arg == optional_argument)
        (void)snprintf(buf, size, "--%s%s", d->name, d->arg);
    else
        (void)snprintf(buf, size, "--%s %s", d->name, d->arg);
}

void options_print_help(FILE *f, const char *program) {
    fprintf(f, "Usage: %s [serve|check|ps|run|top|replay|version] [OPTIONS]\n\n", program);
    fprintf(f, "joulestat %s:", JOULESTAT_VERSION);
    print_wrapped(f, summary, 10 + strlen(JOULESTAT_VERSION), 0);
    fprintf(f, "\nCommands:\n");
    for (size_t i = 0; i < n_command_docs; i++) {
        char label[64];

        (void)snprintf(label, sizeof(label), "%s%s%s", command_docs[i].name,
                       command_docs[i].synopsis[0] ? " " : "", command_docs[i].synopsis);
        print_item(f, label, command_docs[i].help);
    }
    for (int g = 0; g < _OPTION_GROUP_MAX; g++) {
        fprintf(f, "\n%s:\n", option_group_titles[g]);
        for (size_t i = 0; i < n_option_docs; i++) {
            const struct option_doc *d = &option_docs[i];
            char label[96], text[512];

            if (d->group != (enum option_group)g || d->hidden)
                continue;
            option_label(d, label, sizeof(label));
            if (d->alias)
                (void)snprintf(text, sizeof(text), "%s Also --%s.", d->help, d->alias);
            else
                (void)snprintf(text, sizeof(text), "%s", d->help);
            print_item(f, label, text);
        }
    }
    fputc('\n', f);
    print_wrapped(f, footer, 0, 0);
    fprintf(f, "The manual: man 8 joulestat.\n");
}

/* Roff text: backslashes and hyphens escaped, a leading '.' or '\'' made literal. */
static void roff_text(FILE *f, const char *s) {
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
    }
}

static void roff_paragraph(FILE *f, const char *s) {
    if (strncmp(s, "- ", 2) == 0) {
        fputs(".IP \\(bu 2\n", f);
        s += 2;
    } else
        fputs(".PP\n", f);
    roff_text(f, s);
    fputc('\n', f);
}

static void roff_option(FILE *f, const struct option_doc *d) {
    fputs(".TP\n\\fB\\-\\-", f);
    roff_text(f, d->name);
    fputs("\\fR", f);
    if (d->arg && d->has_arg == optional_argument) {
        roff_text(f, d->arg);
    } else if (d->arg) {
        fputs(" \\fI", f);
        roff_text(f, d->arg);
        fputs("\\fR", f);
    }
    if (d->alias) {
        fputs(", \\fB\\-\\-", f);
        roff_text(f, d->alias);
        fputs("\\fR", f);
    }
    fputc('\n', f);
    roff_text(f, d->help);
    fputc('\n', f);
}

void options_print_man(FILE *f) {
    fprintf(f, ".TH JOULESTAT 8 \"\" \"joulestat %s\" \"System Administration\"\n",
            JOULESTAT_VERSION);
    fputs(".SH NAME\njoulestat \\- ", f);
    roff_text(f, summary);
    fputs("\n.SH SYNOPSIS\n.B joulestat\n[\\fIcommand\\fR] [\\fIoptions\\fR]\n", f);
    fputs(".SH DESCRIPTION\n", f);
    roff_paragraph(f, "joulestat reads the energy counters of the NVIDIA GPUs (NVML) and of "
                      "the CPUs (RAPL), and splits every joule among the processes that used "
                      "the device, and through them among containers, Kubernetes pods and "
                      "SLURM jobs. What nobody can be charged for is exported as "
                      "unattributed, so the parts always add up to the measured total. "
                      "Scrapes read the last sample; they never sample.");
    fputs(".SH COMMANDS\n", f);
    for (size_t i = 0; i < n_command_docs; i++) {
        fputs(".TP\n\\fB", f);
        roff_text(f, command_docs[i].name);
        fputs("\\fR", f);
        if (command_docs[i].synopsis[0]) {
            fputc(' ', f);
            roff_text(f, command_docs[i].synopsis);
        }
        fputc('\n', f);
        roff_text(f, command_docs[i].help);
        fputc('\n', f);
    }
    fputs(".SH OPTIONS\n", f);
    for (int g = 0; g < _OPTION_GROUP_MAX; g++) {
        fputs(".SS ", f);
        roff_text(f, option_group_titles[g]);
        fputc('\n', f);
        for (size_t i = 0; i < n_option_docs; i++)
            if (option_docs[i].group == (enum option_group)g && !option_docs[i].hidden)
                roff_option(f, &option_docs[i]);
    }
    roff_paragraph(f, footer);
    for (size_t i = 0; i < sizeof(man_sections) / sizeof(man_sections[0]); i++) {
        fputs(".SH ", f);
        roff_text(f, man_sections[i].title);
        fputc('\n', f);
        for (size_t p = 0;
             p < ARRAY_SIZE(man_sections[i].paragraphs) && man_sections[i].paragraphs[p]; p++)
            roff_paragraph(f, man_sections[i].paragraphs[p]);
    }
}
