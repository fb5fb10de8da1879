/* SPDX-License-Identifier: MIT */
#include "exec_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "clock.h"
#include "fileio.h"
#include "hashmap.h"
#include "identity_read.h"
#include "log.h"
#include "macro.h"
#include "procfs_identity.h"

#define STAT_MAX_SIZE 4096u
/* Room for a burst of events (a make -j spawning compilers) before the kernel drops some. */
#define SOCKET_BUFFER_BYTES (4u * 1024u * 1024u)
/* How long the events of a burst queue before they are read (watch_thread()). */
#define EXEC_WATCH_BATCH_MS 10
/* Datagrams read in one go at most: between two batches a stop is looked at, however fast
 * events come. */
#define DRAIN_MAX 256

/* A record as kept: its identity pooled (the programs of one container or job share
 * one copy), so a node starting hundreds of programs a second keeps ~100 bytes for each
 * instead of a whole identity. */
struct kept {
    uint64_t starttime;
    uint64_t exited_ns; /* monotonic; 0 while it runs */
    /* The pid's last exec could not be read (a program gone within the batch), or the pid
     * exited again without an exec (a process forked from another program held it): this
     * record is an earlier holder's of the pid, and is not served. */
    bool superseded;
    uint32_t ppid;
    const struct workload_identity *identity;
    char comm[PROC_COMM_MAX];
};

struct exec_watch {
    int sock;
    int wake[2]; /* a pipe: a byte written stops the thread */
    int procfs_fd;
    bool own_records; /* procfs_fd is a records tree, read at lookup and owned */
    pthread_t thread;
    bool started;

    pthread_mutex_t lock;  /* guards what follows */
    struct hashmap by_pid; /* pid + 1 -> struct kept */
    struct identity_pool identities;
    uint32_t ring[EXEC_WATCH_MAX]; /* pids in the order they were added: the oldest go first */
    size_t ring_head, ring_len;
    /* Exits since the last exec_watch_take_exits(); lost: some are missing. */
    struct exec_exit exits[EXEC_WATCH_MAX_EXITS];
    size_t n_exits;
    bool exits_lost;
    bool dead;                   /* the thread ended on an error: every exit may be missing */
    struct complaint overflowed; /* the watch thread's own */
    struct exec_watch_stats stats;
};

/* Where the kernel puts a process event's fields in the datagram. */
#define EVENT_AT (NLMSG_LENGTH(0) + offsetof(struct cn_msg, data))
#define EVENT_WHAT (EVENT_AT + offsetof(struct proc_event, what))
#define EVENT_PID (EVENT_AT + offsetof(struct proc_event, event_data.exec.process_pid))
#define EVENT_TGID (EVENT_AT + offsetof(struct proc_event, event_data.exec.process_tgid))
_Static_assert(offsetof(struct proc_event, event_data.exec.process_pid) ==
                       offsetof(struct proc_event, event_data.exit.process_pid) &&
                   offsetof(struct proc_event, event_data.exec.process_tgid) ==
                       offsetof(struct proc_event, event_data.exit.process_tgid),
               "exec and exit events name the process at the same place");

/*
 * The connector sends every fork, exec, exit, rename and id change of every thread; only
 * a process's exec and exit are used. A socket filter drops the others in the kernel, so a
 * node busy starting programs (a build: a fork and an exec and several thread exits for
 * each compiler run) wakes this thread for those two alone. Classic BPF loads words in
 * network order, hence the htonl()s; pid and tgid are compared in the same order.
 */
