/* SPDX-License-Identifier: MIT */
#include "state_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "strbuf.h"

#define STATE_TMP_NAME STATE_FILE_NAME ".tmp"
#define STATE_BAD_NAME STATE_FILE_NAME ".bad"
/* A node's ledger is a few MiB at most (10 000 series of ~200 bytes). */
#define STATE_MAX_SIZE (256U * 1024 * 1024)

/* When the state was written, by the wall clock: read by a state of version 1, which
 * does not say. 0 when unknown. */
static uint64_t written_wall_us(int dfd) {
    struct stat st;

    if (fstatat(dfd, STATE_FILE_NAME, &st, 0) < 0)
        return 0;
    return (uint64_t)st.st_mtim.tv_sec * 1000000 + (uint64_t)st.st_mtim.tv_nsec / 1000;
}

/* Sets the state aside, so that the next save does not overwrite what may still be read. */
static void set_aside(int dfd, const char *dir) {
    if (renameat(dfd, STATE_FILE_NAME, dfd, STATE_BAD_NAME) < 0)
        log_warning_errno(-errno, "state: cannot set %s/%s aside: %m", dir, STATE_FILE_NAME);
}

int state_file_load(const char *dir, struct ledger *l, const struct state_clock *now,
                    struct gpu_baseline *baselines) {
    _cleanup_(closep) int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    _cleanup_(freep) char *text = NULL;
    struct ledger_restart rs;
    unsigned bad_line = 0;
    size_t size;
    int r;

    if (dfd < 0) {
        log_warning_errno(-errno, "state: cannot open --state-dir '%s': %m; counting from zero",
                          dir);
        return 0;
    }
    r = read_virtual_file_at(dfd, STATE_FILE_NAME, STATE_MAX_SIZE, &text, &size);
    if (r == -ENOENT)
        return 0; /* the first start */
    if (r == -ENOMEM)
        return r; /* the file may be good: kept for the next start */
    if (r < 0) {
        log_warning_errno(r, "state: cannot read %s/%s: %m; set aside as %s, counting from zero",
                          dir, STATE_FILE_NAME, STATE_BAD_NAME);
        set_aside(dfd, dir);
        return 0;
    }
    r = ledger_state_restore(l, text, size, now, written_wall_us(dfd), baselines, &rs, &bad_line);
    if (r == -ENOMEM)
        return r;
    if (r < 0) {
        log_warning("state: %s/%s line %u is not a whole joulestat state of this version; set "
                    "aside as %s, counting from zero",
                    dir, STATE_FILE_NAME, bad_line, STATE_BAD_NAME);
        set_aside(dfd, dir);
        ledger_done(l);
        ledger_init(l);
        for (size_t i = 0; i < LEDGER_MAX_GPUS; i++)
            baselines[i] = (struct gpu_baseline){0};
        return 0;
    }
    log_info("state: %d counters restored from %s/%s, written %.1f s ago%s", r, dir,
             STATE_FILE_NAME, (double)rs.downtime_us / 1e6,
             rs.counting ? ""
                         : " (its raw counters are not continued: a reboot, or a time unknown)");
    return r;
}

int state_file_lock(const char *dir, int *ret_fd) {
    _cleanup_(closep) int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0)
        return errno == EAGAIN ? -EWOULDBLOCK : -errno;
    *ret_fd = TAKE_FD(fd);
    return 0;
}

/* Writes all of buf to fd. */
static int write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int state_file_save(const char *dir, const struct ledger *l, const struct gpu_baseline *baselines,
                    const struct state_clock *now) {
    _cleanup_(closep) int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct strbuf text;
    bool renamed = false;
    int fd, r;

    if (dfd < 0)
        return -errno;
    strbuf_init(&text);
    ledger_state_format(l, baselines, now, &text);
    r = strbuf_error(&text);
    if (r < 0)
        goto finish;
    fd = openat(dfd, STATE_TMP_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        r = -errno;
        goto finish;
    }
    r = write_all(fd, text.buf, text.len);
    if (r >= 0 && fsync(fd) < 0)
        r = -errno;
    if (close(fd) < 0 && r >= 0)
        r = -errno;
    if (r >= 0 && renameat(dfd, STATE_TMP_NAME, dfd, STATE_FILE_NAME) < 0)
        r = -errno;
    renamed = r >= 0;
    if (r >= 0 && fsync(dfd) < 0)
        r = -errno; /* the file in place is this one, maybe not yet durable */
    if (r < 0 && !renamed)
        (void)unlinkat(dfd, STATE_TMP_NAME, 0);
finish:
    /* The old state is behind what is published from now on: restored at a later start,
     * every counter would go down to it, which Prometheus takes as a reset and counts the
     * whole restored value again. Without it, that start counts from zero: a true reset. */
    if (r < 0 && !renamed)
        (void)unlinkat(dfd, STATE_FILE_NAME, 0);
    strbuf_done(&text);
    return r;
}
