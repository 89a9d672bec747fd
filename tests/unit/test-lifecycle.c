/* The module loader and lifecycle, in process, under the real loop: a
 * module stopped (removed by a reload, restarted because it has no reload
 * hook) while its job runs, while its child runs, while a call to it is
 * pending; an old-ABI module.  Under ASan any use of freed module state
 * fails the test. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "manager.h"
#include "util/macro.h"
#include "util/time-util.h"
#include "../lib/check-run.h"

static char T[64];
static char cfg_path[128];
static Manager *M;

static void write_config(const char *modules) {
        FILE *f = fopen(cfg_path, "w");

        ck_assert_ptr_nonnull(f);
        fprintf(f,
                "socket: %s/sock\nstate_dir: %s/state\nmodule_dir: %s/tests/modules/.libs\n"
                "shutdown_timeout: 60s\nmodules:\n%s",
                T, T, getenv("SUNKD_BUILDDIR"), modules);
        fclose(f);
        chmod(cfg_path, 0644);
}

static void setup(void) {
        sigset_t ss;

        sigemptyset(&ss);
        sigaddset(&ss, SIGCHLD);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGHUP);
        sigaddset(&ss, SIGINT);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        snprintf(T, sizeof(T), "/tmp/sunkd-lc.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(T));
        chmod(T, 0755);
        snprintf(cfg_path, sizeof(cfg_path), "%s/sunkd.yaml", T);
        ck_assert_ptr_nonnull(getenv("SUNKD_BUILDDIR"));
}

static void start(const char *modules) {
        Config *c = NULL;
        char *error = NULL;

        write_config(modules);
        ck_assert_msg(config_load(cfg_path, &c, &error) >= 0, "config: %s", error ?: "?");
        ck_assert_int_ge(manager_new(c, cfg_path, -1, &M), 0);
        ck_assert_int_ge(manager_start(M), 0);
}

static void teardown(void) {
        char cmd[128];

        M = manager_free(M);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", T);
        (void) !system(cmd);
}

typedef bool (*Cond)(void *arg);

/* Runs the loop until @cond holds; only a minute without it fails. */
static void run_until(Cond cond, void *arg) {
        uint64_t end = now_usec(CLOCK_MONOTONIC) + 60 * USEC_PER_SEC;

        while (!cond(arg)) {
                ck_assert_msg(now_usec(CLOCK_MONOTONIC) < end, "condition not reached");
                ck_assert_int_ge(sd_event_run(M->event, 10 * USEC_PER_MSEC), 0);
        }
}

static bool file_exists(void *path) {
        return access(path, F_OK) == 0;
}

static bool nothing_retired(void *arg) {
        return M->n_retired == 0;
}

static Module *find_module(const char *name) {
        for (size_t i = 0; i < M->n_modules; i++)
                if (streq(M->modules[i]->name, name))
                        return M->modules[i];
        return NULL;
}

static bool module_running(void *name) {
        Module *mod = find_module(name);
        return mod && mod->mstate == MODULE_RUNNING;
}

static void trigger(const char *job) {
        Job *j = sched_find(M->sched, job);

        ck_assert_ptr_nonnull(j);
        ck_assert_int_ge(sched_job_trigger(j, "test"), 0);
}

typedef struct Reloaded {
        bool done;
        int r;
} Reloaded;

static void on_reloaded(Manager *m, void *userdata, int r, const char *error) {
        Reloaded *rl = userdata;

        rl->done = true;
        rl->r = r;
}

static bool reloaded(void *arg) {
        return ((Reloaded *) arg)->done;
}

/* The file is read by a worker; the loop runs meanwhile. */
static void reload(const char *modules) {
        Reloaded rl = {};

        write_config(modules);
        ck_assert_int_ge(manager_reload(M, on_reloaded, &rl), 0);
        run_until(reloaded, &rl);
        ck_assert_int_ge(rl.r, 0);
}

