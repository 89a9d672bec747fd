/* Child processes: capture, caps, timeouts, process-group kill, privileges. */
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
        ck_assert_int_eq(spawn_start(set, &spec, on_done, &x, NULL, NULL), 0);
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

/* A loop and a set, for the tests that drive children themselves. */
typedef struct Loop {
        sd_event *e;
        SpawnSet *set;
        char dir[32];
} Loop;

static void loop_init(Loop *l) {
        sigset_t ss;

        sigemptyset(&ss);
        sigaddset(&ss, SIGCHLD);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        ck_assert_int_ge(sd_event_new(&l->e), 0);
        ck_assert_int_eq(spawn_set_new(l->e, &l->set), 0);
        strcpy(l->dir, "/tmp/sunkd-spawn-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(l->dir));
        ck_assert_int_eq(chmod(l->dir, 0755), 0); /* the cwd of children that drop to nobody */
}

static void loop_done(Loop *l) {
        char *cmd;

        ck_assert_uint_eq(spawn_n_running(l->set, NULL), 0);
        spawn_set_free(l->set);
        sd_event_unref(l->e);
        ck_assert_int_ge(asprintf(&cmd, "rm -rf %s", l->dir), 0);
        ck_assert_int_eq(system(cmd), 0);
        free(cmd);
}

static void loop_wait(Loop *l, Result *x) {
        while (!x->done)
                ck_assert_int_ge(sd_event_run(l->e, UINT64_MAX), 0);
}

/* Runs the loop until the child has created @name in the test's directory. */
static void loop_wait_file(Loop *l, const char *name) {
        char path[64];

        snprintf(path, sizeof(path), "%s/%s", l->dir, name);
        while (access(path, F_OK) < 0)
                ck_assert_int_ge(sd_event_run(l->e, 10 * USEC_PER_MSEC), 0);
}

/* /bin/sh -c @script in the test's directory. */
typedef struct Cmd {
        const char *argv[4];
        sunkd_spawn_spec spec;
} Cmd;

static void cmd_init(Cmd *c, Loop *l, const char *script) {
        static const char *const envp[] = { "PATH=/usr/bin:/bin", NULL };

        *c = (Cmd){ .argv = { "/bin/sh", "-c", script, NULL } };
        c->spec = (sunkd_spawn_spec){ .size = sizeof(c->spec),
                                      .argv = c->argv,
                                      .envp = envp,
                                      .uid = (uid_t) -1,
                                      .gid = (gid_t) -1,
                                      .cwd = l->dir };
}

static Result start_and_wait(Loop *l, const sunkd_spawn_spec *spec) {
        Result x = {};

        ck_assert_int_eq(spawn_start(l->set, spec, on_done, &x, NULL, NULL), 0);
        loop_wait(l, &x);
        ck_assert_int_eq(x.r, 0);
        return x;
}

START_TEST(test_kill_right_after_start) {
        Loop l;
        Cmd c;
        Result x = {};
        sunkd_child *child;

        loop_init(&l);
        cmd_init(&c, &l, "sleep 60; exit 7");
        ck_assert_int_eq(spawn_start(l.set, &c.spec, on_done, &x, NULL, &child), 0);
        ck_assert_int_eq(spawn_kill(child), 0);
        ck_assert_int_eq(spawn_kill(child), 0); /* again: nothing changes */
        loop_wait(&l, &x);
        ck_assert_int_eq(x.signal, SIGTERM);
        ck_assert(!x.timed_out);
        free(x.output);
        loop_done(&l);
}
END_TEST

START_TEST(test_kill_escalates_after_grace) {
        Loop l;
        Cmd c;
        Result x = {};
        sunkd_child *child;

        loop_init(&l);
        cmd_init(&c, &l, "trap '' TERM; touch ready; sleep 60; exit 7");
        c.spec.kill_grace_usec = 100 * USEC_PER_MSEC;
        ck_assert_int_eq(spawn_start(l.set, &c.spec, on_done, &x, NULL, &child), 0);
        loop_wait_file(&l, "ready");
        ck_assert_int_eq(spawn_kill(child), 0);
        loop_wait(&l, &x);
        ck_assert_int_eq(x.signal, SIGKILL);
        ck_assert(!x.timed_out);
        free(x.output);
        loop_done(&l);
}
END_TEST

START_TEST(test_kill_takes_grandchildren) {
        Loop l;
        Cmd c;
        Result x = {};
        sunkd_child *child;
        char path[64];
        FILE *f;
        int pid, n = 0, status;

        /* The subshell leaves its two sleeps orphaned in the child's group:
         * they come to us, so nobody else reaps them and their end is ours
         * to read. */
        ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
        loop_init(&l);
        cmd_init(&c, &l, "(sleep 60 & echo $! > pids; sleep 60 & echo $! >> pids); touch ready; sleep 60; exit 7");
        ck_assert_int_eq(spawn_start(l.set, &c.spec, on_done, &x, NULL, &child), 0);
        loop_wait_file(&l, "ready");
        ck_assert_int_eq(spawn_kill(child), 0);
        loop_wait(&l, &x);
        ck_assert_int_eq(x.signal, SIGTERM);
        snprintf(path, sizeof(path), "%s/pids", l.dir);
        ck_assert_ptr_nonnull(f = fopen(path, "re"));
        while (fscanf(f, "%d", &pid) == 1) {
                ck_assert_int_eq(waitpid(pid, &status, 0), pid);
                ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
                              "grandchild %d ended with status 0x%x", pid, status);
                n++;
        }
        fclose(f);
        ck_assert_int_eq(n, 2);
        free(x.output);
        loop_done(&l);
}
END_TEST

