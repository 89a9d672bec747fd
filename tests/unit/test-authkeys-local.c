/* The node's own accounts, whose keys are never served: the reserved list
 * shared with nsscache, a passwd file's names and uids, names that spell a
 * uid, and the passwd file as it is found on real nodes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "modules/authkeys/authkeys-local.h"
#include "util/cleanup.h"
#include "modutil/reserved-accounts.h"
#include "../lib/check-run.h"

static bool local_name(const AuthkeysLocal *l, const char *name) {
        return authkeys_local_name(l, name, strlen(name));
}

/* A passwd file with @text in a fresh temporary directory; the path is returned. */
static char *passwd_file(const char *text) {
        char *p = strdup("/tmp/test-authkeys-local.XXXXXX");
        int fd;

        ck_assert_ptr_nonnull(p);
        fd = mkstemp(p);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        return p;
}

START_TEST(test_reserved_list) {
        /* Sorted: the lookup is a binary search. */
        for (size_t i = 1; i < reserved_account_names_count; i++)
                ck_assert_int_lt(strcmp(reserved_account_names[i - 1], reserved_account_names[i]), 0);
        for (size_t i = 0; i < reserved_account_names_count; i++) {
                const char *n = reserved_account_names[i];
                ck_assert(reserved_account_name(n, strlen(n)));
        }
        ck_assert(reserved_account_name("root", 4));
        ck_assert(reserved_account_name("sshd", 4));
        ck_assert(reserved_account_name("www-data", 8));
        ck_assert(reserved_account_name("systemd-network", 15));
        ck_assert(reserved_account_name("_apt", 4));
        ck_assert(reserved_account_name("_", 1));
        /* Exactly those: no prefix of a name, no longer name, no other case. */
        ck_assert(!reserved_account_name("roo", 3));
        ck_assert(!reserved_account_name("rooter", 6));
        ck_assert(!reserved_account_name("root", 3));
        ck_assert(!reserved_account_name("ROOT", 4));
        ck_assert(!reserved_account_name("systemd", 7));
        ck_assert(!reserved_account_name("ada", 3));
        ck_assert(!reserved_account_name("", 0));
        /* Length, not NUL, ends a name. */
        ck_assert(!reserved_account_name("root\0x", 6));
        ck_assert(reserved_account_name("rootx", 4));
        ck_assert(reserved_account_id(0));
        ck_assert(reserved_account_id(65534));
        ck_assert(reserved_account_id(65535));
        ck_assert(!reserved_account_id(1));
        ck_assert(!reserved_account_id(1000));
        ck_assert(!reserved_account_id(UINT32_MAX));
}
END_TEST

START_TEST(test_no_file) {
        _cleanup_(authkeys_local_freep) AuthkeysLocal *l = NULL;

        ck_assert_int_eq(authkeys_local_load("/nonexistent/passwd", &l), 0);
        ck_assert(local_name(l, "root"));
        ck_assert(local_name(l, "daemon"));
        ck_assert(local_name(l, "systemd-timesync"));
        ck_assert(!local_name(l, "ada"));
        ck_assert(authkeys_local_uid(l, 0));
        ck_assert(!authkeys_local_uid(l, 1000));
        authkeys_local_free(TAKE_PTR(l));
        ck_assert_int_eq(authkeys_local_load(NULL, &l), 0);
        ck_assert(local_name(l, "root"));
}
END_TEST

