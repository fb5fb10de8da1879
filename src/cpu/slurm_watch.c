/* SPDX-License-Identifier: MIT */
/* The SLURM watch's tree and thread: inotify watches added as the slurm root, uid, job and
 * step directories appear and dropped as they go, each new directory listed, step ends seen
 * in cgroup.events (v2) or by polling (v1), and the step table handed to the sampler. */
#include "slurm_watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_cpu.h"
#include "clock.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "slurm_watch_internal.h"

static struct watch_dir *dir_by_wd(struct slurm_watch *w, int wd) {
    for (size_t i = 0; i < w->n_dirs; i++)
        if (w->dirs[i].wd == wd)
            return &w->dirs[i];
    return NULL;
}

/* Adds an inotify watch on <mount><path>[/file], and says its inode. Returns the wd or
 * -errno. */
static int add_inotify(struct slurm_watch *w, const char *path, const char *file, uint32_t mask,
                       uint64_t *ret_ino) {
    char full[SLURM_WATCH_PATH_MAX + 64];
    struct stat st;
    int n, wd;

    n = snprintf(full, sizeof(full), "/proc/self/fd/%d/%s%s%s%s", w->sys_fd, w->mount, path,
                 file ? "/" : "", file ? file : "");
    if (n < 0 || (size_t)n >= sizeof(full))
        return -ENAMETOOLONG;
    wd = inotify_add_watch(w->ino_fd, full, mask);
    if (wd < 0)
        return -errno;
    *ret_ino = stat(full, &st) == 0 ? (uint64_t)st.st_ino : 0;
    return wd;
}

/* The inode at <mount><path> now, or 0. */
static uint64_t inode_of(struct slurm_watch *w, const char *path) {
    char rel[SLURM_WATCH_PATH_MAX + 32];
    struct stat st;

    (void)snprintf(rel, sizeof(rel), "%s%s", w->mount, path);
    return fstatat(w->sys_fd, rel, &st, 0) == 0 ? (uint64_t)st.st_ino : 0;
}

static void step_events(struct slurm_watch *w, const struct watch_dir *d);
static void forget_tree(struct slurm_watch *w, const char *path);
static void step_removed(struct slurm_watch *w, const char *path);

static int add_step(struct slurm_watch *w, const char *path, bool fresh) {
    struct step *j;
    int r;

    if (slurm_watch_step_by_path(w, path))
        return 0;
    r = grow_array(&w->steps, &w->cap_steps, w->n_steps + 1, sizeof(*w->steps));
    if (r < 0)
        return r;
    j = &w->steps[w->n_steps];
    *j = (struct step){.pub.fresh = fresh,
                       .array_tries = w->proc_fd >= 0 ? SLURM_WATCH_ARRAY_TRIES : 0};
    (void)snprintf(j->pub.path, sizeof(j->pub.path), "%s", path);
    r = cgroup_cpu_open(w->sys_fd, path, &j->cg);
    if (r < 0) {
        (void)log_debug_errno(r, "slurm: step cgroup %s: %m", path);
        return 0; /* removed already: nothing of it to read */
    }
    w->n_steps++;
    log_debug("slurm: following step %s%s", path, fresh ? " (new)" : "");
    slurm_watch_step_read(j);
    if (j->pub.gone)
        slurm_watch_step_ended(w, j);
    if (w->v2) {
        uint64_t ino = 0;

        r = add_inotify(w, path, "cgroup.events", IN_MODIFY, &ino);
        if (r >= 0) {
            int g = grow_array(&w->dirs, &w->cap_dirs, w->n_dirs + 1, sizeof(*w->dirs));

            if (g < 0)
                return g;
            w->dirs[w->n_dirs] = (struct watch_dir){.wd = r, .ino = ino, .level = LEVEL_STEP};
            (void)snprintf(w->dirs[w->n_dirs].path, SLURM_WATCH_PATH_MAX, "%s", path);
            w->n_dirs++;
            /* A step that ran may have emptied before its watch was there (a directory
             * just made is empty too, but has used nothing yet). */
            if (j->pub.usage_us > 0)
                step_events(w, &w->dirs[w->n_dirs - 1]);
        }
    }
    return 0;
}

