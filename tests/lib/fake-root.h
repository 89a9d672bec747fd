/* A fake root (/proc, /sys, /etc written into a temp dir) for the unit tests
 * of the health checks.  Each test process (Check's fork mode) makes its
 * own in its fixture's setup with fake_root_make("/tmp/<test>-XXXXXX") and
 * removes it in teardown with fake_root_remove(); the helpers below take
 * paths under it as they are on a node ("/proc/meminfo"). */
#pragma once

#include <check.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

/* The root made last; "" when none is. */
static char root[PATH_MAX];

/* A new empty root from @template, ending in "XXXXXX" as mkdtemp() wants. */
static inline void fake_root_make(const char *template) {
        char dir[PATH_MAX];

        ck_assert_int_lt(snprintf(dir, sizeof(dir), "%s", template), (int) sizeof(dir));
        ck_assert_ptr_nonnull(mkdtemp(dir));
        memcpy(root, dir, sizeof(root));
}

static inline void fake_root_remove(void) {
        _cleanup_free_ char *cmd = NULL;

        if (!root[0])
                return;
        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", root), 0);
        ck_assert_int_eq(system(cmd), 0);
        root[0] = 0;
}

/* <root>@rel, malloc'd. */
static inline char *at(const char *rel) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s%s", root, rel), 0);
        return p;
}

/* Writes @len bytes to <root>@rel, making the directories above it. */
static inline void put_bytes(const char *rel, const void *data, size_t len) {
        _cleanup_free_ char *p = at(rel);

        ck_assert_int_eq(fileio_mkdir_parents(p, 0755), 0);
        ck_assert_int_eq(fileio_write_atomic(p, data, len, 0644, (uid_t) -1, (gid_t) -1), 0);
}

static inline void put(const char *rel, const char *fmt, ...) _printf_(2, 3);
static inline void put(const char *rel, const char *fmt, ...) {
        _cleanup_free_ char *s = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        ck_assert_int_ge(n, 0);
        put_bytes(rel, s, strlen(s));
}

/* A file of @size bytes of @c at <root>@rel. */
static inline void put_big(const char *rel, char c, size_t size) {
        _cleanup_free_ char *big = malloc(size);

        ck_assert_ptr_nonnull(big);
        memset(big, c, size);
        put_bytes(rel, big, size);
}

static inline void mkdirs(const char *rel) {
        _cleanup_free_ char *p = at(rel);

        ck_assert_int_eq(fileio_mkdir_p(p, 0755), 0);
}

/* A symbolic link to @target at <root>@rel, making the directories above it. */
static inline void link_at(const char *target, const char *rel) {
        _cleanup_free_ char *p = at(rel);

        ck_assert_int_eq(fileio_mkdir_parents(p, 0755), 0);
        ck_assert_int_eq(symlink(target, p), 0);
}

/* <root>@rel a symbolic link to itself: reading it loops. */
static inline void loop_at(const char *rel) {
        _cleanup_free_ char *p = at(rel);

        ck_assert_int_eq(fileio_mkdir_parents(p, 0755), 0);
        (void) unlink(p);
        ck_assert_int_eq(symlink(p, p), 0);
}

/* <root>@rel gone, whether it was there or not. */
static inline void unlink_at(const char *rel) {
        _cleanup_free_ char *p = at(rel);

        (void) unlink(p);
}

/* <root>@rel gone; it must have been there. */
static inline void remove_at(const char *rel) {
        _cleanup_free_ char *p = at(rel);

        ck_assert_int_eq(unlink(p), 0);
}

static inline void move_at(const char *from, const char *to) {
        _cleanup_free_ char *a = at(from), *b = at(to);

        ck_assert_int_eq(rename(a, b), 0);
}

static inline bool exists(const char *rel) {
        _cleanup_free_ char *p = at(rel);

        return access(p, F_OK) == 0;
}
