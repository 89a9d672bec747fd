/* The directory helpers of util/fileio: parents made, what exists kept, a
 * file in the way an error; and fileio_write_all() on a pipe. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileio.h"
#include "../lib/check-run.h"

static char dir[] = "/tmp/test-fileio.XXXXXX";

static void setup(void) {
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
        char cmd[64];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
        strcpy(dir, "/tmp/test-fileio.XXXXXX");
}

static bool is_dir(const char *sub) {
        char p[256];
        struct stat st;

        snprintf(p, sizeof(p), "%s/%s", dir, sub);
        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

START_TEST(test_mkdir_parents) {
        char p[256];

        snprintf(p, sizeof(p), "%s/a/b/c/sock", dir);
        ck_assert_int_eq(fileio_mkdir_parents(p, 0755), 0);
        ck_assert(is_dir("a/b/c"));
        ck_assert(!is_dir("a/b/c/sock"));
        /* again: what exists is kept */
        ck_assert_int_eq(fileio_mkdir_parents(p, 0755), 0);
        /* a path of one component has no parents to make */
        ck_assert_int_eq(fileio_mkdir_parents("sock", 0755), 0);
}
END_TEST

START_TEST(test_mkdir_p) {
        char p[256];
        struct stat st;

        snprintf(p, sizeof(p), "%s/x/y/z", dir);
        ck_assert_int_eq(fileio_mkdir_p(p, 0700), 0);
        ck_assert(is_dir("x/y/z"));
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0700);
        ck_assert_int_eq(fileio_mkdir_p(p, 0700), 0);
}
END_TEST

START_TEST(test_mkdir_file_in_the_way) {
        char p[256];
        int fd;

        snprintf(p, sizeof(p), "%s/file", dir);
        fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        close(fd);
        snprintf(p, sizeof(p), "%s/file/sub/sock", dir);
        ck_assert_int_eq(fileio_mkdir_parents(p, 0755), -ENOTDIR);
        snprintf(p, sizeof(p), "%s/file", dir);
        ck_assert_int_eq(fileio_mkdir_p(p, 0755),
                         0); /* EEXIST is not an error: the caller checks its type */
        snprintf(p, sizeof(p), "%s/file/sub", dir);
        ck_assert_int_eq(fileio_mkdir_p(p, 0755), -ENOTDIR);
}
END_TEST

START_TEST(test_write_all) {
        char buf[8] = "";
        int p[2];

        signal(SIGPIPE, SIG_IGN);
        ck_assert_int_eq(pipe(p), 0);
        ck_assert_int_eq(fileio_write_all(p[1], "result", 6), 0);
        ck_assert_int_eq(read(p[0], buf, sizeof(buf) - 1), 6);
        ck_assert_str_eq(buf, "result");
        close(p[0]);
        ck_assert_int_eq(fileio_write_all(p[1], "x", 1), -EPIPE);
        close(p[1]);
}
END_TEST

static Suite *fileio_suite(void) {
        Suite *s = suite_create("fileio");
        TCase *tc = tcase_create("dirs");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_mkdir_parents);
        tcase_add_test(tc, test_mkdir_p);
        tcase_add_test(tc, test_mkdir_file_in_the_way);
        tcase_add_test(tc, test_write_all);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(fileio_suite());
}
