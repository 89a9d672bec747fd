/* trusted_path_check(): who, besides root and sunkd, could change what a
 * path resolves to.  Runs as root: it hands files to an unused uid. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/trusted-path.h"
#include "../lib/check-run.h"
#include "../lib/tmp-tree.h"

#define OTHER 4242 /* a uid nobody uses */

/* Checks <tmp_tree>/@rel: @r expected, and when @msg is set, the message with
 * each "@" standing for <tmp_tree>. */
static void expect(const char *rel, unsigned flags, int r, const char *msg) {
        _cleanup_free_ char *p = tmp_at(rel), *e = NULL, *want = NULL;
        int got = trusted_path_check(p, "config file", flags, &e);

        ck_assert_msg(got == r, "%s: got %d (%s), expected %d", p, got, e ?: "", r);
        if (!msg)
                return;
        want = calloc(1, strlen(msg) + 8 * strlen(tmp_tree) + 1);
        for (const char *s = msg; *s; s++)
                if (*s == '@')
                        strcat(want, tmp_tree);
                else
                        strncat(want, s, 1);
        ck_assert_ptr_nonnull(e);
        ck_assert_msg(strcmp(e, want) == 0, "got '%s', expected '%s'", e, want);
}

static void setup(void) {
        ck_assert_msg(geteuid() == 0, "must run as root: the tests hand files to uid %d", OTHER);
        tmp_tree_make("test-trusted-path");
}

START_TEST(test_read) {
        setup();
        tmp_file_as("good", "", 0644, 0);
        expect("good", 0, 0, NULL);
        tmp_file_as("theirs", "", 0644, OTHER);
        expect("theirs", 0, -EPERM,
               "refusing config file '@/theirs': owned by uid 4242, not root (mode 0644)");
        tmp_file_as("gw", "", 0664, 0);
        expect("gw", 0, -EPERM,
               "refusing config file '@/gw': group- or world-writable (owner uid 0, mode 0664)");
        tmp_file_as("ww", "", 0646, 0);
        expect("ww", 0, -EPERM, NULL);
        expect("missing", 0, -ENOENT, "@/missing: No such file or directory");
        expect("good/x", 0, -ENOTDIR, "@/good/x: @/good: Not a directory");
        /* what reaches the same file another way is the same file */
        expect("./good", 0, 0, NULL);
        /* a relative path, from the working directory, is the same file */
        ck_assert_int_eq(chdir(tmp_tree), 0);
        ck_assert_int_eq(trusted_path_check("good", "config file", 0, NULL), 0);
        ck_assert_int_eq(trusted_path_check("theirs", "config file", 0, NULL), -EPERM);
        ck_assert_int_eq(chdir("/"), 0);
        ck_assert_int_eq(trusted_path_check("", "config file", 0, NULL), -EINVAL);
        ck_assert_int_eq(trusted_path_check("/", "config file", 0, NULL), 0);
}
END_TEST

START_TEST(test_parents) {
        setup();
        tmp_mkdir_as("theirs", 0755, OTHER);
        tmp_file_as("theirs/f", "", 0644, 0);
        expect("theirs/f", 0, -EPERM,
               "refusing config file '@/theirs/f': '@/theirs' is owned by uid 4242, not root (mode 0755)");
        /* two levels up */
        tmp_mkdir_as("theirs/mine", 0755, 0);
        tmp_file_as("theirs/mine/f", "", 0644, 0);
        expect("theirs/mine/f", 0, -EPERM,
               "refusing config file '@/theirs/mine/f': '@/theirs' is owned by uid 4242, not root (mode "
               "0755)");
        tmp_mkdir_as("gw", 0775, 0);
        tmp_file_as("gw/f", "", 0644, 0);
        expect("gw/f", 0, -EPERM,
               "refusing config file '@/gw/f': '@/gw' is group- or world-writable (owner uid 0, mode 0775)");
        /* a directory read in must be its owner's alone, sticky or not */
        tmp_mkdir_as("sticky", 01777, 0);
        expect("sticky", 0, -EPERM,
               "refusing config file '@/sticky': group- or world-writable (owner uid 0, mode 1777)");
}
END_TEST

/* Sticky directories: passed through to an entry of root's, like /tmp to
 * mktemp -d; an entry of another uid's there is theirs to swap. */
START_TEST(test_sticky) {
        setup();
        tmp_mkdir_as("t", 01777, 0);
        tmp_mkdir_as("t/mine", 0755, 0);
        tmp_file_as("t/mine/f", "", 0644, 0);
        expect("t/mine/f", 0, 0, NULL);
        tmp_file_as("t/f", "", 0644, 0);
        expect("t/f", 0, 0, NULL);
        tmp_file_as("t/theirs", "", 0644, OTHER);
        expect("t/theirs", 0, -EPERM,
               "refusing config file '@/t/theirs': owned by uid 4242, not root (mode 0644)");
        tmp_link_as("mine/f", "t/link", OTHER);
        expect("t/link", 0, -EPERM, NULL);
        tmp_link_as("mine/f", "t/rootlink", 0);
        expect("t/rootlink", 0, 0, NULL);
        /* not sticky: anyone may rename a root-owned entry away */
        tmp_mkdir_as("w", 0777, 0);
        tmp_mkdir_as("w/mine", 0755, 0);
        tmp_file_as("w/mine/f", "", 0644, 0);
        expect("w/mine/f", 0, -EPERM,
               "refusing config file '@/w/mine/f': '@/w' is group- or world-writable (owner uid 0, mode "
               "0777)");
}
END_TEST

