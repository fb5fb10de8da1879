/* SPDX-License-Identifier: MIT */
/* Reading files relative to an injected root: sizes, limits, errors, numbers. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

struct fixture {
    char root[256];
    int root_fd;
};

static int setup(void **state) {
    struct fixture *f = calloc(1, sizeof(*f));

    if (!f || test_mkdtemp(f->root, sizeof(f->root)) < 0)
        return -1;
    f->root_fd = open_root(f->root);
    if (f->root_fd < 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state) {
    struct fixture *f = *state;

    close(f->root_fd);
    test_rm_rf(f->root);
    free(f);
    return 0;
}

/* Writes `size` bytes of a repeating pattern to root/path. */
static char *write_pattern(struct fixture *f, const char *path, size_t size) {
    char *data = malloc(size + 1);

    assert_non_null(data);
    for (size_t i = 0; i < size; i++)
        data[i] = (char)('A' + i % 23);
    data[size] = '\0';
    ASSERT_OK(test_write_file(f->root, path, data));
    return data;
}

/* Files of several sizes around and well beyond the first 4096-byte read. */
static void test_read_virtual_sizes(void **state) {
    struct fixture *f = *state;
    static const size_t sizes[] = {0, 1, 4095, 4096, 4097, 10000, 70000, 300000, 1048576};

    for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
        _cleanup_(freep) char *data = write_pattern(f, "sub/file", sizes[k]);
        _cleanup_(freep) char *got = NULL;
        size_t got_size = 12345;

        ASSERT_OK(read_virtual_file_at(f->root_fd, "sub/file", 1048576, &got, &got_size));
        assert_int_equal(got_size, sizes[k]);
        assert_int_equal(got[got_size], '\0');
        assert_memory_equal(got, data, sizes[k]);
    }
}

static void test_read_virtual_limits(void **state) {
    struct fixture *f = *state;
    char *got = NULL;
    size_t size = 777;

    free(write_pattern(f, "five-thousand", 5000));
    /* One byte over the limit is refused, and nothing is returned. */
    ASSERT_ERRNO(read_virtual_file_at(f->root_fd, "five-thousand", 4999, &got, &size), EFBIG);
    ASSERT_ERRNO(read_virtual_file_at(f->root_fd, "five-thousand", 100, &got, &size), EFBIG);
    ASSERT_ERRNO(read_virtual_file_at(f->root_fd, "five-thousand", 0, &got, &size), EFBIG);
    assert_null(got);
    assert_int_equal(size, 777);
    /* Exactly the limit is fine; ret_size may be NULL. */
    ASSERT_OK(read_virtual_file_at(f->root_fd, "five-thousand", 5000, &got, NULL));
    assert_int_equal(strlen(got), 5000);
    free(got);
    got = NULL;

    /* A big file far over a big limit. */
    free(write_pattern(f, "big", 2000000));
    ASSERT_ERRNO(read_virtual_file_at(f->root_fd, "big", 1048576, &got, &size), EFBIG);
    assert_null(got);

    ASSERT_ERRNO(read_virtual_file_at(f->root_fd, "missing", 4096, &got, &size), ENOENT);
    ASSERT_OK(test_write_file(f->root, "dir/x", "1"));
    ASSERT_ERRNO(read_virtual_file_at(f->root_fd, "dir", 4096, &got, &size), EISDIR);
    ASSERT_ERRNO(read_virtual_file_at(-1, "five-thousand", 4096, &got, &size), EBADF);
    assert_null(got);
    assert_int_equal(size, 777);
}

/* A real virtual file: /proc reports size 0, so only reading tells how long it is. */
static void test_read_proc(void **state) {
    _cleanup_(closep) int proc_fd = open_root("/proc");
    _cleanup_(freep) char *stat = NULL;
    char prefix[32];

    assert_true(proc_fd >= 0);
    ASSERT_OK(read_virtual_file_at(proc_fd, "self/stat", 65536, &stat, NULL));
    (void)snprintf(prefix, sizeof(prefix), "%d (", (int)getpid());
    assert_memory_equal(stat, prefix, strlen(prefix));
}

/* A virtual file the kernel makes a record at a time gives about a page a read: it is read
 * to its end. This process's maps, with a few hundred mappings made here, runs to many
 * pages; its last line is the vsyscall page (x86-64) or the stack, never cut short. */
