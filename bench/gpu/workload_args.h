// SPDX-License-Identifier: MIT
//
// The command line and the result line of bench/gpu/workloads.cu, in plain C that nvcc and
// the C compiler both take: tests/gpu/fake-workload.c is built from the same code, so the
// command lines scripts/gpu-validate builds are checked on a machine with no GPU.
//
//   wl-MODE ITERATIONS | wl-MODE --seconds S      named wl-MODE: the mode is the name's
//   NAME MODE ITERATIONS | NAME MODE --seconds S  any other name: the mode comes first
//
// MODE is gemm, stream, spin or hold; ITERATIONS a whole number from 1 (hold: seconds),
// S a number of seconds above 0. A copy named wl-MODE takes no mode argument, so the mode
// it runs is always the one its process name says.
#ifndef JOULESTAT_BENCH_GPU_WORKLOAD_ARGS_H
#define JOULESTAT_BENCH_GPU_WORKLOAD_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WL_USAGE                                                                                   \
    "usage: wl-MODE ITERATIONS|--seconds S\n"                                                      \
    "       workloads MODE ITERATIONS|--seconds S   (MODE: gemm, stream, spin, hold)\n"

struct wl_args {
    const char *mode; // points into argv
    long iterations;  // 0 when --seconds was given
    double seconds;   // 0 when ITERATIONS was given
};

static inline int wl_known_mode(const char *mode) {
    return !strcmp(mode, "gemm") || !strcmp(mode, "stream") || !strcmp(mode, "spin") ||
           !strcmp(mode, "hold");
}

// Fills *a from the command line. 0, or -1 with why in err (a sentence, no newline).
static inline int wl_parse_args(int argc, char **argv, struct wl_args *a, char *err,
                                size_t errlen) {
    const char *name = argc > 0 && argv[0] ? argv[0] : "";
    const char *slash = strrchr(name, '/');
    char *end = NULL;
    int i = 1;

    a->mode = NULL;
    a->iterations = 0;
    a->seconds = 0;
    if (slash)
        name = slash + 1;
    if (!strncmp(name, "wl-", 3)) {
        a->mode = name + 3;
        if (!wl_known_mode(a->mode)) {
            snprintf(err, errlen, "unknown mode '%s' (from the program's name %s)", a->mode, name);
            return -1;
        }
    } else {
        if (argc < 2) {
            snprintf(err, errlen, "no mode");
            return -1;
        }
        a->mode = argv[i++];
        if (!wl_known_mode(a->mode)) {
            snprintf(err, errlen, "unknown mode '%s'", a->mode);
            return -1;
        }
    }
    if (argc - i == 2 && !strcmp(argv[i], "--seconds")) {
        errno = 0;
        a->seconds = strtod(argv[i + 1], &end);
        // (the comparisons are false for NaN)
        if (errno || end == argv[i + 1] || *end || !(a->seconds > 0 && a->seconds <= 1e6)) {
            snprintf(err, errlen, "--seconds '%s': not a number of seconds above 0, at most 10^6",
                     argv[i + 1]);
            return -1;
        }
        return 0;
    }
    if (argc - i == 1 && argv[i][0] != '-') {
        errno = 0;
        a->iterations = strtol(argv[i], &end, 10);
        if (errno || end == argv[i] || *end || a->iterations < 1) {
            snprintf(err, errlen, "ITERATIONS '%s': not a whole number from 1", argv[i]);
            return -1;
        }
        return 0;
    }
    if (i == 1)
        snprintf(err, errlen, "%s takes ITERATIONS or --seconds S (its name gives the mode)", name);
    else
        snprintf(err, errlen, "MODE takes ITERATIONS or --seconds S after it");
    return -1;
}

// The one line a run prints: its mode, pid, iterations, when main() began (launched), when
// the measured work began (start: after the context and the setup) and ended, Unix seconds.
static inline void wl_print_result(FILE *f, const char *mode, int pid, long iterations,
                                   double launched, double start, double end) {
    fprintf(f,
            "{\"mode\":\"%s\",\"pid\":%d,\"iterations\":%ld,\"launched\":%.6f,\"start\":%.6f,"
            "\"end\":%.6f,\"seconds\":%.6f}\n",
            mode, pid, iterations, launched, start, end, end - start);
}

#endif
