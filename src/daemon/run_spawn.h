/* SPDX-License-Identifier: MIT */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "run_cgroup.h"

/*
 * How `joulestat run` starts its command, and what signals do meanwhile. joulestat is a
 * bystander, as time(1) is: the terminal's SIGINT and SIGQUIT reach the command (its process
 * group) and are ignored here, so the report is still printed; SIGTERM and SIGHUP (kill, a
 * container stopped) are to be passed on to it (run_signals_pending()). SIGPIPE is ignored
 * (`joulestat run -- make 2>&1 | head`: a warning written after head left must not end
 * joulestat with the command still running). SIGCHLD is the default, so the command can
 * be waited for. Any other signal joulestat was started with
 * ignored stays ignored, here and in the command.
 */
#define RUN_N_SIGNALS 6

struct run_signals {
    struct sigaction old[RUN_N_SIGNALS]; /* as joulestat was started */
};

/* Returns 0 or -errno. */
int run_signals_take(struct run_signals *s);
void run_signals_give_back(const struct run_signals *s);

/* The SIGTERM or SIGHUP that came since the last call, to pass on; 0 if none. */
int run_signals_pending(void);

/* Starts argv (argv[0] searched in $PATH), in cg when given. *ret_in_cgroup: whether it
 * entered cg. Returns 0, or -errno when the command could not be started. */
int run_spawn(char **argv, const struct run_signals *s, const struct run_cgroup *cg, pid_t *ret_pid,
              bool *ret_in_cgroup);