static void test_read_proc_records(void **state) {
    _cleanup_(closep) int proc_fd = open_root("/proc");
    _cleanup_(freep) char *maps = NULL;
    void *areas[300];
    size_t size = 0, lines = 0;

    (void)state;
    assert_true(proc_fd >= 0);
    for (size_t i = 0; i < ARRAY_SIZE(areas); i++) { /* apart: none merges with the next */
        areas[i] = mmap(NULL, 4096, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(areas[i] != MAP_FAILED);
    }
    ASSERT_OK(read_virtual_file_at(proc_fd, "self/maps", 8u << 20, &maps, &size));
    for (size_t i = 0; i < size; i++)
        lines += maps[i] == '\n';
    print_message("self/maps: %zu bytes, %zu lines\n", size, lines);
    assert_true(size > 3 * 4096);
    assert_true(lines >= ARRAY_SIZE(areas) / 2);
    assert_int_equal(maps[size - 1], '\n');
    for (size_t i = 0; i < ARRAY_SIZE(areas); i++)
        assert_int_equal(munmap(areas[i], 4096), 0);
}

static void test_read_into(void **state) {
    struct fixture *f = *state;
    char buf[16];
    _cleanup_(closep) int fd = -1;

    ASSERT_OK(test_write_file(f->root, "nine", "123456789"));
    assert_int_equal(read_file_into_at(f->root_fd, "nine", buf, 10), 9);
    assert_string_equal(buf, "123456789");
    /* The content must fit with its NUL: 9 bytes do not fit in 9. */
    ASSERT_ERRNO(read_file_into_at(f->root_fd, "nine", buf, 9), EFBIG);
    ASSERT_ERRNO(read_file_into_at(f->root_fd, "nine", buf, 0), EINVAL);
    ASSERT_ERRNO(read_file_into_at(f->root_fd, "none", buf, 16), ENOENT);

    /* read_fd_into always reads from offset 0, whatever the file position. */
    fd = openat(f->root_fd, "nine", O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, buf, 4), 4);
    assert_int_equal(read_fd_into(fd, buf, sizeof(buf)), 9);
    assert_string_equal(buf, "123456789");
    assert_int_equal(read_fd_into(fd, buf, sizeof(buf)), 9);
    ASSERT_ERRNO(read_fd_into(-1, buf, sizeof(buf)), EBADF);
}

static void test_read_u64(void **state) {
    static const struct {
        const char *content;
        int error;
        uint64_t value;
    } rows[] = {
        {"262143328850\n", 0, UINT64_C(262143328850)}, /* max_energy_range_uj */
        {"0", 0, 0},
        {"18446744073709551615\n", 0, UINT64_MAX},
        {"18446744073709551616\n", -ERANGE, 0},
        {"", -EINVAL, 0},
        {"12 34\n", -EINVAL, 0},
        {"-5\n", -EINVAL, 0},
        {"00000000000000000000000000000000000000000000000000000000000000001\n", -EFBIG, 0},
    };
    struct fixture *f = *state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        uint64_t v = 4242;

        ASSERT_OK(
            test_write_file(f->root, "sys/class/powercap/intel-rapl:0/value", rows[i].content));
        assert_int_equal(read_u64_at(f->root_fd, "sys/class/powercap/intel-rapl:0/value", &v),
                         rows[i].error);
        assert_int_equal(v, rows[i].error == 0 ? rows[i].value : 4242);
    }
    uint64_t v = 4242;
    ASSERT_ERRNO(read_u64_at(f->root_fd, "sys/missing", &v), ENOENT);
    assert_int_equal(v, 4242);
}

static void test_dirs_and_write(void **state) {
    struct fixture *f = *state;
    _cleanup_(closep) int sub = -1;
    uint64_t v;

    ASSERT_OK(test_write_file(f->root, "a/b/energy_uj", "17\n"));
    sub = open_dir_at(f->root_fd, "a/b");
    assert_true(sub >= 0);
    /* Reads relative to the opened directory. */
    ASSERT_OK(read_u64_at(sub, "energy_uj", &v));
    assert_int_equal(v, 17);
    ASSERT_ERRNO(open_dir_at(f->root_fd, "a/b/energy_uj"), ENOTDIR);
    ASSERT_ERRNO(open_dir_at(f->root_fd, "a/c"), ENOENT);
    ASSERT_ERRNO(open_root("/nonexistent/joulestat/root"), ENOENT);

    /* write_file_at truncates what was there. */
    ASSERT_OK(write_file_at(sub, "energy_uj", "123456789\n", 10));
    ASSERT_OK(write_file_at(sub, "energy_uj", "5\n", 2));
    ASSERT_OK(read_u64_at(sub, "energy_uj", &v));
    assert_int_equal(v, 5);
    ASSERT_OK(write_file_at(sub, "empty", "", 0));
    char buf[4];
    assert_int_equal(read_file_into_at(sub, "empty", buf, sizeof(buf)), 0);
    ASSERT_ERRNO(write_file_at(sub, "no/such/dir", "x", 1), ENOENT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_virtual_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_virtual_limits, setup, teardown),
        cmocka_unit_test(test_read_proc),
        cmocka_unit_test(test_read_proc_records),
        cmocka_unit_test_setup_teardown(test_read_into, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_u64, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dirs_and_write, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