static void attach_filter(int sock) {
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, EVENT_WHAT),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_EXEC), 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_EXIT), 0, 5),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, EVENT_TGID),
        BPF_STMT(BPF_MISC | BPF_TAX, 0),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, EVENT_PID),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    struct sock_fprog prog = {.len = ARRAY_SIZE(code), .filter = code};

    /* Without it every event still arrives, and on_message() picks the same ones. */
    (void)setsockopt(sock, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

static int subscribe(int sock) {
    /* a netlink header, then a connector header, then the operation */
    unsigned char msg[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(enum proc_cn_mcast_op))] = {0};
    struct nlmsghdr *nl = (struct nlmsghdr *)(void *)msg;
    struct cn_msg *cn = NLMSG_DATA(nl);
    enum proc_cn_mcast_op op = PROC_CN_MCAST_LISTEN;
    struct sockaddr_nl addr = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
    int size = SOCKET_BUFFER_BYTES;

    nl->nlmsg_len = NLMSG_LENGTH(sizeof(*cn) + sizeof(op));
    nl->nlmsg_type = NLMSG_DONE;
    cn->id.idx = CN_IDX_PROC;
    cn->id.val = CN_VAL_PROC;
    cn->len = sizeof(op);
    memcpy(cn->data, &op, sizeof(op));
    attach_filter(sock);
    if (bind(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0)
        return -errno;
    /* Past net.core.rmem_max (208 KiB by default) only with CAP_NET_ADMIN, held here. */
    if (setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
        (void)setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    if (send(sock, msg, nl->nlmsg_len, 0) < 0)
        return -errno;
    return 0;
}

/* Removes the oldest records while over the bound or exited long ago. Under the lock. */
static void evict(struct exec_watch *w, uint64_t now_ns, bool need_room) {
    while (w->ring_len > 0) {
        uint32_t pid = w->ring[w->ring_head];
        struct kept *k = hashmap_get(&w->by_pid, (uint64_t)pid + 1);
        bool stale = k && k->exited_ns && now_ns - k->exited_ns > EXEC_WATCH_KEEP_NS;

        if (k && !stale && !(need_room && w->ring_len >= EXEC_WATCH_MAX))
            break;
        if (k) {
            (void)hashmap_remove(&w->by_pid, (uint64_t)pid + 1);
            identity_pool_put(&w->identities, k->identity);
            free(k);
        }
        w->ring_head = (w->ring_head + 1) % EXEC_WATCH_MAX;
        w->ring_len--;
    }
}

/* Keeps rec for pid, replacing an older record of the pid. Under the lock. */
static void keep(struct exec_watch *w, uint32_t pid, const struct exec_record *rec) {
    struct kept *k = hashmap_get(&w->by_pid, (uint64_t)pid + 1);
    const struct workload_identity *id;

    if (identity_pool_get(&w->identities, &rec->identity, &id) < 0)
        return; /* out of memory: this process is identified by scanning */
    if (k) {    /* a new program in the same process, or a reused pid */
        identity_pool_put(&w->identities, k->identity);
        *k = (struct kept){.starttime = rec->starttime, .ppid = rec->ppid, .identity = id};
        memcpy(k->comm, rec->comm, sizeof(k->comm));
        return;
    }
    evict(w, clock_monotonic_ns(), true);
    k = malloc(sizeof(*k));
    if (!k || hashmap_put(&w->by_pid, (uint64_t)pid + 1, k) < 0) {
        free(k);
        identity_pool_put(&w->identities, id);
        return; /* out of memory: this process is identified by scanning */
    }
    *k = (struct kept){.starttime = rec->starttime, .ppid = rec->ppid, .identity = id};
    memcpy(k->comm, rec->comm, sizeof(k->comm));
    w->ring[(w->ring_head + w->ring_len) % EXEC_WATCH_MAX] = pid;
    w->ring_len++;
}

/* A program's stat and identity, from the <pid> directory under root_fd. */
static int read_record(int root_fd, uint32_t pid, struct exec_record *ret) {
    _cleanup_(closep) int fd = -1;
    _cleanup_(freep) char *text = NULL;
    struct proc_pid_stat st;
    char name[16];
    size_t len;
    int r;

    (void)snprintf(name, sizeof(name), "%u", pid);
    fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    r = fd < 0 ? -errno : read_virtual_file_at(fd, "stat", STAT_MAX_SIZE, &text, &len);
    if (r >= 0)
        r = proc_pid_stat_parse(text, len, &st);
    if (r >= 0)
        r = identity_read_at(fd, &ret->identity, NULL);
    if (r < 0)
        return r;
    ret->starttime = st.starttime;
    ret->ppid = st.ppid;
    memcpy(ret->comm, st.comm, sizeof(ret->comm));
    return 0;
}

/* Reads the new program's stat and identity while it runs. */
static void on_exec(struct exec_watch *w, uint32_t pid) {
    struct exec_record rec = {0};
    int r = read_record(w->procfs_fd, pid, &rec);

    pthread_mutex_lock(&w->lock);
    w->stats.execs++;
    if (r < 0) {
        struct kept *k = hashmap_get(&w->by_pid, (uint64_t)pid + 1);

        w->stats.missed++;
        if (k)
            k->superseded = true;
    } else {
        w->stats.read++;
        keep(w, pid, &rec);
    }
    pthread_mutex_unlock(&w->lock);
}

static void on_exit_event(struct exec_watch *w, uint32_t pid, uint32_t parent) {
    struct kept *k;

    pthread_mutex_lock(&w->lock);
    if (w->n_exits < EXEC_WATCH_MAX_EXITS)
        w->exits[w->n_exits++] = (struct exec_exit){.pid = pid, .parent = parent};
    else
        w->exits_lost = true;
    k = hashmap_get(&w->by_pid, (uint64_t)pid + 1);
    if (k && !k->exited_ns) {
        k->exited_ns = clock_monotonic_ns();
        w->stats.exits++;
    } else if (k)
        /* A second exit with no exec between: a process forked without an exec held the
         * pid since, and the record is not its. */
        k->superseded = true;
    pthread_mutex_unlock(&w->lock);
}

/* One datagram: a netlink message carrying a connector message carrying a process event. */
static void on_message(struct exec_watch *w, char *buf, size_t n) {
    for (struct nlmsghdr *nl = (struct nlmsghdr *)(void *)buf; NLMSG_OK(nl, n);
         nl = NLMSG_NEXT(nl, n)) {
        const struct cn_msg *cn = NLMSG_DATA(nl);
        struct proc_event ev;

        if (nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) + sizeof(ev)) || cn->id.idx != CN_IDX_PROC ||
            cn->id.val != CN_VAL_PROC)
            continue;
        /* the event sits at 4-byte alignment after the connector header: copied out */
        memcpy(&ev, cn->data, sizeof(ev));
        /* only processes, not threads: the thread group's leader */
        if (ev.what == PROC_EVENT_EXEC &&
            ev.event_data.exec.process_pid == ev.event_data.exec.process_tgid)
            on_exec(w, (uint32_t)ev.event_data.exec.process_tgid);
        else if (ev.what == PROC_EVENT_EXIT &&
                 ev.event_data.exit.process_pid == ev.event_data.exit.process_tgid)
            on_exit_event(w, (uint32_t)ev.event_data.exit.process_tgid,
                          (uint32_t)ev.event_data.exit.parent_tgid);
        else { /* only where the socket filter could not be attached */
            pthread_mutex_lock(&w->lock);
            w->stats.ignored++;
            pthread_mutex_unlock(&w->lock);
        }
    }
}