/* A call on a new connection; the reply is read by call_wait. */
static int call_send(const char *method, const char *params) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char msg[512];
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        int n;

        ck_assert_int_ge(fd, 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", T);
        ck_assert_int_eq(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        n = snprintf(msg, sizeof(msg), "{\"method\":\"%s\",\"parameters\":%s}", method, params);
        ck_assert_int_eq(send(fd, msg, (size_t) n + 1, MSG_NOSIGNAL), n + 1);
        return fd;
}

typedef struct Reply {
        int fd;
        char buf[4096];
        size_t len;
} Reply;

static bool reply_complete(void *arg) {
        Reply *r = arg;
        ssize_t n = recv(r->fd, r->buf + r->len, sizeof(r->buf) - 1 - r->len, MSG_DONTWAIT);

        if (n > 0)
                r->len += (size_t) n;
        r->buf[r->len] = '\0';
        return (r->len > 0 && r->buf[r->len - 1] == '\0') || r->len + 1 >= sizeof(r->buf);
}

static void call_wait(int fd, char *out, size_t size) {
        Reply r = { .fd = fd };

        run_until(reply_complete, &r);
        close(fd);
        snprintf(out, size, "%s", r.buf);
}

#define GATE "gate"
static char gate[128], started[160];

static void gate_paths(void) {
        snprintf(gate, sizeof(gate), "%s/" GATE, T);
        snprintf(started, sizeof(started), "%s/" GATE ".started", T);
}

START_TEST(test_remove_while_job_runs) {
        char modules[512], reply[4096];
        Module *mod;

        gate_paths();
        snprintf(modules, sizeof(modules), "  testmod:\n    gate_file: %s\n", gate);
        start(modules);
        trigger("testmod.gated");
        run_until(file_exists, started);

        reload("  {}\n");
        ck_assert_uint_eq(M->n_retired, 1);
        mod = M->retired[0];
        ck_assert_int_eq(mod->mstate, MODULE_STOPPING);
        /* Its methods answer Unavailable while it waits; nothing else moves. */
        call_wait(call_send("io.sunkd.Test.Echo", "{}"), reply, sizeof(reply));
        ck_assert_msg(strstr(reply, "io.sunkd.Unavailable") || strstr(reply, "io.sunkd.MethodNotFound"),
                      "reply: %s", reply);
        ck_assert_ptr_nonnull(sched_find(M->sched, "testmod.gated"));

        close(open(gate, O_CREAT | O_WRONLY, 0644));
        run_until(nothing_retired, NULL);
        ck_assert_ptr_null(sched_find(M->sched, "testmod.gated"));
}
END_TEST

START_TEST(test_remove_while_child_runs) {
        char reply[4096];
        int fd;

        start("  testmod: {}\n");
        fd = call_send("io.sunkd.Test.Spawn", "{\"arg\":\"exec sleep 1000\"}");
        run_until(module_running, "testmod");
        while (spawn_n_running(M->spawns, NULL) == 0)
                ck_assert_int_ge(sd_event_run(M->event, 10 * USEC_PER_MSEC), 0);

        reload("  {}\n");
        ck_assert_uint_eq(M->n_retired, 1);
        /* The child is killed; its callback runs on live state and answers. */
        call_wait(fd, reply, sizeof(reply));
        ck_assert_msg(strstr(reply, "\"signal\":15") || strstr(reply, "\"signal\": 15"), "reply: %s", reply);
        run_until(nothing_retired, NULL);
        ck_assert_uint_eq(spawn_n_running(M->spawns, NULL), 0);
}
END_TEST

START_TEST(test_remove_while_call_pending) {
        char reply[4096];
        int fd;

        start("  testmod:\n    interval: 1h\n    splay: 1h\n");
        fd = call_send("io.sunkd.Test.Later", "{}");
        /* Pending once the handler has run: the ok job was triggered by it. */
        while (sched_job_state(sched_find(M->sched, "testmod.ok")) != JOB_RUNNING &&
               sched_job_runs(sched_find(M->sched, "testmod.ok")) == 0)
                ck_assert_int_ge(sd_event_run(M->event, 10 * USEC_PER_MSEC), 0);
        reload("  {}\n");
        call_wait(fd, reply, sizeof(reply));
        ck_assert_msg(strstr(reply, "\"error\"") || strstr(reply, "\"run\""), "reply: %s", reply);
        run_until(nothing_retired, NULL);
}
END_TEST

static bool generation_is(void *want) {
        Module *mod = find_module("noreload");
        json_object *o = NULL, *st, *g;
        bool ok;

        if (!mod || mod->mstate != MODULE_RUNNING || module_status_json(mod, &o) < 0)
                return false;
        ok = json_object_object_get_ex(o, "status", &st) &&
             json_object_object_get_ex(st, "generation", &g) &&
             json_object_get_int64(g) == (int64_t) (intptr_t) want;
        json_object_put(o);
        return ok;
}

START_TEST(test_reload_without_hook) {
        char modules[512];

        gate_paths();
        snprintf(modules, sizeof(modules), "  noreload:\n    gate_file: %s\n    generation: 1\n", gate);
        start(modules);
        ck_assert(generation_is((void *) 1));

        /* Idle: fini and init again at once, the job re-added under its name. */
        snprintf(modules, sizeof(modules), "  noreload:\n    gate_file: %s\n    generation: 2\n", gate);
        reload(modules);
        ck_assert(generation_is((void *) 2));

        /* Busy: it waits for its run, then comes back with the newest config. */
        trigger("noreload.gated");
        run_until(file_exists, started);
        snprintf(modules, sizeof(modules), "  noreload:\n    gate_file: %s\n    generation: 3\n", gate);
        reload(modules);
        ck_assert_int_eq(find_module("noreload")->mstate, MODULE_STOPPING);
        snprintf(modules, sizeof(modules), "  noreload:\n    gate_file: %s\n    generation: 4\n", gate);
        reload(modules);
        close(open(gate, O_CREAT | O_WRONLY, 0644));
        run_until(generation_is, (void *) 4);
        ck_assert_ptr_nonnull(sched_find(M->sched, "noreload.gated"));
}
END_TEST

START_TEST(test_removed_then_readded) {
        char modules[512];

        gate_paths();
        snprintf(modules, sizeof(modules), "  testmod:\n    gate_file: %s\n", gate);
        start(modules);
        trigger("testmod.gated");
        run_until(file_exists, started);
        reload("  {}\n");
        ck_assert_uint_eq(M->n_retired, 1);
        /* Back before its stop ended: the same module restarts, no duplicate. */
        reload(modules);
        ck_assert_uint_eq(M->n_retired, 0);
        close(open(gate, O_CREAT | O_WRONLY, 0644));
        run_until(module_running, "testmod");
        ck_assert_uint_eq(M->n_modules, 1);
}
END_TEST

/* Its child's stdout and stderr both in output, as a 1.0 module expects, and
 * a program that is not there as r = -ENOENT. */
static bool abi10_ran(void *arg) {
        Module *mod = find_module("abi10");
        json_object *o = NULL, *st, *v, *e, *out, *missing;
        bool ok;

        if (!mod || module_status_json(mod, &o) < 0)
                return false;
        ok = json_object_object_get_ex(o, "status", &st) && json_object_object_get_ex(st, "runs", &v) &&
             json_object_get_int64(v) == 1 && json_object_object_get_ex(st, "spawned_exit", &e) &&
             json_object_get_int64(e) == 7 && json_object_object_get_ex(st, "spawned_output", &out) &&
             streq(json_object_get_string(out), "out\nerr\n") &&
             json_object_object_get_ex(st, "spawned_missing", &missing) &&
             json_object_get_int64(missing) == -ENOENT;
        json_object_put(o);
        return ok;
}

START_TEST(test_abi10_module) {
        char reply[4096];

        start("  abi10: {}\n");
        ck_assert(module_running("abi10"));
        trigger("abi10.work");
        call_wait(call_send("io.sunkd.Abi10.Ping", "{}"), reply, sizeof(reply));
        ck_assert_msg(strstr(reply, "\"spawn\":0") || strstr(reply, "\"spawn\": 0"), "reply: %s", reply);
        run_until(abi10_ran, NULL);
}
END_TEST

static bool shutdown_done(void *arg) {
        return sd_event_get_state(M->event) == SD_EVENT_FINISHED;
}

START_TEST(test_shutdown_waits_for_stopping_modules) {
        char modules[512];

        gate_paths();
        snprintf(modules, sizeof(modules), "  testmod:\n    gate_file: %s\n", gate);
        start(modules);
        trigger("testmod.gated");
        run_until(file_exists, started);
        manager_begin_shutdown(M);
        ck_assert_int_eq(find_module("testmod")->mstate, MODULE_STOPPING);
        ck_assert_int_ne(sd_event_get_state(M->event), SD_EVENT_FINISHED);
        close(open(gate, O_CREAT | O_WRONLY, 0644));
        run_until(shutdown_done, NULL);
        ck_assert_int_eq(find_module("testmod")->mstate, MODULE_LOADED);
        ck_assert(manager_quiescent(M));
}
END_TEST

static Suite *lifecycle_suite(void) {
        Suite *s = suite_create("lifecycle");
        TCase *tc = tcase_create("lifecycle");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_remove_while_job_runs);
        tcase_add_test(tc, test_remove_while_child_runs);
        tcase_add_test(tc, test_remove_while_call_pending);
        tcase_add_test(tc, test_reload_without_hook);
        tcase_add_test(tc, test_removed_then_readded);
        tcase_add_test(tc, test_abi10_module);
        tcase_add_test(tc, test_shutdown_waits_for_stopping_modules);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(lifecycle_suite());
}
