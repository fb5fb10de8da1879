/* SPDX-License-Identifier: MIT */
#include "rapl_domain.h"

#include <errno.h>
#include <string.h>

static const char *const domain_names[_RAPL_DOMAIN_MAX] = {
    [RAPL_DOMAIN_PACKAGE] = "package", [RAPL_DOMAIN_CORE] = "core", [RAPL_DOMAIN_UNCORE] = "uncore",
    [RAPL_DOMAIN_DRAM] = "dram",       [RAPL_DOMAIN_PSYS] = "psys",
};

const char *rapl_domain_to_string(enum rapl_domain d) {
    return (unsigned)d < _RAPL_DOMAIN_MAX ? domain_names[d] : NULL;
}

int rapl_domain_from_string(const char *s) {
    for (unsigned i = 0; i < _RAPL_DOMAIN_MAX; i++)
        if (strcmp(s, domain_names[i]) == 0)
            return (int)i;
    return -EINVAL;
}
