/* SPDX-License-Identifier: MIT */
#include "check_sources.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "counter.h"
#include "escape.h"
#include "fileio.h"
#include "gpu.h"
#include "macro.h"
#include "rapl.h"
#include "strbuf.h"

#define INDENT "        "
#define MAX_LISTED_PROCESSES 8

/* What does not work, with its consequence, and the one thing to do (NULL: nothing can). */
struct problems {
    struct strbuf what;
    const char *fix;
};

static void problem(struct problems *p, const char *fix, const char *fmt, ...) _printf_(3, 4);
static void problem(struct problems *p, const char *fix, const char *fmt, ...) {
    char line[512];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    strbuf_printf(&p->what, INDENT "does not work: %s\n", line);
    if (!p->fix)
        p->fix = fix;
}

static void problems_print(struct problems *p) {
    if (p->what.buf)
        fputs(p->what.buf, stdout);
    if (p->fix)
        printf(INDENT "fix: %s\n", p->fix);
    strbuf_done(&p->what);
}

static void sleep_until(uint64_t deadline_ns) {
    struct timespec ts = {(time_t)(deadline_ns / NSEC_PER_SEC), (long)(deadline_ns % NSEC_PER_SEC)};

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static double seconds(uint64_t ns) {
    return (double)ns / (double)NSEC_PER_SEC;
}

/* --- GPU ------------------------------------------------------------------------------ */

struct gpu_first_reading {
    bool up, energy_valid, power_valid;
    uint64_t energy_mj;
    uint32_t power_mw;
};

/* The process's name from <procfs>/<pid>/comm, or false when this procfs does not have it
 * (another PID namespace, or the process is gone). */
static bool process_name(int proc_fd, uint32_t pid, char *buf, size_t size) {
    char path[32];
    int n;

    if (proc_fd < 0)
        return false;
    (void)snprintf(path, sizeof(path), "%u/comm", pid);
    n = read_file_into_at(proc_fd, path, buf, size);
    if (n <= 0)
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    return true;
}

static size_t samples_of(const struct gpu_device_reading *d, uint32_t pid) {
    size_t n = 0;

    for (size_t i = 0; i < d->n_utils; i++)
        n += d->utils[i].pid == pid;
    return n;
}

/* The processes of one GPU, their names and whether per-process samples came back. */
static void check_gpu_processes(const struct gpu_device_reading *d, int proc_fd, const char *procfs,
                                struct problems *p) {
    size_t named = 0, sampled = 0;
    struct strbuf list;

    if (d->n_processes == 0) {
        printf(INDENT "GPU %u: no process on it now; start a job to see its samples here\n",
               d->index);
        return;
    }
    strbuf_init(&list);
    for (size_t i = 0; i < d->n_processes; i++) {
        uint32_t pid = d->processes[i].pid;
        char name[64], shown[ESCAPED_SIZE(sizeof(name))];
        bool known = process_name(proc_fd, pid, name, sizeof(name));

        named += known;
        sampled += samples_of(d, pid) > 0;
        if (i < MAX_LISTED_PROCESSES)
            strbuf_printf(&list, "%s%u %s", i ? ", " : "", pid,
                          known ? escape_terminal(name, shown, sizeof(shown)) : "(not in procfs)");
        else if (i == MAX_LISTED_PROCESSES)
            strbuf_puts(&list, ", ...");
    }
    printf(INDENT "GPU %u: %zu process(es): %s\n", d->index, d->n_processes,
           list.buf ? list.buf : "");
    strbuf_done(&list);
    if (!d->utils_supported)
        printf(INDENT "GPU %u: per-process utilisation: not available\n", d->index);
    else
        printf(INDENT "GPU %u: per-process utilisation: %zu sample(s), for %zu of the %zu "
                      "process(es)\n",
               d->index, d->n_utils, sampled, d->n_processes);

    if (named == 0)
        problem(p,
                "run joulestat in the host PID namespace (Kubernetes: hostPID: true) with the "
                "host /proc at --path.procfs",
                "GPU %u's processes are not in %s, so they get no names, containers, pods or "
                "jobs",
                d->index, procfs);
    if (!d->utils_supported && !d->mig_enabled)
        problem(p, "update the NVIDIA driver",
                "GPU %u gives no per-process utilisation: its processes share the energy "
                "evenly",
                d->index);
}

static void check_gpu_device(const struct gpu_first_reading *a, const struct gpu_device_reading *b,
                             double dt, int proc_fd, const char *procfs, struct problems *p) {
    char name[ESCAPED_SIZE(sizeof(b->name))], uuid[ESCAPED_SIZE(sizeof(b->uuid))];

    /* From the driver, or whatever library --nvml-library names: escaped for the terminal. */
    (void)escape_terminal(b->name, name, sizeof(name));
    (void)escape_terminal(b->uuid, uuid, sizeof(uuid));
    printf(INDENT "GPU %u %s (%s): ", b->index, name[0] ? name : "(no name)",
           uuid[0] ? uuid : "no uuid");
    if (!a->up || !b->up) {
        printf("down (%s)\n", b->error < 0 ? strerror(-b->error) : "no reading");
        problem(p,
                "look at nvidia-smi and the kernel log (Xid errors); joulestat retries the GPU "
                "with backoff",
                "GPU %u is lost or failing: its energy is not measured", b->index);
        return;
    }
    if (a->energy_valid && b->energy_valid) {
        /* A counter that goes back was reset (driver reload): count from the new value. */
        uint64_t delta = b->energy_mj >= a->energy_mj ? b->energy_mj - a->energy_mj : b->energy_mj;

        printf("energy counter +%.3f J in %.2f s = %.1f W", (double)delta / 1000.0, dt,
               (double)delta / 1000.0 / dt);
    } else {
        printf("no energy counter");
        problem(p, NULL,
                "GPU %u has no total-energy counter (older than Volta): its energy is "
                "integrated from power readings and marked estimated",
                b->index);
    }
    if (a->power_valid && b->power_valid)
        printf("; power %.1f W, then %.1f W\n", a->power_mw / 1000.0, b->power_mw / 1000.0);
    else {
        printf("; no power reading\n");
        if (!b->energy_valid)
            problem(p, "update the NVIDIA driver",
                    "GPU %u gives neither energy nor power: it is not measured", b->index);
    }
    if (b->mig_enabled)
        printf(INDENT "GPU %u: MIG enabled: processes are weighted without utilisation\n",
               b->index);
    check_gpu_processes(b, proc_fd, procfs, p);
}

bool check_gpu_source(const struct config *cfg, int proc_fd) {
    struct gpu_source_options o = {.library_path = cfg->nvml_library,
                                   .dcgm_library = cfg->dcgm_library,
                                   .dcgm_address = cfg->dcgm_address};
    _cleanup_(freep) struct gpu_first_reading *first = NULL;
    const struct gpu_device_reading *devices;
    struct problems p = {0};
    struct gpu_source *gpu = NULL;
    const char *reason = NULL;
    uint64_t t0, t1;
    size_t n, n_first, measured = 0;
    bool all_up = true;
    struct strbuf sb;
    int r;

    if (!cfg->gpu_enabled) {
        printf("gpu     off       --no-gpu given: no GPU series are exported\n");
        return false;
    }
    r = gpu_source_open(&o, &gpu, &reason);
    if (r < 0) {
        printf("gpu     absent    %s (%s)\n", reason ? reason : "NVML cannot be used",
               strerror(-r));
        if (r == -ENOENT)
            printf(INDENT "fix: install the NVIDIA driver, or point --nvml-library at "
                          "libnvidia-ml.so.1 (in containers: mount the host driver's "
                          "library); on a node without NVIDIA GPUs pass --no-gpu\n");
        return false;
    }
    t0 = clock_monotonic_ns();
    r = gpu_source_sample(gpu, clock_realtime_ns() / NSEC_PER_USEC, &devices, &n_first);
    first = r >= 0 ? calloc(MAX(n_first, 1), sizeof(*first)) : NULL;
    if (!first) {
        printf("gpu     down      cannot sample: %s\n", strerror(r < 0 ? -r : ENOMEM));
        (void)gpu_source_close(gpu);
        return false;
    }
    for (size_t i = 0; i < n_first; i++)
        first[i] = (struct gpu_first_reading){devices[i].up, devices[i].energy_valid,
                                              devices[i].power_valid, devices[i].energy_mj,
                                              devices[i].power_mw};
    sleep_until(t0 + cfg->sample_interval_ns);
    t1 = clock_monotonic_ns();
    r = gpu_source_sample(gpu, clock_realtime_ns() / NSEC_PER_USEC, &devices, &n);
    if (r < 0) {
        printf("gpu     down      cannot sample: %s\n", strerror(-r));
        (void)gpu_source_close(gpu);
        return false;
    }
    n = MIN(n, n_first);
    for (size_t i = 0; i < n; i++) {
        bool up = first[i].up && devices[i].up;

        all_up = all_up && up;
        measured += up && (devices[i].energy_valid || devices[i].power_valid);
    }
    printf("gpu     %-9s %zu GPU(s), sampled twice %.2f s apart\n", all_up ? "ok" : "down", n,
           seconds(t1 - t0));
    strbuf_init(&p.what);
    for (size_t i = 0; i < n; i++)
        check_gpu_device(&first[i], &devices[i], seconds(t1 - t0), proc_fd, cfg->procfs, &p);

    /* Every NVML feature, now that it was tried: works, not supported, no permission. */
    strbuf_init(&sb);
    gpu_source_describe(gpu, &sb);
    for (const char *line = sb.buf; line && *line;) {
        size_t len = strcspn(line, "\n");
        _cleanup_(freep) char *text = strndup(line, len), *shown = malloc(ESCAPED_SIZE(len));

        /* The lines carry the driver's device names: escaped for the terminal. */
        if (text && shown)
            printf(INDENT "%s\n", escape_terminal(text, shown, ESCAPED_SIZE(len)));
        line += len + (line[len] == '\n');
    }
    strbuf_done(&sb);
    problems_print(&p);
    (void)gpu_source_close(gpu);
    return measured > 0;
}

/* --- RAPL ----------------------------------------------------------------------------- */

static void rapl_counter_name(const struct rapl_reading *rd, char *buf, size_t size) {
    if (rd->die)
        (void)snprintf(buf, size, "package %u die %u %s", rd->package, rd->die,
                       rapl_domain_to_string(rd->domain));
    else
        (void)snprintf(buf, size, "package %u %s", rd->package, rapl_domain_to_string(rd->domain));
}

static const char *rapl_fix(enum rapl_mode mode, int err) {
    if (mode == RAPL_MODE_MSR && (err == -ENOENT || err == -ENXIO))
        return "load the msr module and give joulestat the host's /dev (--path.dev), or use "
               "--rapl-source=powercap, which needs sysfs alone";
    if (err == -EACCES || err == -EPERM)
        return "run as root, or grant the source's privilege: CAP_DAC_READ_SEARCH (powercap), "
               "CAP_PERFMON (perf) or CAP_SYS_RAWIO (msr), as deploy/systemd/joulestat.service "
               "does";
    if (err == -ENODEV)
        return "nothing to do if this machine has no RAPL (a virtual machine, a CPU without "
               "it): --rapl-source=off says so and exports no RAPL series";
    return "see the reason above; --rapl-source chooses another interface";
}

bool check_rapl_source(const struct config *cfg, int sys_fd, int dev_fd, int proc_fd) {
    struct rapl_options o = {
        .sys_fd = sys_fd,
        .dev_fd = dev_fd,
        .proc_fd = proc_fd,
        .mode = (enum rapl_mode)rapl_mode_from_string(cfg->rapl_source),
    };
    _cleanup_(freep) struct rapl_reading *first = NULL;
    const struct rapl_reading *readings;
    struct problems p = {0};
    struct rapl_status status;
    struct rapl *rapl = NULL;
    size_t n, advanced = 0;
    uint64_t t0, t1;
    int r;

    if (o.mode == RAPL_MODE_OFF) {
        printf("rapl    off       --rapl-source=off given: no RAPL series are exported\n");
        return false;
    }
    r = rapl_open(&o, &rapl, &status);
    if (r < 0) {
        printf("rapl    %-9s %s\n" INDENT "fix: %s\n", r == -ENODEV ? "absent" : "down",
               status.reason, rapl_fix(o.mode, r));
        return false;
    }
    t0 = clock_monotonic_ns();
    r = rapl_sample(rapl, &readings, &n);
    first = r >= 0 && n > 0 ? calloc(n, sizeof(*first)) : NULL;
    if (first)
        memcpy(first, readings, n * sizeof(*first));
    sleep_until(t0 + cfg->sample_interval_ns);
    t1 = clock_monotonic_ns();
    if (first)
        r = rapl_sample(rapl, &readings, &n);
    if (!first || r < 0) {
        printf("rapl    down      %s: the counters opened but cannot be read: %s\n" INDENT
               "fix: %s\n",
               rapl_mode_to_string(status.chosen), strerror(r < 0 ? -r : EIO),
               rapl_fix(status.chosen, r));
        (void)rapl_free(rapl);
        return false;
    }
    strbuf_init(&p.what);
    for (size_t i = 0; i < n; i++)
        advanced += first[i].valid && readings[i].valid && readings[i].raw != first[i].raw;
    printf("rapl    %-9s %s, sampled twice %.2f s apart\n", advanced ? "ok" : "frozen",
           status.reason, seconds(t1 - t0));
    for (size_t i = 0; i < n; i++) {
        struct energy_counter c;
        uint64_t delta = 0;
        char name[64];

        rapl_counter_name(&readings[i], name, sizeof(name));
        if (!first[i].valid || !readings[i].valid ||
            energy_counter_init(&c, readings[i].modulus, readings[i].unit, 0) < 0) {
            printf(INDENT "%s: cannot be read\n", name);
            problem(&p, NULL, "%s cannot be read: its energy is missing", name);
            continue;
        }
        (void)energy_counter_update(&c, first[i].raw, &delta);
        (void)energy_counter_update(&c, readings[i].raw, &delta);
        if (readings[i].raw == first[i].raw)
            printf(INDENT "%s: did not advance in %.2f s\n", name, seconds(t1 - t0));
        else
            printf(INDENT "%s: +%.3f J in %.2f s = %.1f W\n", name, (double)delta / 1e6,
                   seconds(t1 - t0), (double)delta / 1e6 / seconds(t1 - t0));
    }
    if (!advanced)
        problem(&p,
                "a virtual machine may show RAPL counters that never move: --rapl-source=off "
                "if this is one",
                "no RAPL counter advanced: CPU energy would stay at zero");
    problems_print(&p);
    (void)rapl_free(rapl);
    return advanced > 0;
}
