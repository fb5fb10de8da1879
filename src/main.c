/* SPDX-License-Identifier: MIT */
/*
 * joulestat: measures GPU and CPU energy and splits it exactly among processes,
 * containers, pods and SLURM jobs. The only place that exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "config.h"
#include "log.h"
#include "ps.h"
#include "replay.h"
#include "serve.h"

int main(int argc, char **argv) {
    struct config cfg;
    int r;

    r = config_parse(argc, argv, &cfg);
    if (r < 0) {
        fprintf(stderr, "Run '%s --help' for usage.\n", argv[0]);
        return 2;
    }
    log_set_max_level(cfg.log_level);

    switch (cfg.command) {
    case COMMAND_VERSION:
        printf("joulestat %s\n", JOULESTAT_VERSION);
        return EXIT_SUCCESS;
    case COMMAND_HELP:
        config_usage(argv[0]);
        return EXIT_SUCCESS;
    case COMMAND_CHECK:
        r = check_run(&cfg);
        break;
    case COMMAND_PS:
        r = ps_run(&cfg);
        break;
    case COMMAND_REPLAY:
        r = replay_run(&cfg);
        break;
    case COMMAND_SERVE:
        r = serve_run(&cfg);
        break;
    }
    return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
