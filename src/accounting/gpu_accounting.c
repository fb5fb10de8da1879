/* SPDX-License-Identifier: MIT */
#include "gpu_accounting.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "context_split.h"
#include "gpu_accounting_internal.h"
#include "gpu_idle_prior.h"
#include "hashmap.h"
#include "macro.h"

int gpu_accounting_new(const struct gpu_accounting_options *o, struct gpu_accounting **ret) {
    struct gpu_accounting *a = calloc(1, sizeof(*a));

    if (!a)
        return -ENOMEM;
    a->opts = *o;
    if (a->opts.max_power_watts <= 0)
        a->opts.max_power_watts = 5000;
    hashmap_init(&a->pid_index);
    for (size_t i = 0; i < LEDGER_MAX_GPUS; i++) {
        idle_power_init(&a->tracks[i].idle, o->idle_power_watts);
        sample_period_init(&a->tracks[i].period, 0);
    }
    *ret = a;
    return 0;
}

struct gpu_accounting *gpu_accounting_free(struct gpu_accounting *a) {
    if (!a)
        return NULL;
    hashmap_done(&a->pid_index);
    for (size_t i = 0; i < LEDGER_MAX_GPUS; i++) {
        hashmap_done(&a->tracks[i].pids_now);
        hashmap_done(&a->tracks[i].pids_prev);
        free(a->tracks[i].last_pids);
        free(a->tracks[i].last_procs);
        a->tracks[i].intensity = intensity_gpu_free(a->tracks[i].intensity);
    }
    intensity_scratch_done(&a->intensity_scratch);
    free(a->pids);
    free(a->consumers);
    free(a->procs);
    free(a->parts);
    free(a->weights);
    free(a->mem_weights);
    free(a->memory_valid);
    free(a->gpu_instance);
    free(a->finished_idx);
    free(a->unsampled_idx);
    free(a->samples);
    free(a->last_sample_us);
    free(a->early);
    free(a->sampled);
    free(a->held_us);
    free(a->carries);
    free(a->intensity_in);
    free(a->intensity_out);
    free(a->holders);
    free(a->holder_parts);
    free(a->holder_first);
    split_scratch_done(&a->split);
    free(a);
    return NULL;
}

static int reserve_consumers(struct gpu_accounting *a, size_t n) {
    size_t cap = a->cap;
    int r = 0;

    if (n <= a->cap)
        return 0;
        /* Each array grows from the same old capacity to the same new one. */
#define GROW(field)                                                                                \
    do {                                                                                           \
        size_t c = cap;                                                                            \
        if (r >= 0)                                                                                \
            r = grow_array(&a->field, &c, n, sizeof(*a->field));                                   \
        a->cap = r >= 0 ? c : a->cap;                                                              \
    } while (0)
    GROW(pids);
    GROW(consumers);
    GROW(procs);
    GROW(parts);
    GROW(weights);
    GROW(mem_weights);
    GROW(memory_valid);
    GROW(gpu_instance);
    GROW(last_sample_us);
    GROW(early);
    GROW(sampled);
    GROW(held_us);
    GROW(carries);
    GROW(intensity_in);
    GROW(intensity_out);
#undef GROW
    if (r >= 0)
        r = split_scratch_reserve(&a->split, a->cap);
    if (r < 0)
        a->cap = cap; /* grown again next time, the split's scratch with them */
    return r;
}

/* Index of pid among this window's consumers, adding it if new. The first n_sorted
 * consumers are in increasing pid order and found by bisection; the others by pid_index. */
int consumer_index(struct gpu_accounting *a, size_t *n, size_t n_sorted, uint32_t pid,
                   size_t *ret) {
    size_t lo = 0, hi = n_sorted;
    uintptr_t v;
    int r;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (a->pids[mid] < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n_sorted && a->pids[lo] == pid) {
        *ret = lo;
        return 0;
    }
    v = (uintptr_t)hashmap_get(&a->pid_index, (uint64_t)pid + 1);
    if (v) {
        *ret = v - 1;
        return 0;
    }
    r = reserve_consumers(a, *n + 1);
    if (r < 0)
        return r;
    r = hashmap_put(&a->pid_index, (uint64_t)pid + 1, (void *)(uintptr_t)(*n + 1));
    if (r < 0)
        return r;
    a->pids[*n] = pid;
    a->memory_valid[*n] = false;
    a->gpu_instance[*n] = GPU_INSTANCE_NONE;
    a->consumers[*n] = (struct split_consumer){0};
    *ret = (*n)++;
    return 0;
}

