/* SPDX-License-Identifier: MIT */
#include "cgroup_path.h"

#include <errno.h>
#include <string.h>

/* A piece of the input: the input is never NUL-terminated inside a line. */
struct slice {
    const char *p;
    size_t n;
};

#define LIT(s) ((struct slice){(s), sizeof(s) - 1})

static bool slice_eq(struct slice a, struct slice b) {
    return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

static bool starts_with(struct slice s, struct slice prefix) {
    return s.n >= prefix.n && memcmp(s.p, prefix.p, prefix.n) == 0;
}

static bool ends_with(struct slice s, struct slice suffix) {
    return s.n >= suffix.n && memcmp(s.p + s.n - suffix.n, suffix.p, suffix.n) == 0;
}

static struct slice drop_prefix(struct slice s, size_t n) {
    return (struct slice){s.p + n, s.n - n};
}

static struct slice drop_suffix(struct slice s, size_t n) {
    return (struct slice){s.p, s.n - n};
}

static bool is_lower_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool is_hex(char c) {
    return is_lower_hex(c) || (c >= 'A' && c <= 'F');
}

static char to_lower(char c) {
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

/* Copies a validated slice into a fixed field of at least s.n + 1 bytes. */
static void copy_out(char *dst, struct slice s) {
    memcpy(dst, s.p, s.n);
    dst[s.n] = '\0';
}

/* "123": decimal without sign or leading zeros, fitting in uint32_t. */
static bool parse_u32(struct slice s, uint32_t *ret) {
    uint64_t v = 0;

    if (s.n == 0 || s.n > 10 || (s.p[0] == '0' && s.n > 1))
        return false;
    for (size_t i = 0; i < s.n; i++) {
        if (!is_digit(s.p[i]))
            return false;
        v = v * 10 + (uint64_t)(s.p[i] - '0');
    }
    if (v > UINT32_MAX)
        return false;
    *ret = (uint32_t)v;
    return true;
}

static bool is_container_id(struct slice s) {
    if (s.n != CONTAINER_ID_LEN)
        return false;
    for (size_t i = 0; i < s.n; i++)
        if (!is_lower_hex(s.p[i]))
            return false;
    return true;
}

/* A pod UID: 8-4-4-4-12 hex with `sep` between groups, or 32 hex (static pods, whose UID
 * is the kubelet's config hash). Written lowercase with '-' into out[POD_UID_MAX + 1]. */
static bool parse_pod_uid(struct slice s, char sep, char *out) {
    if (s.n == 36) {
        for (size_t i = 0; i < 36; i++) {
            bool dash = i == 8 || i == 13 || i == 18 || i == 23;

            if (dash ? s.p[i] != sep : !is_hex(s.p[i]))
                return false;
        }
    } else if (s.n == 32) {
        for (size_t i = 0; i < 32; i++)
            if (!is_hex(s.p[i]))
                return false;
    } else
        return false;
    for (size_t i = 0; i < s.n; i++)
        out[i] = s.p[i] == sep ? '-' : to_lower(s.p[i]);
    out[s.n] = '\0';
    return true;
}

bool cgroup_is_sluid(const char *s, size_t len) {
    static const char crockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

    if (len != SLURM_SLUID_LEN || s[0] != 's')
        return false;
    for (size_t i = 1; i < len; i++)
        if (!memchr(crockford, s[i], sizeof(crockford) - 1))
            return false;
    return true;
}

/* "0", "batch", "extern", "interactive", "TBD", each optionally "+<het component>". */
static bool is_step_name(struct slice s) {
    static const struct slice named[] = {LIT("batch"), LIT("extern"), LIT("interactive"),
                                         LIT("TBD")};
    const char *plus = memchr(s.p, '+', s.n);
    struct slice base = plus ? (struct slice){s.p, (size_t)(plus - s.p)} : s;
    uint32_t v;

    if (s.n > SLURM_STEP_MAX)
        return false;
    if (plus && !parse_u32((struct slice){plus + 1, s.n - base.n - 1}, &v))
        return false;
    if (parse_u32(base, &v))
        return true;
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
        if (slice_eq(base, named[i]))
            return true;
    return false;
}

static bool is_unit_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' ||
           c == '_' || c == '.' || c == '@' || c == ':' || c == '\\';
}

static bool is_systemd_unit(struct slice s) {
    struct slice name;

    if (ends_with(s, LIT(".service")))
        name = drop_suffix(s, sizeof(".service") - 1);
    else if (ends_with(s, LIT(".scope")))
        name = drop_suffix(s, sizeof(".scope") - 1);
    else
        return false;
    if (name.n == 0 || s.n >= SYSTEMD_UNIT_MAX)
        return false;
    for (size_t i = 0; i < s.n; i++)
        if (!is_unit_char(s.p[i]))
            return false;
    return true;
}

enum slurm_state {
    SLURM_IDLE,      /* no SLURM root seen yet */
    SLURM_V1_ROOT,   /* after "/slurm" or "/slurm_<node>": expect uid_<n> */
    SLURM_V1_UID,    /* expect job_<n> */
    SLURM_V2_ROOT,   /* after "slurmstepd.scope": expect system, slurmd, job_<n> or SLUID */
    SLURM_JOB_LEVEL, /* expect step_<x> */
    SLURM_V1_STEP,   /* expect task_<n> */
    SLURM_V2_STEP,   /* expect user or slurm */
    SLURM_V2_USER,   /* expect task_<n> or task_special */
    SLURM_DONE,
};

struct path_state {
    struct workload_identity id;
    struct slice prev; /* previous component, for "kubepods/burstable/pod<uid>/<id>" */
    enum slurm_state slurm;
    bool delegated; /* below a user's own systemd manager (user@UID.service) */
};

/* "user@<uid>.service": systemd delegates the subtree below it to that user, who may create
 * cgroups of any name there. */
static bool is_user_manager(struct slice c) {
    uint32_t uid;

    return starts_with(c, LIT("user@")) && ends_with(c, LIT(".service")) &&
           c.n > sizeof("user@.service") - 1 &&
           parse_u32(drop_suffix(drop_prefix(c, 5), sizeof(".service") - 1), &uid);
}

static void set_container(struct path_state *st, enum container_runtime rt, struct slice cid) {
    st->id.runtime = rt;
    copy_out(st->id.container_id, cid);
}

/* "<prefix>-<64hex>[.scope]": the runtime's systemd scope (or CRI-O's cgroupfs name). The
 * monitors "crio-conmon-<id>" and "libpod-conmon-<id>" fail the 64-hex check on purpose. */
static bool match_prefixed_container(struct path_state *st, struct slice c) {
    static const struct {
        struct slice prefix;
        enum container_runtime runtime;
    } forms[] = {
        {LIT("cri-containerd-"), RUNTIME_CONTAINERD},
        {LIT("crio-"), RUNTIME_CRIO},
        {LIT("docker-"), RUNTIME_DOCKER},
        {LIT("libpod-"), RUNTIME_PODMAN},
    };

    if (ends_with(c, LIT(".scope")))
        c = drop_suffix(c, sizeof(".scope") - 1);
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
        if (starts_with(c, forms[i].prefix) && is_container_id(drop_prefix(c, forms[i].prefix.n))) {
            set_container(st, forms[i].runtime, drop_prefix(c, forms[i].prefix.n));
            return true;
        }
    return false;
}

/* A bare 64-hex component: its parent says who made it ("…slice:cri-containerd:<id>",
 * "/docker/<id>"); under a pod it is the kubelet cgroupfs layout with an unnamed runtime. */
static bool match_bare_container(struct path_state *st, struct slice c) {
    enum container_runtime rt;

    if (!is_container_id(c))
        return false;
    if (slice_eq(st->prev, LIT("cri-containerd")))
        rt = RUNTIME_CONTAINERD;
    else if (slice_eq(st->prev, LIT("crio")))
        rt = RUNTIME_CRIO;
    else if (slice_eq(st->prev, LIT("docker")))
        rt = RUNTIME_DOCKER;
    else if (st->id.pod_uid[0])
        rt = RUNTIME_UNKNOWN;
    else
        return false;
    set_container(st, rt, c);
    return true;
}

static enum pod_qos qos_from_word(struct slice w) {
    if (slice_eq(w, LIT("burstable")))
        return POD_QOS_BURSTABLE;
    if (slice_eq(w, LIT("besteffort")))
        return POD_QOS_BESTEFFORT;
    if (slice_eq(w, LIT("kubepods")))
        return POD_QOS_GUARANTEED; /* guaranteed pods sit directly under the root */
    return POD_QOS_UNKNOWN;
}

/* A pod found at this depth: containers seen above it belong to the node (kind in
 * docker), not to the workload. */
static void set_pod(struct path_state *st, const char *uid, enum pod_qos qos) {
    memcpy(st->id.pod_uid, uid, sizeof(st->id.pod_uid));
    st->id.qos = qos;
    st->id.runtime = RUNTIME_NONE;
    st->id.container_id[0] = '\0';
}

/* cgroupfs driver: "pod<uid-with-dashes>", QoS from the parent directory. */
static bool match_cgroupfs_pod(struct path_state *st, struct slice c) {
    char uid[POD_UID_MAX + 1];

    if (!starts_with(c, LIT("pod")) || !parse_pod_uid(drop_prefix(c, 3), '-', uid))
        return false;
    set_pod(st, uid, qos_from_word(st->prev));
    return true;
}

/* systemd driver: "[<root>-]kubepods[-<qos>]-pod<uid_with_underscores>.slice". */
static bool match_systemd_pod(struct path_state *st, struct slice c) {
    char uid[POD_UID_MAX + 1];
    struct slice name, last, before, word;
    const char *dash = NULL;
    bool has_kubepods = false;

    if (!ends_with(c, LIT(".slice")))
        return false;
    name = drop_suffix(c, sizeof(".slice") - 1);
    for (size_t i = 0; i < name.n; i++)
        if (name.p[i] == '-')
            dash = name.p + i;
    if (!dash)
        return false;
    last = (struct slice){dash + 1, (size_t)(name.p + name.n - dash - 1)};
    if (!starts_with(last, LIT("pod")) || !parse_pod_uid(drop_prefix(last, 3), '_', uid))
        return false;

    /* The words before "pod…" must include "kubepods"; the one right before is the QoS. */
    before = (struct slice){name.p, (size_t)(dash - name.p)};
    word = before;
    for (const char *w = before.p; w <= before.p + before.n;) {
        const char *e = memchr(w, '-', (size_t)(before.p + before.n - w));

        if (!e)
            e = before.p + before.n;
        word = (struct slice){w, (size_t)(e - w)};
        if (slice_eq(word, LIT("kubepods")))
            has_kubepods = true;
        if (e == before.p + before.n)
            break;
        w = e + 1;
    }
    if (!has_kubepods)
        return false;
    set_pod(st, uid, qos_from_word(word));
    return true;
}

static bool match_job_dir(struct path_state *st, struct slice c) {
    uint32_t job;

    if (starts_with(c, LIT("job_")) && parse_u32(drop_prefix(c, 4), &job) && job > 0) {
        st->id.slurm.job_id_valid = true;
        st->id.slurm.job_id = job;
        st->id.slurm.role = SLURM_ROLE_JOB;
        return true;
    }
    if (st->slurm == SLURM_V2_ROOT && cgroup_is_sluid(c.p, c.n)) {
        copy_out(st->id.slurm.sluid, c);
        st->id.slurm.needs_environ = true;
        st->id.slurm.role = SLURM_ROLE_JOB;
        return true;
    }
    return false;
}

static bool match_task_dir(struct path_state *st, struct slice c, bool allow_special) {
    struct slice t = drop_prefix(c, 5);
    uint32_t v;

    if (!starts_with(c, LIT("task_")))
        return false;
    if (!parse_u32(t, &v) && !(allow_special && slice_eq(t, LIT("special"))))
        return false;
    copy_out(st->id.slurm.task, t);
    return true;
}

/* SLURM layouts, one level at a time; a component that does not fit ends the walk and
 * keeps what was found so far (cgroup v1: /slurm/uid_N/job_N/step_X/task_N; v2:
 * slurmstepd.scope/job_N|SLUID/step_X/{user/task_N|slurm}, slurmstepd.scope/system). */
static void slurm_step(struct path_state *st, struct slice c) {
    struct slurm_identity *s = &st->id.slurm;

    switch (st->slurm) {
    case SLURM_IDLE:
        if (slice_eq(c, LIT("slurm")) || starts_with(c, LIT("slurm_"))) {
            st->slurm = SLURM_V1_ROOT;
            s->role = SLURM_ROLE_INFRA;
        } else if (slice_eq(c, LIT("slurmstepd.scope")) || ends_with(c, LIT("_slurmstepd.scope"))) {
            st->slurm = SLURM_V2_ROOT;
            s->role = SLURM_ROLE_INFRA;
        }
        return;
    case SLURM_V1_ROOT:
        if (starts_with(c, LIT("uid_")) && parse_u32(drop_prefix(c, 4), &s->uid)) {
            s->uid_valid = true;
            st->slurm = SLURM_V1_UID;
        } else
            st->slurm = SLURM_DONE;
        return;
    case SLURM_V1_UID:
    case SLURM_V2_ROOT:
        st->slurm = match_job_dir(st, c) ? SLURM_JOB_LEVEL : SLURM_DONE;
        return;
    case SLURM_JOB_LEVEL:
        if (starts_with(c, LIT("step_")) && is_step_name(drop_prefix(c, 5))) {
            copy_out(s->step, drop_prefix(c, 5));
            st->slurm = s->sluid[0] || !s->uid_valid ? SLURM_V2_STEP : SLURM_V1_STEP;
        } else
            st->slurm = SLURM_DONE;
        return;
    case SLURM_V1_STEP:
        (void)match_task_dir(st, c, false);
        st->slurm = SLURM_DONE;
        return;
    case SLURM_V2_STEP:
        if (slice_eq(c, LIT("slurm")))
            s->role = SLURM_ROLE_STEPD;
        st->slurm = slice_eq(c, LIT("user")) ? SLURM_V2_USER : SLURM_DONE;
        return;
    case SLURM_V2_USER:
        (void)match_task_dir(st, c, true);
        st->slurm = SLURM_DONE;
        return;
    case SLURM_DONE:
        return;
    }
}

/* rootless podman's container, the one a user's own manager runs: libpod-<id>[.scope]. */
static bool match_rootless_container(struct path_state *st, struct slice c) {
    if (ends_with(c, LIT(".scope")))
        c = drop_suffix(c, sizeof(".scope") - 1);
    if (!starts_with(c, LIT("libpod-")) || !is_container_id(drop_prefix(c, sizeof("libpod-") - 1)))
        return false;
    set_container(st, RUNTIME_PODMAN, drop_prefix(c, sizeof("libpod-") - 1));
    return true;
}

/* Below a user's manager, names a user chose are not taken for a pod, a SLURM job or
 * another runtime's container, which would bill them (a delegated subtree may carry any
 * name: `docker-<id of another's container>.scope`); a rootless podman container is the
 * user's own and stays one. */
static void path_component(struct path_state *st, struct slice c) {
    if (is_systemd_unit(c))
        copy_out(st->id.systemd_unit, c);
    if (is_user_manager(c))
        st->delegated = true;
    if (st->delegated)
        (void)match_rootless_container(st, c);
    else if (!match_systemd_pod(st, c) && !match_cgroupfs_pod(st, c) &&
             !match_prefixed_container(st, c))
        (void)match_bare_container(st, c);
    if (!st->delegated)
        slurm_step(st, c);
    st->prev = c;
}

static enum identity_kind kind_of(const struct workload_identity *id) {
    if (id->pod_uid[0])
        return IDENTITY_POD;
    if (id->container_id[0])
        return IDENTITY_CONTAINER;
    if (id->slurm.job_id_valid || id->slurm.sluid[0])
        return IDENTITY_SLURM_JOB;
    return IDENTITY_NONE;
}

int cgroup_path_parse(const char *path, size_t len, struct workload_identity *ret) {
    struct path_state st = {0};
    const char *end = path + len;

    if (len == 0 || path[0] != '/' || memchr(path, '\0', len))
        return -EINVAL;

    /* Components are split at '/' and at ':' (the "slice:prefix:id" systemd triple that a
     * kubelet/containerd driver mismatch leaves in the path), but a unit's name may hold
     * ':' itself (systemd-backlight@backlight:acpi_video0.service): one that ends as a
     * unit is one component. "." and ".." (a reader in another cgroup namespace) carry no
     * identity and are skipped. */
    for (const char *p = path; p < end;) {
        const char *q = p, *slash = memchr(p, '/', (size_t)(end - p));
        bool whole = is_systemd_unit((struct slice){p, (size_t)((slash ? slash : end) - p)});
        struct slice c;

        while (q < end && *q != '/' && (whole || *q != ':'))
            q++;
        c = (struct slice){p, (size_t)(q - p)};
        if (c.n > 0 && !slice_eq(c, LIT(".")) && !slice_eq(c, LIT("..")))
            path_component(&st, c);
        if (q == end)
            break;
        p = q + 1;
    }

    if (st.id.slurm.role == SLURM_ROLE_NONE || st.id.slurm.role == SLURM_ROLE_INFRA) {
        /* Keep only the role: a uid level or a parking dir is not a job. */
        enum slurm_role role = st.id.slurm.role;

        st.id.slurm = (struct slurm_identity){.role = role};
    }
    st.id.kind = kind_of(&st.id);
    *ret = st.id;
    return 0;
}

/* Lower is better for breaking ties between v1 lines of equal specificity. */
static unsigned controller_rank(struct slice ctrls) {
    static const struct slice preferred[] = {LIT("cpu"), LIT("cpuacct"), LIT("memory"),
                                             LIT("name=systemd"), LIT("pids")};
    unsigned best = 5;

    for (const char *p = ctrls.p; p <= ctrls.p + ctrls.n;) {
        const char *e = memchr(p, ',', (size_t)(ctrls.p + ctrls.n - p));
        struct slice c;

        if (!e)
            e = ctrls.p + ctrls.n;
        c = (struct slice){p, (size_t)(e - p)};
        for (unsigned i = 0; i < 5; i++)
            if (slice_eq(c, preferred[i])) {
                unsigned rank = i == 0 ? 0 : i - 1; /* cpu and cpuacct share rank 0 */

                if (rank < best)
                    best = rank;
            }
        if (e == ctrls.p + ctrls.n)
            break;
        p = e + 1;
    }
    return best;
}

static unsigned specificity(const struct workload_identity *id) {
    if (id->kind == IDENTITY_NONE)
        return 0;
    return 16 + (id->container_id[0] ? 8u : 0u) + (id->pod_uid[0] ? 4u : 0u) +
           (id->slurm.step[0] ? 2u : 0u) + (id->slurm.task[0] ? 1u : 0u);
}

static bool is_controller_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
           c == ',' || c == '=' || c == '.' || c == '-';
}

