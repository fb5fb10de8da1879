/* SPDX-License-Identifier: MIT */
#include "task_iter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

/* TASK_REPORT states, EXIT_* and TASK_IDLE as include/linux/sched.h numbers them. */
#define TASK_REPORT_MASK 0x7fu
#define TASK_STATE_IDLE 0x402u

char task_iter_state_letter(uint32_t run_state, uint32_t exit_state) {
    static const char letters[] = "RSDTtXZP";
    uint32_t st = (run_state | exit_state) & TASK_REPORT_MASK;
    unsigned bit = 0;

    if (run_state == TASK_STATE_IDLE && exit_state == 0)
        return 'I';
    while (st) { /* fls(): the highest bit names the state */
        bit++;
        st >>= 1;
    }
    return bit < sizeof(letters) - 1 ? letters[bit] : '?';
}

#ifdef JOULESTAT_HAVE_BPF

#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include <stddef.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "dl_symbols.h"
#include "task_iter_record.h"
/* Only the program's bytes are taken from the skeleton: libbpf itself is loaded with
 * dlopen() in the child that loads the program (load_in_child()), so this process never
 * maps it. */
#include "task_iter.skel.h"
#include "task_procs.skel.h"

/* How long loading may take before the scan lists /proc instead. */
#define LOAD_TIMEOUT_S 20
/* Bytes of the process walk's array mapped at a time (rounded up to whole pages). */
#define PROCS_WINDOW_BYTES 32768u
/* Bytes read at a time: a multiple of the record size, a few of the kernel's seq pages. */
#define READ_BUF_RECORDS 1024

/* A page holds whole records, so a window of whole pages starts at a record. */
_Static_assert(sizeof(struct task_iter_record) == 64, "a record divides a page");

struct thread_time {
    uint32_t tgid;
    uint64_t ns;
};

/* The loader's fds, as the child sends them: the task walk's link (always), the process
 * walk's link and its array (Linux 6.7 and later). */
enum { FD_TASKS_LINK, FD_PROCS_LINK, FD_PROCS_MAP, _FD_MAX };

struct task_iter {
    int link_fd;
    int procs_link_fd;     /* -1: the task walk only */
    int procs_map_fd;      /* the process walk's array */
    uint32_t procs_limit;  /* the most processes the process walk serves a read with */
    bool walked_processes; /* the last read walked the process list */
    struct task_iter_process *rows;
    size_t n_rows, cap_rows;
    struct thread_time *threads;
    size_t n_threads, cap_threads;
    struct task_iter_record *buf;
};

struct libbpf_api {
    void *dl;
    __typeof__(&libbpf_set_print) set_print;
    __typeof__(&bpf_object__open_mem) open_mem;
    __typeof__(&bpf_object__load) load;
    __typeof__(&bpf_object__find_program_by_name) find_program;
    __typeof__(&bpf_program__attach_iter) attach_iter;
    __typeof__(&bpf_link__fd) link_fd;
    __typeof__(&bpf_object__find_map_by_name) find_map;
    __typeof__(&bpf_map__fd) map_fd;
};

#define SYMBOL(field, sym)                                                                         \
    {                                                                                              \
        offsetof(struct libbpf_api, field), true, {                                                \
#sym                                                                                   \
        }                                                                                          \
    }
static const struct dl_symbol libbpf_symbols[] = {
    SYMBOL(set_print, libbpf_set_print),
    SYMBOL(open_mem, bpf_object__open_mem),
    SYMBOL(load, bpf_object__load),
    SYMBOL(find_program, bpf_object__find_program_by_name),
    SYMBOL(attach_iter, bpf_program__attach_iter),
    SYMBOL(link_fd, bpf_link__fd),
    SYMBOL(find_map, bpf_object__find_map_by_name),
    SYMBOL(map_fd, bpf_map__fd),
};

/* libbpf's messages would go to stderr on every failed load: the caller logs one line. */
static int quiet(enum libbpf_print_level level _unused_, const char *fmt _unused_,
                 va_list ap _unused_) {
    return 0;
}

