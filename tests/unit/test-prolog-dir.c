/* The prolog directory scan and the client's own run of a script: order,
 * the name filter, refusals, ConfigMap symlinks and their swaps, timeouts
 * that kill what a script started, the output tail, exec failures and
 * hostile names.  Runs as root: it hands files to nobody (uid 65534). */
/* open() is interposed below: not fcntl.h's fortified inline. */
#undef _FORTIFY_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/macro.h"
#include "../../modules/prolog/prolog-dir.h"
#include "../../modules/prolog/prolog-exec.h"
#include "../../modules/prolog/prolog-local.h"
#include "../lib/check-run.h"
#include "../lib/tmp-tree.h"

#define NOBODY 65534

static void script(const char *rel, const char *body) {
        _cleanup_free_ char *text = NULL;

        ck_assert_int_ge(asprintf(&text, "#!/bin/sh\n%s\n", body), 0);
        tmp_file_as(rel, text, 0755, 0);
}

/* Lists <tmp_tree>/@rel: @r expected; the scripts in *ret. */
static size_t list(const char *rel, int r, PrologScript **ret, char **ret_error) {
        _cleanup_free_ char *d = tmp_at(rel);
        size_t n = 99;
        int got = prolog_dir_list(d, PROLOG_KIND_PROLOG, ret, &n, ret_error);

        ck_assert_msg(got == r, "%s: got %d (%s), expected %d", d, got, *ret_error ?: "", r);
        return n;
}

/* The entry @name of @s (@n of them). */
static const PrologScript *entry(const PrologScript *s, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(s[i].name, name))
                        return &s[i];
        ck_abort_msg("no entry '%s'", name);
        return NULL;
}

/* *@e is @msg with "@" standing for <tmp_tree>/@rel. */
static void expect_error(const char *e, const char *msg, const char *rel) {
        _cleanup_free_ char *p = tmp_at(rel), *want = calloc(1, strlen(msg) + strlen(p) + 1);
        const char *mark = strchr(msg, '@');

        ck_assert_ptr_nonnull(want);
        ck_assert_ptr_nonnull(mark);
        memcpy(want, msg, (size_t) (mark - msg));
        strcat(want, p);
        strcat(want, mark + 1);
        ck_assert_ptr_nonnull(e);
        ck_assert_msg(streq(e, want), "got '%s', expected '%s'", e, want);
}

static int run(const PrologScript *s, uint64_t timeout, size_t limit, PrologExecResult *res, char **err) {
        const PrologExecSpec spec = { .timeout_usec = timeout,
                                      .kill_grace_usec = 50 * USEC_PER_MSEC,
                                      .output_limit = limit };

        return prolog_exec(s, &spec, res, err);
}

static bool exists(const char *rel) {
        _cleanup_free_ char *p = tmp_at(rel);

        return access(p, F_OK) == 0;
}

/* open() with a hook: the next open of swap_path runs swap_fn() first, so
 * a test replaces a script between the checks of its path and the open,
 * where no real race could be timed. */
static const char *swap_path;
static void (*swap_fn)(void);

int open(const char *path, int flags, ...) {
        static int (*real_open)(const char *, int, ...);
        mode_t mode = 0;

        if (flags & (O_CREAT | O_TMPFILE)) {
                va_list ap;

                va_start(ap, flags);
                mode = va_arg(ap, mode_t);
                va_end(ap);
        }
        if (!real_open)
                real_open = (int (*)(const char *, int, ...)) dlsym(RTLD_NEXT, "open");
        if (swap_path && streq(path, swap_path)) {
                swap_path = NULL;
                swap_fn();
        }
        return real_open(path, flags, mode);
}

static void setup(void) {
        ck_assert_msg(geteuid() == 0, "must run as root: the tests hand files to uid %d", NOBODY);
        tmp_tree_make("test-prolog-dir");
        tmp_mkdir_as("d", 0755, 0);
}

static void teardown(void) {
        tmp_tree_remove();
}

START_TEST(test_order) {
        const char *names[] = { "b", "a", "B", "10-x", "2-y", "a.b", "_z", "a-" };
        const char *want[] = { "10-x", "2-y", "B", "_z", "a", "a-", "a.b", "b" };
        _cleanup_free_ char *e = NULL;
        PrologScript *s = NULL;
        size_t n;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_free_ char *rel = NULL;

                ck_assert_int_ge(asprintf(&rel, "d/%s", names[i]), 0);
                script(rel, "true");
        }
        n = list("d", 0, &s, &e);
        ck_assert_uint_eq(n, ELEMENTSOF(want));
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *p = NULL;

                ck_assert_str_eq(s[i].name, want[i]);
                ck_assert_int_ge(asprintf(&p, "%s/d/%s", tmp_tree, want[i]), 0);
                ck_assert_str_eq(s[i].path, p);
                ck_assert_int_eq(s[i].kind, PROLOG_KIND_PROLOG);
        }
        prolog_scripts_free(s, n);
}
END_TEST

