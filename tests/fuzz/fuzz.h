/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The libFuzzer entry point each fuzz-*.c defines; fuzz-main.c replays a corpus into it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant that must hold for every input: crash loudly so libFuzzer keeps the input
 * and the replay test fails. */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)