/* Receives what is queued, DRAIN_MAX datagrams at most: 0, or -errno when the socket
 * failed. */
static int drain(struct exec_watch *w, char *buf, size_t size) {
    for (unsigned k = 0; k < DRAIN_MAX; k++) {
        ssize_t n = recv(w->sock, buf, size, MSG_DONTWAIT);

        if (n < 0 && errno == ENOBUFS) { /* the kernel dropped events: say how often */
            pthread_mutex_lock(&w->lock);
            w->stats.overflows++;
            w->exits_lost = true;
            pthread_mutex_unlock(&w->lock);
            if (complain_should_log(&w->overflowed, clock_monotonic_ns()))
                log_warning("exec watch: the kernel dropped process events (socket buffer "
                            "full): a process shorter than a scan may lose its workload");
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n <= 0)
            return n < 0 ? -errno : -ECONNRESET;
        on_message(w, buf, (size_t)n);
    }
    return 0;
}

/* The thread ends on an error: from now on no exit is heard, and the scans are told so. */
static void watch_died(struct exec_watch *w, int err) {
    log_warning_errno(err, "exec watch: stopped (%m): processes shorter than a scan are "
                           "identified by the scans alone from now on");
    pthread_mutex_lock(&w->lock);
    w->dead = true;
    pthread_mutex_unlock(&w->lock);
}

/*
 * Wakes for the first event of a burst, then lets the rest queue for EXEC_WATCH_BATCH_MS
 * before reading them all: a node starting hundreds of programs a second (a build, a test
 * suite) would otherwise cost a wake-up per event. A program's files are read that much
 * later at most, far less than any GPU job lives.
 */
static void *watch_thread(void *userdata) {
    struct exec_watch *w = userdata;
    char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));

    for (;;) {
        struct pollfd fds[2] = {{.fd = w->sock, .events = POLLIN},
                                {.fd = w->wake[0], .events = POLLIN}};

        int r;

        if (poll(fds, 2, -1) < 0 && errno != EINTR) {
            watch_died(w, -errno);
            break;
        }
        if (fds[1].revents)
            break;
        /* the burst's other events queue meanwhile; only a stop ends the wait early */
        if (poll(fds + 1, 1, EXEC_WATCH_BATCH_MS) > 0)
            break;
        r = drain(w, buf, sizeof(buf));
        if (r < 0) {
            watch_died(w, r);
            break;
        }
    }
    return NULL;
}

