/* SPDX-License-Identifier: MIT */
#pragma once

/* Test side of the fake NVML: opens a variant and returns its (zeroed) control state. */

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "fake_nvml.h"
#include "testutil.h"

struct fake_nvml {
    void *dl;
    struct fake_nvml_state *st;
    char path[4096];
};

/* variant: "full", "minimal", "no_count", "v3only". */
static inline void fake_nvml_open(struct fake_nvml *f, const char *variant) {
    char rel[128];
    (void)snprintf(rel, sizeof(rel), "tests/fakes/libfake_nvml_%s.so", variant);
    test_binary_path(f->path, sizeof(f->path), rel);
    f->dl = dlopen(f->path, RTLD_NOW | RTLD_LOCAL);
    if (!f->dl)
        fail_msg("dlopen(%s): %s", f->path, dlerror());
    fake_nvml_state_fn *get = (fake_nvml_state_fn *)dlsym(f->dl, "fake_nvml_state");
    if (!get)
        fail_msg("fake_nvml_state not exported by %s", f->path);
    f->st = get();
    memset(f->st, 0, sizeof(*f->st));
}

static inline void fake_nvml_close(struct fake_nvml *f) {
    if (f->dl)
        dlclose(f->dl);
    f->dl = NULL;
    f->st = NULL;
}
