/* What the prolog module and its client share without running anything:
 * the last line of a script's output, the reason a failure puts on the
 * node, each script's share of the total timeout, and the settings file
 * the client reads (hostile and broken ones included).  Runs as root: it
 * hands a file to nobody (uid 65534). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/macro.h"
#include "../../modules/prolog/prolog-reason.h"
#include "../../modules/prolog/prolog-settings.h"
#include "../lib/check-run.h"

#define SEC UINT64_C(1000000)

static void expect_line(const char *out, size_t size, const char *want) {
        char buf[512];

        ck_assert_uint_le(size, sizeof(buf));
        prolog_last_line(out, strlen(out), buf, size);
        ck_assert_msg(streq(buf, want), "last line of '%s': got '%s', expected '%s'", out, buf, want);
}

START_TEST(test_last_line) {
        expect_line("", 64, "");
        expect_line("\n\n \t\n", 64, "");
        expect_line("first\nGPU 3 missing\n", 64, "GPU 3 missing");
        expect_line("first\nsecond\n\n   \n\t\n", 64, "second");
        expect_line("no newline at the end", 64, "no newline at the end");
        expect_line("  padded \t\r\n", 64, "padded");
        expect_line("what?\n", 64, "what?");
        expect_line("bell\a and escape \x1b[31m red\n", 64, "bell\\x07 and escape \\x1b[31m red");
        expect_line("bad \xff\xfe bytes\n", 64, "bad \\xff\\xfe bytes");
        expect_line("caf\xc3\xa9 ok\n", 64, "caf\xc3\xa9 ok");
        /* Latin-1, an encoded surrogate, an overlong '/', a C1 control, and a backslash, kept */
        expect_line("caf\xe9 \xed\xa0\x80 \xc0\xaf \xc2\x9b \\n\n", 64,
                    "caf\\xe9 \\xed\\xa0\\x80 \\xc0\\xaf \\xc2\\x9b \\n");
        /* a long line: its end, whole characters only */
        expect_line("0123456789abcdef\n", 9, "89abcdef");
        expect_line("xx\xc3\xa9\xc3\xa9\xc3\xa9\n", 6, "\xc3\xa9\xc3\xa9");
}
END_TEST

static void expect_reason(PrologKind kind, const PrologFailure *f, const char *want) {
        char buf[PROLOG_REASON_MAX + 1];

        prolog_failure_reason(buf, kind, f);
        ck_assert_msg(streq(buf, want), "got '%s', expected '%s'", buf, want);
}

START_TEST(test_reason) {
        const char *out = "checking GPUs\nGPU 3 missing\n";

        expect_reason(PROLOG_KIND_PROLOG,
                      &(PrologFailure){
                              .script = "10-gpu", .exit_code = 3, .output = out, .output_len = strlen(out) },
                      "prolog 10-gpu rc=3: GPU 3 missing");
        expect_reason(PROLOG_KIND_EPILOG, &(PrologFailure){ .script = "90-clean", .exit_code = 1 },
                      "epilog 90-clean rc=1");
        expect_reason(PROLOG_KIND_PROLOG,
                      &(PrologFailure){ .script = "20-hang", .timed_out = true, .signal = SIGKILL },
                      "prolog 20-hang timed out (SIGKILL)");
        expect_reason(PROLOG_KIND_PROLOG, &(PrologFailure){ .script = "20-hang", .timed_out = true },
                      "prolog 20-hang timed out (SIGTERM)");
        expect_reason(PROLOG_KIND_PROLOG, &(PrologFailure){ .script = "30-seg", .signal = SIGSEGV },
                      "prolog 30-seg killed by SIGSEGV");
        expect_reason(PROLOG_KIND_PROLOG,
                      &(PrologFailure){ .script = "40-x", .error = prolog_exec_why(-ENOEXEC) },
                      "prolog 40-x cannot execute: neither a program nor a '#!' script");
        expect_reason(PROLOG_KIND_PROLOG, &(PrologFailure){ .script = "evil\nname\x1b", .exit_code = 1 },
                      "prolog evil\\x0aname\\x1b rc=1");
}
END_TEST

