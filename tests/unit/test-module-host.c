/* The module loader on a host of the test's own, with no Manager: the
 * ModuleHost's hooks are all the loader asks of its owner.  A stop calls
 * `stopping` at once and `finishing` once the last run has ended, with the
 * module's jobs still registered; a restart inits with the section the
 * `config` hook gives when the stop ends.  The Manager is not even linked:
 * the loader, the host API and what they use come out of libsunkd-core
 * without it. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "module-loader.h"
#include "util/macro.h"
#include "util/time-util.h"
#include "../lib/check-run.h"

/* Weak: this reference does not take manager.o out of the archive, but
 * resolves if anything the test links does. */
typedef struct Manager Manager;
Manager *manager_free(Manager *m) __attribute__((weak));

typedef struct TestHost {
        ModuleHost host;
        sd_event *event;
        WorkPool *pool;
        Config *config;
        unsigned n_stopping, n_finishing, n_stopped;
        Module *stopping_mod, *finishing_mod;
        size_t jobs_at_finishing; /* the module's jobs the sched listed in `finishing` */
} TestHost;

static char T[64], state[96], gate[128], started[160];
static TestHost H;

static const Config *host_config(void *userdata) {
        return ((TestHost *) userdata)->config;
}

static void host_stopping(void *userdata, Module *mod) {
        TestHost *h = userdata;

        h->n_stopping++;
        h->stopping_mod = mod;
}

static void host_finishing(void *userdata, Module *mod) {
        TestHost *h = userdata;

        h->n_finishing++;
        h->finishing_mod = mod;
        h->jobs_at_finishing = 0;
        for (size_t i = 0; i < sched_n_jobs(h->host.sched); i++)
                if (sched_job_owner(sched_job_at(h->host.sched, i)) == mod)
                        h->jobs_at_finishing++;
}

static void on_stopped(Module *mod, void *userdata) {
        ((TestHost *) userdata)->n_stopped++;
}

/* The configuration in force from now on: noreload's section with @generation. */
static const ConfModule *set_config(int generation) {
        char *text = NULL, *error = NULL;
        Config *c = NULL;

        ck_assert_int_ge(asprintf(&text,
                                  "state_dir: %s/state\nmodule_dir: %s/tests/modules/.libs\nmodules:\n"
                                  "  noreload:\n    gate_file: %s\n    generation: %d\n",
                                  T, getenv("SUNKD_BUILDDIR"), gate, generation),
                         0);
        ck_assert_msg(config_parse("sunkd.yaml", text, strlen(text), &c, &error) >= 0, "config: %s",
                      error ?: "?");
        free(text);
        config_free(H.config);
        H.config = c;
        return config_find_module(c, "noreload");
}

