/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "rapl.h"

/*
 * Fixture roots for the RAPL and CPU tests: a private copy of tests/trees/<name> in a fresh
 * mkdtemp directory. Every dev/cpu/N/msr-values text file ("register value" per line,
 * '#' comments) becomes dev/cpu/N/msr: a sparse regular file with each 8-byte value at
 * its register's offset, which pread() reads like the real device.
 */

/* Copies the tree into a new temporary directory written to root. Returns 0 or -errno. */
int fixture_tree(const char *name, char *root, size_t size);
/* Writes one register of dev/cpu/<cpu>/msr (creating the file). Returns 0 or -errno. */
int fixture_set_msr(const char *root, unsigned cpu, uint64_t reg, uint64_t value);
/* Writes an 8-byte little-endian value at offset 0 of root/relative (a fake perf count). */
int fixture_set_u64(const char *root, const char *relative, uint64_t value);

struct fixture_fds {
    int proc, sys, dev;
};

/* Opens root/proc, root/sys and root/dev (a missing one gives an fd of an empty dir). */
int fixture_open(const char *root, struct fixture_fds *ret);
void fixture_close(struct fixture_fds *f);

/* rapl_options for the fixture, with the given mode. */
struct rapl_options fixture_options(const struct fixture_fds *f, enum rapl_mode mode);

/* Removes the root. */
void fixture_done(const char *root);

/* A fixture tree, its fds and the RAPL source under test. */
struct fixture_rapl {
    char root[512];
    struct fixture_fds fds;
    struct rapl *rapl;
    struct rapl_status status;
};

/* Copies tests/trees/<tree> and opens its fds; fails the test on error. */
void fixture_rapl_open(struct fixture_rapl *e, const char *tree);
/* rapl_open() on the fixture's fds in the given mode. Returns its result. */
int fixture_rapl_start(struct fixture_rapl *e, enum rapl_mode mode);
/* Frees the source, closes the fds and removes the tree. */
void fixture_rapl_done(struct fixture_rapl *e);