/* "ID:controllers:path" split at the first two ':' only. */
static bool split_line(struct slice line, bool *ret_v2, struct slice *ret_ctrls,
                       struct slice *ret_path) {
    const char *c1, *c2;
    uint32_t hier;

    if (memchr(line.p, '\0', line.n))
        return false;
    c1 = memchr(line.p, ':', line.n);
    if (!c1)
        return false;
    c2 = memchr(c1 + 1, ':', (size_t)(line.p + line.n - c1 - 1));
    if (!c2)
        return false;
    if (!parse_u32((struct slice){line.p, (size_t)(c1 - line.p)}, &hier))
        return false;
    *ret_ctrls = (struct slice){c1 + 1, (size_t)(c2 - c1 - 1)};
    for (size_t i = 0; i < ret_ctrls->n; i++)
        if (!is_controller_char(ret_ctrls->p[i]))
            return false;
    /* v2 is "0::"; a v1 hierarchy always names its controllers. */
    if ((hier == 0) != (ret_ctrls->n == 0))
        return false;
    *ret_v2 = hier == 0;
    *ret_path = (struct slice){c2 + 1, (size_t)(line.p + line.n - c2 - 1)};
    /* The kernel marks a cgroup removed before its process was reaped. */
    if (ends_with(*ret_path, LIT(" (deleted)")))
        *ret_path = drop_suffix(*ret_path, sizeof(" (deleted)") - 1);
    return ret_path->n > 0 && ret_path->p[0] == '/';
}