START_TEST(test_filter) {
        const char *skipped[] = { ".hidden",     "x~",         "x.dpkg-old", "x.dpkg-new",
                                  "x.dpkg-dist", "x.dpkg-tmp", "x.rpmnew",   "x.rpmsave",
                                  "x.rpmorig",   "x.disabled", "..data" };
        _cleanup_free_ char *e = NULL, *fifo = tmp_at("d/fifo");
        PrologScript *s = NULL;
        size_t n;

        for (size_t i = 0; i < ELEMENTSOF(skipped); i++) {
                _cleanup_free_ char *rel = NULL;

                ck_assert_msg(prolog_name_skipped(skipped[i]), "%s", skipped[i]);
                ck_assert_int_ge(asprintf(&rel, "d/%s", skipped[i]), 0);
                script(rel, "true");
        }
        ck_assert(!prolog_name_skipped("x.disabled.sh"));
        ck_assert(!prolog_name_skipped("dpkg-x"));
        ck_assert(!prolog_name_skipped("a~b"));
        tmp_file_as("d/plain", "#!/bin/sh\n", 0644, 0);
        /* not executable: no script, even if others could write it */
        tmp_file_as("d/plain-writable", "#!/bin/sh\n", 0666, NOBODY);
        tmp_mkdir_as("d/subdir", 0755, 0);
        ck_assert_int_eq(mkfifo(fifo, 0755), 0);
        tmp_link_as("nowhere", "d/dangling", 0);
        tmp_link_as("subdir", "d/link-to-dir", 0);
        script("d/ok", "true");
        n = list("d", 0, &s, &e);
        /* skipped by name and directories: quietly; the rest listed, with why
         * it is not run, so that no script is dropped without a word */
        ck_assert_uint_eq(n, 5);
        ck_assert_str_eq(s[0].name, "dangling");
        ck_assert_str_eq(s[0].why, "a dangling symlink");
        ck_assert_str_eq(s[1].name, "fifo");
        ck_assert_ptr_nonnull(strstr(s[1].why, "not a regular file"));
        ck_assert_str_eq(s[2].name, "ok");
        ck_assert_ptr_null(s[2].why);
        ck_assert_ptr_nonnull(s[2].path);
        ck_assert_str_eq(s[3].name, "plain");
        ck_assert_str_eq(s[3].why, "not executable (mode 0644)");
        ck_assert_str_eq(s[4].name, "plain-writable");
        ck_assert_str_eq(s[4].why, "not executable (mode 0666)");
        for (size_t i = 0; i < n; i++) {
                ck_assert_int_eq(s[i].error, 0);
                ck_assert(i == 2 || !s[i].path);
        }
        ck_assert_ptr_null(prolog_scripts_refused(s, n));
        prolog_scripts_free(s, n);
}
END_TEST

/* A missing directory is a mistake (a typo in sunkd.yaml), never an empty
 * one: a run that finds none fails. */
START_TEST(test_missing_dir) {
        _cleanup_free_ char *e = NULL;
        PrologScript *s = NULL;

        list("absent", -ENOENT, &s, &e);
        expect_error(e, "prolog directory '@' does not exist", "absent");
        ck_assert_ptr_null(s);
        e = mfree(e);
        ck_assert_uint_eq(list("d", 0, &s, &e), 0);
        ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_dir_refused) {
        _cleanup_free_ char *e = NULL;
        PrologScript *s = NULL;

        tmp_mkdir_as("gw", 0775, 0);
        script("gw/a", "true");
        list("gw", -EPERM, &s, &e);
        expect_error(e, "refusing prolog directory '@': group- or world-writable (owner uid 0, mode 0775)",
                     "gw");
        tmp_mkdir_as("ww", 0757, 0);
        list("ww", -EPERM, &s, &e);
        expect_error(e, "refusing prolog directory '@': group- or world-writable (owner uid 0, mode 0757)",
                     "ww");
        tmp_mkdir_as("nobody", 0755, NOBODY);
        list("nobody", -EPERM, &s, &e);
        expect_error(e, "refusing prolog directory '@': owned by uid 65534, not root (mode 0755)", "nobody");
        tmp_file_as("file", "", 0644, 0);
        list("file", -ENOTDIR, &s, &e);
        expect_error(e, "refusing prolog directory '@': not a directory (owner uid 0, mode 0644)", "file");
        /* a parent on the way counts too */
        tmp_mkdir_as("gw/sub", 0755, 0);
        list("gw/sub", -EPERM, &s, &e);
        ck_assert_ptr_nonnull(strstr(e, "group- or world-writable"));
        ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_script_refused) {
        _cleanup_free_ char *e = NULL, *bad = tmp_at("d/b-group");
        PrologScript *s = NULL;

        size_t n;

        script("d/a-good", "true");
        tmp_file_as("d/b-group", "#!/bin/sh\n", 0775, 0);
        n = list("d", 0, &s, &e);
        ck_assert_ptr_eq(prolog_scripts_refused(s, n), entry(s, n, "b-group"));
        ck_assert_int_eq(entry(s, n, "b-group")->error, -EPERM);
        ck_assert_ptr_null(entry(s, n, "b-group")->path);
        expect_error(entry(s, n, "b-group")->why,
                     "refusing prolog script '@': group- or world-writable (owner uid 0, mode 0775)",
                     "d/b-group");
        s = prolog_scripts_free(s, n);
        ck_assert_int_eq(chmod(bad, 0755), 0);
        ck_assert_int_eq(chown(bad, NOBODY, 0), 0);
        n = list("d", 0, &s, &e);
        expect_error(prolog_scripts_refused(s, n)->why,
                     "refusing prolog script '@': owned by uid 65534, not root (mode 0755)", "d/b-group");
        s = prolog_scripts_free(s, n);
        ck_assert_int_eq(chown(bad, 0, 0), 0);
        n = list("d", 0, &s, &e);
        ck_assert_uint_eq(n, 2);
        ck_assert_ptr_null(prolog_scripts_refused(s, n));
        s = prolog_scripts_free(s, n);
        /* a symlink to a file in a directory nobody owns */
        tmp_mkdir_as("theirs", 0755, NOBODY);
        script("theirs/x", "true");
        tmp_link_as("../theirs/x", "d/c-link", 0);
        n = list("d", 0, &s, &e);
        ck_assert_ptr_eq(prolog_scripts_refused(s, n), entry(s, n, "c-link"));
        ck_assert_ptr_nonnull(strstr(entry(s, n, "c-link")->why, "owned by uid 65534, not root"));
        ck_assert_ptr_nonnull(strstr(entry(s, n, "c-link")->why, "/theirs"));
        prolog_scripts_free(s, n);
}
END_TEST

/* d/10-a -> ..data/10-a, ..data -> ..v1: a ConfigMap mount. */
static void configmap(void) {
        tmp_mkdir_as("d/..v1", 0755, 0);
        script("d/..v1/10-a", "echo a-v1; echo \"$SUNKD_SCRIPT\" >&2");
        tmp_link_as("..v1", "d/..data", 0);
        tmp_link_as("..data/10-a", "d/10-a", 0);
}

/* ..data now points at ..v2, whose 10-a nobody should be able to run. */
static void swap_to_unchecked(void) {
        _cleanup_free_ char *tmp = tmp_at("d/..data_tmp"), *data = tmp_at("d/..data"), *evil = NULL;

        tmp_mkdir_as("d/..v2", 0755, 0);
        ck_assert_int_ge(asprintf(&evil, "#!/bin/sh\necho EVIL; touch %s/ran-evil\n", tmp_tree), 0);
        tmp_file_as("d/..v2/10-a", evil, 0777, NOBODY);
        ck_assert_int_eq(symlink("..v2", tmp), 0);
        ck_assert_int_eq(rename(tmp, data), 0);
}

