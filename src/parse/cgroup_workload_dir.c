/* SPDX-License-Identifier: MIT */
#include "cgroup_workload_dir.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The name of the directory that is the workload, or NULL when it has none we can read. */
struct needle {
    char text[CONTAINER_ID_LEN + 8];
    bool whole; /* the component must equal text (job dirs), not just contain it */
    /* A job step's process: the directory is "step_<step>" right below the job's. */
    char step[SLURM_STEP_MAX + 6];
};

/* "job_" + decimal job id, without stdio (this library is pure). */
static void put_job_dir(char *out, uint32_t id) {
    char digits[10];
    size_t n = 0, k = 4;

    memcpy(out, "job_", 4);
    do {
        digits[n++] = (char)('0' + id % 10);
        id /= 10;
    } while (id > 0);
    while (n > 0)
        out[k++] = digits[--n];
    out[k] = '\0';
}

static bool needle_for(const struct workload_identity *w, struct needle *n) {
    *n = (struct needle){0};
    if ((w->kind == IDENTITY_CONTAINER || w->kind == IDENTITY_POD) && w->container_id[0]) {
        memcpy(n->text, w->container_id, strnlen(w->container_id, CONTAINER_ID_LEN));
        return true;
    }
    if (w->kind != IDENTITY_SLURM_JOB)
        return false; /* host process, or pod level: no directory of its own */
    n->whole = true;
    if (w->slurm.sluid[0])
        memcpy(n->text, w->slurm.sluid, strnlen(w->slurm.sluid, SLURM_SLUID_LEN));
    else if (w->slurm.job_id_valid)
        put_job_dir(n->text, w->slurm.job_id);
    else
        return false;
    if (w->slurm.step[0]) {
        memcpy(n->step, "step_", 5);
        memcpy(n->step + 5, w->slurm.step, strnlen(w->slurm.step, SLURM_STEP_MAX));
    }
    return true;
}

/* found: the length of the job directory's path; with the step's directory below it, the
 * length of that one's; 0 when a step's process has no step directory there (the job's
 * would count every step's time). */
static size_t step_below(const char *path, size_t len, size_t found, const struct needle *n) {
    size_t sl = strlen(n->step);

    if (!sl)
        return found;
    if (found + 1 + sl <= len && path[found] == '/' && memcmp(path + found + 1, n->step, sl) == 0 &&
        (found + 1 + sl == len || path[found + 1 + sl] == '/'))
        return found + 1 + sl;
    return 0;
}

static bool component_matches(const char *c, size_t len, const struct needle *n) {
    size_t nl = strlen(n->text);

    if (n->whole)
        return len == nl && memcmp(c, n->text, nl) == 0;
    if (len < nl)
        return false;
    for (size_t i = 0; i + nl <= len; i++)
        if (memcmp(c + i, n->text, nl) == 0)
            return true;
    return false;
}

/* Length of the path prefix ending with the deepest matching component, or 0. */
static size_t match_in_path(const char *path, size_t len, const struct needle *n) {
    size_t best = 0;

    for (size_t i = 0; i < len;) {
        size_t j = i;

        while (j < len && path[j] != '/')
            j++;
        if (j > i && component_matches(path + i, j - i, n))
            best = j;
        i = j + 1;
    }
    return best;
}

/* Does the controller list (between the two first colons) name cpuacct? */
static bool has_cpuacct(const char *list, size_t len) {
    for (size_t i = 0; i < len;) {
        size_t j = i;

        while (j < len && list[j] != ',')
            j++;
        if (j - i == 7 && memcmp(list + i, "cpuacct", 7) == 0)
            return true;
        i = j + 1;
    }
    return false;
}

/* Pass 0: the v2 line; pass 1: v1 cpuacct lines. Returns the prefix length or 0. */
static size_t scan_lines(const char *text, size_t len, int pass, const struct needle *n,
                         const char **ret_path) {
    for (size_t i = 0; i < len;) {
        const char *line = text + i, *eol = memchr(line, '\n', len - i);
        size_t ll = eol ? (size_t)(eol - line) : len - i;
        const char *c1 = memchr(line, ':', ll), *c2;
        size_t found;

        i += ll + 1;
        if (!c1)
            continue;
        c2 = memchr(c1 + 1, ':', ll - (size_t)(c1 + 1 - line));
        if (!c2 || c2 + 1 >= line + ll || c2[1] != '/')
            continue;
        if (pass == 0 ? !(c1 - line == 1 && line[0] == '0' && c2 == c1 + 1)
                      : !has_cpuacct(c1 + 1, (size_t)(c2 - c1 - 1)))
            continue;
        found = match_in_path(c2 + 1, ll - (size_t)(c2 + 1 - line), n);
        if (found > 0)
            found = step_below(c2 + 1, ll - (size_t)(c2 + 1 - line), found, n);
        if (found > 0) {
            *ret_path = c2 + 1;
            return found;
        }
    }
    return 0;
}

int cgroup_workload_dir(const char *text, size_t len, const struct workload_identity *w, char *buf,
                        size_t size) {
    struct needle n;
    const char *path = NULL;
    size_t found = 0;

    if (!text || !w || !buf)
        return -EINVAL;
    if (!needle_for(w, &n))
        return -ENOENT;
    for (int pass = 0; pass < 2 && found == 0; pass++)
        found = scan_lines(text, len, pass, &n, &path);
    if (found == 0)
        return -ENOENT;
    if (found >= size)
        return -ENAMETOOLONG;
    memcpy(buf, path, found);
    buf[found] = '\0';
    return 0;
}