/* Sends err and the fds[0..n) that are >= 0, in order (a missing one ends the list). */
static int send_fds(int sock, const int *fds, size_t n, int err) {
    char cbuf[CMSG_SPACE(_FD_MAX * sizeof(int))] = {0};
    struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    size_t k = 0;

    while (k < n && k < _FD_MAX && fds[k] >= 0)
        k++;
    if (k > 0) {
        struct cmsghdr *c;

        msg.msg_control = cbuf;
        msg.msg_controllen = CMSG_SPACE(k * sizeof(int));
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(k * sizeof(int));
        memcpy(CMSG_DATA(c), fds, k * sizeof(int));
    }
    return sendmsg(sock, &msg, 0) < 0 ? -errno : 0;
}

/* Receives what send_fds() sent: fds[] filled in order, -1 for those not sent. Returns
 * the sender's err when negative (closing what came), -EIO without the first fd. */
static int recv_fds(int sock, int fds[_FD_MAX]) {
    char cbuf[CMSG_SPACE(_FD_MAX * sizeof(int))] = {0};
    int err = -EIO;
    struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    struct cmsghdr *c;
    size_t k = 0;
    ssize_t n;

    for (size_t i = 0; i < _FD_MAX; i++)
        fds[i] = -1;
    do
        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    c = CMSG_FIRSTHDR(&msg);
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        memcpy(fds, CMSG_DATA(c), MIN(k, (size_t)_FD_MAX) * sizeof(int));
    }
    if (n != (ssize_t)sizeof(err) || err < 0 || fds[0] < 0) {
        for (size_t i = 0; i < _FD_MAX; i++)
            if (fds[i] >= 0)
                (void)close(fds[i]);
        return n != (ssize_t)sizeof(err) ? -EIO : err < 0 ? err : -EIO;
    }
    return 0;
}

/* In the child: the process walk's link and array (fds[FD_PROCS_*]), where the kernel
 * has the open-coded task iterator; left at -1 otherwise. */
static void load_procs(const struct libbpf_api *api, int fds[_FD_MAX]) {
    union bpf_iter_link_info info = {.cgroup = {.order = BPF_CGROUP_ITER_SELF_ONLY}};
    /* libbpf's macro zeroes the padding too, which libbpf insists on. */
    LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof(info));
    struct bpf_object *obj;
    struct bpf_program *prog;
    struct bpf_map *map;
    struct bpf_link *link;
    const void *elf;
    size_t elf_size;

    elf = task_procs_bpf__elf_bytes(&elf_size);
    obj = api->open_mem(elf, elf_size, NULL);
    if (!obj || api->load(obj) < 0)
        return;
    prog = api->find_program(obj, "joulestat_procs");
    map = api->find_map(obj, "procs");
    link = prog && map ? api->attach_iter(prog, &opts) : NULL;
    if (!link)
        return;
    fds[FD_PROCS_LINK] = api->link_fd(link);
    fds[FD_PROCS_MAP] = api->map_fd(map);
}

/* In the child: fds[] (the task walk's link, and the process walk's where it loads), or
 * -errno (-ELIBACC: no libbpf). The child exits right after, so nothing is freed. */
static int load_here(int fds[_FD_MAX]) {
    static const char *const sonames[] = {"libbpf.so.1", "libbpf.so.0"};
    struct libbpf_api api = {0};
    struct bpf_object *obj;
    struct bpf_program *prog;
    struct bpf_link *link;
    const void *elf;
    size_t elf_size;
    int r;

    for (size_t i = 0; i < _FD_MAX; i++)
        fds[i] = -1;
    api.dl = dl_open("libbpf", NULL, sonames, ARRAY_SIZE(sonames), &r);
    if (!api.dl ||
        dl_resolve(api.dl, "libbpf", libbpf_symbols, ARRAY_SIZE(libbpf_symbols), &api) < 0)
        return -ELIBACC;
    (void)api.set_print(quiet);
    elf = task_iter_bpf__elf_bytes(&elf_size);
    obj = api.open_mem(elf, elf_size, NULL);
    if (!obj)
        return errno > 0 ? -errno : -EINVAL;
    r = api.load(obj);
    if (r < 0)
        return r;
    prog = api.find_program(obj, "joulestat_tasks");
    if (!prog)
        return -ENOENT;
    link = api.attach_iter(prog, NULL);
    if (!link)
        return errno > 0 ? -errno : -EINVAL;
    fds[FD_TASKS_LINK] = api.link_fd(link);
    load_procs(&api, fds);
    return 0;
}