int exec_watch_start(int procfs_fd, struct exec_watch **ret) {
    struct exec_watch *w;
    struct statfs fs;
    int r;

    /* the events name the kernel's processes: a fake tree's pids are others */
    if (fstatfs(procfs_fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC)
        return -EXDEV;
    w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->sock = w->wake[0] = w->wake[1] = -1;
    w->procfs_fd = procfs_fd;
    pthread_mutex_init(&w->lock, NULL);
    hashmap_init(&w->by_pid);
    identity_pool_init(&w->identities);
    w->sock = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
    r = w->sock < 0 ? -errno : subscribe(w->sock);
    if (r >= 0 && pipe2(w->wake, O_CLOEXEC) < 0)
        r = -errno;
    if (r >= 0) {
        r = -pthread_create(&w->thread, NULL, watch_thread, w);
        w->started = r == 0;
        if (w->started)
            (void)pthread_setname_np(w->thread, "js-exec-watch");
    }
    if (r < 0) {
        exec_watch_stop(w);
        return r;
    }
    *ret = w;
    return 0;
}

int exec_watch_open_records(int records_fd, struct exec_watch **ret) {
    struct exec_watch *w = calloc(1, sizeof(*w));

    if (!w)
        return -ENOMEM;
    w->sock = w->wake[0] = w->wake[1] = -1;
    w->procfs_fd = records_fd;
    w->own_records = true;
    pthread_mutex_init(&w->lock, NULL);
    hashmap_init(&w->by_pid);
    identity_pool_init(&w->identities);
    *ret = w;
    return 0;
}

struct exec_watch *exec_watch_stop(struct exec_watch *w) {
    void *v;

    if (!w)
        return NULL;
    if (w->started) {
        (void)!write(w->wake[1], "x", 1);
        pthread_join(w->thread, NULL);
    }
    for (size_t i = 0; hashmap_next(&w->by_pid, &i, NULL, &v);) {
        identity_pool_put(&w->identities, ((struct kept *)v)->identity);
        free(v);
    }
    hashmap_done(&w->by_pid);
    identity_pool_done(&w->identities); /* after the last put */
    pthread_mutex_destroy(&w->lock);
    closep(&w->sock);
    if (w->own_records)
        closep(&w->procfs_fd);
    closep(&w->wake[0]);
    closep(&w->wake[1]);
    free(w);
    return NULL;
}

int exec_watch_lookup(struct exec_watch *w, uint32_t pid, struct exec_record *ret) {
    struct kept *k;
    int r = -ESRCH;

    if (w->own_records) {
        struct exec_record rec = {0};

        r = read_record(w->procfs_fd, pid, &rec);
        pthread_mutex_lock(&w->lock); /* a record read or missed; no event came */
        w->stats.read += r >= 0;
        w->stats.missed += r < 0;
        pthread_mutex_unlock(&w->lock);
        if (r < 0)
            return r == -ENOMEM ? r : -ESRCH;
        *ret = rec;
        return 0;
    }
    pthread_mutex_lock(&w->lock);
    k = hashmap_get(&w->by_pid, (uint64_t)pid + 1);
    if (k && !k->superseded) {
        *ret = (struct exec_record){.starttime = k->starttime,
                                    .ppid = k->ppid,
                                    .identity = *k->identity,
                                    .exited = k->exited_ns != 0};
        memcpy(ret->comm, k->comm, sizeof(ret->comm));
        r = 0;
    }
    pthread_mutex_unlock(&w->lock);
    return r;
}

int exec_watch_take_exits(struct exec_watch *w, struct exec_exit *out) {
    int r;

    pthread_mutex_lock(&w->lock);
    r = w->exits_lost || w->dead ? -ENOBUFS : (int)w->n_exits;
    if (r > 0)
        memcpy(out, w->exits, w->n_exits * sizeof(*out));
    w->n_exits = 0;
    w->exits_lost = false;
    pthread_mutex_unlock(&w->lock);
    return r;
}

void exec_watch_get_stats(struct exec_watch *w, struct exec_watch_stats *ret) {
    pthread_mutex_lock(&w->lock);
    *ret = w->stats;
    pthread_mutex_unlock(&w->lock);
}