typedef struct OwnerCount {
        Loop *loop;
        const void *owner;
        unsigned calls, owner_left_at_call[4];
} OwnerCount;

static void on_idle(void *userdata) {
        OwnerCount *o = userdata;

        ck_assert_uint_lt(o->calls, ELEMENTSOF(o->owner_left_at_call));
        o->owner_left_at_call[o->calls++] = spawn_n_running(o->loop->set, o->owner);
}

START_TEST(test_stop_owner) {
        static const char owner_a, owner_b;
        Loop l;
        Cmd plain, stubborn, other;
        Result a1 = {}, a2 = {}, b = {};
        OwnerCount idle = { .loop = &l, .owner = &owner_a };

        loop_init(&l);
        spawn_set_idle_hook(l.set, on_idle, &idle);
        cmd_init(&plain, &l, "sleep 60; exit 7");
        cmd_init(&stubborn, &l, "trap '' TERM; touch ready; sleep 60; exit 7");
        stubborn.spec.kill_grace_usec = 100 * USEC_PER_MSEC;
        cmd_init(&other, &l, "sleep 60; exit 7");
        ck_assert_int_eq(spawn_start(l.set, &plain.spec, on_done, &a1, &owner_a, NULL), 0);
        ck_assert_int_eq(spawn_start(l.set, &stubborn.spec, on_done, &a2, &owner_a, NULL), 0);
        ck_assert_int_eq(spawn_start(l.set, &other.spec, on_done, &b, &owner_b, NULL), 0);
        loop_wait_file(&l, "ready");
        ck_assert_uint_eq(spawn_n_running(l.set, &owner_a), 2);

        spawn_stop_owner(l.set, &owner_a);
        loop_wait(&l, &a1);
        loop_wait(&l, &a2);
        ck_assert_int_eq(a1.signal, SIGTERM);
        ck_assert_int_eq(a2.signal, SIGKILL);
        ck_assert_uint_eq(idle.calls, 2);
        ck_assert_uint_eq(idle.owner_left_at_call[0], 1);
        ck_assert_uint_eq(idle.owner_left_at_call[1], 0);
        ck_assert(!b.done);
        ck_assert_uint_eq(spawn_n_running(l.set, &owner_b), 1);

        spawn_stop_owner(l.set, &owner_b);
        loop_wait(&l, &b);
        ck_assert_int_eq(b.signal, SIGTERM);
        ck_assert_uint_eq(idle.calls, 3);
        free(a1.output);
        free(a2.output);
        free(b.output);
        loop_done(&l);
}
END_TEST

START_TEST(test_supplementary_groups) {
        static const gid_t root_groups[] = { 4242 }, groups[] = { 1234, 5678 };
        Loop l;
        Cmd c;
        Result x;

        if (getuid() != 0) {
                ck_abort_msg("this test needs root to drop privileges (run make check as root)");
                return;
        }
        /* Groups of our own, which a dropped child must not inherit. */
        ck_assert_int_eq(setgroups(ELEMENTSOF(root_groups), root_groups), 0);
        loop_init(&l);
        cmd_init(&c, &l, "id -u; id -g; id -G");
        c.spec.uid = 65534;
        c.spec.gid = 65534;
        x = start_and_wait(&l, &c.spec);
        ck_assert_str_eq(x.output, "65534\n65534\n65534\n");
        free(x.output);

        c.spec.groups = groups;
        c.spec.n_groups = ELEMENTSOF(groups);
        x = start_and_wait(&l, &c.spec);
        ck_assert_str_eq(x.output, "65534\n65534\n65534 1234 5678\n");
        free(x.output);
        loop_done(&l);
}
END_TEST

START_TEST(test_short_spec) {
        const size_t size_1_0 = offsetof(sunkd_spawn_spec, input_len) + sizeof(size_t);
        Loop l;
        Cmd c;
        Result x;
        sunkd_spawn_spec *old;

        loop_init(&l);
        cmd_init(&c, &l, "cat; exit 3");
        c.spec.input = "short\n";
        c.spec.input_len = strlen(c.spec.input);
        c.spec.size = size_1_0;
        /* Exactly as long as a 1.0 module's spec, so reading past it is caught. */
        ck_assert_ptr_nonnull(old = malloc(size_1_0));
        memcpy(old, &c.spec, size_1_0);
        x = start_and_wait(&l, old);
        ck_assert_int_eq(x.exit_code, 3);
        ck_assert_str_eq(x.output, "short\n");
        free(x.output);
        free(old);

        /* A newer module's longer spec: the fields we do not know are ignored. */
        struct {
                sunkd_spawn_spec spec;
                char future[64];
        } longer = { .spec = c.spec };
        memset(longer.future, 0xff, sizeof(longer.future));
        longer.spec.size = sizeof(longer);
        x = start_and_wait(&l, &longer.spec);
        ck_assert_int_eq(x.exit_code, 3);
        free(x.output);
        loop_done(&l);
}
END_TEST