START_TEST(test_symlinks) {
        setup();
        tmp_mkdir_as("theirs", 0755, OTHER);
        tmp_file_as("theirs/f", "", 0644, OTHER);
        tmp_mkdir_as("mine", 0755, 0);
        tmp_file_as("mine/f", "", 0644, 0);
        /* the target's owner, and the directories on the way to it */
        tmp_link_as("theirs/f", "to-theirs", 0);
        expect("to-theirs", 0, -EPERM,
               "refusing config file '@/to-theirs': '@/theirs' is owned by uid 4242, not root (mode 0755)");
        tmp_file_as("their-file", "", 0644, OTHER);
        tmp_link_as("their-file", "to-their-file", 0);
        expect("to-their-file", 0, -EPERM,
               "refusing config file '@/to-their-file': '@/their-file' is owned by uid 4242, not root (mode "
               "0644)");
        /* relative, through "..", absolute, and a link to a directory */
        tmp_link_as("../mine/f", "mine/up", 0);
        expect("mine/up", 0, 0, NULL);
        {
                _cleanup_free_ char *abs = tmp_at("mine/f");
                tmp_link_as(abs, "abs", 0);
        }
        expect("abs", 0, 0, NULL);
        tmp_link_as("mine", "dirlink", 0);
        expect("dirlink/f", 0, 0, NULL);
        tmp_link_as("theirs", "their-dirlink", 0);
        expect("their-dirlink/f", 0, -EPERM, NULL);
        /* a symlink's own owner is not what counts outside a sticky directory */
        tmp_link_as("mine/f", "their-link", OTHER);
        expect("their-link", 0, 0, NULL);
        tmp_link_as("loop-b", "loop-a", 0);
        tmp_link_as("loop-a", "loop-b", 0);
        expect("loop-a", 0, -ELOOP, NULL);
        tmp_link_as("nowhere", "dangling", 0);
        expect("dangling", 0, -ENOENT, "@/dangling: @/nowhere: No such file or directory");
}
END_TEST

START_TEST(test_written) {
        setup();
        expect("new", TRUSTED_PATH_WRITTEN, 0, NULL);
        expect("a/b/c/new", TRUSTED_PATH_WRITTEN, 0, NULL);
        /* an existing file is replaced, never written through: its owner does not count */
        tmp_file_as("old", "", 0666, OTHER);
        expect("old", TRUSTED_PATH_WRITTEN, 0, NULL);
        tmp_mkdir_as("theirs", 0755, OTHER);
        expect("theirs/gres.conf", TRUSTED_PATH_WRITTEN, -EPERM,
               "refusing config file '@/theirs/gres.conf': '@/theirs' is owned by uid 4242, not root (mode "
               "0755)");
        expect("theirs/x/y/gres.conf", TRUSTED_PATH_WRITTEN, -EPERM, NULL);
        tmp_mkdir_as("theirs/mine", 0755, 0);
        expect("theirs/mine/gres.conf", TRUSTED_PATH_WRITTEN, -EPERM, NULL);
        /* in a sticky directory anyone could create the name first */
        tmp_mkdir_as("t", 01777, 0);
        expect("t/new", TRUSTED_PATH_WRITTEN, -EPERM,
               "refusing config file '@/t/new': '@/t' is group- or world-writable (owner uid 0, mode 1777)");
        expect("t/newdir/new", TRUSTED_PATH_WRITTEN, -EPERM, NULL);
        tmp_mkdir_as("t/mine", 0755, 0);
        expect("t/mine/new", TRUSTED_PATH_WRITTEN, 0, NULL);
        /* a directory written in */
        tmp_mkdir_as("state", 0755, 0);
        expect("state", TRUSTED_PATH_WRITTEN, 0, NULL);
        tmp_mkdir_as("gw", 0770, 0);
        expect("gw", TRUSTED_PATH_WRITTEN, -EPERM,
               "refusing config file '@/gw': group- or world-writable (owner uid 0, mode 0770)");
        tmp_mkdir_as("their-state", 0700, OTHER);
        expect("their-state", TRUSTED_PATH_WRITTEN, -EPERM,
               "refusing config file '@/their-state': owned by uid 4242, not root (mode 0700)");
        /* a symlink is replaced where it is, and a directory link is written through */
        tmp_link_as("theirs", "link-to-theirs", 0);
        expect("link-to-theirs", TRUSTED_PATH_WRITTEN, -EPERM, NULL);
        expect("link-to-theirs/new", TRUSTED_PATH_WRITTEN, -EPERM, NULL);
        expect("old/x", TRUSTED_PATH_WRITTEN, -ENOTDIR, NULL);
}
END_TEST

static void teardown(void) {
        tmp_tree_remove();
}

int main(void) {
        Suite *s = suite_create("trusted-path");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, NULL, teardown);
        tcase_add_test(tc, test_read);
        tcase_add_test(tc, test_parents);
        tcase_add_test(tc, test_sticky);
        tcase_add_test(tc, test_symlinks);
        tcase_add_test(tc, test_written);
        suite_add_tcase(s, tc);
        return check_run(s);
}
