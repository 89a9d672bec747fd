/* Child processes: capture, caps, timeouts, process-group kill, privileges. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
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
        pid_t pid;
        int exit_code, signal;
        bool timed_out, truncated, err_truncated;
        char *output, *err_output;
        size_t len, err_len;
        uint64_t duration;
} Result;

static void on_done(void *userdata, int r, const sunkd_spawn_result *res) {
        Result *x = userdata;
        x->done = true;
        x->r = r;
        ck_assert_ptr_nonnull(res);
        x->pid = res->pid;
        x->exit_code = res->exit_code;
        x->signal = res->signal;
        x->timed_out = res->timed_out;
        x->truncated = res->output_truncated;
        x->output = strndup(res->output, res->output_len);
        x->len = res->output_len;
        x->duration = res->duration_usec;
        ck_assert_int_eq(res->output[res->output_len], '\0');
        ck_assert_ptr_nonnull(res->err_output);
        x->err_truncated = res->err_output_truncated;
        x->err_output = strndup(res->err_output, res->err_output_len);
        x->err_len = res->err_output_len;
        ck_assert_int_eq(res->err_output[res->err_output_len], '\0');
}

static void result_clear(Result *x) {
        free(x->output);
        free(x->err_output);
        *x = (Result){};
}

static Result run_flags(const char *script, uint64_t timeout, size_t max, uid_t uid, const char *input,
                        unsigned flags) {
        sigset_t ss;
        sd_event *e;
        SpawnSet *set;
        Result x = {};
        const char *argv[] = { "/bin/sh", "-c", script, NULL };
        const char *envp[] = { "PATH=/usr/bin:/bin", "SUNKD_TEST=1", NULL };
        sunkd_spawn_spec spec = { .size = sizeof(spec),
                                  .argv = argv,
                                  .envp = envp,
                                  .timeout_usec = timeout,
                                  .output_max = max,
                                  .uid = uid,
                                  .gid = uid,
                                  .input = input,
                                  .input_len = input ? strlen(input) : 0,
                                  .flags = flags };

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

/* stdout and stderr merged, as every spec got them before ABI 1.3. */
static Result run(const char *script, uint64_t timeout, size_t max, uid_t uid, const char *input) {
        return run_flags(script, timeout, max, uid, input, SUNKD_SPAWN_MERGE_STDERR);
}

START_TEST(test_capture) {
        Result x = run("echo out; echo err >&2; echo \"$SUNKD_TEST\"; exit 3", 0, 0, (uid_t) -1, NULL);
        ck_assert_int_eq(x.r, 0);
        ck_assert_int_eq(x.exit_code, 3);
        ck_assert_int_eq(x.signal, 0);
        ck_assert_str_eq(x.output, "out\nerr\n1\n");
        ck_assert_str_eq(x.err_output, "");
        ck_assert(!x.truncated);
        result_clear(&x);
}
END_TEST

/* A 1.3 spec without the merge flag: what went to stderr is not in output. */
START_TEST(test_stderr_apart) {
        Result x = run_flags("echo out; echo err >&2; echo out2; echo err2 >&2; exit 3", 0, 0, (uid_t) -1,
                             NULL, 0);
        ck_assert_int_eq(x.r, 0);
        ck_assert_int_eq(x.exit_code, 3);
        ck_assert_str_eq(x.output, "out\nout2\n");
        ck_assert_str_eq(x.err_output, "err\nerr2\n");
        ck_assert(!x.truncated && !x.err_truncated);
        result_clear(&x);

        /* Each stream has its own cap and keeps its own tail. */
        x = run_flags("seq 1 2000; seq 5001 7000 >&2; echo 'last words' >&2; exit 1", 0, 100, (uid_t) -1,
                      NULL, 0);
        ck_assert_uint_eq(x.len, 100);
        ck_assert_uint_eq(x.err_len, 100);
        ck_assert(x.truncated && x.err_truncated);
        ck_assert_msg(strstr(x.output, "\n1999\n2000\n") && x.output[99] == '\n', "stdout tail: %s",
                      x.output);
        ck_assert_msg(strstr(x.err_output, "\n6999\n7000\nlast words\n") != NULL, "stderr tail: %s",
                      x.err_output);
        ck_assert_ptr_null(strstr(x.output, "last"));
        result_clear(&x);
}
END_TEST