/* The NVML source lists running processes in increasing pid order, each once. */
static bool processes_sorted(const struct gpu_device_reading *d) {
    for (size_t i = 1; i < d->n_processes; i++)
        if (d->processes[i].pid <= d->processes[i - 1].pid)
            return false;
    return true;
}

/* Collects consumers: running processes and any pid with samples in the window. */
static int collect_consumers(struct gpu_accounting *a, const struct gpu_device_reading *d,
                             size_t *ret_n) {
    size_t n = 0, n_sorted = 0, idx;
    int r;

    hashmap_clear(&a->pid_index);
    if (processes_sorted(d)) { /* consumer i is process i, no pid map to fill */
        r = reserve_consumers(a, d->n_processes);
        if (r < 0)
            return r;
        for (; n < d->n_processes; n++) {
            const struct gpu_process *p = &d->processes[n];

            a->pids[n] = p->pid;
            a->memory_valid[n] = p->memory_valid;
            a->gpu_instance[n] = p->gpu_instance;
            a->consumers[n] =
                (struct split_consumer){.memory = p->memory_valid ? p->used_memory_bytes : 0};
        }
        n_sorted = n;
    } else
        for (size_t i = 0; i < d->n_processes; i++) {
            r = consumer_index(a, &n, 0, d->processes[i].pid, &idx);
            if (r < 0)
                return r;
            a->gpu_instance[idx] = d->processes[i].gpu_instance;
            if (d->processes[i].memory_valid) {
                a->consumers[idx].memory = d->processes[i].used_memory_bytes;
                a->memory_valid[idx] = true;
            }
        }
    a->n_running = n;
    r = grow_array(&a->samples, &a->samples_cap, MAX(d->n_utils, 1), sizeof(*a->samples));
    if (r < 0)
        return r;
    for (size_t i = 0; i < d->n_utils; i++) {
        const struct gpu_util_sample *u = &d->utils[i];

        r = consumer_index(a, &n, n_sorted, u->pid, &idx);
        if (r < 0)
            return r;
        a->samples[i] = (struct util_sample){
            .consumer = (uint32_t)idx,
            .sm_util = u->sm_util,
            .mem_util = u->mem_util,
            .timestamp_us = u->timestamp_us,
        };
    }
    r = finished_collect(a, d, &n, n_sorted);
    if (r < 0)
        return r;
    *ret_n = n;
    return 0;
}

void gpu_accounting_set_observer(struct gpu_accounting *a, gpu_window_observer_fn fn,
                                 void *userdata) {
    a->opts.observer = fn;
    a->opts.observer_userdata = userdata;
}

void gpu_accounting_set_allocations(struct gpu_accounting *a, const struct gpu_alloc_table *t,
                                    pod_uid_lookup_fn lookup_uid, void *userdata) {
    a->allocs = t;
    a->lookup_uid = lookup_uid;
    a->lookup_userdata = userdata;
}

#define SWAP_MAPS(a, b)                                                                            \
    do {                                                                                           \
        struct hashmap _tmp = (a);                                                                 \
        (a) = (b);                                                                                 \
        (b) = _tmp;                                                                                \
    } while (0)

/* True when this window's consumers are the last window's, whose ledger entries still
 * stand: they are reused as they are (same pids, so the same processes, as for pids_prev). */
static bool same_consumers(const struct gpu_accounting *a, const struct gpu_track *t, size_t n,
                           const struct ledger *ledger) {
    return n > 0 && t->n_last == n && t->last_process_gen == ledger->process_gen &&
           memcmp(t->last_pids, a->pids, n * sizeof(*a->pids)) == 0;
}

