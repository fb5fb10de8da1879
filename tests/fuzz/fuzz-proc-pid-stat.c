/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proc_pid_stat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct proc_pid_stat st;
    int r;

    memset(&st, 0x5a, sizeof(st));
    r = proc_pid_stat_parse((const char *)data, size, &st);
    FUZZ_CHECK(r == 0 || r == -EINVAL);
    if (r < 0)
        return 0;
    FUZZ_CHECK(st.pid > 0 && st.pid < PROC_PID_LIMIT);
    FUZZ_CHECK(st.ppid < PROC_PID_LIMIT);
    FUZZ_CHECK(memchr(st.comm, '\0', sizeof(st.comm)) != NULL);
    FUZZ_CHECK((st.state >= 'A' && st.state <= 'Z') || (st.state >= 'a' && st.state <= 'z'));
    return 0;
}
