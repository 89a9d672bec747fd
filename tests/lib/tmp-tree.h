/* A throwaway directory tree for the unit tests of ownership and modes:
 * they run as root and hand directories, files and links to other uids.
 * Each test process (Check's fork mode) makes its own with tmp_tree_make()
 * and removes it with tmp_tree_remove(); paths are relative to tmp_tree. */
#pragma once

#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_tree[PATH_MAX];

static inline void tmp_tree_make(const char *name) {
        ck_assert_int_lt(snprintf(tmp_tree, sizeof(tmp_tree), "/tmp/%s-XXXXXX", name),
                         (int) sizeof(tmp_tree));
        ck_assert_ptr_nonnull(mkdtemp(tmp_tree));
        ck_assert_int_eq(chmod(tmp_tree, 0755), 0);
}

static inline void tmp_tree_remove(void) {
        char *cmd;

        if (!tmp_tree[0] || strchr(tmp_tree, 'X'))
                return;
        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", tmp_tree), 0);
        ck_assert_int_eq(system(cmd), 0);
        free(cmd);
}

/* tmp_tree/@rel, malloc'ed */
static inline char *tmp_at(const char *rel) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s/%s", tmp_tree, rel), 0);
        return p;
}

static inline void tmp_mkdir_as(const char *rel, mode_t mode, uid_t uid) {
        char *p = tmp_at(rel);

        ck_assert_msg(mkdir(p, 0700) == 0, "mkdir %s: %m", p);
        ck_assert_int_eq(chmod(p, mode), 0);
        ck_assert_int_eq(chown(p, uid, 0), 0);
        free(p);
}

static inline void tmp_file_as(const char *rel, const char *text, mode_t mode, uid_t uid) {
        char *p = tmp_at(rel);
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

        ck_assert_msg(fd >= 0, "create %s: %m", p);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        ck_assert_int_eq(close(fd), 0);
        ck_assert_int_eq(chmod(p, mode), 0);
        ck_assert_int_eq(chown(p, uid, 0), 0);
        free(p);
}

static inline void tmp_link_as(const char *target, const char *rel, uid_t uid) {
        char *p = tmp_at(rel);

        ck_assert_msg(symlink(target, p) == 0, "symlink %s: %m", p);
        ck_assert_int_eq(lchown(p, uid, 0), 0);
        free(p);
}
