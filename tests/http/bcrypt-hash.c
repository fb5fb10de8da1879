/* SPDX-License-Identifier: MIT */
/* Prints a bcrypt ($2y$) hash of argv[1], of cost argv[2] (default 5), for the shell tests'
 * web configs; libcrypt through the daemon's loader. */
#include <stdio.h>
#include <stdlib.h>

#include "crypt_loader.h"

int main(int argc, char **argv) {
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    struct crypt_data *cd = calloc(1, sizeof(*cd));
    const struct crypt_api *api = NULL;
    const char *h, *reason = NULL;
    unsigned long cost = argc == 3 ? strtoul(argv[2], NULL, 10) : 5;

    if (crypt_api_get(&api, &reason) < 0) {
        fprintf(stderr, "%s\n", reason);
        return 1;
    }
    if (argc < 2 || argc > 3 || !cd || cost < 4 || cost > 31 ||
        !api->gensalt_rn("$2y$", cost, NULL, 0, salt, sizeof(salt)))
        return 1;
    h = api->rn(argv[1], salt, cd, sizeof(*cd));
    if (!h || h[0] == '*')
        return 1;
    puts(h);
    free(cd);
    return 0;
}
