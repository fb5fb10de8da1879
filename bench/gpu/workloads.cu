// SPDX-License-Identifier: MIT
//
// Real CUDA workloads of very different power per unit of SM time, for checking joulestat's
// attribution on a real GPU (scripts/gpu-validate, docs/VALIDATION.md):
//
//   gemm    tensor-core matrix multiply-accumulate from registers (high power)
//   stream  a triad over two 512 MiB arrays (memory-bound, medium power)
//   spin    every thread polls the clock (100 % SM, low power: a busy-waiting collective)
//   hold    only holds a context, computing nothing (the P0 uplift)
//
// Usage: wl-MODE ITERATIONS                a fixed amount of work (hold: seconds)
//        wl-MODE --seconds S               as many iterations as fit in S seconds
//        workloads MODE ITERATIONS|--seconds S   (under any name not starting wl-)
// scripts/gpu-bundle installs one copy per mode, named wl-MODE, so that each shows under its
// own process name; such a copy takes its mode from its name (workload_args.h).
// Prints one JSON line: mode, pid, iterations, launched (main() entered), start and end of
// the measured work (Unix seconds), seconds.
// Exit 0, or 1 with a message on a CUDA error, 2 on bad arguments (before any CUDA call).
#include <cuda_fp16.h>
#include <errno.h>
#include <mma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "workload_args.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "workloads: %s: %s\n", #call, cudaGetErrorString(e_));         \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static double now_s(void) {
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

// Each warp keeps one 16x16x16 tile pair in registers and multiplies it `rounds` times: the
// tensor cores run with no memory traffic at all. The result is stored so it is not elided.
__global__ void gemm_kernel(const half *a, const half *b, float *out, int rounds) {
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;

    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::fill_fragment(acc, 0.0f);
    for (int i = 0; i < rounds; i++)
        wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(out + (size_t)warp * 256, acc, 16, wmma::mem_row_major);
}

// y = 0.999 y + x over the whole arrays, 16 bytes per access: bound by memory bandwidth.
__global__ void stream_kernel(const float4 *x, float4 *y, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 a = x[i], c = y[i];

        c.x = 0.999f * c.x + a.x;
        c.y = 0.999f * c.y + a.y;
        c.z = 0.999f * c.z + a.z;
        c.w = 0.999f * c.w + a.w;
        y[i] = c;
    }
}

// Every thread polls the clock for `cycles`: the SMs are busy and draw little.
__global__ void spin_kernel(long long cycles, int *sink) {
    long long start = clock64();

    while (clock64() - start < cycles) {
    }
    if (threadIdx.x == 0 && cycles < 0)
        *sink = 1;
}

struct work {
    int sms;
    half *a, *b;
    float *out;
    float4 *x, *y;
    size_t n4;
    int *sink;
    long long spin_cycles;
};

static void setup(const char *mode, struct work *w) {
    cudaDeviceProp prop;

    CHECK(cudaGetDeviceProperties(&prop, 0));
    w->sms = prop.multiProcessorCount;
    if (!strcmp(mode, "gemm")) {
        half h[256];

        for (int i = 0; i < 256; i++)
            h[i] = __float2half(0.001f * (float)(i % 17));
        CHECK(cudaMalloc(&w->a, sizeof(h)));
        CHECK(cudaMalloc(&w->b, sizeof(h)));
        CHECK(cudaMemcpy(w->a, h, sizeof(h), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(w->b, h, sizeof(h), cudaMemcpyHostToDevice));
        // 8 blocks of 8 warps per SM
        CHECK(cudaMalloc(&w->out, (size_t)w->sms * 8 * 8 * 256 * sizeof(float)));
    } else if (!strcmp(mode, "stream")) {
        w->n4 = ((size_t)512 << 20) / sizeof(float4);
        CHECK(cudaMalloc(&w->x, w->n4 * sizeof(float4)));
        CHECK(cudaMalloc(&w->y, w->n4 * sizeof(float4)));
        CHECK(cudaMemset(w->x, 0, w->n4 * sizeof(float4)));
        CHECK(cudaMemset(w->y, 0, w->n4 * sizeof(float4)));
    } else {
        int khz;

        CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
        CHECK(cudaMalloc(&w->sink, sizeof(int)));
        // 20 ms of spinning per iteration at the peak SM clock
        w->spin_cycles = (long long)khz * 20;
    }
}

// One iteration: about 10-50 ms of GPU time, so that time-slicing interleaves them.
static void iteration(const char *mode, const struct work *w) {
    if (!strcmp(mode, "gemm"))
        gemm_kernel<<<w->sms * 8, 256>>>(w->a, w->b, w->out, 100000);
    else if (!strcmp(mode, "stream"))
        for (int i = 0; i < 30; i++) // 1.5 GB each: about 0.5 ms at 3 TB/s
            stream_kernel<<<w->sms * 4, 512>>>(w->x, w->y, w->n4);
    else
        spin_kernel<<<w->sms * 4, 256>>>(w->spin_cycles, w->sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
}

int main(int argc, char **argv) {
    struct work w = {0};
    struct wl_args args;
    char err[256];
    const char *mode;
    double launched = now_s(), start, seconds;
    long iters, done = 0;

    if (wl_parse_args(argc, argv, &args, err, sizeof(err))) {
        fprintf(stderr, "workloads: %s\n%s", err, WL_USAGE);
        return 2;
    }
    mode = args.mode;
    seconds = args.seconds;
    iters = args.iterations;
    CHECK(cudaFree(0)); // the context, before the clock starts
    start = now_s();
    if (!strcmp(mode, "hold")) {
        double s = seconds > 0 ? seconds : (double)iters;
        struct timespec ts;

        ts.tv_sec = (time_t)s;
        ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
        while (nanosleep(&ts, &ts) && errno == EINTR) {
        }
        done = iters;
    } else {
        setup(mode, &w);
        CHECK(cudaDeviceSynchronize());
        start = now_s();
        while (seconds > 0 ? now_s() - start < seconds : done < iters) {
            iteration(mode, &w);
            done++;
        }
    }
    wl_print_result(stdout, mode, (int)getpid(), done, launched, start, now_s());
    return 0;
}