/* The end of a long output is what tells why a script failed: that is kept. */
START_TEST(test_keeps_tail) {
        Result x = run_flags("seq 1 100000; echo 'the last line' >&2; exit 2", 0, 1000, (uid_t) -1, NULL, 0);
        char *all = NULL;
        size_t all_len = 0;
        FILE *f = open_memstream(&all, &all_len);

        for (int i = 1; i <= 100000; i++)
                fprintf(f, "%d\n", i);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(x.exit_code, 2);
        ck_assert_uint_eq(x.len, 1000);
        ck_assert(x.truncated);
        ck_assert_str_eq(x.output, all + all_len - 1000);
        free(all);
        ck_assert_str_eq(x.err_output, "the last line\n");
        ck_assert(!x.err_truncated);
        result_clear(&x);

        /* Exactly the cap: nothing dropped.  One byte more: the first one goes. */
        x = run_flags("printf 0123456789", 0, 10, (uid_t) -1, NULL, 0);
        ck_assert_str_eq(x.output, "0123456789");
        ck_assert(!x.truncated);
        result_clear(&x);
        x = run_flags("printf 0123456789a", 0, 10, (uid_t) -1, NULL, 0);
        ck_assert_str_eq(x.output, "123456789a");
        ck_assert(x.truncated);
        result_clear(&x);

        /* Many small writes, each wrapping around the ring. */
        x = run_flags("for i in $(seq 1 300); do echo $i; done", 0, 10, (uid_t) -1, NULL, 0);
        ck_assert_str_eq(x.output, "8\n299\n300\n");
        ck_assert(x.truncated);
        result_clear(&x);

        /* Merged: the tail of both streams together. */
        x = run("seq 1 5000; echo 'failed: no GPU' >&2; exit 1", 0, 64, (uid_t) -1, NULL);
        ck_assert_uint_eq(x.len, 64);
        ck_assert_msg(strstr(x.output, "\n4999\n5000\nfailed: no GPU\n") != NULL, "merged tail: %s",
                      x.output);
        result_clear(&x);
}
END_TEST

START_TEST(test_input_and_fds) {
        Result x = run("cat; ls /proc/self/fd | wc -l", 0, 0, (uid_t) -1, "hello\n");
        /* stdin, stdout, stderr and the fd ls opens: nothing leaked from the parent. */
        ck_assert_str_eq(x.output, "hello\n4\n");
        result_clear(&x);
}
END_TEST

START_TEST(test_cap) {
        Result x = run("head -c 100000 /dev/zero | tr '\\0' x", 0, 1000, (uid_t) -1, NULL);
        ck_assert_uint_eq(x.len, 1000);
        ck_assert(x.truncated);
        ck_assert_int_eq(x.exit_code, 0);
        result_clear(&x);
}
END_TEST

START_TEST(test_drop_privileges) {
        if (getuid() != 0) {
                ck_abort_msg("this test needs root to drop privileges (run make check as root)");
                return;
        }
        Result x = run("id -u; id -g", 0, 0, 65534, NULL);
        ck_assert_str_eq(x.output, "65534\n65534\n");
        result_clear(&x);
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

/* Polls @fd for @events until @deadline (CLOCK_MONOTONIC usec); fails the test past it. */
static short poll_until(int fd, short events, uint64_t deadline) {
        struct pollfd pfd = { .fd = fd, .events = events };

        for (;;) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                ck_assert_msg(now < deadline, "deadline passed waiting on fd %d", fd);
                int n = poll(&pfd, 1, (int) ((deadline - now) / USEC_PER_MSEC) + 1);
                if (n > 0)
                        return pfd.revents;
                ck_assert_msg(n == 0 || errno == EINTR, "poll: %s", strerror(errno));
        }
}

START_TEST(test_timeout_kills_group) {
        uint64_t deadline;
        Loop l;
        Cmd c;
        Result x = {};
        char fifo[64], buf[16];
        int fd;

        loop_init(&l);
        snprintf(fifo, sizeof(fifo), "%s/held", l.dir);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        /* A FIFO's reader sees EOF once a writer has come and every writer has
         * gone: the shell hands its end to a grandchild in its group and closes
         * its own, so EOF means the grandchild is dead. */
        ck_assert_int_ge(fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC), 0);
        cmd_init(&c, &l, "exec 3>held; echo x >&3; (sleep 60; exit 0) & exec 3>&-; sleep 60");
        c.spec.timeout_usec = 200 * USEC_PER_MSEC;
        ck_assert_int_eq(spawn_start(l.set, &c.spec, on_done, &x, NULL, NULL), 0);
        /* The loop is not run until the grandchild holds the FIFO, so the
         * timeout cannot fire before it is there to be killed. */
        deadline = now_usec(CLOCK_MONOTONIC) + 20 * USEC_PER_SEC;
        ck_assert(poll_until(fd, POLLIN, deadline) & POLLIN);
        ck_assert_int_eq(read(fd, buf, sizeof(buf)), 2);
        loop_wait(&l, &x);
        ck_assert(x.timed_out);
        ck_assert_int_eq(x.signal, SIGTERM);
        ck_assert_uint_lt(x.duration, 2 * USEC_PER_SEC);
        /* It dies with the group, well before its sleep would end. */
        ck_assert(poll_until(fd, POLLIN, deadline) & POLLHUP);
        ck_assert_int_eq(read(fd, buf, sizeof(buf)), 0);
        close(fd);
        result_clear(&x);
        loop_done(&l);
}
END_TEST