static int add_dir(struct slurm_watch *w, const char *path, enum slurm_level level, bool fresh);

/* Lists a watched directory: children created before its watch was added. */
static void list_dir(struct slurm_watch *w, const char *path, enum slurm_level level, bool fresh) {
    char rel[SLURM_WATCH_PATH_MAX + 32];
    DIR *d;
    struct dirent *de;

    (void)snprintf(rel, sizeof(rel), "%s%s", w->mount, *path ? path : "");
    if (opendir_at(w->sys_fd, rel, true, &d) < 0)
        return;
    while ((de = readdir(d))) {
        char child[SLURM_WATCH_PATH_MAX];
        int lv;

        if (de->d_type != DT_DIR || de->d_name[0] == '.')
            continue;
        lv = slurm_watch_child_level(w->v2, level, de->d_name);
        if (lv < 0 ||
            snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >= (int)sizeof(child))
            continue;
        if (lv == LEVEL_STEP)
            (void)add_step(w, child, fresh);
        else
            (void)add_dir(w, child, lv, fresh);
    }
    (void)closedir(d);
}

static void open_slurm_root(struct slurm_watch *w, const char *path) {
    if (w->root && strcmp(w->root_path, path) == 0)
        return;
    w->root = cgroup_cpu_free(w->root);
    if (cgroup_cpu_open(w->sys_fd, path, &w->root) >= 0)
        (void)snprintf(w->root_path, sizeof(w->root_path), "%s", path);
}

static int add_dir(struct slurm_watch *w, const char *path, enum slurm_level level, bool fresh) {
    uint64_t ino = 0;
    int wd, r;

    for (size_t i = 0; i < w->n_dirs; i++) {
        if (w->dirs[i].level != level || strcmp(w->dirs[i].path, path) != 0)
            continue;
        if (w->dirs[i].ino == inode_of(w, path))
            return 0;
        /* Removed and made again while its removal went unseen (the queue overflowed): the
         * watch held is on the old one. */
        forget_tree(w, path);
        break;
    }
    wd = add_inotify(w, path, NULL,
                     IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ONLYDIR, &ino);
    if (wd < 0)
        return wd;
    r = grow_array(&w->dirs, &w->cap_dirs, w->n_dirs + 1, sizeof(*w->dirs));
    if (r < 0)
        return r;
    w->dirs[w->n_dirs] = (struct watch_dir){.wd = wd, .ino = ino, .level = level, .fresh = fresh};
    (void)snprintf(w->dirs[w->n_dirs].path, SLURM_WATCH_PATH_MAX, "%s", path);
    /* A job directory made while watched: all its steps' time is known from 0 (a parent
     * keeps the time of its removed children, in v1 and v2). */
    if (level == LEVEL_JOB && fresh && !w->resyncing)
        w->dirs[w->n_dirs].exact = cgroup_cpu_open(w->sys_fd, path, &w->dirs[w->n_dirs].cg) >= 0;
    w->n_dirs++;
    if (level == LEVEL_ROOT)
        open_slurm_root(w, path);
    /* What is in a directory created while watched was created after it: fresh. */
    list_dir(w, path, level, level == LEVEL_TOP ? false : fresh);
    return 0;
}

static void drop_dir(struct slurm_watch *w, int wd) {
    for (size_t i = 0; i < w->n_dirs; i++) {
        if (w->dirs[i].wd != wd)
            continue;
        if (w->dirs[i].level == LEVEL_ROOT && strcmp(w->dirs[i].path, w->root_path) == 0) {
            w->root = cgroup_cpu_free(w->root);
            w->root_path[0] = '\0';
        }
        w->dirs[i].cg = cgroup_cpu_free(w->dirs[i].cg);
        w->dirs[i] = w->dirs[--w->n_dirs];
        return;
    }
}

