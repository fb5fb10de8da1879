/* SPDX-License-Identifier: MIT */
#include "serve.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "listen.h"
#include "log.h"
#include "macro.h"
#include "privileges.h"
#include "sampler.h"
#include "server.h"
#include "snapshot.h"
#include "syscall_filter.h"
#include "webconfig.h"
#include "window_trace.h"

/* The listening socket, before anything else starts: a wrong address fails at once, with
 * the address in the message, not after NVML, RAPL and Kubernetes came up. */
static int bind_listen_address(const char *address) {
    struct listen_address parsed;
    int r;

    r = listen_address_parse(address, &parsed);
    if (r == -EINVAL)
        return log_error_errno(r,
                               "cannot listen on '%s': not an address of the form :PORT, "
                               "HOST:PORT or [IPv6]:PORT",
                               address);
    if (r == -EADDRNOTAVAIL)
        return log_error_errno(r, "cannot listen on '%s': unknown host", address);
    if (r < 0)
        return log_error_errno(r, "cannot listen on '%s': %m", address);
    r = listen_address_open(&parsed, HTTP_LISTEN_BACKLOG);
    if (r < 0)
        return log_error_errno(r, "cannot listen on '%s': %m", address);
    return r;
}

/* How often the web configuration file is looked at for a change (one stat()). */
#define WEB_CONFIG_POLL_S 3
/* The shortest --sample-interval that splits GPU energy as well as the default. */
#define SAMPLE_INTERVAL_ADVISED_NS (250 * NSEC_PER_MSEC)

/* What tells that the file changed: a Kubernetes Secret volume swaps a symlink (a new
 * inode), an editor writes in place (size, modification time). */
struct file_signature {
    bool present;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

static struct file_signature signature_of(const char *path) {
    struct stat st;

