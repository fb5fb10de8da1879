/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cgroup_path.h"
#include "environ.h"
#include "fuzz.h"

static bool all_of(const char *s, const char *set) {
    return s[strspn(s, set)] == '\0';
}

/* Whatever the input, an accepted identity holds only validated strings. */
static void check_identity(const struct workload_identity *id) {
    size_t n;

    FUZZ_CHECK((unsigned)id->kind < _IDENTITY_KIND_MAX);
    FUZZ_CHECK((unsigned)id->runtime < _RUNTIME_MAX);
    FUZZ_CHECK((unsigned)id->qos < _POD_QOS_MAX);
    FUZZ_CHECK((unsigned)id->slurm.role < _SLURM_ROLE_MAX);

    n = strnlen(id->container_id, sizeof(id->container_id));
    FUZZ_CHECK(n == 0 || (n == CONTAINER_ID_LEN && all_of(id->container_id, "0123456789abcdef")));
    FUZZ_CHECK((n == 0) == (id->runtime == RUNTIME_NONE));

    n = strnlen(id->pod_uid, sizeof(id->pod_uid));
    FUZZ_CHECK(n == 0 || n == 32 || n == 36);
    FUZZ_CHECK(all_of(id->pod_uid, "0123456789abcdef-"));
    FUZZ_CHECK((n != 0) == (id->kind == IDENTITY_POD));

    n = strnlen(id->slurm.sluid, sizeof(id->slurm.sluid));
    FUZZ_CHECK(n == 0 || (n == SLURM_SLUID_LEN && id->slurm.sluid[0] == 's'));
    FUZZ_CHECK(id->slurm.needs_environ == (n != 0 && !id->slurm.job_id_valid));
    FUZZ_CHECK(!id->slurm.job_id_valid || id->slurm.job_id > 0);
    FUZZ_CHECK(strnlen(id->slurm.step, sizeof(id->slurm.step)) <= SLURM_STEP_MAX);
    FUZZ_CHECK(strnlen(id->slurm.task, sizeof(id->slurm.task)) <= SLURM_TASK_MAX);
    FUZZ_CHECK(strnlen(id->systemd_unit, sizeof(id->systemd_unit)) < SYSTEMD_UNIT_MAX);
    FUZZ_CHECK(identity_kind_to_string(id->kind) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    struct workload_identity id, copy;
    int r;

    r = cgroup_file_parse(text, size, &id);
    FUZZ_CHECK(r == 0 || r == -EINVAL);
    if (r == 0) {
        check_identity(&id);
        /* The same bytes as an environment blob: completing never breaks the identity. */
        copy = id;
        r = workload_identity_apply_environ(&id, text, size);
        FUZZ_CHECK(r == 0 || r == -EALREADY || r == -ENOENT || r == -EINVAL);
        if (r != 0)
            FUZZ_CHECK(memcmp(&id, &copy, sizeof(id)) == 0);
        check_identity(&id);
    }

    r = cgroup_path_parse(text, size, &id);
    FUZZ_CHECK(r == 0 || r == -EINVAL);
    if (r == 0)
        check_identity(&id);
    return 0;
}