START_TEST(test_symlink_runs) {
        _cleanup_free_ char *e = NULL, *want = tmp_at("d/..v1/10-a");
        PrologExecResult res;
        PrologScript *s = NULL;
        size_t n;

        configmap();
        n = list("d", 0, &s, &e);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(s[0].name, "10-a");
        ck_assert_str_eq(s[0].path, want);
        ck_assert_int_eq(run(&s[0], 0, 0, &res, &e), 0);
        ck_assert_int_eq(res.exit_code, 0);
        ck_assert_int_eq(res.signal, 0);
        ck_assert_str_eq(res.output, "a-v1\n10-a\n");
        prolog_exec_result_done(&res);
        prolog_scripts_free(s, n);
}
END_TEST

START_TEST(test_symlink_swap) {
        _cleanup_free_ char *e = NULL, *old = tmp_at("d/..v1"), *evil = tmp_at("d/..v2/10-a");
        PrologExecResult res;
        PrologScript *s = NULL, *again = NULL;
        size_t n, n_again;
        int fd;

        configmap();
        n = list("d", 0, &s, &e);
        ck_assert_uint_eq(n, 1);
        swap_to_unchecked();
        /* what was checked runs, not what the symlink now leads to */
        ck_assert_int_eq(run(&s[0], 0, 0, &res, &e), 0);
        ck_assert_str_eq(res.output, "a-v1\n10-a\n");
        prolog_exec_result_done(&res);
        ck_assert(!exists("ran-evil"));
        /* listed again, the new target is refused */
        n_again = list("d", 0, &again, &e);
        ck_assert_ptr_nonnull(prolog_scripts_refused(again, n_again));
        ck_assert_msg(
                strstr(again[0].why, "/d/..v2/10-a'") &&
                        strstr(again[0].why, "is group- or world-writable (owner uid 65534, mode 0777)"),
                "%s", again[0].why);
        again = prolog_scripts_free(again, n_again);
        /* the checked inode runs even when its path is replaced after the check */
        fd = prolog_script_open(&s[0], &e);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(rename(evil, s[0].path), 0);
        {
                const PrologExecSpec spec = {};

                ck_assert_int_eq(prolog_exec_fd(fd, &s[0], &spec, &res, &e), 0);
        }
        close(fd);
        ck_assert_str_eq(res.output, "a-v1\n10-a\n");
        prolog_exec_result_done(&res);
        ck_assert(!exists("ran-evil"));
        /* and what now sits at the path is refused when opened */
        ck_assert_int_eq(run(&s[0], 0, 0, &res, &e), -EPERM);
        ck_assert_ptr_nonnull(strstr(e, "group- or world-writable (owner uid 65534, mode 0777)"));
        prolog_exec_result_done(&res);
        /* the old version removed, as the kubelet does: gone, not replaced */
        ck_assert_int_eq(unlink(s[0].path), 0);
        ck_assert_int_eq(rmdir(old), 0);
        ck_assert_int_eq(run(&s[0], 0, 0, &res, &e), -ENOENT);
        ck_assert_ptr_nonnull(strstr(e, "/d/..v1"));
        prolog_exec_result_done(&res);
        ck_assert(!exists("ran-evil"));
        prolog_scripts_free(s, n);
}
END_TEST

/* What replaces d/10-a between its checks and its open. */
static void swap_writable(void) {
        _cleanup_free_ char *evil = NULL, *tmp = tmp_at("d/.10-a.new"), *path = tmp_at("d/10-a");

        ck_assert_int_ge(asprintf(&evil, "#!/bin/sh\ntouch %s/ran-evil\n", tmp_tree), 0);
        tmp_file_as("d/.10-a.new", evil, 0777, 0);
        ck_assert_int_eq(rename(tmp, path), 0);
}

/* a symlink to a root-owned script in a directory nobody owns: the link
 * was never checked, nor the directory its target sits in */
static void swap_symlink(void) {
        _cleanup_free_ char *evil = NULL, *tmp = tmp_at("d/.10-a.new"), *path = tmp_at("d/10-a");

        tmp_mkdir_as("theirs", 0755, NOBODY);
        ck_assert_int_ge(asprintf(&evil, "#!/bin/sh\ntouch %s/ran-evil\n", tmp_tree), 0);
        tmp_file_as("theirs/x", evil, 0755, 0);
        tmp_link_as("../theirs/x", "d/.10-a.new", 0);
        ck_assert_int_eq(rename(tmp, path), 0);
}

/* A script replaced after its path was checked, before it is opened: the
 * open inode is what is checked and run, so the replacement is refused. */
START_TEST(test_swap_before_open) {
        static void (*const swaps[])(void) = { swap_writable, swap_symlink };
        static const char *const why[] = { "group- or world-writable", "not a regular file" };

        for (size_t i = 0; i < ELEMENTSOF(swaps); i++) {
                _cleanup_free_ char *e = NULL, *path = tmp_at("d/10-a");
                PrologExecResult res;
                PrologScript *s = NULL;
                size_t n;

                script("d/10-a", "echo genuine");
                n = list("d", 0, &s, &e);
                ck_assert_uint_eq(n, 1);
                swap_path = path;
                swap_fn = swaps[i];
                ck_assert_int_eq(run(&s[0], 0, 0, &res, &e), -EPERM);
                ck_assert_ptr_null(swap_path); /* the swap happened */
                ck_assert_msg(strstr(e, why[i]), "%zu: %s", i, e);
                ck_assert(!exists("ran-evil"));
                prolog_exec_result_done(&res);
                prolog_scripts_free(s, n);
                ck_assert_int_eq(unlink(path), 0);
        }
}
END_TEST

/* Runs <tmp_tree>/d/@name until a run gets far enough to leave its
 * grandchild's pid in <tmp_tree>/pid (the timeout may strike before, on a busy
 * machine: each try doubles it), and returns that pid. */