int cgroup_file_parse(const char *text, size_t len, struct workload_identity *ret) {
    struct workload_identity v2 = {0}, v1 = {0}, v1_units = {0}, cand;
    bool have_v2 = false, have_v1 = false, have_v1_units = false;
    unsigned v1_score = 0, v1_rank = 0;
    const char *end = text + len;

    for (const char *p = text; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        struct slice line = {p, (size_t)((nl ? nl : end) - p)}, ctrls, path;
        bool is_v2;

        p = nl ? nl + 1 : end;
        if (!split_line(line, &is_v2, &ctrls, &path))
            continue;
        if (cgroup_path_parse(path.p, path.n, &cand) < 0)
            continue;
        if (is_v2) {
            /* Only one unified hierarchy exists; a second "0::" line is malformed input. */
            if (!have_v2)
                v2 = cand;
            have_v2 = true;
        } else {
            unsigned score = specificity(&cand), rank = controller_rank(ctrls);

            if (!have_v1 || score > v1_score || (score == v1_score && rank < v1_rank)) {
                v1 = cand;
                v1_score = score;
                v1_rank = rank;
            }
            have_v1 = true;
            if (slice_eq(ctrls, LIT("name=systemd"))) {
                v1_units = cand;
                have_v1_units = true;
            }
        }
    }
    /* No v1 line names a workload: systemd's own hierarchy names the unit (the cpu one
     * holds only the units with CPU accounting, a session or sshd at "/user.slice"). */
    if (have_v1 && v1.kind == IDENTITY_NONE && have_v1_units && v1_units.systemd_unit[0])
        v1 = v1_units;

    if (!have_v2 && !have_v1)
        return -EINVAL;
    /* The v2 line where it names a workload, or where v1 names none and v2 says at least
     * as much (a unit): a bare "0::/" on a hybrid node says nothing, while the systemd
     * hierarchy says "session-3.scope", which is no job's, whatever its environment. */
    if (have_v2 && (v2.kind != IDENTITY_NONE || !have_v1 ||
                    (v1.kind == IDENTITY_NONE && (v2.systemd_unit[0] || !v1.systemd_unit[0]))))
        *ret = v2;
    else
        *ret = v1;
    return 0;
}