/* A reason is bounded whatever the script's name and output. */
START_TEST(test_reason_bounded) {
        char name[300], out[5000], buf[PROLOG_REASON_MAX + 1];

        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        memset(out, 'o', sizeof(out) - 1);
        out[sizeof(out) - 1] = '\0';
        prolog_failure_reason(
                buf, PROLOG_KIND_PROLOG,
                &(PrologFailure){
                        .script = "10-x", .exit_code = 2, .output = out, .output_len = strlen(out) });
        ck_assert_uint_le(strlen(buf), PROLOG_REASON_MAX);
        ck_assert_msg(strncmp(buf, "prolog 10-x rc=2: ooo", 21) == 0, "%s", buf);
        prolog_failure_reason(buf, PROLOG_KIND_PROLOG, &(PrologFailure){ .script = name, .exit_code = 2 });
        ck_assert_uint_eq(strlen(buf), PROLOG_REASON_MAX);
}
END_TEST

START_TEST(test_script_timeout) {
        PrologSettings s = { .script_timeout_usec = 60 * SEC, .total_timeout_usec = 300 * SEC };

        ck_assert_uint_eq(prolog_script_timeout(&s, 0), 60 * SEC);
        ck_assert_uint_eq(prolog_script_timeout(&s, 290 * SEC), 10 * SEC);
        ck_assert_uint_eq(prolog_script_timeout(&s, 300 * SEC), 0);
        ck_assert_uint_eq(prolog_script_timeout(&s, 400 * SEC), 0);
        s.total_timeout_usec = 0;
        ck_assert_uint_eq(prolog_script_timeout(&s, 400 * SEC), 60 * SEC);
}
END_TEST

/* ---- the settings file ---- */

static char dir[] = "/tmp/test-prolog-reason-XXXXXX";

static void setup(void) {
        ck_assert_msg(geteuid() == 0, "must run as root");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(chmod(dir, 0755), 0);
}

static void teardown(void) {
        _cleanup_free_ char *cmd = NULL;

        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", dir), 0);
        ck_assert_int_eq(system(cmd), 0);
}

static char *write_file(const char *text, size_t len, mode_t mode, uid_t uid) {
        char *p;
        int fd;

        ck_assert_int_ge(asprintf(&p, "%s/client.json", dir), 0);
        (void) unlink(p);
        fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t) len);
        ck_assert_int_eq(close(fd), 0);
        ck_assert_int_eq(chmod(p, mode), 0);
        ck_assert_int_eq(chown(p, uid, 0), 0);
        return p;
}

/* @text as the file: @r expected, and @msg within the error. */
static void expect_load(const char *text, mode_t mode, uid_t uid, int r, const char *msg) {
        _cleanup_free_ char *p = write_file(text, strlen(text), mode, uid), *e = NULL;
        PrologSettings s;
        int got = prolog_settings_load(p, &s, &e);

        ck_assert_msg(got == r, "'%s': got %d (%s), expected %d", text, got, e ?: "", r);
        if (msg)
                ck_assert_msg(e && strstr(e, msg) && strstr(e, p), "'%s': error '%s' lacks '%s' or the path",
                              text, e ?: "", msg);
        /* a refused file leaves the defaults */
        if (r < 0) {
                ck_assert_str_eq(s.prolog_dir, SUNKD_SYSCONFDIR "/sunkd/prolog.d");
                ck_assert_uint_eq(s.script_timeout_usec, PROLOG_SCRIPT_TIMEOUT_DEFAULT);
        }
        prolog_settings_done(&s);
}

START_TEST(test_settings_round_trip) {
        PrologSettings in = {
                .prolog_dir = (char *) "/srv/p.d", .epilog_dir = (char *) "/srv/e.d",
                .script_timeout_usec = 7 * SEC, .total_timeout_usec = 70 * SEC, .kill_grace_usec = 2 * SEC,
                .output_limit = 4096, .unreachable_fail = true,
        }, out;
        _cleanup_free_ char *text = NULL, *p = NULL, *e = NULL;

        ck_assert_int_eq(prolog_settings_format(&in, &text), 0);
        p = write_file(text, strlen(text), 0600, 0);
        ck_assert_int_eq(prolog_settings_load(p, &out, &e), 0);
        ck_assert_str_eq(out.prolog_dir, "/srv/p.d");
        ck_assert_str_eq(out.epilog_dir, "/srv/e.d");
        ck_assert_uint_eq(out.script_timeout_usec, 7 * SEC);
        ck_assert_uint_eq(out.total_timeout_usec, 70 * SEC);
        ck_assert_uint_eq(out.kill_grace_usec, 2 * SEC);
        ck_assert_uint_eq(out.output_limit, 4096);
        ck_assert(out.unreachable_fail);
        prolog_settings_done(&out);
}
END_TEST