static pid_t run_until_grandchild(const char *body, PrologExecResult *res) {
        _cleanup_free_ char *e = NULL, *pidfile = tmp_at("pid");
        PrologScript *s = NULL;
        size_t n;

        script("d/sleeper", body);
        n = list("d", 0, &s, &e);
        ck_assert_uint_eq(n, 1);
        for (uint64_t timeout = 100 * USEC_PER_MSEC;; timeout *= 2) {
                _cleanup_fclose_ FILE *f = NULL;
                int pid = 0;

                ck_assert_int_eq(run(&s[0], timeout, 0, res, &e), 0);
                ck_assert(res->timed_out);
                f = fopen(pidfile, "re");
                if (f && fscanf(f, "%d", &pid) == 1 && pid > 0) {
                        prolog_scripts_free(s, n);
                        return pid;
                }
                prolog_exec_result_done(res);
        }
}

/* Dead, and by SIGKILL: reparented to this process (a subreaper) when its
 * parent died, so it is ours to wait for; CK_DEFAULT_TIMEOUT fails the test
 * if it lives on. */
static void expect_killed(pid_t pid) {
        int status;

        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFSIGNALED(status));
        ck_assert_int_eq(WTERMSIG(status), SIGKILL);
}

#define GRANDCHILD "(trap '' TERM; exec sleep 1000) & echo $! > %s/pid.tmp && mv %s/pid.tmp %s/pid"

START_TEST(test_timeout_term) {
        _cleanup_free_ char *body = NULL;
        PrologExecResult res;
        pid_t pid;

        ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
        ck_assert_int_ge(asprintf(&body, GRANDCHILD "; wait", tmp_tree, tmp_tree, tmp_tree), 0);
        pid = run_until_grandchild(body, &res);
        ck_assert_int_eq(res.signal, SIGTERM);
        prolog_exec_result_done(&res);
        expect_killed(pid);
}
END_TEST

START_TEST(test_timeout_grace) {
        _cleanup_free_ char *body = NULL;
        PrologExecResult res;
        pid_t pid;

        ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
        ck_assert_int_ge(asprintf(&body, "trap '' TERM; " GRANDCHILD "; while :; do wait; done", tmp_tree,
                                  tmp_tree, tmp_tree),
                         0);
        pid = run_until_grandchild(body, &res);
        ck_assert_int_eq(res.signal, SIGKILL);
        prolog_exec_result_done(&res);
        expect_killed(pid);
}
END_TEST

/* A script that ends on its own leaves nothing running in its group. */
START_TEST(test_leftover_killed) {
        _cleanup_free_ char *body = NULL, *e = NULL, *pidfile = tmp_at("pid");
        _cleanup_fclose_ FILE *f = NULL;
        PrologExecResult res;
        PrologScript *s = NULL;
        size_t n;
        int pid;

        ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
        ck_assert_int_ge(asprintf(&body, "sleep 1000 & echo $! > %s/pid; echo started", tmp_tree), 0);
        script("d/bg", body);
        n = list("d", 0, &s, &e);
        ck_assert_int_eq(run(&s[0], 0, 0, &res, &e), 0);
        ck_assert_int_eq(res.exit_code, 0);
        ck_assert(!res.timed_out);
        ck_assert_str_eq(res.output, "started\n");
        f = fopen(pidfile, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fscanf(f, "%d", &pid), 1);
        expect_killed(pid);
        prolog_exec_result_done(&res);
        prolog_scripts_free(s, n);
}
END_TEST

/* What the script writes, its last @limit bytes, against the same command
 * run by popen(). */
static void expect_tail(const PrologScript *s, const char *cmd, size_t limit) {
        _cleanup_free_ char *all = NULL, *e = NULL;
        size_t len = 0, cap = 0, want;
        PrologExecResult res;
        FILE *p = popen(cmd, "re");
        char buf[4096];
        size_t k;

        ck_assert_ptr_nonnull(p);
        while ((k = fread(buf, 1, sizeof(buf), p)) > 0) {
                if (len + k > cap) {
                        cap = (len + k) * 2;
                        all = realloc(all, cap);
                        ck_assert_ptr_nonnull(all);
                }
                memcpy(all + len, buf, k);
                len += k;
        }
        ck_assert_int_eq(pclose(p), 0);
        ck_assert_int_eq(run(s, 0, limit, &res, &e), 0);
        want = MIN(len, limit);
        ck_assert_uint_eq(res.output_len, want);
        ck_assert(res.output_truncated == (len > limit));
        ck_assert(memcmp(res.output, all + len - want, want) == 0);
        ck_assert_int_eq(res.output[want], 0);
        prolog_exec_result_done(&res);
}

START_TEST(test_output_tail) {
        const char *body =
                "seq 1 50000; echo on-stderr >&2; seq 1 7; head -c 70000 /dev/zero | tr '\\0' x; echo end";
        _cleanup_free_ char *e = NULL, *cmd = NULL;
        const size_t limits[] = { 1, 2, 999, 4096, 16384, 65536, 100000, 10000000 };
        PrologScript *s = NULL;
        size_t n;

        ck_assert_int_ge(asprintf(&cmd, "exec 2>&1; %s", body), 0);
        script("d/chatty", body);
        n = list("d", 0, &s, &e);
        for (size_t i = 0; i < ELEMENTSOF(limits); i++)
                expect_tail(&s[0], cmd, limits[i]);
        prolog_scripts_free(s, n);
}
END_TEST