const char *identity_kind_to_string(enum identity_kind k) {
    static const char *const names[_IDENTITY_KIND_MAX] = {
        [IDENTITY_NONE] = "none",
        [IDENTITY_CONTAINER] = "container",
        [IDENTITY_POD] = "pod",
        [IDENTITY_SLURM_JOB] = "slurm_job",
    };

    return (unsigned)k < _IDENTITY_KIND_MAX ? names[k] : NULL;
}

const char *container_runtime_to_string(enum container_runtime r) {
    static const char *const names[_RUNTIME_MAX] = {
        [RUNTIME_NONE] = "",
        [RUNTIME_UNKNOWN] = "unknown",
        [RUNTIME_CONTAINERD] = "containerd",
        [RUNTIME_CRIO] = "cri-o",
        [RUNTIME_DOCKER] = "docker",
        [RUNTIME_PODMAN] = "podman",
    };

    return (unsigned)r < _RUNTIME_MAX ? names[r] : NULL;
}

const char *pod_qos_to_string(enum pod_qos q) {
    static const char *const names[_POD_QOS_MAX] = {
        [POD_QOS_UNKNOWN] = "",
        [POD_QOS_GUARANTEED] = "guaranteed",
        [POD_QOS_BURSTABLE] = "burstable",
        [POD_QOS_BESTEFFORT] = "besteffort",
    };

    return (unsigned)q < _POD_QOS_MAX ? names[q] : NULL;
}

const char *slurm_role_to_string(enum slurm_role r) {
    static const char *const names[_SLURM_ROLE_MAX] = {
        [SLURM_ROLE_NONE] = "",
        [SLURM_ROLE_JOB] = "job",
        [SLURM_ROLE_STEPD] = "slurmstepd",
        [SLURM_ROLE_INFRA] = "infrastructure",
    };

    return (unsigned)r < _SLURM_ROLE_MAX ? names[r] : NULL;
}
