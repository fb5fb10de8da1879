/* SPDX-License-Identifier: MIT */
/*
 * rapl-probe: opens the RAPL source against given roots and prints what it chose, why, and
 * one sample. Used by the script tests (permission.sh as an unprivileged user,
 * compare-node-exporter.sh) and handy on a real node.
 *
 *   rapl-probe [--sysfs DIR] [--procfs DIR] [--dev DIR] [--mode auto|powercap|perf|msr]
 *
 * Output: "chosen <mode>", "error <errno>", "reason <text>", then per reading
 * "reading <package> <die> <domain> <raw> <modulus> <num>/<den> <valid>".
 * Exit status: 0 opened, 1 not opened, 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "rapl.h"

int main(int argc, char **argv) {
    const char *sysfs = "/sys", *procfs = "/proc", *dev = "/dev", *mode = "auto";
    struct rapl_options o = {.sys_fd = -1, .dev_fd = -1, .proc_fd = -1};
    const struct rapl_reading *rd;
    struct rapl_status status;
    struct rapl *rapl = NULL;
    size_t n = 0;
    int m, r;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--sysfs") == 0)
            sysfs = argv[i + 1];
        else if (strcmp(argv[i], "--procfs") == 0)
            procfs = argv[i + 1];
        else if (strcmp(argv[i], "--dev") == 0)
            dev = argv[i + 1];
        else if (strcmp(argv[i], "--mode") == 0)
            mode = argv[i + 1];
        else {
            fprintf(stderr, "rapl-probe: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (argc % 2 == 0 || (m = rapl_mode_from_string(mode)) < 0) {
        fprintf(stderr, "usage: rapl-probe [--sysfs DIR] [--procfs DIR] [--dev DIR] [--mode M]\n");
        return 2;
    }
    o.mode = (enum rapl_mode)m;
    o.sys_fd = open_root(sysfs);
    o.proc_fd = open_root(procfs);
    o.dev_fd = open_root(dev);

    r = rapl_open(&o, &rapl, &status);
    printf("chosen %s\nerror %s\nreason %s\n", rapl_mode_to_string(status.chosen),
           r < 0 ? strerror(-r) : "none", status.reason);
    if (r >= 0) {
        (void)rapl_sample(rapl, &rd, &n);
        for (size_t i = 0; i < n; i++)
            printf("reading %u %u %s %llu %llu %llu/%llu %d\n", rd[i].package, rd[i].die,
                   rapl_domain_to_string(rd[i].domain), (unsigned long long)rd[i].raw,
                   (unsigned long long)rd[i].modulus, (unsigned long long)rd[i].unit.num,
                   (unsigned long long)rd[i].unit.den, rd[i].valid);
    }
    rapl_free(rapl);
    if (o.sys_fd >= 0)
        (void)close(o.sys_fd);
    if (o.dev_fd >= 0)
        (void)close(o.dev_fd);
    if (o.proc_fd >= 0)
        (void)close(o.proc_fd);
    return r < 0 ? 1 : 0;
}