/* Keeps this window's consumers for the next one; without memory, the next one looks up. */
static void remember_consumers(const struct gpu_accounting *a, struct gpu_track *t, size_t n,
                               const struct ledger *ledger) {
    size_t cap = t->last_cap;

    if (n == 0) /* an empty window is never reused */
        return;
    if (grow_array(&t->last_pids, &cap, n, sizeof(*t->last_pids)) < 0)
        return;
    cap = t->last_cap;
    if (grow_array(&t->last_procs, &cap, n, sizeof(*t->last_procs)) < 0)
        return;
    t->last_cap = cap;
    memcpy(t->last_pids, a->pids, n * sizeof(*a->pids));
    memcpy(t->last_procs, a->procs, n * sizeof(*a->procs));
    t->n_last = n;
    t->last_process_gen = ledger->process_gen;
}

/* This window's ledger entries (a->procs) from the pids: known pids keep the start time
 * the last window resolved, new ones are resolved. */
static int find_processes(struct gpu_accounting *a, struct gpu_track *t,
                          const struct gpu_device_reading *d, size_t n, process_resolve_fn resolve,
                          void *userdata, struct ledger *ledger) {
    /* The last window's pids become the fallback for this one's. */
    SWAP_MAPS(t->pids_now, t->pids_prev);
    hashmap_clear(&t->pids_now);
    for (size_t i = 0; i < n; i++) {
        struct process_info info = {0};
        struct ledger_process *p;
        bool running = i < a->n_running;
        /* The driver says a process at this pid finished, and one runs at it: that one is
         * another (the finished are those not running), whatever the last window had there.
         * The finished one itself keeps what the last window knew of it. */
        bool reused = running && d->n_finished > 0 && finished_has_pid(d, a->pids[i]);
        uintptr_t known;
        int r;

        /* A pid of the last window is that same process: no /proc read per tick (and it
         * may have left /proc already while its last samples are accounted). Only new pids
         * are resolved. */
        known = reused ? 0 : (uintptr_t)hashmap_get(&t->pids_prev, (uint64_t)a->pids[i] + 1);
        if (known)
            info = (struct process_info){.start_ticks = known - 1};
        else if (!resolve || resolve(userdata, a->pids[i], &info) < 0 ||
                 (!running && finished_pid_taken_again(d, a->pids[i], info.start_time_seconds)))
            info = (struct process_info){0}; /* what the driver says of it, alone */
        r = hashmap_put(&t->pids_now, (uint64_t)a->pids[i] + 1,
                        (void *)(uintptr_t)(info.start_ticks + 1));
        if (r < 0)
            return r;
        r = ledger_process_get(ledger, d->index, a->pids[i], info.start_ticks, &info.id, &p);
        if (r < 0)
            return r;
        if (r > 0) /* new entry: its identity is fixed for its life */
            p->start_time_seconds = info.start_time_seconds;
        a->procs[i] = p;
    }
    return 0;
}

/* The window's no-context idle energy: configured or learned from idle windows, else the
 * intensity model's estimate, else the board's typical idle, else unknown (0: all of the
 * window's energy is active). */
static uint64_t window_idle_uj(const struct gpu_track *t, const struct learned_window *lw,
                               uint64_t dt_us) {
    if (idle_power_known(&t->idle))
        return idle_power_energy_uj(&t->idle, dt_us);
    if (lw->idle_known && lw->idle_watts > 0)
        return (uint64_t)(lw->idle_watts * (double)dt_us);
    if (t->typical_idle_known)
        return (uint64_t)(t->typical_idle_w * (double)dt_us);
    return 0;
}

