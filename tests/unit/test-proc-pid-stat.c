/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proc_pid_stat.h"
#include "testutil.h"

/* A real line from a Debian 12 host (bash, pid 1234), all 52 fields. */
static const char bash_line[] =
    "1234 (bash) S 1000 1234 1234 34816 5678 4194304 2345 6789 1 2 150 75 3 4 20 0 1 0 "
    "987654 12345678 1234 18446744073709551615 94000000000000 94000000100000 "
    "140000000000000 0 0 0 65536 3686404 1266761467 0 0 0 17 3 0 0 0 0 0 94000000200000 "
    "94000000300000 94000000400000 140000000100000 140000000100010 140000000100010 "
    "140000000200000 0\n";

static void parse_ok(const char *line, struct proc_pid_stat *st) {
    ASSERT_OK(proc_pid_stat_parse(line, strlen(line), st));
}

static void parse_bad(const char *line) {
    struct proc_pid_stat st = {.pid = 77};

    ASSERT_ERRNO(proc_pid_stat_parse(line, strlen(line), &st), EINVAL);
    assert_int_equal(st.pid, 77); /* untouched on failure */
}

static void test_real_line(void **state) {
    struct proc_pid_stat st;

    parse_ok(bash_line, &st);
    assert_int_equal(st.pid, 1234);
    assert_string_equal(st.comm, "bash");
    assert_int_equal(st.state, 'S');
    assert_int_equal(st.ppid, 1000);
    assert_int_equal(st.flags, 4194304);
    assert_int_equal(st.flags & PROC_PF_KTHREAD, 0);
    assert_int_equal(st.utime, 150);
    assert_int_equal(st.stime, 75);
    assert_int_equal(st.cutime, 3);
    assert_int_equal(st.cstime, 4);
    assert_int_equal(st.num_threads, 1);
    assert_int_equal(st.starttime, 987654);
    /* The children's times are printed signed: a negative one is taken as none. */
    parse_ok("1 (a) S 1 1 1 0 -1 0 0 0 0 0 5 6 -7 -8 20 0 1 0 9\n", &st);
    assert_int_equal(st.utime, 5);
    assert_int_equal(st.cutime, 0);
    assert_int_equal(st.cstime, 0);
}

static void test_kernel_thread(void **state) {
    struct proc_pid_stat st;

    /* kthreadd: flags 0x208040 has PF_KTHREAD; ppid 0. */
    parse_ok("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 3 0 0 20 0 1 0 1 0 0 "
             "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 "
             "0 0\n",
             &st);
    assert_int_equal(st.pid, 2);
    assert_int_equal(st.ppid, 0);
    assert_int_equal(st.flags, 0x208040);
    assert_true(st.flags & PROC_PF_KTHREAD);
    assert_int_equal(st.stime, 3);
    assert_int_equal(st.starttime, 1);

    /* A workqueue worker's name is longer than TASK_COMM_LEN. */
    parse_ok("81 (kworker/3:1-events_power_efficient) I 2 0 0 0 -1 69238880 0 0 0 0 7 9 0 0 0 "
             "-20 1 0 4242 0 0\n",
             &st);
    assert_string_equal(st.comm, "kworker/3:1-events_power_efficient");
    assert_int_equal(st.state, 'I');
    assert_int_equal(st.utime, 7);
    assert_int_equal(st.starttime, 4242);
}

static void test_hostile_comm(void **state) {
    struct proc_pid_stat st;

    /* The comm contains ") (" and more parens: the LAST ')' ends it. */
    parse_ok("42 (a) (b) R 1 42 42 0 -1 0 0 0 0 0 5 6 0 0 20 0 3 0 777 0 0\n", &st);
    assert_string_equal(st.comm, "a) (b");
    assert_int_equal(st.state, 'R');
    assert_int_equal(st.num_threads, 3);
    assert_int_equal(st.starttime, 777);

    /* procps' example of a name that looks like fields. */
    parse_ok("43 (:-) 1 2 3) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 5 0 0", &st);
    assert_string_equal(st.comm, ":-) 1 2 3");
    assert_int_equal(st.utime, 1);
    assert_int_equal(st.stime, 2);
    assert_int_equal(st.starttime, 5);

    /* Empty comm is legal (prctl(PR_SET_NAME, "")). */
    parse_ok("44 () S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0\n", &st);
    assert_string_equal(st.comm, "");

    /* Spaces and a newline-free name of exactly 63 bytes is kept whole... */
    {
        char line[512], name[80];

        memset(name, 'x', 63);
        name[63] = '\0';
        (void)snprintf(line, sizeof(line), "45 (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n",
                       name);
        parse_ok(line, &st);
        assert_string_equal(st.comm, name);
        /* ...and a longer one is truncated to 63 bytes, not rejected. */
        memset(name, 'y', 70);
        name[70] = '\0';
        (void)snprintf(line, sizeof(line), "45 (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n",
                       name);
        parse_ok(line, &st);
        assert_int_equal(strlen(st.comm), 63);
        assert_memory_equal(st.comm, name, 63);
    }
}