/*
 * Loads and attaches the programs in a child process and receives their fds: CO-RE
 * parses the kernel's whole BTF (megabytes of it), which would otherwise stay in this
 * process's peak resident memory for its life, and libbpf would stay mapped. A link
 * keeps its program once the child is gone.
 */
static int load_in_child(int fds[_FD_MAX]) {
    int sv[2], r, status;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    pid = fork();
    if (pid < 0) {
        r = -errno;
        (void)close(sv[0]);
        (void)close(sv[1]);
        return r;
    }
    if (pid == 0) {
        int r_child = load_here(fds);

        (void)close(sv[0]);
        (void)send_fds(sv[1], fds, _FD_MAX, r_child);
        _exit(0);
    }
    (void)close(sv[1]);
    /* A child stuck (a lock another thread held at fork()) must not hold up the start. */
    (void)setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){.tv_sec = LOAD_TIMEOUT_S},
                     sizeof(struct timeval));
    r = recv_fds(sv[0], fds);
    (void)close(sv[0]);
    if (r == -EAGAIN) {
        (void)kill(pid, SIGKILL);
        r = -ETIMEDOUT;
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return r;
}

static int by_pid(const void *a, const void *b) {
    uint32_t x = ((const struct task_iter_process *)a)->pid;
    uint32_t y = ((const struct task_iter_process *)b)->pid;

    return (x > y) - (x < y);
}

/* A record of either walk into rows (a process) or threads (a thread of the task walk). */
static int add_record(void *userdata, const void *data) {
    const struct task_iter_record *rec = data;
    struct task_iter *ti = userdata;
    struct task_iter_process *p;
    int r;

    if (rec->tid != rec->tgid) {
        r = grow_array(&ti->threads, &ti->cap_threads, ti->n_threads + 1, sizeof(*ti->threads));
        if (r < 0)
            return r;
        ti->threads[ti->n_threads++] = (struct thread_time){rec->tgid, rec->runtime_ns};
        return 0;
    }
    r = grow_array(&ti->rows, &ti->cap_rows, ti->n_rows + 1, sizeof(*ti->rows));
    if (r < 0)
        return r;
    p = &ti->rows[ti->n_rows++];
    *p = (struct task_iter_process){
        .pid = rec->tgid,
        .ppid = rec->ppid,
        .flags = rec->flags,
        .threads = rec->threads,
        .start_boottime_ns = rec->start_boottime_ns,
        .cpu_ns = rec->runtime_ns,
        .state = task_iter_state_letter(rec->run_state, rec->exit_state),
    };
    memcpy(p->comm, rec->comm, sizeof(p->comm));
    p->comm[sizeof(p->comm) - 1] = '\0';
    return 0;
}

/* Adds each live thread's time to its process. A thread whose leader the pass did not
 * see (it exited meanwhile) is dropped: its time moves into the leader's exited-threads
 * sum, which the next pass reads. */
static void sum_threads(struct task_iter *ti) {
    bool sorted = true;

    for (size_t i = 1; i < ti->n_rows && sorted; i++)
        sorted = ti->rows[i - 1].pid < ti->rows[i].pid;
    if (!sorted) /* the iterator walks pids in order: only after a change of that */
        qsort(ti->rows, ti->n_rows, sizeof(*ti->rows), by_pid);
    for (size_t i = 0; i < ti->n_threads; i++) {
        struct task_iter_process key = {.pid = ti->threads[i].tgid}, *p;

        p = bsearch(&key, ti->rows, ti->n_rows, sizeof(*ti->rows), by_pid);
        if (p)
            p->cpu_ns += ti->threads[i].ns;
    }
}

/* Runs the iterator of link_fd and reads what it writes into buf (cap bytes, a multiple of
 * size), calling add(userdata, record) for each size-byte record. */
