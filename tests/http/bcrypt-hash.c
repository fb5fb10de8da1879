/* SPDX-License-Identifier: MIT */
/* Prints a bcrypt ($2y$) hash of argv[1], of cost argv[2] (default 5), for the shell tests'
 * web configs. */
#include <crypt.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    struct crypt_data *cd = calloc(1, sizeof(*cd));
    const char *h;
    unsigned long cost = argc == 3 ? strtoul(argv[2], NULL, 10) : 5;

    if (argc < 2 || argc > 3 || !cd || cost < 4 || cost > 31 ||
        !crypt_gensalt_rn("$2y$", cost, NULL, 0, salt, sizeof(salt)))
        return 1;
    h = crypt_rn(argv[1], salt, cd, sizeof(*cd));
    if (!h || h[0] == '*')
        return 1;
    puts(h);
    free(cd);
    return 0;
}