START_TEST(test_exec_failures) {
        _cleanup_free_ char *e = NULL, *interp = NULL;
        PrologExecResult res;
        PrologScript *s = NULL;
        size_t n;

        tmp_file_as("d/a-no-interp", "#!/nonexistent/sh\necho hi\n", 0755, 0);
        tmp_file_as("d/b-garbage", "this is neither ELF nor #!\n", 0755, 0);
        tmp_file_as("noexec-interp", "#!/bin/sh\n", 0644, 0);
        ck_assert_int_ge(asprintf(&interp, "#!%s/noexec-interp\n", tmp_tree), 0);
        tmp_file_as("d/c-interp-not-executable", interp, 0755, 0);
        script("d/d-exit-127", "exit 127");
        n = list("d", 0, &s, &e);
        ck_assert_uint_eq(n, 4);

        ck_assert_int_eq(run(&s[0], 0, 0, &res, &e), -ENOENT);
        ck_assert_msg(strstr(e, "cannot execute prolog script 'a-no-interp' (") &&
                              strstr(e, "): its '#!' interpreter was not found"),
                      "%s", e);
        ck_assert_int_gt(res.pid, 0);
        ck_assert_int_eq(res.exit_code, 0);
        prolog_exec_result_done(&res);

        ck_assert_int_eq(run(&s[1], 0, 0, &res, &e), -ENOEXEC);
        ck_assert_msg(strstr(e, "'b-garbage'") && strstr(e, "neither a program nor a '#!' script"), "%s", e);
        prolog_exec_result_done(&res);

        ck_assert_int_eq(run(&s[2], 0, 0, &res, &e), -EACCES);
        ck_assert_msg(strstr(e, "'c-interp-not-executable'") && strstr(e, "Permission denied"), "%s", e);
        prolog_exec_result_done(&res);

        /* a script's own 127 is an exit status, not a failure to run */
        ck_assert_int_eq(run(&s[3], 0, 0, &res, &e), 0);
        ck_assert_int_eq(res.exit_code, 127);
        prolog_exec_result_done(&res);
        prolog_scripts_free(s, n);
}
END_TEST

START_TEST(test_environment) {
        char *env[] = { "SLURM_JOB_ID=42", "SUNKD_SCRIPT=forged", "WEIRD=a b\nc", NULL };
        char *with_path[] = { "PATH=/usr/bin:/bin:/opt/x", NULL };
        _cleanup_free_ char *e = NULL, *want = NULL;
        PrologExecSpec spec = { .envp = env };
        PrologExecResult res;
        PrologScript *s = NULL;
        size_t n;

        script("d/env", "env | sort; pwd; wc -c; "
                        "echo \"pgrp=$(cut -d' ' -f5 /proc/$$/stat) pid=$$\"");
        n = list("d", 0, &s, &e);
        ck_assert_int_eq(prolog_exec(&s[0], &spec, &res, &e), 0);
        ck_assert_int_ge(asprintf(&want,
                                  "PATH=" PROLOG_DEFAULT_PATH "\nPWD=/\nSLURM_JOB_ID=42\nSUNKD_SCRIPT=env\n"
                                  "WEIRD=a b\nc\n/\n0\npgrp=%d pid=%d\n",
                                  res.pid, res.pid),
                         0);
        ck_assert_str_eq(res.output, want);
        prolog_exec_result_done(&res);
        spec.envp = with_path;
        ck_assert_int_eq(prolog_exec(&s[0], &spec, &res, &e), 0);
        ck_assert_ptr_nonnull(strstr(res.output, "PATH=/usr/bin:/bin:/opt/x\nPWD=/\nSUNKD_SCRIPT=env\n"));
        prolog_exec_result_done(&res);
        prolog_scripts_free(s, n);
}
END_TEST

START_TEST(test_hostile_names) {
        char longname[256];
        const char *names[] = { "a\nb", "$(touch x)", "'q'", " space", "-n", "\xff\xfe" };
        _cleanup_free_ char *e = NULL;
        PrologExecResult res;
        PrologScript *s = NULL;
        size_t n;

        memset(longname, 'L', 255);
        longname[255] = 0;
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_free_ char *rel = NULL;

                ck_assert_int_ge(asprintf(&rel, "d/%s", names[i]), 0);
                script(rel, "printf '%s|' \"$SUNKD_SCRIPT\"");
        }
        {
                _cleanup_free_ char *rel = NULL;

                ck_assert_int_ge(asprintf(&rel, "d/%s", longname), 0);
                script(rel, "printf '%s|' \"$SUNKD_SCRIPT\"");
        }
        n = list("d", 0, &s, &e);
        ck_assert_uint_eq(n, ELEMENTSOF(names) + 1);
        for (size_t i = 1; i < n; i++)
                ck_assert_int_lt(strcmp(s[i - 1].name, s[i].name), 0);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *want = NULL;

                ck_assert_int_eq(run(&s[i], 0, 0, &res, &e), 0);
                ck_assert_int_ge(asprintf(&want, "%s|", s[i].name), 0);
                ck_assert_str_eq(res.output, want);
                prolog_exec_result_done(&res);
        }
        ck_assert(!exists("x") && !exists("d/x"));
        prolog_scripts_free(s, n);
}
END_TEST

START_TEST(test_many_files) {
        _cleanup_free_ char *e = NULL;
        PrologScript *s = NULL;
        size_t n;

        for (unsigned i = 10000; i > 0; i--) {
                _cleanup_free_ char *p = NULL;
                int fd;

                ck_assert_int_ge(asprintf(&p, "%s/d/s%05u", tmp_tree, i - 1), 0);
                fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(close(fd), 0);
        }
        n = list("d", 0, &s, &e);
        ck_assert_uint_eq(n, 10000);
        for (size_t i = 0; i < n; i++) {
                char want[16];

                snprintf(want, sizeof(want), "s%05zu", i);
                ck_assert_str_eq(s[i].name, want);
        }
        prolog_scripts_free(s, n);
}
END_TEST

/* ---- order, name rules and partitions (prolog-select.h) ---- */

/* @sel from @order and @names, which must compile. */
static void select_make(PrologSelect *sel, const char *order, const char *names) {
        _cleanup_free_ char *e = NULL;

        *sel = (PrologSelect){};
        ck_assert_msg(prolog_select_set_order(sel, order, &e) == 0, "%s", e ?: "");
        ck_assert_msg(prolog_select_set_names(sel, names, &e) == 0, "%s", e ?: "");
}

/* Lists d under @sel for @partition: the entries as "name" for one that
 * runs and "-name" for one that does not, joined by spaces. */
static char *listed(const PrologSelect *sel, const char *partition) {
        _cleanup_free_ char *d = tmp_at("d"), *e = NULL;
        PrologScript *s = NULL;
        char *out = NULL;
        size_t n = 0, len = 0;
        FILE *f = open_memstream(&out, &len);

        ck_assert_ptr_nonnull(f);
        ck_assert_msg(prolog_dir_select(d, PROLOG_KIND_PROLOG, sel, partition, &s, &n, &e) == 0, "%s",
                      e ?: "");
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%s%s", i ? " " : "", s[i].why ? "-" : "", s[i].name);
        ck_assert_int_eq(fclose(f), 0);
        prolog_scripts_free(s, n);
        return out;
}

