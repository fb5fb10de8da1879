/* SPDX-License-Identifier: MIT */
#include "top.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "macro.h"
#include "strbuf.h"
#include "top_model.h"
#include "top_source.h"
#include "top_ui.h"
#include "top_view.h"

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

/*
 * While the screen is ours, log lines (a source that fails, the Kubernetes watcher) would
 * scribble over it: stderr goes to a memory file, and what it got is written to the real
 * stderr after the terminal is given back.
 */
struct stderr_capture {
    int saved, file;
};

static void capture_stderr(struct stderr_capture *c) {
    *c = (struct stderr_capture){-1, -1};
    (void)fflush(stderr);
    c->file = memfd_create("joulestat-top-log", MFD_CLOEXEC);
    if (c->file < 0)
        return;
    c->saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (c->saved < 0 || dup2(c->file, STDERR_FILENO) < 0) {
        if (c->saved >= 0)
            (void)close(c->saved);
        (void)close(c->file);
        *c = (struct stderr_capture){-1, -1};
    }
}

/* Bytes logged so far (0 when not capturing). */
static off_t captured_bytes(const struct stderr_capture *c) {
    return c->file >= 0 ? lseek(c->file, 0, SEEK_CUR) : 0;
}

static void release_stderr(struct stderr_capture *c) {
    char buf[4096];
    ssize_t n;

    if (c->file < 0)
        return;
    (void)fflush(stderr);
    (void)dup2(c->saved, STDERR_FILENO);
    (void)close(c->saved);
    (void)lseek(c->file, 0, SEEK_SET);
    while ((n = read(c->file, buf, sizeof(buf))) > 0)
        if (write(STDERR_FILENO, buf, (size_t)n) < 0)
            break;
    (void)close(c->file);
    *c = (struct stderr_capture){-1, -1};
}

static double wall_seconds(void) {
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One refresh: a frame from the source into the model; err says what went wrong. */
static void refresh_model(struct top_source *src, struct top_model *m, struct strbuf *text,
                          char *err, size_t err_size) {
    int r = top_source_fetch(src, text, err, err_size);

    if (r < 0)
        return;
    r = top_model_update(m, text->buf ? text->buf : "", text->len, wall_seconds());
    if (r == -ENODATA)
        (void)snprintf(err, err_size, "%s: no sample in the answer (not a /metrics page?)",
                       top_source_describe(src));
    else if (r < 0)
        (void)snprintf(err, err_size, "cannot read the answer: %s", strerror(-r));
}

static int ui_loop(const struct config *cfg, struct top_source *src, struct top_model *m,
                   struct strbuf *text, char *err, size_t err_size,
                   const struct stderr_capture *log) {
    struct top_view view = {.level = TOP_LEVEL_PROCESS, .sort = TOP_SORT_POWER};
    uint64_t interval = cfg->sample_interval_ns, poll = top_source_poll_interval_ns(src);
    uint64_t next_refresh = clock_monotonic_ns() + interval,
             next_poll = clock_monotonic_ns() + poll;
    struct top_ui *ui = NULL;
    int r;

    r = top_ui_open(&ui);
    if (r < 0)
        return r;
    while (!stop_requested) {
        struct top_status st = {
            .source = top_source_describe(src),
            .local = !cfg->top_url,
            .error = err,
            .refresh_seconds = (double)interval / 1e9,
            .log_kept = captured_bytes(log) > 0,
        };
        uint64_t now = clock_monotonic_ns(), wake;

        if (now >= next_refresh) {
            refresh_model(src, m, text, err, err_size);
            /* From the time after the fetch, and a frame and keys after every one: a fetch
             * as long as the interval (a remote host that does not answer, 5 s) fetched
             * again at once, for ever, and the screen, its error line and 'q' were never
             * reached. */
            now = clock_monotonic_ns();
            next_refresh = MAX(next_refresh + interval, now + interval / 2);
        }
        if (now >= next_poll) {
            top_source_poll(src);
            next_poll = now + poll;
        }
        top_ui_draw(ui, m, &view, &st);
        wake = MIN(next_refresh, next_poll);
        now = clock_monotonic_ns();
        /* At most a second: the clock on screen moves, whatever the interval. */
        if (!top_ui_key(ui, &view, wake > now ? (int)MIN((wake - now) / 1000000 + 1, 1000) : 0))
            break;
    }
    top_ui_close(ui);
    return 0;
}

int top_run(const struct config *cfg) {
    struct sigaction sa = {.sa_handler = on_stop_signal};
    struct top_source *src = NULL;
    struct stderr_capture log = {-1, -1};
    struct top_model m;
    struct strbuf text;
    char err[512] = "";
    int r;

    r = top_ui_check_terminal(err, sizeof(err));
    if (r < 0) {
        fprintf(stderr, "joulestat top: %s\n", err);
        return r;
    }
    top_model_init(&m);
    strbuf_init(&text);
    r = top_source_new(cfg, &src);
    if (r < 0)
        goto finish;
    /* The first frame before the screen is taken: a URL that does not answer is an error
     * on the command line, not an empty screen. */
    refresh_model(src, &m, &text, err, sizeof(err));
    if (err[0] && cfg->top_url) {
        fprintf(stderr, "joulestat top: %s\n", err);
        r = -EIO;
        goto finish;
    }
    (void)sigaction(SIGINT, &sa, NULL);
    (void)sigaction(SIGTERM, &sa, NULL);
    (void)sigaction(SIGQUIT, &sa, NULL); /* Ctrl-\ too: the terminal is given back */
    capture_stderr(&log);
    r = ui_loop(cfg, src, &m, &text, err, sizeof(err), &log);
    release_stderr(&log);
    if (r < 0)
        fprintf(stderr, "joulestat top: cannot take over the terminal: %s\n", strerror(-r));

finish:
    top_source_free(src);
    strbuf_done(&text);
    top_model_done(&m);
    return r;
}
