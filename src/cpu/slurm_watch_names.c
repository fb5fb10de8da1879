/* SPDX-License-Identifier: MIT */
/* The SLURM watch's names: which directory of the cgroup tree is a slurm root, a uid, a
 * job or a step directory, from its name alone. No I/O. */
#include <string.h>

#include "cgroup_path.h"
#include "parse_num.h"
#include "slurm_watch_internal.h"

static bool has_prefix(const char *s, const char *p) {
    return strncmp(s, p, strlen(p)) == 0;
}

static bool has_suffix(const char *s, const char *x) {
    size_t n = strlen(s), m = strlen(x);

    return n >= m && strcmp(s + n - m, x) == 0;
}

static bool all_digits(const char *s) {
    return all_digits_n(s, strlen(s));
}

/* "step_" + a step name: decimal, batch, extern, interactive, TBD, maybe "+<het>". */
static bool is_step(const char *name) {
    size_t n;

    if (!has_prefix(name, "step_"))
        return false;
    name += 5;
    n = strlen(name);
    if (n == 0 || n > SLURM_STEP_MAX)
        return false;
    for (; *name; name++)
        if (!((*name >= '0' && *name <= '9') || (*name >= 'a' && *name <= 'z') ||
              (*name >= 'A' && *name <= 'Z') || *name == '+'))
            return false;
    return true;
}

int slurm_watch_child_level(bool v2, enum slurm_level parent, const char *name) {
    switch (parent) {
    case LEVEL_TOP:
        if (v2)
            return has_suffix(name, "slurmstepd.scope") ? LEVEL_ROOT : -1;
        return strcmp(name, "slurm") == 0 || has_prefix(name, "slurm_") ? LEVEL_ROOT : -1;
    case LEVEL_ROOT:
        if (v2) {
            bool job = (has_prefix(name, "job_") && all_digits(name + 4)) ||
                       cgroup_is_sluid(name, strlen(name));

            return job ? LEVEL_JOB : -1;
        }
        return has_prefix(name, "uid_") && all_digits(name + 4) ? LEVEL_UID : -1;
    case LEVEL_UID:
        return has_prefix(name, "job_") && all_digits(name + 4) ? LEVEL_JOB : -1;
    case LEVEL_JOB:
        return is_step(name) ? LEVEL_STEP : -1;
    default:
        return -1;
    }
}
