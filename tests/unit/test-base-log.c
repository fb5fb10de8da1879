/* SPDX-License-Identifier: MIT */
/*
 * JOURNAL_STREAM decides the log format: only a value naming stderr's own file (device and
 * inode) means the journal; anything else, or a file that is not the one named, is plain.
 */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static void test_journal_stream_must_name_the_fd(void **state) {
    char dir[256], path[300], value[64];
    struct stat st;
    int fd, other;

    (void)state;
    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    (void)snprintf(path, sizeof(path), "%s/stream", dir);
    fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    other = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(other >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    (void)snprintf(value, sizeof(value), "%llu:%llu", (unsigned long long)st.st_dev,
                   (unsigned long long)st.st_ino);

    assert_true(log_stream_is_journal(value, fd));
    assert_false(log_stream_is_journal(value, other)); /* inherited, stderr elsewhere */
    assert_false(log_stream_is_journal(NULL, fd));
    assert_false(log_stream_is_journal("", fd));
    assert_false(log_stream_is_journal("12", fd));
    assert_false(log_stream_is_journal("abc:def", fd));
    (void)snprintf(value, sizeof(value), "%llu:%llux", (unsigned long long)st.st_dev,
                   (unsigned long long)st.st_ino);
    assert_false(log_stream_is_journal(value, fd)); /* trailing garbage */
    (void)snprintf(value, sizeof(value), "%llu:%llu", (unsigned long long)st.st_dev,
                   (unsigned long long)st.st_ino + 1);
    assert_false(log_stream_is_journal(value, fd));
    (void)close(fd);
    (void)close(other);
    test_rm_rf(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_journal_stream_must_name_the_fd),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