static void test_zombie_and_limits(void **state) {
    struct proc_pid_stat st;

    parse_ok("4194303 (defunct) Z 4194303 0 0 0 -1 4227084 0 0 0 0 18446744073709551615 "
             "18446744073709551614 0 0 20 0 4294967295 0 18446744073709551613",
             &st);
    assert_int_equal(st.pid, 4194303);
    assert_int_equal(st.ppid, 4194303);
    assert_int_equal(st.state, 'Z');
    assert_true(st.utime == UINT64_MAX);
    assert_true(st.stime == UINT64_MAX - 1);
    assert_int_equal(st.num_threads, 4294967295u);
    assert_true(st.starttime == UINT64_MAX - 2);
}

static void test_malformed(void **state) {
    struct proc_pid_stat st;

    parse_bad("");
    parse_bad("1234");
    parse_bad("1234 bash S 1 2 3");
    parse_bad("(bash) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n");      /* no pid */
    parse_bad(" 1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n");      /* leading space */
    parse_bad("1(a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n");        /* no space */
    parse_bad("0 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n");       /* pid 0 */
    parse_bad("4194304 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n"); /* pid too big */
    parse_bad("-1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n");      /* signed pid */
    parse_bad("1 (a S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n");        /* no ')' */
    parse_bad("1 (a) 5 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n");       /* state digit */
    parse_bad("1 (a) SS 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n");      /* state word */
    parse_bad("1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n");         /* 21 fields */
    parse_bad("1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 \n");        /* empty 22 */
    parse_bad("1 (a) S 1 1 1 0 -1 0 0 0 0 0  0 0 0 0 20 0 1 0 9\n");      /* double space */
    parse_bad("1 (a) S 1 1 1 0 -1 0 0 0 0 0 x 0 0 0 20 0 1 0 9\n");       /* utime text */
    parse_bad("1 (a) S 1 1 1 0 -1 0 0 0 0 0 -5 0 0 0 20 0 1 0 9\n");      /* utime < 0 */
    parse_bad("1 (a) S 1 1 1 0 -1 0 0 0 0 0 +5 0 0 0 20 0 1 0 9\n");      /* '+' sign */
    parse_bad("1 (a) S 1 1 1 0 -1 0 0 0 0 0 18446744073709551616 0 0 0 20 0 1 0 9\n");
    parse_bad("1 (a) S 4194304 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n");    /* ppid range */
    parse_bad("1 (a) S 1 1 1 0 -1 4294967296 0 0 0 0 0 0 0 0 20 0 1 0 9\n"); /* flags u32 */
    parse_bad("1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 4294967296 0 9\n"); /* threads */
    parse_bad("1 (a) S 1 1 1 0 - 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n");           /* lone '-' */
    parse_bad("1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9x\n");         /* junk in 22 */

    /* An embedded NUL anywhere is malformed, even inside comm. */
    {
        static const char nul_line[] = "1 (a\0b) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9\n";

        ASSERT_ERRNO(proc_pid_stat_parse(nul_line, sizeof(nul_line) - 1, &st), EINVAL);
    }
    /* Truncated reads of the real line are all rejected up to field 22. */
    for (size_t n = 0; n < sizeof(bash_line) - 1; n++) {
        int r = proc_pid_stat_parse(bash_line, n, &st);
        const char *f22 = strstr(bash_line, " 987654 ");

        if ((size_t)(f22 + 2 - bash_line) <= n) /* one digit of field 22 */
            assert_int_equal(r, 0);
        else
            assert_int_equal(r, -EINVAL);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_line),    cmocka_unit_test(test_kernel_thread),
        cmocka_unit_test(test_hostile_comm), cmocka_unit_test(test_zombie_and_limits),
        cmocka_unit_test(test_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