    if (!path || stat(path, &st) < 0)
        return (struct file_signature){0};
    return (struct file_signature){.present = true,
                                   .dev = st.st_dev,
                                   .ino = st.st_ino,
                                   .size = st.st_size,
                                   .mtime = st.st_mtim};
}

static bool signature_same(const struct file_signature *a, const struct file_signature *b) {
    return a->present == b->present && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* On SIGHUP or a change of the file (`why`): the web configuration file again. New users
 * and passwords go to the running server; a new certificate, key or TLS versions (or TLS
 * switched on or off) need a new server on the same socket (http_server_replace()). A file
 * that does not load, or a server that does not start with it, is logged and the running
 * configuration kept. */
static void reload_web_config(const struct config *cfg, const char *why,
                              struct http_server_options *o, struct http_server **server,
                              struct web_config **web) {
    struct web_config *fresh = NULL;
    struct http_server *replacement = NULL;
    char err[512] = "";
    int r;

    if (!cfg->web_config_file) {
        log_info("%s: no --web.config.file to reload", why);
        return;
    }
    r = web_config_load(cfg->web_config_file, &fresh, err, sizeof(err));
    if (r < 0) {
        log_error_errno(r, "%s: --web.config.file '%s': %s; keeping the previous configuration",
                        why, cfg->web_config_file, err[0] ? err : "cannot load");
        return;
    }
    web_config_keep_remembered(fresh, *web);
    if (web_config_same_tls(fresh, *web)) {
        (void)http_server_set_web_config(*server, fresh);
    } else {
        o->web_config = fresh;
        r = http_server_replace(*server, o, &replacement);
        if (r < 0) {
            o->web_config = *web;
            log_error_errno(r,
                            "%s: --web.config.file '%s': cannot serve with its TLS settings: %m; "
                            "keeping the previous configuration",
                            why, cfg->web_config_file);
            web_config_free(fresh);
            return;
        }
        *server = replacement;
        log_info("%s: new TLS settings from --web.config.file '%s' serve new connections", why,
                 cfg->web_config_file);
    }
    web_config_free(*web);
    *web = fresh;
    o->web_config = fresh; /* for the next replacement */
    log_info("%s: reloaded --web.config.file '%s' (%zu basic-auth users)", why,
             cfg->web_config_file, web_config_n_users(fresh));
}

/* The names of the capabilities a mask holds, for the log line. */
static void cap_names(uint64_t caps, char *buf, size_t size) {
    (void)snprintf(buf, size, "%s%s%s%s",
                   caps & (1ULL << PRIV_CAP_SYS_PTRACE) ? "CAP_SYS_PTRACE " : "",
                   caps & (1ULL << PRIV_CAP_DAC_READ_SEARCH) ? "CAP_DAC_READ_SEARCH " : "",
                   caps & (1ULL << PRIV_CAP_BPF) ? "CAP_BPF " : "",
                   caps & ~((1ULL << PRIV_CAP_SYS_PTRACE) | (1ULL << PRIV_CAP_DAC_READ_SEARCH) |
                            (1ULL << PRIV_CAP_BPF))
                       ? "(others) "
                       : "");
    if (!buf[0])
        (void)snprintf(buf, size, "none ");
    buf[strlen(buf) - 1] = '\0';
}

/* Once every source is open: drop the capabilities the steady state does not need, set
 * no-new-privileges, install the system-call filter (docs/DEPLOY.md, "Least privilege").
 * A step that fails is logged as a warning and serving goes on: the node's energy
 * accounting matters more than the second line of defence (the unit and the DaemonSet
 * sandbox the process from outside as well). */
static void lock_down(const struct config *cfg, bool task_iter) {
    char names[96];
    uint64_t kept = 0;
    int r;

    if (cfg->drop_capabilities) {
        r = privileges_drop(privileges_steady_state(cfg, task_iter), &kept);
        if (r < 0)
            log_warning_errno(r, "cannot drop capabilities: %m; serving with those held");
        else {
            cap_names(kept, names, sizeof(names));
            log_info("capabilities dropped; kept: %s; no-new-privileges set", names);
        }
    }
    if (!cfg->seccomp)
        return;
    if (!syscall_filter_supported()) {
        log_info("system-call filter not installed: this build cannot run under it (built "
                 "with ASan, whose leak check needs ptrace, or for an architecture without one)");
        return;
    }
    r = syscall_filter_install(task_iter);
    if (r == -ENOENT)
        log_warning("cannot install the system-call filter: " SECCOMP_LIBRARY_MISSING
                    "; serving without it");
    else if (r < 0)
        log_warning_errno(r, "cannot install the system-call filter: %m; serving without it");
    else
        log_info("system-call filter installed (seccomp allow-list; --no-seccomp turns it off)");
}

static bool sampler_is_fresh(const struct snapshot *s, void *userdata) {
    return s && sampler_healthy(userdata);
}

int serve_run(const struct config *cfg) {
    struct http_server_options o = {
        .listen_address = cfg->listen_address,
        .metrics_path = cfg->metrics_path,
        .metric_prefix = cfg->metric_prefix,
        .is_fresh = sampler_is_fresh,
    };
    struct web_config *web = NULL;
    struct snapshot_slot *slot = NULL;
    _cleanup_(fclosep) FILE *trace = NULL; /* closed after the sampler is freed */
    struct sampler *sampler = NULL;
    struct http_server *server = NULL;
    _cleanup_(closep) int listen_fd = -1;
    struct file_signature web_file;
    struct tick_time first;
    sigset_t signals;
    int sig, r;

    /* Block the stop signals in every thread; this one waits for them below. */
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGHUP);
    r = -pthread_sigmask(SIG_BLOCK, &signals, NULL);
    if (r < 0)
        return log_error_errno(r, "cannot block signals: %m");
    (void)signal(SIGPIPE, SIG_IGN);

    listen_fd = bind_listen_address(cfg->listen_address);
    if (listen_fd < 0)
        return listen_fd;
    if (cfg->web_config_file) {
        char err[512] = "";

        r = web_config_load(cfg->web_config_file, &web, err, sizeof(err));
        if (r < 0)
            return log_error_errno(r, "--web.config.file '%s': %s", cfg->web_config_file,
                                   err[0] ? err : "cannot load");
    }
    o.web_config = web;

    slot = snapshot_slot_new();
    if (!slot) {
        r = log_error_errno(-ENOMEM, "out of memory");
        goto finish;
    }
    /* Below the driver's per-process sample period, windows hold a sample of some processes
     * and not of others: the split is less accurate (docs/ATTRIBUTION.md). */
    if (cfg->gpu_enabled && cfg->sample_interval_ns < SAMPLE_INTERVAL_ADVISED_NS)
        log_warning("--sample-interval %" PRIu64 "ms is shorter than the driver's per-process "
                    "sample period (about 167 ms): GPU energy is split less accurately; 250ms "
                    "or more is advised",
                    cfg->sample_interval_ns / NSEC_PER_MSEC);
    r = sampler_new(cfg, slot, &sampler);
    if (r < 0) {
        log_error_errno(r, "cannot start the sampler: %m");
        goto finish;
    }
    o.userdata = sampler;
    if (cfg->trace_file) {
        r = window_trace_attach(sampler, cfg->trace_file, &trace);
        if (r < 0)
            goto finish;
    }

    /* One tick before serving, so the first scrape already has every family. */
    first = sampler_now();
    (void)sampler_tick(sampler, &first);
    lock_down(cfg, sampler_uses_bpf(sampler));

    r = http_server_start_on(&o, TAKE_FD(listen_fd), slot, &server);
    if (r < 0) {
        log_error_errno(r, "cannot serve on '%s': %m", cfg->listen_address);
        goto finish;
    }
    r = sampler_start(sampler);
    if (r < 0) {
        log_error_errno(r, "cannot start the sampler thread: %m");
        goto finish;
    }
    log_info("joulestat %s listening on %s (port %d), metrics at %s", JOULESTAT_VERSION,
             cfg->listen_address, http_server_port(server), cfg->metrics_path);

    web_file = signature_of(cfg->web_config_file);
    for (;;) {
        struct timespec poll = {.tv_sec = WEB_CONFIG_POLL_S};
        struct file_signature now;

        /* With a web configuration file, wake up now and then to see whether it changed. */
        sig = sigtimedwait(&signals, NULL, cfg->web_config_file ? &poll : NULL);
        if (sig < 0 && errno == EAGAIN) {
            now = signature_of(cfg->web_config_file);
            if (!signature_same(&now, &web_file)) {
                /* Remembered even if it does not load: one message per change. */
                web_file = now;
                reload_web_config(cfg, "file changed", &o, &server, &web);
            }
            continue;
        }
        if (sig < 0)
            continue;
        if (sig == SIGHUP) {
            web_file = signature_of(cfg->web_config_file);
            reload_web_config(cfg, "SIGHUP", &o, &server, &web);
            continue;
        }
        log_info("received %s, stopping", strsignal(sig));
        break;
    }
    r = 0;

finish:
    server = http_server_stop(server);
    sampler = sampler_free(sampler);
    slot = snapshot_slot_free(slot);
    web = web_config_free(web);
    return r;
}