START_TEST(test_stdin_closed_in_parent) {
        /* The daemon's fd 0 free: the input memfd lands there first. */
        close(STDIN_FILENO);
        Result x = run("cat; ls /proc/self/fd | wc -l", 0, 0, (uid_t) -1, "hello\n");
        ck_assert_str_eq(x.output, "hello\n4\n");
        free(x.output);
}
END_TEST

static const gid_t some_groups[] = { 1, 2 };

static void size_zero(sunkd_spawn_spec *s) {
        s->size = 0;
}
static void size_pointer(sunkd_spawn_spec *s) {
        s->size = sizeof(void *);
}
static void size_below_1_0(sunkd_spawn_spec *s) {
        s->size = offsetof(sunkd_spawn_spec, input_len);
}
static void size_huge(sunkd_spawn_spec *s) {
        s->size = SIZE_MAX;
        s->argv = NULL;
}
static void groups_without_drop(sunkd_spawn_spec *s) {
        s->groups = some_groups;
        s->n_groups = 2;
}
static void groups_null(sunkd_spawn_spec *s) {
        s->uid = s->gid = 65534;
        s->n_groups = 2;
}
static void groups_too_many(sunkd_spawn_spec *s) {
        s->uid = s->gid = 65534;
        s->groups = some_groups;
        s->n_groups = NGROUPS_MAX + 1;
}
static void groups_overflow(sunkd_spawn_spec *s) {
        s->uid = s->gid = 65534;
        s->groups = some_groups;
        s->n_groups = SIZE_MAX;
}
static void drop_keeps_gid(sunkd_spawn_spec *s) {
        s->uid = 65534;
        s->gid = (gid_t) -1;
}
static void timeout_huge(sunkd_spawn_spec *s) {
        s->timeout_usec = UINT64_MAX;
}
static void grace_huge(sunkd_spawn_spec *s) {
        s->kill_grace_usec = UINT64_MAX;
}
static void output_max_huge(sunkd_spawn_spec *s) {
        s->output_max = SIZE_MAX;
}
static void argv_empty(sunkd_spawn_spec *s) {
        static const char *const none[] = { NULL };
        s->argv = none;
}
static void argv_relative(sunkd_spawn_spec *s) {
        static const char *const rel[] = { "true", NULL };
        s->argv = rel;
}

START_TEST(test_hostile_spec) {
        static void (*const edits[])(sunkd_spawn_spec * s) = {
                size_zero,   size_pointer,    size_below_1_0,  size_huge,      groups_without_drop,
                groups_null, groups_too_many, groups_overflow, drop_keeps_gid, timeout_huge,
                grace_huge,  output_max_huge, argv_empty,      argv_relative,
        };
        static const char *const argv[] = { "/bin/true", NULL };
        const sunkd_spawn_spec ok = {
                .size = sizeof(ok), .argv = argv, .uid = (uid_t) -1, .gid = (gid_t) -1
        };
        Loop l;
        Result x = {};

        loop_init(&l);
        for (size_t i = 0; i < ELEMENTSOF(edits); i++) {
                sunkd_spawn_spec spec = ok;
                sunkd_child *child = NULL;

                edits[i](&spec);
                ck_assert_msg(spawn_start(l.set, &spec, on_done, &x, NULL, &child) == -EINVAL,
                              "case %zu accepted", i);
                ck_assert_ptr_null(child);
        }
        ck_assert_int_eq(spawn_start(l.set, NULL, on_done, &x, NULL, NULL), -EINVAL);
        ck_assert_int_eq(spawn_start(l.set, &ok, NULL, &x, NULL, NULL), -EINVAL);
        ck_assert(!x.done);
        x = start_and_wait(&l, &ok);
        ck_assert_int_eq(x.exit_code, 0);
        free(x.output);
        loop_done(&l);
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
        ck_assert_int_eq(spawn_start(set, &spec, on_done, &x, NULL, NULL), -EINVAL);
        spec.argv = NULL;
        ck_assert_int_eq(spawn_start(set, &spec, on_done, &x, NULL, NULL), -EINVAL);
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
        tcase_add_test(tc, test_hostile_spec);
        tcase_add_test(tc, test_short_spec);
        tcase_add_test(tc, test_stdin_closed_in_parent);
        tcase_add_test(tc, test_kill_right_after_start);
        tcase_add_test(tc, test_kill_escalates_after_grace);
        tcase_add_test(tc, test_kill_takes_grandchildren);
        tcase_add_test(tc, test_stop_owner);
        tcase_add_test(tc, test_supplementary_groups);
        suite_add_tcase(s, tc);
        return check_run(s);
}