static void scripts_named(const char *const *names, size_t n) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *rel = NULL;

                ck_assert_int_ge(asprintf(&rel, "d/%s", names[i]), 0);
                script(rel, "true");
        }
}

/* reverse: slurmd's glob, z-a, Z-A, 9-0 (slurm.conf(5)); forward: strcmp(). */
START_TEST(test_select_order) {
        const char *names[] = { "b", "a", "B", "10-x", "2-y", "a.b", "_z", "a-", "Z" };
        _cleanup_free_ char *fwd = NULL, *rev = NULL, *def = NULL;
        PrologSelect sel;

        scripts_named(names, ELEMENTSOF(names));
        def = listed(NULL, NULL);
        select_make(&sel, "forward", NULL);
        fwd = listed(&sel, NULL);
        prolog_select_done(&sel);
        select_make(&sel, "reverse", NULL);
        rev = listed(&sel, NULL);
        prolog_select_done(&sel);
        ck_assert_str_eq(def, "10-x 2-y B Z _z a a- a.b b");
        ck_assert_str_eq(fwd, def);
        ck_assert_str_eq(rev, "b a.b a- a _z Z B 2-y 10-x");
}
END_TEST

/* run-parts' rules as run-parts 5.7 applies them (run-parts --test on the
 * same names selects the same ones); sunkd's passes its leftovers over
 * quietly and lists nothing else as not selected. */
START_TEST(test_select_names) {
        const char *names[] = {
                "10-a",  "20_b",  "9z",  "Abc-1",    "_x",      "_foo-bar",         "a-",
                "a.b-c", "a_b-c", "abc", "check.sh", "foo-bar", "foo-bar.dpkg-old", "lower.dot-x",
                "x~"
        };
        _cleanup_free_ char *def = NULL, *rp = NULL, *lsb = NULL, *re = NULL;
        PrologSelect sel;

        scripts_named(names, ELEMENTSOF(names));
        def = listed(NULL, NULL);
        ck_assert_str_eq(def,
                         "10-a 20_b 9z Abc-1 _foo-bar _x a- a.b-c a_b-c abc check.sh foo-bar lower.dot-x");
        select_make(&sel, NULL, "run-parts");
        rp = listed(&sel, NULL);
        prolog_select_done(&sel);
        ck_assert_str_eq(rp, "10-a 20_b 9z Abc-1 _foo-bar _x a- -a.b-c a_b-c abc -check.sh foo-bar "
                             "-foo-bar.dpkg-old -lower.dot-x -x~");
        select_make(&sel, NULL, "lsbsysinit");
        lsb = listed(&sel, NULL);
        prolog_select_done(&sel);
        ck_assert_str_eq(lsb, "10-a -20_b 9z -Abc-1 _foo-bar -_x a- a.b-c a_b-c abc -check.sh foo-bar "
                              "-foo-bar.dpkg-old lower.dot-x -x~");
        select_make(&sel, "reverse", "^[0-9]+-");
        re = listed(&sel, NULL);
        ck_assert_str_eq(re, "-x~ -lower.dot-x -foo-bar.dpkg-old -foo-bar -check.sh -abc -a_b-c -a.b-c -a- "
                             "-_x -_foo-bar -Abc-1 -9z -20_b 10-a");
        prolog_select_done(&sel);
}
END_TEST

/* Why a name is not run, in the rule's words; a regex that does not
 * compile is refused with regerror()'s. */
START_TEST(test_select_why) {
        _cleanup_free_ char *why = NULL, *e = NULL;
        PrologSelect sel;

        select_make(&sel, NULL, "run-parts");
        ck_assert_int_eq(prolog_select_name(&sel, "check.sh", &why), 2);
        ck_assert_str_eq(why, "name not selected by names: run-parts");
        ck_assert_int_eq(prolog_select_name(&sel, "check", &why), 1);
        ck_assert_str_eq(prolog_select_names_name(&sel), "run-parts");
        prolog_select_done(&sel);
        free(why);
        why = NULL;
        select_make(&sel, NULL, "^gpu-");
        ck_assert_int_eq(prolog_select_name(&sel, "cpu-x", &why), 2);
        ck_assert_str_eq(why, "name does not match names: ^gpu-");
        ck_assert_int_eq(prolog_select_set_names(&sel, "([a-z", &e), -EINVAL);
        ck_assert_msg(e && strncmp(e, "not a POSIX extended regular expression: ", 41) == 0, "%s", e ?: "");
        /* the rule before stays */
        ck_assert_str_eq(prolog_select_names_name(&sel), "^gpu-");
        free(e);
        e = NULL;
        ck_assert_int_eq(prolog_select_set_order(&sel, "backwards", &e), -EINVAL);
        ck_assert_str_eq(e, "forward or reverse, not 'backwards'");
        free(e);
        e = NULL;
        ck_assert_int_eq(prolog_select_set_names(&sel, "", &e), -EINVAL);
        prolog_select_done(&sel);
        ck_assert_int_eq(prolog_select_name(NULL, ".hidden", &why), 0);
        ck_assert_int_eq(prolog_select_name(NULL, "check.sh", &why), 1);
}
END_TEST

/* d/<partition>/ merged with the common scripts by name, in the order; one
 * of the same name replaces the common one; a partition name that could
 * leave the directory selects nothing. */