/* Who was on the GPU in the window, their ledger entries, activity and split weights. */
static int window_consumers(struct gpu_accounting *a, struct gpu_track *t,
                            const struct gpu_device_reading *d, struct ledger_gpu *g,
                            uint64_t energy_uj, uint64_t now_us, process_resolve_fn resolve,
                            void *userdata, struct ledger *ledger, size_t *ret_n, bool *ret_same,
                            struct learned_window *ret_lw) {
    bool per_process = d->utils_supported && !d->mig_enabled;
    bool learnable = per_process;
    struct weights_stats ws;
    size_t n;
    int r;

    r = collect_consumers(a, d, &n);
    if (r < 0)
        return r;
    /* A window with finished processes looks its pids up: one may run again at another's. */
    *ret_same = d->n_finished == 0 && same_consumers(a, t, n, ledger);
    t->n_last = 0; /* valid again once this window is booked */
    if (*ret_same)
        memcpy(a->procs, t->last_procs, n * sizeof(*a->procs));
    else {
        r = find_processes(a, t, d, n, resolve, userdata, ledger);
        if (r < 0)
            return r;
    }
    r = learned_activity(a, t, d->n_utils, n, t->window_start_us, now_us, &ws);
    if (r < 0)
        return r;
    if (per_process)
        credit_ahead(a, t, d->n_utils, n, t->window_start_us, now_us);
    unsampled_activity(a, d, per_process, now_us);
    finished_activity(a, t, d, per_process, now_us);
    if (d->mig_enabled) { /* by instance: measured activity can be learned from */
        learnable = mig_activity(a, d, n, now_us - t->window_start_us);
        g->mig_activity = !learnable                                    ? MIG_ACTIVITY_SIZE
                          : d->mig_activity_source == GPU_ACTIVITY_DCGM ? MIG_ACTIVITY_DCGM
                                                                        : MIG_ACTIVITY_GPM;
    } else if (!per_process && n > 0) /* no per-process utilisation: the split is even */
        memset(a->weights, 0, n * sizeof(*a->weights));
    if (a->opts.sm_share_only || !learnable) {
        if (t->intensity)
            intensity_drop_rows(t->intensity);
        learned_sm_share(a, n);
        *ret_lw = (struct learned_window){.method = SPLIT_NOT_IDENTIFIABLE};
    } else
        learned_weights(a, t, n, per_process, t->window_start_us, now_us, energy_uj, ret_lw);
    for (size_t i = 0; i < n; i++)
        a->consumers[i].key = a->procs[i]->key;
    g->split_valid = learnable && !a->opts.sm_share_only;
    if (g->split_valid) {
        g->split = ret_lw->method;
        g->split_windows[ret_lw->method]++;
    }
    *ret_n = n;
    return 0;
}

/* How the window's consumers shared the GPU. */
static enum gpu_sharing window_sharing(const struct gpu_device_reading *d, size_t n) {
    if (d->mig_enabled)
        return SHARING_MIG;
    if (n == 0)
        return SHARING_NONE;
    for (size_t i = 0; i < d->n_processes; i++)
        if (d->processes[i].kinds & GPU_PROCESS_MPS)
            return SHARING_MPS;
    return n == 1 ? SHARING_EXCLUSIVE : SHARING_TIME_SLICING;
}

