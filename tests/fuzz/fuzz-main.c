/* SPDX-License-Identifier: MIT */
/*
 * Corpus replay: feeds every file of the directories (or files) named on the command line
 * to LLVMFuzzerTestOneInput, so the fuzz corpora run as ordinary tests with any compiler.
 * Fails when nothing was replayed, so a wrong path cannot pass silently.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "fuzz.h"
#include "macro.h"

#define REPLAY_MAX_INPUT (1u << 20)

static int replay_file(int dirfd, const char *name) {
    _cleanup_(freep) char *data = NULL;
    size_t size;
    int r;

    r = read_virtual_file_at(dirfd, name, REPLAY_MAX_INPUT, &data, &size);
    if (r < 0) {
        fprintf(stderr, "fuzz-main: cannot read '%s': %s\n", name, strerror(-r));
        return r;
    }
    /* A private copy of exactly `size` bytes, so ASan sees reads past the input. */
    {
        _cleanup_(freep) uint8_t *exact = malloc(size ? size : 1);

        if (!exact)
            return -1;
        memcpy(exact, data, size);
        (void)LLVMFuzzerTestOneInput(exact, size);
    }
    return 0;
}

static int replay_path(const char *path, unsigned *count) {
    _cleanup_(closedirp) DIR *d = NULL;
    struct dirent *de;
    struct stat st;

    if (stat(path, &st) < 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(AT_FDCWD, path);
    }
    d = opendir(path);
    if (!d) {
        perror(path);
        return -1;
    }
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        if (replay_file(dirfd(d), de->d_name) < 0)
            return -1;
        (*count)++;
    }
    return 0;
}

int main(int argc, char **argv) {
    unsigned count = 0;

    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i], &count) < 0)
            return EXIT_FAILURE;
    if (count == 0) {
        fprintf(stderr, "fuzz-main: no inputs replayed\n");
        return EXIT_FAILURE;
    }
    printf("fuzz-main: %u inputs replayed\n", count);
    return EXIT_SUCCESS;
}