static int run_iterator(int link_fd, void *buf, size_t cap, size_t size,
                        int (*add)(void *, const void *), void *userdata) {
    union bpf_attr attr = {.iter_create = {.link_fd = (__u32)link_fd}};
    _cleanup_(closep) int fd = -1;
    size_t have = 0;
    int r;

    fd = (int)syscall(SYS_bpf, BPF_ITER_CREATE, &attr, sizeof(attr));
    if (fd < 0)
        return -errno;
    for (;;) {
        char *base = buf;
        size_t used;
        ssize_t n = read(fd, base + have, cap - have);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return 0;
        have += (size_t)n;
        used = have - have % size;
        for (size_t off = 0; off < used; off += size) {
            r = add(userdata, base + off);
            if (r < 0)
                return r;
        }
        memmove(base, base + used, have - used);
        have -= used;
    }
}

static int take_count(void *userdata, const void *rec) {
    memcpy(userdata, rec, sizeof(struct task_procs_count));
    return 0;
}

static size_t page_round(size_t bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    return (bytes + page - 1) / page * page;
}

/* The process walk: one record a process, in the array, read a window of whole pages at a
 * time. Mapped pages count in full to this process's resident memory: mapping all the
 * records in use would raise its peak by their size. -E2BIG when the array could not hold
 * them all, or -errno. */
static int read_procs(struct task_iter *ti) {
    struct task_procs_count buf, count = {0};
    size_t window;
    int r;

    r = run_iterator(ti->procs_link_fd, &buf, sizeof(buf), sizeof(buf), take_count, &count);
    if (r < 0)
        return r;
    if (count.stored != count.total || count.stored > ti->procs_limit)
        return -E2BIG;
    window = page_round(PROCS_WINDOW_BYTES) / sizeof(struct task_iter_record);
    for (size_t from = 0; from < count.stored && r >= 0; from += window) {
        size_t n = MIN(count.stored - from, window);
        size_t len = page_round(n * sizeof(struct task_iter_record));
        const struct task_iter_record *recs;
        void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, ti->procs_map_fd,
                       (off_t)from * (off_t)sizeof(*recs));

        if (p == MAP_FAILED)
            return -errno;
        recs = p;
        for (size_t i = 0; i < n && r >= 0; i++)
            r = add_record(ti, &recs[i]);
        (void)munmap(p, len);
    }
    return r;
}

int task_iter_read(struct task_iter *ti, const struct task_iter_process **ret_rows) {
    /* The last read walked every task and found more processes than the process walk may
     * serve: it would walk them all in the kernel only to say so. Until they fit again. */
    bool too_many = !ti->walked_processes && ti->n_rows > ti->procs_limit;
    int r = -ENOENT;

    ti->n_rows = ti->n_threads = 0;
    if (ti->procs_link_fd >= 0 && ti->procs_limit > 0 && !too_many)
        r = read_procs(ti);
    /* More processes than the array holds, or a process walk that failed (what it read is
     * dropped): this read walks every task, as tests force with task_iter_limit_processes(). */
    ti->walked_processes = r >= 0;
    if (r < 0) {
        ti->n_rows = ti->n_threads = 0;
        r = run_iterator(ti->link_fd, ti->buf, READ_BUF_RECORDS * sizeof(*ti->buf),
                         sizeof(*ti->buf), add_record, ti);
    }
    if (r < 0)
        return r;
    sum_threads(ti);
    *ret_rows = ti->rows;
    return (int)ti->n_rows;
}

bool task_iter_walks_processes(const struct task_iter *ti) {
    return ti && ti->walked_processes;
}

void task_iter_limit_processes(struct task_iter *ti, uint32_t n) {
    ti->procs_limit = MIN(n, (uint32_t)TASK_PROCS_MAX);
}

struct task_iter *task_iter_free(struct task_iter *ti) {
    if (!ti)
        return NULL;
    if (ti->link_fd >= 0)
        (void)close(ti->link_fd);
    if (ti->procs_link_fd >= 0)
        (void)close(ti->procs_link_fd);
    if (ti->procs_map_fd >= 0)
        (void)close(ti->procs_map_fd);
    free(ti->rows);
    free(ti->threads);
    free(ti->buf);
    free(ti);
    return NULL;
}