static int attribute_window(struct gpu_accounting *a, struct gpu_track *t,
                            const struct gpu_device_reading *d, struct ledger_gpu *g,
                            uint64_t energy_uj, uint64_t now_us, uint64_t now_ns,
                            process_resolve_fn resolve, void *userdata, struct ledger *ledger,
                            struct gpu_tick_stats *stats) {
    uint64_t dt_us = now_us - t->window_start_us;
    struct learned_window lw;
    struct split_request req;
    struct split_result res;
    size_t n, n_holders = 0;
    bool same;
    int r;

    r = window_consumers(a, t, d, g, energy_uj, now_us, resolve, userdata, ledger, &n, &same, &lw);
    if (r < 0)
        goto unplaced;
    r = holders_collect(a, d, &n_holders);
    if (r < 0)
        goto unplaced;

    req = (struct split_request){
        .energy_uj = energy_uj,
        .idle_uj = window_idle_uj(t, &lw, dt_us),
        .policy = a->opts.idle_policy,
        .n = n,
        .consumers = a->consumers,
        .n_holders = n_holders,
        .holders = a->holders,
        .holder_parts = a->holder_parts,
        .carries = a->carries,
    };
    r = split_with_context(&req, lw.context_uj, a->held_us, &a->split, a->parts, &res);
    if (r < 0)
        goto unplaced;
    for (size_t i = 0; i < n; i++)
        a->procs[i]->carry = a->carries[i];
    if (res.allocation_fallback)
        stats->allocation_fallbacks++;
    if (n_holders > 0) {
        r = holders_book(a, n_holders, g, d->index, now_ns, ledger);
        if (r < 0) {
            for (size_t j = 0; j < n; j++) /* nothing of the processes' parts is booked yet */
                g->unattributed_uj[UNATTR_NO_DATA] += a->parts[j];
            return r;
        }
    }

    g->unattributed_uj[UNATTR_IDLE] += res.unattributed_idle_uj;
    g->unattributed_uj[UNATTR_NO_CONSUMER] += res.unattributed_no_consumer_uj;
    for (size_t i = 0; i < n; i++) {
        struct ledger_process *p = a->procs[i];
        /* Only a window a process had to itself on a metered GPU is a measurement. */
        bool estimated = !res.exclusive || !d->energy_valid;

        r = ledger_add_gpu_energy(ledger, p, a->parts[i], estimated, now_ns);
        if (r < 0) {
            /* The process got its part; what is not placed yet must not vanish. */
            for (size_t j = i + 1; j < n; j++)
                g->unattributed_uj[UNATTR_NO_DATA] += a->parts[j];
            return r;
        }
        if (dt_us > 0 && d->utils_supported && !d->mig_enabled) {
            p->util_valid = true;
            p->sm_util_ratio = MIN(1.0, (double)a->weights[i] / (100.0 * (double)dt_us));
            p->mem_util_ratio = MIN(1.0, (double)a->mem_weights[i] / (100.0 * (double)dt_us));
        }
        mig_label(p, d);
        p->memory_valid = a->memory_valid[i];
        if (a->memory_valid[i])
            p->memory_used_bytes = a->consumers[i].memory;
    }
    g->process_count = (unsigned)n;
    g->sharing = window_sharing(d, n);
    if (a->opts.observer)
        a->opts.observer(a->opts.observer_userdata,
                         &(struct gpu_window_trace){
                             .gpu = d->index,
                             .t0_us = t->window_start_us,
                             .t1_us = now_us,
                             .energy_uj = energy_uj,
                             .idle_uj = res.idle_uj,
                             .n = n,
                             .procs = (const struct ledger_process *const *)a->procs,
                             .activity = a->weights,
                         });
    if (same)
        t->n_last = n; /* the remembered arrays are this window's already */
    else
        remember_consumers(a, t, n, ledger);

    /* A window with nobody on the GPU shows what idle costs. */
    if (n == 0 && dt_us > 0)
        idle_power_observe(&t->idle, energy_uj, dt_us);
    else if (n > 0)
        idle_power_interrupt(&t->idle);
    return 0;

unplaced:
    /* Nothing of this window was placed yet: keep all of it, as no_data. */
    g->unattributed_uj[UNATTR_NO_DATA] += energy_uj;
    return r;
}

static void update_device(struct ledger_gpu *g, const struct gpu_device_reading *d,
                          const struct gpu_track *t) {
    g->present = true;
    g->index = d->index;
    if (d->uuid[0]) /* not read this time: the board keeps the one it had */
        copy_cut(g->uuid, sizeof(g->uuid), d->uuid);
    if (d->name[0])
        copy_cut(g->model, sizeof(g->model), d->name);
    g->up = d->up;
    if (!d->up) {
        g->power_valid = false;
        return;
    }
    g->energy_estimated = !d->energy_valid;
    g->power_valid = d->power_valid;
    g->power_watts = d->power_valid ? d->power_mw / 1000.0 : 0;
    g->idle_power_valid = idle_power_known(&t->idle);
    g->idle_power_watts = idle_power_watts(&t->idle);
}

/* Ticks a restored board may go unnamed (its UUID unread) before it is taken as another. */
#define GPU_UNNAMED_TICKS_MAX 30u

/* The wall clock may be stepped (NTP, a VM resumed) while the monotonic one runs on. */
#define WALL_CLOCK_STEP_US UINT64_C(100000)

/* Whether the wall clock stepped during the window: then the samples' times (the wall
 * clock's) no longer tell who ran in it. Aligns the window's start to the monotonic clock,
 * so that its length is the time that passed. The time a restart saved is the wall
 * clock's, the only one across it: its window's monotonic start is derived from it. */
static bool window_clock_stepped(struct gpu_track *t, uint64_t now_us, uint64_t now_ns) {
    uint64_t wall_us = now_us > t->window_start_us ? now_us - t->window_start_us : 0;
    uint64_t mono_us = now_ns > t->window_start_ns ? (now_ns - t->window_start_ns) / 1000 : 0;
    bool stepped;

    if (t->downtime) {
        t->window_start_ns = now_ns - MIN(now_ns, wall_us * 1000);
        return false;
    }
    stepped = now_us < t->window_start_us ||
              (wall_us > mono_us ? wall_us - mono_us : mono_us - wall_us) > WALL_CLOCK_STEP_US;
    if (stepped)
        t->window_start_us = now_us - MIN(now_us, mono_us);
    return stepped;
}