/* cgroup.events changed: at "populated 0" the step's usage is final; read it now. */
static void step_events(struct slurm_watch *w, const struct watch_dir *d) {
    char rel[SLURM_WATCH_PATH_MAX + 64], buf[256];
    struct step *j = slurm_watch_step_by_path(w, d->path);

    if (!j)
        return;
    (void)snprintf(rel, sizeof(rel), "%s%s/cgroup.events", w->mount, d->path);
    if (read_file_into_at(w->sys_fd, rel, buf, sizeof(buf)) < 0)
        return;
    if (!strstr(buf, "populated 0")) {
        j->pub.ended = false; /* populated again */
        j->emptied_ns = 0;
        return;
    }
    if (j->emptied_ns == 0)
        j->emptied_ns = clock_monotonic_ns();
    slurm_watch_step_read(j);
    slurm_watch_step_ended(w, j);
}

/* A step's directory was removed: its last usage is what is known of it. */
static void step_removed(struct slurm_watch *w, const char *path) {
    struct step *j = slurm_watch_step_by_path(w, path);

    if (j && !j->pub.gone) {
        /* Ended already (v2, populated 0): a scan between that and now still found its
         * directory, so its end is said again, for a scan that finds it gone. */
        if (j->pub.ended)
            atomic_fetch_add(&w->ended, 1);
        slurm_watch_step_read(j); /* fails: the directory is gone; keeps the last usage */
        j->pub.gone = true;
        j->cg = cgroup_cpu_free(j->cg);
        slurm_watch_step_ended(w, j);
    }
}

/* A watched directory that is gone: its step (if it is one) as removed, its watch and its
 * entry let go (the last entry moves to its place). */
static void let_go(struct slurm_watch *w, struct watch_dir *d) {
    char path[SLURM_WATCH_PATH_MAX];

    memcpy(path, d->path, sizeof(path));
    if (d->level == LEVEL_STEP)
        step_removed(w, path);
    (void)inotify_rm_watch(w->ino_fd, d->wd);
    drop_dir(w, d->wd);
}

/* A directory removed (or moved away), and every one followed under it, let go: its step
 * (if it is one) as removed, its watch and its entry. On cgroupfs a removed directory's own
 * watch gets no IN_IGNORED (tmpfs sends one), and held, it would keep one made again by the
 * same name (a user's uid_<n> after their last job on the node, a requeued job's job_<n>)
 * from being followed. */
static void forget_tree(struct slurm_watch *w, const char *path) {
    size_t len = strlen(path);

    for (size_t i = 0; i < w->n_dirs;) {
        struct watch_dir *d = &w->dirs[i];

        if (strncmp(d->path, path, len) == 0 && (d->path[len] == '\0' || d->path[len] == '/'))
            let_go(w, d); /* the last one moves to i */
        else
            i++;
    }
}

static void handle_event(struct slurm_watch *w, const struct inotify_event *ev) {
    struct watch_dir *d;
    char child[SLURM_WATCH_PATH_MAX];
    int lv;

    if (ev->mask & IN_IGNORED) {
        drop_dir(w, ev->wd);
        return;
    }
    d = dir_by_wd(w, ev->wd);
    if (!d)
        return;
    if (d->level == LEVEL_STEP) {
        step_events(w, d);
        return;
    }
    if (!(ev->mask & IN_ISDIR) || ev->len == 0)
        return;
    lv = slurm_watch_child_level(w->v2, d->level, ev->name);
    if (lv < 0 || snprintf(child, sizeof(child), "%s/%s", d->path, ev->name) >= (int)sizeof(child))
        return;
    if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
        /* (d may move as the arrays grow: child holds what is needed of it.) */
        int r = lv == LEVEL_STEP ? add_step(w, child, true) : add_dir(w, child, lv, true);

        if (r < 0)
            (void)log_debug_errno(r, "slurm: cannot follow %s: %m", child);
    } else if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
        if (lv == LEVEL_STEP)
            step_removed(w, child);
        forget_tree(w, child);
    }
}

/* A directory to list again, and its level. */
struct listed {
    char path[SLURM_WATCH_PATH_MAX];
    enum slurm_level level;
};

/* Events were lost (the queue overflowed): the directories removed meanwhile, whose
 * IN_DELETE or IN_IGNORED may be among them, are let go (a step's as removed); each step's
 * "populated" is read again; every other directory is listed again for what was made. */