START_TEST(test_settings_missing) {
        _cleanup_free_ char *p = NULL, *e = NULL;
        PrologSettings s;

        ck_assert_int_ge(asprintf(&p, "%s/none.json", dir), 0);
        ck_assert_int_eq(prolog_settings_load(p, &s, &e), -ENOENT);
        ck_assert_str_eq(s.epilog_dir, SUNKD_SYSCONFDIR "/sunkd/epilog.d");
        ck_assert(!s.unreachable_fail);
        prolog_settings_done(&s);
}
END_TEST

START_TEST(test_settings_hostile) {
        char big[20 * 1024];

        expect_load("{}", 0622, 0, -EPERM, "writable");
        expect_load("{}", 0600, 65534, -EPERM, "owned by uid 65534");
        expect_load("{\"prolog_dir\": ", 0600, 0, -EBADMSG, "not valid JSON");
        expect_load("[1, 2]", 0600, 0, -EBADMSG, "not a JSON object");
        expect_load("{\"prolog_dir\": \"relative/p.d\"}", 0600, 0, -EBADMSG,
                    "'prolog_dir' must be an absolute path");
        expect_load("{\"epilog_dir\": \"/a/../etc\"}", 0600, 0, -EBADMSG, "'epilog_dir'");
        expect_load("{\"prolog_dir\": 5}", 0600, 0, -EBADMSG, "'prolog_dir'");
        expect_load("{\"script_timeout_usec\": -1}", 0600, 0, -EBADMSG, "'script_timeout_usec'");
        expect_load("{\"script_timeout_usec\": \"60\"}", 0600, 0, -EBADMSG, "'script_timeout_usec'");
        expect_load("{\"total_timeout_usec\": 1e30}", 0600, 0, -EBADMSG, "'total_timeout_usec'");
        expect_load("{\"output_limit\": 999999999999}", 0600, 0, -EBADMSG, "'output_limit'");
        expect_load("{\"on_daemon_unreachable\": \"maybe\"}", 0600, 0, -EBADMSG, "'on_daemon_unreachable'");
        memset(big, ' ', sizeof(big) - 3);
        big[0] = '{';
        big[sizeof(big) - 3] = '}';
        big[sizeof(big) - 2] = '\0';
        expect_load(big, 0600, 0, -EBADMSG, "larger than");
        {
                _cleanup_free_ char *p = write_file("{\"a\":\0\"b\"}", 10, 0600, 0), *e = NULL;
                PrologSettings s;

                ck_assert_int_eq(prolog_settings_load(p, &s, &e), -EBADMSG);
                ck_assert_ptr_nonnull(strstr(e, "NUL"));
                prolog_settings_done(&s);
        }
        /* unknown keys are another version's: ignored */
        expect_load("{\"future_key\": true, \"kill_grace_usec\": 1000}", 0600, 0, 0, NULL);
}
END_TEST

int main(void) {
        Suite *s = suite_create("prolog-reason");
        TCase *pure = tcase_create("pure"), *file = tcase_create("settings");

        tcase_add_test(pure, test_last_line);
        tcase_add_test(pure, test_reason);
        tcase_add_test(pure, test_reason_bounded);
        tcase_add_test(pure, test_script_timeout);
        suite_add_tcase(s, pure);
        tcase_add_checked_fixture(file, setup, teardown);
        tcase_add_test(file, test_settings_round_trip);
        tcase_add_test(file, test_settings_missing);
        tcase_add_test(file, test_settings_hostile);
        suite_add_tcase(s, file);
        return check_run(s);
}