/* The iterator's view of this process against its <procfs>/self/stat (st): another pid
 * namespace (its pids are the initial namespace's) or another clock would not match. */
static int check_self(struct task_iter *ti, const struct proc_pid_stat *st,
                      const char **ret_reason) {
    const struct task_iter_process *rows, *me;
    struct task_iter_process key = {.pid = (uint32_t)getpid()};
    long tck = sysconf(_SC_CLK_TCK);
    int r;

    r = task_iter_read(ti, &rows);
    if (r < 0) {
        *ret_reason = "reading the iterator failed";
        return r;
    }
    me = bsearch(&key, rows, (size_t)r, sizeof(*rows), by_pid);
    if (!me || st->pid != key.pid || tck <= 0 ||
        me->start_boottime_ns / (1000000000u / (uint64_t)tck) != st->starttime) {
        *ret_reason = "the iterator's pids are not those of the procfs root (another pid "
                      "namespace)";
        return -EXDEV;
    }
    return 0;
}

int task_iter_open(int procfs_fd, struct task_iter **ret, const char **ret_reason) {
    _cleanup_(freep) struct task_iter *ti = NULL;
    struct proc_pid_stat st;
    int fds[_FD_MAX], n, r;
    char buf[2048];

    if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
        *ret_reason = "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
        return -errno;
    }
    n = read_file_into_at(procfs_fd, "self/stat", buf, sizeof(buf));
    if (n < 0 || proc_pid_stat_parse(buf, (size_t)n, &st) < 0) {
        *ret_reason = "cannot read this process's stat under the procfs root";
        return n < 0 ? n : -EINVAL;
    }
    /* The loader is a forked child, which could hang on a lock another thread held at the
     * fork: it is loaded at the start, before any thread, or not at all. */
    if (st.num_threads > 1) {
        *ret_reason = "other threads are running (it is loaded only at the start)";
        return -EBUSY;
    }
    ti = calloc(1, sizeof(*ti));
    if (!ti)
        return -ENOMEM;
    ti->link_fd = ti->procs_link_fd = ti->procs_map_fd = -1;
    ti->procs_limit = TASK_PROCS_MAX;
    ti->buf = malloc(READ_BUF_RECORDS * sizeof(*ti->buf));
    if (!ti->buf)
        return -ENOMEM;
    r = load_in_child(fds);
    if (r >= 0) {
        ti->link_fd = fds[FD_TASKS_LINK];
        ti->procs_link_fd = fds[FD_PROCS_LINK];
        ti->procs_map_fd = fds[FD_PROCS_MAP];
    }
    if (r < 0) {
        ti = task_iter_free(TAKE_PTR(ti));
        *ret_reason = r == -EPERM || r == -EACCES
                          ? "not allowed to load BPF programs (needs CAP_BPF and CAP_PERFMON, "
                            "or CAP_SYS_ADMIN)"
                      : r == -ELIBACC   ? "libbpf.so.1 cannot be loaded (Debian: libbpf1)"
                      : r == -ETIMEDOUT ? "loading it did not finish in time"
                                        : "the kernel refused the task iterator";
        return r;
    }
    r = check_self(ti, &st, ret_reason);
    if (r < 0) {
        ti = task_iter_free(TAKE_PTR(ti));
        return r;
    }
    *ret = TAKE_PTR(ti);
    return 0;
}

#else /* !JOULESTAT_HAVE_BPF */

int task_iter_open(int procfs_fd _unused_, struct task_iter **ret _unused_,
                   const char **ret_reason) {
    *ret_reason = "this build has no eBPF support (libbpf, clang or bpftool missing)";
    return -EOPNOTSUPP;
}

struct task_iter *task_iter_free(struct task_iter *ti _unused_) {
    return NULL;
}

int task_iter_read(struct task_iter *ti _unused_,
                   const struct task_iter_process **ret_rows _unused_) {
    return -EOPNOTSUPP;
}

bool task_iter_walks_processes(const struct task_iter *ti _unused_) {
    return false;
}

void task_iter_limit_processes(struct task_iter *ti _unused_, uint32_t n _unused_) {
}

#endif