int gpu_accounting_tick(struct gpu_accounting *a, const struct gpu_device_reading *devices,
                        size_t n_devices, uint64_t now_us, uint64_t now_ns,
                        process_resolve_fn resolve, void *userdata, struct ledger *ledger,
                        struct gpu_tick_stats *ret_stats) {
    struct gpu_tick_stats stats = {0};
    int ret = 0;

    for (size_t i = 0; i < n_devices; i++) {
        const struct gpu_device_reading *d = &devices[i];
        struct ledger_gpu *g = ledger_gpu(ledger, d->index);
        struct gpu_track *t;
        uint64_t energy_uj = 0;
        bool counted;
        int r;

        /* A GPU whose handle is refused from the start (a device cgroup hides it) is not
         * ours to read: no series, and not a failing source. */
        if (!g || (!d->up && (d->error == -EACCES || d->error == -EPERM) && !g->present))
            continue;
        t = &a->tracks[d->index];
        if (t->saved_uuid[0] && gpu_restart_forget_another(a, t, d->uuid))
            stats.replaced_gpus++;
        if (!t->seen) {
            t->seen = true;
            (void)energy_counter_init(&t->counter, 0, ENERGY_UNIT_MJ, 0);
        }
        /* Another board at this index since it was read in this run (lost, and another
         * enumerated in its place): its counter starts over, not from the other's. */
        if ((t->counter.primed || t->power_primed) && g->uuid[0] && d->uuid[0] &&
            strcmp(g->uuid, d->uuid) != 0) {
            gpu_track_start_over(a, t);
            stats.swapped_gpus++;
        }
        update_device(g, d, t);
        /* Restored, and the board at this index not named yet: its counter is not bridged
         * before it is known to be the board saved (another's would book the difference
         * between two boards' counters as downtime). A board that stays unnamed is taken
         * as another after a while, so that its energy is counted from there. */
        if (t->downtime && t->saved_uuid[0] && !d->uuid[0]) {
            if (++t->unnamed_ticks < GPU_UNNAMED_TICKS_MAX)
                continue;
            (void)gpu_restart_forget_another(a, t, "(unnamed)");
        }
        if (!t->typical_idle_checked && d->name[0]) { /* until a name is read */
            t->typical_idle_known = gpu_typical_idle_watts(d->name, &t->typical_idle_w);
            t->typical_idle_checked = true;
        }
        if (!d->up) {
            stats.devices_down++;
            t->gap = true;
            /* Power is integrated again from the next reading, not across the outage. */
            t->power_primed = false;
            continue;
        }

        if (t->window_open && window_clock_stepped(t, now_us, now_ns)) {
            stats.clock_steps++;
            t->gap = true;
        }
        counted = window_energy(a, t, d, now_ns, &energy_uj, &stats);
        /* Idle windows join into one stretch only where nothing was missed between them. */
        if (!counted || t->downtime || t->gap) {
            idle_power_interrupt(&t->idle);
            if (t->intensity)
                intensity_drop_rows(t->intensity);
        }
        if (counted) {
            g->energy_uj += energy_uj;
            if (t->downtime) {
                /* Drawn while joulestat was not running: nobody's that it can know. */
                g->unattributed_uj[UNATTR_DOWNTIME] += energy_uj;
            } else if (t->gap) {
                /* The delta spans time we could not observe: nobody can be charged. */
                g->unattributed_uj[UNATTR_NO_DATA] += energy_uj;
            } else {
                r = attribute_window(a, t, d, g, energy_uj, now_us, now_ns, resolve, userdata,
                                     ledger, &stats);
                if (r < 0 && ret == 0)
                    ret = r;
            }
        }
        t->gap = t->downtime = false;
        t->window_open = true;
        t->window_start_us = now_us;
        t->window_start_ns = now_ns;
    }
    if (ret_stats)
        *ret_stats = stats;
    return ret;
}
