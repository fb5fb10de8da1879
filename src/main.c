/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    puts("joulestat " JOULESTAT_VERSION);
    return EXIT_SUCCESS;
}
