/* SPDX-License-Identifier: MIT */
/*
 * Serves the sample snapshot until SIGTERM/SIGINT, for the shell tests (TLS with curl):
 *   http-serve-sample LISTEN_ADDRESS [WEB_CONFIG_FILE]
 * Prints "port N" once listening.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "sample-snapshot.h"
#include "server.h"

int main(int argc, char **argv) {
    struct http_server_options o = {.listen_address = argc > 1 ? argv[1] : "127.0.0.1:0"};
    struct web_config *wc = NULL;
    struct snapshot_slot *slot;
    struct http_server *srv = NULL;
    char err[512];
    sigset_t set;
    int sig, r;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    /* Blocked before any thread starts, so only sigwait() sees them. */
    (void)pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (argc > 2) {
        r = web_config_load(argv[2], &wc, err, sizeof(err));
        if (r < 0) {
            fprintf(stderr, "web config: %s\n", err);
            return 2;
        }
        o.web_config = wc;
    }
    slot = snapshot_slot_new();
    if (!slot)
        return 1;
    snapshot_slot_publish(slot, sample_snapshot_new());
    r = http_server_start(&o, slot, &srv);
    if (r < 0) {
        fprintf(stderr, "start: %s\n", strerror(-r));
        return 1;
    }
    printf("port %d\n", http_server_port(srv));
    fflush(stdout);
    (void)sigwait(&set, &sig);
    http_server_stop(srv);
    snapshot_slot_free(slot);
    web_config_free(wc);
    return 0;
}