static void resync(struct slurm_watch *w) {
    _cleanup_(freep) struct listed *todo = NULL;
    size_t n = 0;

    for (size_t i = 0; i < w->n_dirs;) {
        struct watch_dir *d = &w->dirs[i];
        char rel[SLURM_WATCH_PATH_MAX + 32];

        (void)snprintf(rel, sizeof(rel), "%s%s", w->mount, d->path);
        if (faccessat(w->sys_fd, rel, F_OK, 0) < 0 && errno == ENOENT)
            let_go(w, d); /* the last one moves to i */
        else
            i++;
    }
    for (size_t i = 0; i < w->n_dirs; i++)
        if (w->dirs[i].level == LEVEL_STEP)
            step_events(w, &w->dirs[i]);
    /* Listing may let entries go (one made again: forget_tree()), which moves others: the
     * directories to list are taken first. */
    todo = calloc(MAX(w->n_dirs, (size_t)1), sizeof(*todo));
    if (!todo)
        return; /* out of memory: nothing listed; the next overflow tries again */
    for (size_t i = 0; i < w->n_dirs; i++)
        if (w->dirs[i].level != LEVEL_STEP) {
            memcpy(todo[n].path, w->dirs[i].path, sizeof(todo[n].path));
            todo[n++].level = w->dirs[i].level;
        }
    /* What is new in a directory watched all along was made while it was: fresh. A job's
     * steps may have come and gone unseen, though: its usage is not theirs. */
    w->resyncing = true;
    for (size_t k = 0; k < n; k++)
        list_dir(w, todo[k].path, todo[k].level, todo[k].level != LEVEL_TOP);
    w->resyncing = false;
}

static void drain_events(struct slurm_watch *w) {
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));

    for (;;) {
        ssize_t n = read(w->ino_fd, buf, sizeof(buf));

        if (n <= 0)
            return;
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;

            if (ev->mask & IN_Q_OVERFLOW)
                resync(w);
            else
                handle_event(w, ev);
            p += sizeof(*ev) + ev->len;
        }
    }
}

static void *watch_thread(void *userdata) {
    struct slurm_watch *w = userdata;

    int timeout = -1;

    for (;;) {
        struct pollfd fds[2] = {{.fd = w->ino_fd, .events = POLLIN},
                                {.fd = w->stop_fd, .events = POLLIN}};
        int n = poll(fds, 2, timeout);
        bool arrays = false; /* a step whose array is still looked for: poll on v2 too */

        if (n < 0 && errno != EINTR)
            return NULL;
        if (fds[1].revents)
            return NULL;
        (void)pthread_mutex_lock(&w->lock);
        if (n > 0 && fds[0].revents)
            drain_events(w);
        for (size_t i = 0; i < w->n_steps; i++) {
            struct step *j = &w->steps[i];

            /* v2 steps are read at populated 0; the rest at every round (v1). */
            if (!j->pub.ended || !w->v2)
                slurm_watch_step_read(j);
            if (j->pub.gone)
                slurm_watch_step_ended(w, j);
            slurm_watch_step_array(w, j);
            if (j->array_tries > 0)
                arrays = true;
        }
        /* Polls only while there are steps to read that no event announces (v1); on v2
         * the rates come with the reads at each event. */
        timeout = (w->n_steps > 0 && !w->v2) || arrays ? SLURM_WATCH_POLL_MS : -1;
        (void)pthread_mutex_unlock(&w->lock);
    }
}

struct slurm_watch *slurm_watch_free(struct slurm_watch *w) {
    if (!w)
        return NULL;
    if (w->started) {
        uint64_t one = 1;

        (void)!write(w->stop_fd, &one, sizeof(one));
        (void)pthread_join(w->thread, NULL);
    }
    for (size_t i = 0; i < w->n_steps; i++)
        w->steps[i].cg = cgroup_cpu_free(w->steps[i].cg);
    w->root = cgroup_cpu_free(w->root);
    if (w->ino_fd >= 0)
        (void)close(w->ino_fd);
    if (w->stop_fd >= 0)
        (void)close(w->stop_fd);
    (void)pthread_mutex_destroy(&w->lock);
    for (size_t i = 0; i < w->n_dirs; i++)
        w->dirs[i].cg = cgroup_cpu_free(w->dirs[i].cg);
    free(w->steps);
    free(w->dirs);
    free(w);
    return NULL;
}