static void setup(void) {
        IpcLimits limits = IPC_LIMITS_DEFAULT;
        sigset_t ss;

        sigemptyset(&ss);
        sigaddset(&ss, SIGCHLD);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        ck_assert_ptr_nonnull(getenv("SUNKD_BUILDDIR"));
        snprintf(T, sizeof(T), "/tmp/sunkd-mh.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(T));
        chmod(T, 0755);
        snprintf(gate, sizeof(gate), "%s/gate", T);
        snprintf(started, sizeof(started), "%s/gate.started", T);
        snprintf(state, sizeof(state), "%s/state", T);
        ck_assert_int_eq(mkdir(state, 0755), 0);

        H = (TestHost){};
        ck_assert_int_ge(sd_event_new(&H.event), 0);
        ck_assert_int_ge(work_pool_new(H.event, 2, &H.pool), 0);
        ck_assert_int_ge(sched_new(H.event, H.pool, &H.host.sched), 0);
        ck_assert_int_ge(spawn_set_new(H.event, &H.host.spawns), 0);
        ck_assert_int_ge(ipc_new(H.event, &limits, &H.host.ipc), 0);
        ck_assert_int_ge(watch_set_new(H.event, &H.host.watches), 0);
        ck_assert_int_ge(fact_store_new(H.event, &H.host.facts), 0);
        ck_assert_int_ge(metrics_new(&H.host.metrics), 0);
        H.host.config_path = "sunkd.yaml";
        H.host.userdata = &H;
        H.host.config = host_config;
        H.host.stopping = host_stopping;
        H.host.finishing = host_finishing;
}

static void teardown(void) {
        char cmd[128];

        H.host.watches = watch_set_free(H.host.watches);
        H.host.facts = fact_store_free(H.host.facts);
        H.host.ipc = ipc_free(H.host.ipc);
        H.host.spawns = spawn_set_free(H.host.spawns);
        H.host.sched = sched_free(H.host.sched);
        H.pool = work_pool_free(H.pool);
        H.host.metrics = metrics_free(H.host.metrics);
        H.event = sd_event_unref(H.event);
        H.config = config_free(H.config);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", T);
        (void) !system(cmd);
}

/* The loop, polling @mod's stop after each event as an owner does once
 * `stopping` was called, until @cond holds; only a minute without it fails. */
static void run_until(Module *mod, bool (*cond)(void *), void *arg) {
        uint64_t end = now_usec(CLOCK_MONOTONIC) + 60 * USEC_PER_SEC;

        while (!cond(arg)) {
                ck_assert_msg(now_usec(CLOCK_MONOTONIC) < end, "condition not reached");
                ck_assert_int_ge(sd_event_run(H.event, 10 * USEC_PER_MSEC), 0);
                if (H.n_stopping)
                        module_stop_poll(mod);
        }
}

static bool file_exists(void *path) {
        return access(path, F_OK) == 0;
}

static bool is_loaded(void *mod) {
        return ((Module *) mod)->mstate == MODULE_LOADED;
}

static bool is_running(void *mod) {
        return ((Module *) mod)->mstate == MODULE_RUNNING;
}

static Module *start(int generation) {
        const ConfModule *cm = set_config(generation);
        Module *mod = NULL;

        ck_assert_int_ge(module_new(&H.host, H.config->module_dir, H.config->state_dir, cm, &mod), 0);
        ck_assert_ptr_eq(mod->host, &H.host);
        ck_assert_int_ge(module_init(mod, cm), 0);
        ck_assert_int_eq(mod->mstate, MODULE_RUNNING);
        return mod;
}

static int64_t generation(Module *mod) {
        json_object *o = NULL, *st, *g;
        int64_t v = -1;

        ck_assert_int_ge(module_status_json(mod, &o), 0);
        if (json_object_object_get_ex(o, "status", &st) && json_object_object_get_ex(st, "generation", &g))
                v = json_object_get_int64(g);
        json_object_put(o);
        return v;
}

START_TEST(test_no_manager_linked) {
        ck_assert_msg(manager_free == NULL, "the module loader or the host API calls into the Manager");
}
END_TEST

START_TEST(test_stop_calls_the_hooks) {
        Module *mod = start(1);

        ck_assert_int_ge(sched_job_trigger(sched_find(H.host.sched, "noreload.gated"), "test"), 0);
        run_until(mod, file_exists, started);

        module_stop(mod, on_stopped, &H);
        ck_assert_int_eq(mod->mstate, MODULE_STOPPING);
        ck_assert_uint_eq(H.n_stopping, 1);
        ck_assert_ptr_eq(H.stopping_mod, mod);
        /* Its run goes on: nothing is torn down yet. */
        ck_assert_uint_eq(H.n_finishing, 0);
        ck_assert_uint_eq(H.n_stopped, 0);

        close(open(gate, O_CREAT | O_WRONLY, 0644));
        run_until(mod, is_loaded, mod);
        ck_assert_uint_eq(H.n_finishing, 1);
        ck_assert_ptr_eq(H.finishing_mod, mod);
        ck_assert_uint_eq(H.jobs_at_finishing, 1);
        ck_assert_uint_eq(H.n_stopped, 1);
        ck_assert_ptr_null(sched_find(H.host.sched, "noreload.gated"));
        module_free(mod);
}
END_TEST

START_TEST(test_restart_takes_the_config_in_force) {
        Module *mod = start(1);
        const ConfModule *cm;

        ck_assert_int_eq(generation(mod), 1);
        ck_assert_int_ge(sched_job_trigger(sched_find(H.host.sched, "noreload.gated"), "test"), 0);
        run_until(mod, file_exists, started);

        /* No reload hook: a restart, which waits for the run. */
        cm = set_config(2);
        ck_assert_int_ge(module_reload(mod, cm), 0);
        ck_assert_int_eq(mod->mstate, MODULE_STOPPING);
        /* Another configuration comes into force before the stop ends. */
        (void) set_config(3);
        close(open(gate, O_CREAT | O_WRONLY, 0644));
        run_until(mod, is_running, mod);
        ck_assert_int_eq(generation(mod), 3);
        ck_assert_uint_eq(H.n_finishing, 1);
        module_stop(mod, NULL, NULL);
        run_until(mod, is_loaded, mod);
        module_free(mod);
}
END_TEST

static Suite *module_host_suite(void) {
        Suite *s = suite_create("module-host");
        TCase *tc = tcase_create("module-host");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_no_manager_linked);
        tcase_add_test(tc, test_stop_calls_the_hooks);
        tcase_add_test(tc, test_restart_takes_the_config_in_force);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(module_host_suite());
}
