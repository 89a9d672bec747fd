/* Child processes: capture, caps, timeouts, process-group kill, privileges. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"
#include "util/macro.h"
#include "util/time-util.h"
#include "../lib/check-run.h"

typedef struct Result {
        bool done;
        int r;
        int exit_code, signal;
        bool timed_out, truncated;
        char *output;
        size_t len;
        uint64_t duration;
} Result;

static void on_done(void *userdata, int r, const sunkd_spawn_result *res) {
        Result *x = userdata;
        x->done = true;
        x->r = r;
        if (r < 0)
                return;
        x->exit_code = res->exit_code;
        x->signal = res->signal;
        x->timed_out = res->timed_out;
        x->truncated = res->output_truncated;
        x->output = strndup(res->output, res->output_len);
        x->len = res->output_len;
        x->duration = res->duration_usec;
        ck_assert_int_eq(res->output[res->output_len], '\0');
}

static Result run(const char *script, uint64_t timeout, size_t max, uid_t uid, const char *input) {
        sigset_t ss;
        sd_event *e;
        SpawnSet *set;
        Result x = {};
        const char *argv[] = { "/bin/sh", "-c", script, NULL };
        const char *envp[] = { "PATH=/usr/bin:/bin", "SUNKD_TEST=1", NULL };
        sunkd_spawn_spec spec = { .size = sizeof(spec), .argv = argv, .envp = envp, .timeout_usec = timeout,
                                  .output_max = max, .uid = uid, .gid = uid, .input = input,
                                  .input_len = input ? strlen(input) : 0 };

        sigemptyset(&ss);
        sigaddset(&ss, SIGCHLD);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(spawn_set_new(e, &set), 0);
        ck_assert_int_eq(spawn_start(set, &spec, on_done, &x, NULL), 0);
        for (int i = 0; i < 2000 && !x.done; i++)
                ck_assert_int_ge(sd_event_run(e, 10 * USEC_PER_MSEC), 0);
        ck_assert(x.done);
        ck_assert_uint_eq(spawn_n_running(set, NULL), 0);
        spawn_set_free(set);
        sd_event_unref(e);
        return x;
}

START_TEST(test_capture) {
        Result x = run("echo out; echo err >&2; echo \"$SUNKD_TEST\"; exit 3", 0, 0, (uid_t) -1, NULL);
        ck_assert_int_eq(x.r, 0);
        ck_assert_int_eq(x.exit_code, 3);
        ck_assert_int_eq(x.signal, 0);
        ck_assert_str_eq(x.output, "out\nerr\n1\n");
        ck_assert(!x.truncated);
        free(x.output);
}
END_TEST

START_TEST(test_input_and_fds) {
        Result x = run("cat; ls /proc/self/fd | wc -l", 0, 0, (uid_t) -1, "hello\n");
        /* stdin, stdout, stderr and the fd ls opens: nothing leaked from the parent. */
        ck_assert_str_eq(x.output, "hello\n4\n");
        free(x.output);
}
END_TEST

START_TEST(test_cap) {
        Result x = run("head -c 100000 /dev/zero | tr '\\0' x", 0, 1000, (uid_t) -1, NULL);
        ck_assert_uint_eq(x.len, 1000);
        ck_assert(x.truncated);
        ck_assert_int_eq(x.exit_code, 0);
        free(x.output);
}
END_TEST

START_TEST(test_timeout_kills_group) {
        char marker[] = "/tmp/sunkd-spawn-XXXXXX";
        int fd = mkstemp(marker);
        char *script;
        close(fd);
        /* The grandchild would touch the marker after 3s if it survived. */
        ck_assert_int_ge(asprintf(&script, "rm -f %s; (sleep 3; touch %s) & sleep 30", marker, marker), 0);
        Result x = run(script, 200 * USEC_PER_MSEC, 0, (uid_t) -1, NULL);
        ck_assert(x.timed_out);
        ck_assert_int_eq(x.signal, SIGTERM);
        ck_assert_uint_lt(x.duration, 2 * USEC_PER_SEC);
        sleep(4);
        ck_assert_int_ne(access(marker, F_OK), 0);
        free(script);
        free(x.output);
}
END_TEST

START_TEST(test_drop_privileges) {
        if (getuid() != 0) {
                ck_abort_msg("this test needs root to drop privileges (run make check as root)");
                return;
        }
        Result x = run("id -u; id -g", 0, 0, 65534, NULL);
        ck_assert_str_eq(x.output, "65534\n65534\n");
        free(x.output);
}
END_TEST

START_TEST(test_bad_spec) {
        sd_event *e;
        SpawnSet *set;
        const char *rel[] = { "sh", NULL };
        Result x = {};
        sunkd_spawn_spec spec = { .size = sizeof(spec), .argv = rel, .uid = (uid_t) -1 };

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(spawn_set_new(e, &set), 0);
        ck_assert_int_eq(spawn_start(set, &spec, on_done, &x, NULL), -EINVAL);
        spec.argv = NULL;
        ck_assert_int_eq(spawn_start(set, &spec, on_done, &x, NULL), -EINVAL);
        spawn_set_free(set);
        sd_event_unref(e);

        Result y = run("exec /nonexistent", 0, 0, (uid_t) -1, NULL);
        ck_assert_int_eq(y.exit_code, 127);
        free(y.output);
}
END_TEST

int main(void) {
        Suite *s = suite_create("spawn");
        TCase *tc = tcase_create("spawn");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_capture);
        tcase_add_test(tc, test_input_and_fds);
        tcase_add_test(tc, test_cap);
        tcase_add_test(tc, test_timeout_kills_group);
        tcase_add_test(tc, test_drop_privileges);
        tcase_add_test(tc, test_bad_spec);
        suite_add_tcase(s, tc);
        return check_run(s);
}