START_TEST(test_select_partition) {
        const char *names[] = { "10-a", "30-c", "50-e" };
        const char *bad[] = { "..", ".", "../d", "gpu/..", "", ".gpu", "-gpu", "g p u" };
        _cleanup_free_ char *fwd = NULL, *rev = NULL, *none = NULL, *other = NULL;
        PrologSelect sel;

        scripts_named(names, ELEMENTSOF(names));
        tmp_mkdir_as("d/gpu", 0755, 0);
        script("d/gpu/20-b", "true");
        script("d/gpu/30-c", "true");
        script("d/gpu/60-f", "true");
        none = listed(NULL, NULL);
        ck_assert_str_eq(none, "10-a 30-c 50-e");
        fwd = listed(NULL, "gpu");
        ck_assert_str_eq(fwd, "10-a gpu/20-b -30-c gpu/30-c 50-e gpu/60-f");
        select_make(&sel, "reverse", NULL);
        rev = listed(&sel, "gpu");
        ck_assert_str_eq(rev, "gpu/60-f 50-e -30-c gpu/30-c gpu/20-b 10-a");
        prolog_select_done(&sel);
        other = listed(NULL, "cpu");
        ck_assert_str_eq(other, "10-a 30-c 50-e");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *got = listed(NULL, bad[i]);

                ck_assert_msg(!prolog_select_partition_valid(bad[i]), "'%s'", bad[i]);
                ck_assert_msg(streq(got, "10-a 30-c 50-e"), "'%s' selected: %s", bad[i], got);
        }
        ck_assert(prolog_select_partition_valid("gpu_a100.x-2"));
}
END_TEST

/* A partition's directory someone other than root could change fails the
 * listing, as the common one would. */
START_TEST(test_select_partition_refused) {
        _cleanup_free_ char *d = tmp_at("d"), *e = NULL;
        PrologScript *s = NULL;
        size_t n = 0;

        script("d/10-a", "true");
        tmp_mkdir_as("d/gpu", 0775, NOBODY);
        ck_assert_int_eq(prolog_dir_select(d, PROLOG_KIND_PROLOG, NULL, "gpu", &s, &n, &e), -EPERM);
        ck_assert_msg(e && strstr(e, "/d/gpu"), "%s", e ?: "");
        ck_assert_ptr_null(s);
}
END_TEST

/* ---- a whole directory, as the client runs it itself ---- */

typedef struct Seen {
        char names[8][32];
        int rs[8];
        size_t n;
} Seen;

static void seen_fn(void *userdata, const PrologScript *sc, int r, const PrologExecResult *res,
                    const char *error) {
        Seen *seen = userdata;

        (void) res;
        (void) error;
        ck_assert_uint_lt(seen->n, 8);
        snprintf(seen->names[seen->n], sizeof(seen->names[0]), "%s", sc->name);
        seen->rs[seen->n++] = r;
}

static int local_run(PrologKind kind, uint64_t script_timeout, uint64_t total, Seen *seen, char *reason,
                     char **ret_error) {
        _cleanup_free_ char *d = tmp_at("d");
        PrologSettings set = {
                .prolog_dir = d,
                .epilog_dir = d,
                .script_timeout_usec = script_timeout,
                .total_timeout_usec = total,
                .kill_grace_usec = 50 * USEC_PER_MSEC,
                .output_limit = 4096,
        };
        char *const envp[] = { (char *) "SLURM_JOB_ID=77", NULL };

        return prolog_run_local(&set, kind, envp, seen_fn, seen, reason, ret_error);
}

/* The client's fallback selects as the module does: its settings' order
 * and names, and the partition of the job's environment. */
START_TEST(test_local_select) {
        _cleanup_free_ char *d = tmp_at("d"), *e = NULL;
        char reason[PROLOG_REASON_MAX + 1];
        PrologSettings set = {
                .prolog_dir = d,
                .epilog_dir = d,
                .script_timeout_usec = 10 * USEC_PER_SEC,
                .total_timeout_usec = 60 * USEC_PER_SEC,
                .kill_grace_usec = 50 * USEC_PER_MSEC,
                .output_limit = 4096,
        };
        char *const envp[] = { (char *) "SLURM_JOB_ID=77", (char *) "SLURM_JOB_PARTITION=gpu", NULL };
        const char *key;
        Seen seen = {};

        script("d/10-a", "true");
        script("d/check.sh", "true");
        tmp_mkdir_as("d/gpu", 0755, 0);
        script("d/gpu/20-b", "true");
        set.order = (char *) "reverse";
        set.names = (char *) "run-parts";
        ck_assert_int_eq(prolog_settings_select(&set, &key, &e), 0);
        ck_assert_int_eq(prolog_run_local(&set, PROLOG_KIND_PROLOG, envp, seen_fn, &seen, reason, &e), 0);
        prolog_select_done(&set.select);
        ck_assert_uint_eq(seen.n, 3);
        ck_assert_str_eq(seen.names[0], "check.sh"); /* skipped: not a run-parts name */
        ck_assert_str_eq(seen.names[1], "gpu/20-b");
        ck_assert_str_eq(seen.names[2], "10-a");
}
END_TEST

static void three_scripts(void) {
        _cleanup_free_ char *a = NULL, *c = NULL;

        ck_assert_int_ge(asprintf(&a, "echo a >> %s/ran", tmp_tree), 0);
        ck_assert_int_ge(asprintf(&c, "echo c >> %s/ran", tmp_tree), 0);
        script("d/10-a", a);
        script("d/20-fail", "echo checking; echo boom; exit 4");
        script("d/30-c", c);
}

START_TEST(test_local_prolog_stops) {
        char reason[PROLOG_REASON_MAX + 1];
        _cleanup_free_ char *e = NULL;
        Seen seen = {};

        three_scripts();
        ck_assert_int_eq(
                local_run(PROLOG_KIND_PROLOG, 10 * USEC_PER_SEC, 60 * USEC_PER_SEC, &seen, reason, &e), 1);
        ck_assert_str_eq(reason, "prolog 20-fail rc=4: boom");
        ck_assert_uint_eq(seen.n, 2);
        ck_assert_str_eq(seen.names[1], "20-fail");
        ck_assert(exists("ran"));
}
END_TEST

START_TEST(test_local_epilog_all) {
        char reason[PROLOG_REASON_MAX + 1];
        _cleanup_free_ char *e = NULL, *ran = tmp_at("ran");
        _cleanup_fclose_ FILE *f = NULL;
        char line1[8] = "", line2[8] = "";
        Seen seen = {};

        three_scripts();
        ck_assert_int_eq(
                local_run(PROLOG_KIND_EPILOG, 10 * USEC_PER_SEC, 60 * USEC_PER_SEC, &seen, reason, &e), 1);
        ck_assert_str_eq(reason, "epilog 20-fail rc=4: boom");
        ck_assert_uint_eq(seen.n, 3);
        ck_assert_ptr_nonnull(f = fopen(ran, "re"));
        ck_assert_ptr_nonnull(fgets(line1, sizeof(line1), f));
        ck_assert_ptr_nonnull(fgets(line2, sizeof(line2), f));
        ck_assert_str_eq(line1, "a\n");
        ck_assert_str_eq(line2, "c\n");
}
END_TEST