/* A file in the test's directory with @text and @mode; its path in @path. */
static void make_file(Loop *l, const char *name, const char *text, mode_t mode, char *path, size_t size) {
        FILE *f;

        snprintf(path, size, "%s/%s", l->dir, name);
        ck_assert_ptr_nonnull(f = fopen(path, "we"));
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(chmod(path, mode), 0);
}

/* Runs @path without arguments; the program must never have run. */
static void expect_exec_failure(Loop *l, const char *path, const char *cwd, int error) {
        const char *argv[] = { path, NULL };
        sunkd_spawn_spec spec = { .size = sizeof(spec),
                                  .argv = argv,
                                  .uid = (uid_t) -1,
                                  .gid = (gid_t) -1,
                                  .cwd = cwd ?: l->dir };
        Result x = {};

        ck_assert_int_eq(spawn_start(l->set, &spec, on_done, &x, NULL, NULL), 0);
        loop_wait(l, &x);
        ck_assert_msg(x.r == -error, "%s: r=%d (%s), expected -%s", path, x.r, strerror(-x.r),
                      strerrorname_np(error));
        ck_assert_int_gt(x.pid, 0);
        ck_assert_int_eq(x.exit_code, 0);
        ck_assert_int_eq(x.signal, 0);
        ck_assert_str_eq(x.output, "");
        ck_assert_str_eq(x.err_output, "");
        ck_assert_uint_eq(spawn_n_running(l->set, NULL), 0);
        result_clear(&x);
}

START_TEST(test_exec_failures) {
        char plain[64], garbage[64], badinterp[64], missing[64], script[64];
        Loop l;
        Result x;

        loop_init(&l);
        snprintf(missing, sizeof(missing), "%s/missing", l.dir);
        expect_exec_failure(&l, missing, NULL, ENOENT);
        make_file(&l, "plain", "#!/bin/sh\nexit 0\n", 0644, plain, sizeof(plain));
        expect_exec_failure(&l, plain, NULL, EACCES);
        expect_exec_failure(&l, l.dir, NULL, EACCES); /* a directory */
        make_file(&l, "garbage", "no program, no #! line\n", 0755, garbage, sizeof(garbage));
        expect_exec_failure(&l, garbage, NULL, ENOEXEC);
        /* The kernel says ENOENT for a missing interpreter, as for a missing program. */
        make_file(&l, "badinterp", "#!/nonexistent\nexit 0\n", 0755, badinterp, sizeof(badinterp));
        expect_exec_failure(&l, badinterp, NULL, ENOENT);
        /* A cwd that is not there: the program never ran either. */
        expect_exec_failure(&l, "/bin/true", "/nonexistent-sunkd-dir", ENOENT);

        /* A script that exits 127 or 126 itself ran: that is its exit status. */
        make_file(&l, "script", "#!/bin/sh\necho 'command not found' >&2\nexit 127\n", 0755, script,
                  sizeof(script));
        x = start_and_wait(&l, &(sunkd_spawn_spec){ .size = sizeof(sunkd_spawn_spec),
                                                    .argv = (const char *const[]){ script, NULL },
                                                    .uid = (uid_t) -1,
                                                    .gid = (gid_t) -1 });
        ck_assert_int_eq(x.exit_code, 127);
        ck_assert_str_eq(x.err_output, "command not found\n");
        result_clear(&x);
        make_file(&l, "script", "#!/bin/sh\nexit 126\n", 0755, script, sizeof(script));
        x = start_and_wait(&l, &(sunkd_spawn_spec){ .size = sizeof(sunkd_spawn_spec),
                                                    .argv = (const char *const[]){ script, NULL },
                                                    .uid = (uid_t) -1,
                                                    .gid = (gid_t) -1 });
        ck_assert_int_eq(x.exit_code, 126);
        result_clear(&x);
        loop_done(&l);
}
END_TEST