int slurm_watch_start(int sys_fd, int proc_fd, struct slurm_watch **ret) {
    _cleanup_(closep) int top_fd = -1;
    struct slurm_watch *w;
    const char *top;
    int r;

    w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    *w = (struct slurm_watch){.sys_fd = sys_fd,
                              .proc_fd = proc_fd,
                              .ino_fd = -1,
                              .stop_fd = -1,
                              .leftover_ns = SLURM_WATCH_LEFTOVER_NS};
    (void)pthread_mutex_init(&w->lock, NULL);
    /* A unified hierarchy at fs/cgroup is v2; else the v1 cpuacct mount. */
    if (faccessat(sys_fd, "fs/cgroup/cgroup.controllers", F_OK, 0) == 0) {
        w->v2 = true;
        w->mount = "fs/cgroup";
        top = "/system.slice";
    } else {
        w->mount = faccessat(sys_fd, "fs/cgroup/cpuacct", F_OK, 0) == 0 ? "fs/cgroup/cpuacct"
                                                                        : "fs/cgroup/cpu,cpuacct";
        top = "";
    }
    top_fd = open_dir_at(sys_fd, w->mount);
    if (top_fd < 0) {
        (void)slurm_watch_free(w);
        return top_fd == -ENOTDIR ? -ENOENT : top_fd;
    }
    w->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    r = w->ino_fd < 0 || w->stop_fd < 0 ? -errno : add_dir(w, top, LEVEL_TOP, false);
    if (r >= 0) {
        r = -pthread_create(&w->thread, NULL, watch_thread, w);
        w->started = r == 0;
    }
    if (r < 0) {
        (void)slurm_watch_free(w);
        return r;
    }
    *ret = w;
    return 0;
}

/* Under the lock: v2 steps empty for leftover_ns whose directory Slurm left behind are taken
 * as removed, their read at populated 0 final (no process was left to use more). */
static void drop_leftovers(struct slurm_watch *w) {
    uint64_t now = clock_monotonic_ns();

    for (size_t i = 0; w->v2 && i < w->n_steps; i++) {
        struct step *j = &w->steps[i];

        if (j->pub.gone || !j->pub.ended || j->emptied_ns == 0 ||
            now - j->emptied_ns < w->leftover_ns)
            continue;
        log_debug("slurm: step %s empty for %llu s and still there: taken as ended", j->pub.path,
                  (unsigned long long)((now - j->emptied_ns) / NSEC_PER_SEC));
        j->pub.gone = j->pub.final_exact = j->finalized = true;
        j->pub.rate_us = 0;
        j->cg = cgroup_cpu_free(j->cg);
        forget_tree(w, j->pub.path); /* its cgroup.events watch */
    }
}

void slurm_watch_set_leftover_ns(struct slurm_watch *w, uint64_t ns) {
    (void)pthread_mutex_lock(&w->lock);
    w->leftover_ns = ns;
    (void)pthread_mutex_unlock(&w->lock);
}

int slurm_watch_take(struct slurm_watch *w, struct slurm_watch_step **buf, size_t *cap,
                     bool *ret_root_valid, uint64_t *ret_root_usage_us) {
    size_t n = 0;
    int r;

    (void)pthread_mutex_lock(&w->lock);
    drop_leftovers(w);
    r = grow_array(buf, cap, MAX(w->n_steps, (size_t)1), sizeof(**buf));
    if (r < 0) {
        (void)pthread_mutex_unlock(&w->lock);
        return r;
    }
    *ret_root_valid = w->root && cgroup_cpu_read(w->root, ret_root_usage_us) >= 0;
    for (size_t i = 0; i < w->n_steps; i++) {
        (*buf)[n++] = w->steps[i].pub;
    }
    /* Gone steps were reported once: drop them. */
    for (size_t i = 0; i < w->n_steps;) {
        if (w->steps[i].pub.gone) {
            w->steps[i].cg = cgroup_cpu_free(w->steps[i].cg);
            w->steps[i] = w->steps[--w->n_steps];
        } else
            i++;
    }
    (void)pthread_mutex_unlock(&w->lock);
    return (int)n;
}

unsigned slurm_watch_ended_since(struct slurm_watch *w) {
    return atomic_exchange(&w->ended, 0);
}