START_TEST(test_local_passes) {
        char reason[PROLOG_REASON_MAX + 1];
        _cleanup_free_ char *e = NULL;
        Seen seen = {};

        script("d/10-ok", "[ \"$SLURM_JOB_ID\" = 77 ] && [ \"$SUNKD_SCRIPT\" = 10-ok ]");
        ck_assert_int_eq(
                local_run(PROLOG_KIND_PROLOG, 10 * USEC_PER_SEC, 60 * USEC_PER_SEC, &seen, reason, &e), 0);
        ck_assert_str_eq(reason, "");
        ck_assert_uint_eq(seen.n, 1);
        ck_assert_int_eq(seen.rs[0], 0);
}
END_TEST

/* The second script gets what is left of the total, not its own timeout. */
START_TEST(test_local_total_timeout) {
        char reason[PROLOG_REASON_MAX + 1];
        _cleanup_free_ char *e = NULL;
        Seen seen = {};

        script("d/10-short", "sleep 0.2");
        script("d/20-long", "exec sleep 100");
        ck_assert_int_eq(
                local_run(PROLOG_KIND_PROLOG, 100 * USEC_PER_SEC, 500 * USEC_PER_MSEC, &seen, reason, &e),
                1);
        ck_assert_msg(strncmp(reason, "prolog 20-long timed out", 24) == 0, "%s", reason);
}
END_TEST

START_TEST(test_local_refused) {
        char reason[PROLOG_REASON_MAX + 1];
        _cleanup_free_ char *e = NULL, *d = tmp_at("d"), *ran = NULL;
        Seen seen = {};

        ck_assert_int_ge(asprintf(&ran, "touch %s/ran", tmp_tree), 0);
        script("d/10-ran", ran);
        tmp_file_as("d/20-writable", "#!/bin/sh\nexit 0\n", 0775, 0);
        ck_assert_int_eq(
                local_run(PROLOG_KIND_PROLOG, 10 * USEC_PER_SEC, 60 * USEC_PER_SEC, &seen, reason, &e),
                -EPERM);
        ck_assert_msg(e && strstr(e, "20-writable"), "%s", e ?: "");
        /* the reason names the script refused, not its directory */
        ck_assert_msg(strncmp(reason, "prolog 20-writable ", 19) == 0 && strstr(reason, "refused"), "%s",
                      reason);
        ck_assert_uint_eq(seen.n, 0);
        ck_assert(!exists("ran"));
        (void) d;
}
END_TEST

/* A script that is not executable is said, not dropped: the callback hears
 * of it, and the scripts around it run. */
START_TEST(test_local_skipped) {
        char reason[PROLOG_REASON_MAX + 1];
        _cleanup_free_ char *e = NULL, *ran = NULL;
        Seen seen = {};

        ck_assert_int_ge(asprintf(&ran, "touch %s/ran", tmp_tree), 0);
        tmp_file_as("d/10-lost-x", "#!/bin/sh\nexit 1\n", 0644, 0);
        script("d/20-ran", ran);
        ck_assert_int_eq(
                local_run(PROLOG_KIND_PROLOG, 10 * USEC_PER_SEC, 60 * USEC_PER_SEC, &seen, reason, &e), 0);
        ck_assert_uint_eq(seen.n, 2);
        ck_assert_str_eq(seen.names[0], "10-lost-x");
        ck_assert_int_eq(seen.rs[0], 0);
        ck_assert_str_eq(seen.names[1], "20-ran");
        ck_assert(exists("ran"));
}
END_TEST

/* A typo in prolog_dir fails the run: never "ok" with nothing run. */
START_TEST(test_local_missing_dir) {
        char reason[PROLOG_REASON_MAX + 1];
        _cleanup_free_ char *e = NULL, *d = tmp_at("d");
        Seen seen = {};

        ck_assert_int_eq(rmdir(d), 0);
        ck_assert_int_eq(
                local_run(PROLOG_KIND_PROLOG, 10 * USEC_PER_SEC, 60 * USEC_PER_SEC, &seen, reason, &e),
                -ENOENT);
        ck_assert_msg(e && strstr(e, "does not exist"), "%s", e ?: "");
        ck_assert_msg(strncmp(reason, "prolog ", 7) == 0, "%s", reason);
        ck_assert_uint_eq(seen.n, 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("prolog-dir");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        /* only a guard against a hang: 10000 files on a loaded machine take a while */
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_order);
        tcase_add_test(tc, test_filter);
        tcase_add_test(tc, test_missing_dir);
        tcase_add_test(tc, test_dir_refused);
        tcase_add_test(tc, test_script_refused);
        tcase_add_test(tc, test_symlink_runs);
        tcase_add_test(tc, test_symlink_swap);
        tcase_add_test(tc, test_swap_before_open);
        tcase_add_test(tc, test_timeout_term);
        tcase_add_test(tc, test_timeout_grace);
        tcase_add_test(tc, test_leftover_killed);
        tcase_add_test(tc, test_output_tail);
        tcase_add_test(tc, test_exec_failures);
        tcase_add_test(tc, test_environment);
        tcase_add_test(tc, test_hostile_names);
        tcase_add_test(tc, test_many_files);
        tcase_add_test(tc, test_local_prolog_stops);
        tcase_add_test(tc, test_local_epilog_all);
        tcase_add_test(tc, test_local_passes);
        tcase_add_test(tc, test_local_total_timeout);
        tcase_add_test(tc, test_local_refused);
        tcase_add_test(tc, test_local_skipped);
        tcase_add_test(tc, test_local_missing_dir);
        tcase_add_test(tc, test_select_order);
        tcase_add_test(tc, test_select_names);
        tcase_add_test(tc, test_select_why);
        tcase_add_test(tc, test_select_partition);
        tcase_add_test(tc, test_select_partition_refused);
        tcase_add_test(tc, test_local_select);
        suite_add_tcase(s, tc);
        return check_run(s);
}
