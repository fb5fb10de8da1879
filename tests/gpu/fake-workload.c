// SPDX-License-Identifier: MIT
//
// Stands in for bench/gpu/workloads.cu in tests/gpu/gpu-validate.sh, on a machine with no
// GPU: the same command line (workload_args.h, so a line the real program would refuse
// is refused here, exit 2) and the same result line, with no CUDA.
//
//   FAKE_WL_LOG=FILE   each command line is appended to FILE: its name, then its arguments,
//                      then a tab and CUDA_DEVICE_ORDER's value
//   FAKE_WL_FAIL=M,... the listed modes (or "all") fail as a CUDA error would: a message,
//                      exit 1, no result line
//   FAKE_WL_HANG_MPS=1 an MPS client (CUDA_MPS_PIPE_DIRECTORY set) sleeps 120 s first
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "workload_args.h"

static double now_s(void) {
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

// Whether MODE is in the comma-separated LIST, or LIST is "all".
static int listed(const char *list, const char *mode) {
    size_t n = strlen(mode);

    if (!list)
        return 0;
    if (!strcmp(list, "all"))
        return 1;
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);

        if (len == n && !strncmp(p, mode, n))
            return 1;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    struct wl_args args;
    char err[256];
    const char *log = getenv("FAKE_WL_LOG");
    const char *slash = strrchr(argv[0], '/');
    double launched = now_s();
    long done;

    if (log) {
        FILE *f = fopen(log, "a");

        if (f) {
            fputs(slash ? slash + 1 : argv[0], f);
            for (int i = 1; i < argc; i++)
                fprintf(f, " %s", argv[i]);
            fprintf(f, "\t%s\n", getenv("CUDA_DEVICE_ORDER") ? getenv("CUDA_DEVICE_ORDER") : "");
            fclose(f);
        }
    }
    if (wl_parse_args(argc, argv, &args, err, sizeof(err))) {
        fprintf(stderr, "workloads: %s\n%s", err, WL_USAGE);
        return 2;
    }
    if (listed(getenv("FAKE_WL_FAIL"), args.mode)) {
        fprintf(stderr, "workloads: cudaFree(0): CUDA driver version is insufficient for CUDA "
                        "runtime version\n");
        return 1;
    }
    if (getenv("FAKE_WL_HANG_MPS") && getenv("CUDA_MPS_PIPE_DIRECTORY"))
        sleep(120);
    // A run by time did 25 iterations a second; hold reports what the real one does.
    done = args.iterations;
    if (args.seconds > 0 && strcmp(args.mode, "hold"))
        done = (long)(args.seconds * 25);
    wl_print_result(stdout, args.mode, (int)getpid(), done, launched, launched + 0.3,
                    launched + 0.3 + (args.seconds > 0 ? args.seconds : 1.0));
    return 0;
}