START_TEST(test_passwd_file) {
        _cleanup_free_ char *p = passwd_file("# a comment:x:7:7\n"
                                             "toor:x:0:0:BSD root:/root:/bin/sh\n"
                                             "ubuntu:x:1000:1000::/home/ubuntu:/bin/bash\n"
                                             "+nisuser:x:3000:3000::/:/bin/sh\n"
                                             "-nisneg::3001:3001::/:/bin/sh\n"
                                             ":x:4000:4000::/:/bin/sh\n"
                                             "noid:x:abc:1::/:/bin/sh\n"
                                             "big:x:4294967296:1::/:/bin/sh\n"
                                             "nocolon\n"
                                             "\n"
                                             "svc:x:998:998::/:/usr/sbin/nologin");
        _cleanup_(authkeys_local_freep) AuthkeysLocal *l = NULL;

        ck_assert_int_eq(authkeys_local_load(p, &l), 0);
        ck_assert(local_name(l, "toor"));
        ck_assert(local_name(l, "ubuntu"));
        ck_assert(local_name(l, "svc")); /* the last line needs no newline */
        ck_assert(local_name(l, "noid"));
        ck_assert(local_name(l, "big"));
        ck_assert(!local_name(l, "nocolon"));
        ck_assert(!local_name(l, "+nisuser"));
        ck_assert(!local_name(l, "nisuser"));
        ck_assert(!local_name(l, "ubunt"));
        ck_assert(!local_name(l, "ubuntu2"));
        ck_assert(!local_name(l, "Ubuntu"));
        ck_assert(local_name(l, "root")); /* reserved, though the file lacks it */
        ck_assert(authkeys_local_uid(l, 1000));
        ck_assert(authkeys_local_uid(l, 998));
        ck_assert(authkeys_local_uid(l, 0));
        ck_assert(!authkeys_local_uid(l, 3000));
        ck_assert(!authkeys_local_uid(l, 7));
        ck_assert(!authkeys_local_uid(l, 4000)); /* a line without a name is no account */
        ck_assert(!authkeys_local_uid(l, 1001));
        unlink(p);
}
END_TEST

/* "0", "00" and "1000" are taken for uids by chown, find -user, sudo -u '#0'. */
START_TEST(test_numeric_names) {
        _cleanup_free_ char *p = passwd_file("ubuntu:x:1000:1000::/home/ubuntu:/bin/bash\n");
        _cleanup_(authkeys_local_freep) AuthkeysLocal *l = NULL;

        ck_assert_int_eq(authkeys_local_load(p, &l), 0);
        ck_assert(local_name(l, "0"));
        ck_assert(local_name(l, "00"));
        ck_assert(local_name(l, "65534"));
        ck_assert(local_name(l, "1000"));
        ck_assert(local_name(l, "0001000"));
        ck_assert(!local_name(l, "1001"));
        ck_assert(!local_name(l, "4294967296")); /* over any uid */
        ck_assert(!local_name(l, "99999999999999999999"));
        ck_assert(!local_name(l, "0x0"));
        ck_assert(!local_name(l, "-0"));
        ck_assert(!local_name(l, "0 "));
        unlink(p);
}
END_TEST

/* A node with many accounts: every one is found, none that is not. */
START_TEST(test_many) {
        _cleanup_free_ char *text = malloc(20000 * 48), *p = NULL;
        _cleanup_(authkeys_local_freep) AuthkeysLocal *l = NULL;
        size_t len = 0;
        char name[32];

        ck_assert_ptr_nonnull(text);
        for (int i = 19999; i >= 0; i--)
                len += (size_t) sprintf(text + len, "u%d:x:%d:100::/:/bin/sh\n", i * 7, 100000 + i * 3);
        p = passwd_file(text);
        ck_assert_int_eq(authkeys_local_load(p, &l), 0);
        for (int i = 0; i < 20000; i++) {
                snprintf(name, sizeof(name), "u%d", i * 7);
                ck_assert(local_name(l, name));
                snprintf(name, sizeof(name), "u%d", i * 7 + 1);
                ck_assert(!local_name(l, name));
                ck_assert(authkeys_local_uid(l, (uint32_t) (100000 + i * 3)));
                ck_assert(!authkeys_local_uid(l, (uint32_t) (100000 + i * 3 + 1)));
        }
        unlink(p);
}
END_TEST

START_TEST(test_unreadable) {
        _cleanup_(authkeys_local_freep) AuthkeysLocal *l = NULL;

        /* A directory: it opens, but cannot be read. */
        ck_assert_int_lt(authkeys_local_load("/", &l), 0);
        ck_assert_ptr_null(l);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("authkeys-local");
        TCase *tc = tcase_create("local");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_reserved_list);
        tcase_add_test(tc, test_no_file);
        tcase_add_test(tc, test_passwd_file);
        tcase_add_test(tc, test_numeric_names);
        tcase_add_test(tc, test_many);
        tcase_add_test(tc, test_unreadable);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