/* Root may exec only what has an x bit; a dropped child only what it may reach. */
START_TEST(test_exec_failure_after_drop) {
        char path[64];
        const char *argv[] = { path, NULL };
        Loop l;
        Result x = {};

        if (getuid() != 0) {
                ck_abort_msg("this test needs root to drop privileges (run make check as root)");
                return;
        }
        loop_init(&l);
        make_file(&l, "rootonly", "#!/bin/sh\nexit 0\n", 0700, path, sizeof(path));
        sunkd_spawn_spec spec = {
                .size = sizeof(spec), .argv = argv, .uid = 65534, .gid = 65534, .cwd = l.dir
        };
        ck_assert_int_eq(spawn_start(l.set, &spec, on_done, &x, NULL, NULL), 0);
        loop_wait(&l, &x);
        ck_assert_int_eq(x.r, -EACCES);
        result_clear(&x);
        spec.uid = spec.gid = (uid_t) -1;
        x = start_and_wait(&l, &spec);
        ck_assert_int_eq(x.exit_code, 0);
        result_clear(&x);
        loop_done(&l);
}
END_TEST

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
        result_clear(&x);
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
        result_clear(&x);
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
        cmd_init(&c, &l,
                 "(sleep 60 & echo $! > pids; sleep 60 & echo $! >> pids); touch ready; sleep 60; exit 7");
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
        result_clear(&x);
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
        result_clear(&a1);
        result_clear(&a2);
        result_clear(&b);
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
        result_clear(&x);

        c.spec.groups = groups;
        c.spec.n_groups = ELEMENTSOF(groups);
        x = start_and_wait(&l, &c.spec);
        ck_assert_str_eq(x.output, "65534\n65534\n65534 1234 5678\n");
        result_clear(&x);
        loop_done(&l);
}
END_TEST

START_TEST(test_short_spec) {
        const size_t size_1_0 = offsetof(sunkd_spawn_spec, input_len) + sizeof(size_t);
        const size_t size_1_2 = offsetof(sunkd_spawn_spec, n_groups) + sizeof(size_t);
        Loop l;
        Cmd c;
        Result x;
        void *old; /* an older module's spec: shorter than ours, so not of our type */

        loop_init(&l);
        cmd_init(&c, &l, "cat; echo err >&2; exit 3");
        c.spec.input = "short\n";
        c.spec.input_len = strlen(c.spec.input);
        c.spec.size = size_1_0;
        /* Exactly as long as a 1.0 module's spec, so reading past it is caught.
         * Such a module gets stderr in output, as it always did. */
        ck_assert_ptr_nonnull(old = malloc(size_1_0));
        memcpy(old, &c.spec, size_1_0);
        x = start_and_wait(&l, old);
        ck_assert_int_eq(x.exit_code, 3);
        ck_assert_str_eq(x.output, "short\nerr\n");
        ck_assert_str_eq(x.err_output, "");
        result_clear(&x);
        free(old);

        /* So does a 1.2 module, whose spec ends with n_groups. */
        c.spec.size = size_1_2;
        ck_assert_ptr_nonnull(old = malloc(size_1_2));
        memcpy(old, &c.spec, size_1_2);
        x = start_and_wait(&l, old);
        ck_assert_str_eq(x.output, "short\nerr\n");
        ck_assert_str_eq(x.err_output, "");
        result_clear(&x);
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
        result_clear(&x);
        loop_done(&l);
}
END_TEST

START_TEST(test_stdin_closed_in_parent) {
        /* The daemon's fd 0 free: the input memfd lands there first. */
        close(STDIN_FILENO);
        Result x = run("cat; ls /proc/self/fd | wc -l", 0, 0, (uid_t) -1, "hello\n");
        ck_assert_str_eq(x.output, "hello\n4\n");
        result_clear(&x);
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
static void flags_unknown(sunkd_spawn_spec *s) {
        s->flags = 1u << 7;
}
static void argv_relative(sunkd_spawn_spec *s) {
        static const char *const rel[] = { "true", NULL };
        s->argv = rel;
}

START_TEST(test_hostile_spec) {
        static void (*const edits[])(sunkd_spawn_spec * s) = {
                size_zero,   size_pointer,    size_below_1_0,  size_huge,      groups_without_drop,
                groups_null, groups_too_many, groups_overflow, drop_keeps_gid, timeout_huge,
                grace_huge,  output_max_huge, argv_empty,      argv_relative,  flags_unknown,
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
        result_clear(&x);
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
        result_clear(&y);
}
END_TEST

int main(void) {
        Suite *s = suite_create("spawn");
        TCase *tc = tcase_create("spawn");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_capture);
        tcase_add_test(tc, test_stderr_apart);
        tcase_add_test(tc, test_keeps_tail);
        tcase_add_test(tc, test_exec_failures);
        tcase_add_test(tc, test_exec_failure_after_drop);
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
