/* testmod: a module that exercises every part of the ABI for the tests.
 *
 * Jobs: testmod.ok (succeeds after `work` time), testmod.fail (always
 * -EIO), testmod.hang (runs until cancelled; has a short timeout),
 * testmod.flaky (fails `flaky_failures` times, then succeeds),
 * testmod.block (blocks its worker for `block` without looking at the cancel
 * flag: the loop must stay responsive), testmod.gated (runs, ignoring
 * cancellation, until `gate_file` exists), testmod.child (ABI 1.2
 * SUNKD_JOB_CHILD: reports its pid, uid and groups; as `child_uid` if set),
 * testmod.childhang (a child that never returns; killed at hang_timeout),
 * testmod.async (ABI 1.2 SUNKD_JOB_ASYNC: spawns `async_command` and ends
 * with its exit status), testmod.gate (run N creates
 * `gate_dir`/running.N, then waits until `gate_dir`/release.N exists or it is
 * cancelled: tests see a run in progress and end it when they choose).
 * With both ready_gate and gate_dir, testmod.ok also waits for
 * `gate_dir`/release.ok, so readiness comes when the test lets it.
 * Methods: Echo (any uid), Root
 * (root), Allowed (the `allow:` list), Later (replied by the next run of
 * testmod.ok), Spawn (runs a child and returns its output: stdout and,
 * apart since ABI 1.3, stderr; a program that never ran as
 * io.sunkd.Test.SpawnFailed with its errno).
 *
 * ABI 1.2: `watch_path` is watched and Watched reports how many callbacks
 * came (and the length of `secret`, a SUNKD_CFG_SECRET, never the value);
 * Publish publishes a fact, Fact reads one and what the subscription to
 * testmod.echo has seen.
 *
 * ABI 1.3: MetricAdd registers a gauge (a counter with "counter": true)
 * {"name", "labels"} and answers the host's verdict {"r"}; MetricRemove drops the series of
 * testmod_runs_total for {"job"} (every series without it) and answers {"r"}.
 *
 * Reload: status counts the hook's calls (`reloads`); a new section with
 * `reload_fail: true` makes the hook fail with -EIO, changing nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sunkd/module.h"

#define USEC_PER_MSEC UINT64_C(1000)

typedef struct Conf {
        uint64_t interval;
        uint64_t splay;
        uint64_t work;
        uint64_t hang_timeout;
        uint64_t block;
        int64_t flaky_failures;
        bool init_fail;
        bool ready_gate;
        bool periodic_fail;
        char *spawn_command;
        char *gate_file;
        char *async_command;
        int64_t child_uid;
        char *watch_path;
        char *secret;
        char *gate_dir;
        char *pid_file;
        bool async_without_cancel;
        bool reload_fail;
        uint64_t ballast;
        uint64_t linger;
} Conf;

static const sunkd_cfg_key conf_keys[] = {
        { "interval", SUNKD_CFG_DURATION, offsetof(Conf, interval), 0, 0, 0 },
        { "splay", SUNKD_CFG_DURATION, offsetof(Conf, splay), 0, 0, 0 },
        { "work", SUNKD_CFG_DURATION, offsetof(Conf, work), 0, 0, 0 },
        { "hang_timeout", SUNKD_CFG_DURATION, offsetof(Conf, hang_timeout), 0, 0, 0 },
        { "block", SUNKD_CFG_DURATION, offsetof(Conf, block), 0, 0, 0 },
        { "flaky_failures", SUNKD_CFG_INT, offsetof(Conf, flaky_failures), 0, 0, 1000 },
        { "init_fail", SUNKD_CFG_BOOL, offsetof(Conf, init_fail), 0, 0, 0 },
        { "ready_gate", SUNKD_CFG_BOOL, offsetof(Conf, ready_gate), 0, 0, 0 },
        { "periodic_fail", SUNKD_CFG_BOOL, offsetof(Conf, periodic_fail), 0, 0, 0 },
        { "spawn_command", SUNKD_CFG_PATH, offsetof(Conf, spawn_command), 0, 0, 0 },
        { "gate_file", SUNKD_CFG_PATH, offsetof(Conf, gate_file), 0, 0, 0 },
        { "async_command", SUNKD_CFG_STRING, offsetof(Conf, async_command), 0, 0, 0 },
        { "child_uid", SUNKD_CFG_INT, offsetof(Conf, child_uid), 0, 0, 65535 },
        { "watch_path", SUNKD_CFG_PATH, offsetof(Conf, watch_path), 0, 0, 0 },
        { "secret", SUNKD_CFG_SECRET, offsetof(Conf, secret), 0, 0, 4096 },
        { "gate_dir", SUNKD_CFG_PATH, offsetof(Conf, gate_dir), 0, 0, 0 },
        { "pid_file", SUNKD_CFG_PATH, offsetof(Conf, pid_file), 0, 0, 0 },
        { "async_without_cancel", SUNKD_CFG_BOOL, offsetof(Conf, async_without_cancel), 0, 0, 0 },
        /* memory held resident, for benchmarks of a large daemon's forks */
        { "ballast", SUNKD_CFG_SIZE, offsetof(Conf, ballast), 0, 0, 0 },
        { "reload_fail", SUNKD_CFG_BOOL, offsetof(Conf, reload_fail), 0, 0, 0 },
        /* asks a stop for this long and never says it is done: the host ends it */
        { "linger", SUNKD_CFG_DURATION, offsetof(Conf, linger), 0, 0, 0 },
};

typedef struct PendingCall PendingCall;
struct PendingCall {
        sunkd_call *call;
        PendingCall *next;
};

typedef struct State {
        sunkd_ctx *ctx;
        Conf conf;
        void *ballast;
        sunkd_job *ok_job, *flaky_job, *async_job;
        int64_t gated_runs, async_cancels;
        char *child_result;
        char *ok_release; /* set once at init: a reload cannot free it under the worker */
        int64_t flaky_runs;
        int64_t gate_runs;
        PendingCall *later;
        sunkd_metric *runs;
        sunkd_watch *watch;
        int64_t watch_changes;
        int64_t fact_changes;
        json_object *fact_last;
        unsigned held;      /* io.sunkd.Test.Hold calls not yet answered */
        int64_t gone_calls; /* ... whose caller hung up first */
        int64_t reloads;    /* calls of the reload hook, failed ones too */
} State;

static void sleep_usec(uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / 1000000),
                               .tv_nsec = (long) (usec % 1000000) * 1000 };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static int conf_load(sunkd_ctx *c, const sunkd_cfg *cfg, Conf *conf) {
        char *error = NULL;
        int r;

        *conf = (Conf){ .interval = 60 * 1000000ULL, .hang_timeout = 1000000ULL };
        r = c->api->cfg_parse(cfg, conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), conf, &error);
        if (r < 0) {
                sunkd_log_error_errno(c, r, "%s", error ?: "invalid configuration");
                free(error);
                c->api->cfg_clear(conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), conf);
        }
        return r;
}

static void count_run(State *s, const char *job) {
        s->ctx->api->metric_add_value(s->runs, 1, (const char *[]){ job });
}

static int work_ok(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        State *s = state;
        sleep_usec(s->conf.work);
        while (s->ok_release && access(s->ok_release, F_OK) < 0 && !sunkd_cancelled(cancel))
                sleep_usec(USEC_PER_MSEC);
        return 0;
}

static int done_ok(void *state, int r, void *input, void *result) {
        State *s = state;

        count_run(s, "ok");
        while (s->later) {
                PendingCall *p = s->later;
                s->later = p->next;
                json_object *o = json_object_new_object();
                json_object_object_add(o, "run", json_object_new_string("done"));
                s->ctx->api->reply(p->call, o);
                free(p);
        }
        return r;
}

static int work_fail(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        return -EIO;
}

static int done_count(void *state, int r, void *input, void *result) {
        count_run(state, "other");
        return r;
}

static int work_hang(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        for (int i = 0; i < 60000 && !sunkd_cancelled(cancel); i++)
                sleep_usec(USEC_PER_MSEC);
        return sunkd_cancelled(cancel) ? -ECANCELED : 0;
}

static int prepare_flaky(void *state, void **ret_input) {
        State *s = state;
        /* Decided on the loop: the worker must not touch mutable state. */
        *ret_input = (void *) (intptr_t) (s->flaky_runs++ < s->conf.flaky_failures ? -EAGAIN : 0);
        return 0;
}

static int work_flaky(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        return (int) (intptr_t) input;
}

/* Explains each failure in its own words (ABI 1.1 job_set_message). */
static int done_flaky(void *state, int r, void *input, void *result) {
        State *s = state;
        char msg[64];

        count_run(state, "other");
        if (r < 0) {
                snprintf(msg, sizeof(msg), "flaky failure %lld of %lld", (long long) s->flaky_runs,
                         (long long) s->conf.flaky_failures);
                (void) s->ctx->api->job_set_message(s->flaky_job, msg);
        }
        return r;
}

static int work_block(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        State *s = state;
        sleep_usec(s->conf.block);
        return 0;
}

/* Ignores cancellation on purpose: a stop must wait for it. */
static int work_gated(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        const char *gate = input;
        char started[4096];

        snprintf(started, sizeof(started), "%s.started", gate);
        fclose(fopen(started, "w"));
        while (access(gate, F_OK) < 0)
                sleep_usec(USEC_PER_MSEC);
        return 0;
}

static int prepare_gated(void *state, void **ret_input) {
        State *s = state;

        if (!s->conf.gate_file)
                return -EINVAL;
        *ret_input = strdup(s->conf.gate_file);
        return *ret_input ? 0 : -ENOMEM;
}

static int done_gated(void *state, int r, void *input, void *result) {
        State *s = state;

        free(input);
        s->gated_runs++;
        count_run(s, "gated");
        return r;
}

/* In a forked child: what it is, as JSON for done. */
static int work_child(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        json_object *o = json_object_new_object();
        gid_t groups[64];
        int n = getgroups(64, groups);

        json_object_object_add(o, "pid", json_object_new_int64(getpid()));
        json_object_object_add(o, "uid", json_object_new_int64(getuid()));
        json_object_object_add(o, "gid", json_object_new_int64(getgid()));
        json_object_object_add(o, "groups", json_object_new_int(n));
        *ret = o;
        return 0;
}

static int done_child(void *state, int r, void *input, void *result) {
        State *s = state;

        free(s->child_result);
        s->child_result =
                result ? strdup(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN)) : NULL;
        json_object_put(result);
        count_run(s, "child");
        return r;
}

/* With pid_file, the child says who it is (written, then renamed into
 * place) and lets any process trace it: a test makes it outlive SIGKILL. */
static int work_childhang(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        State *s = state;

        if (s->conf.pid_file) {
                char tmp[PATH_MAX], text[32];
                int fd, n = snprintf(text, sizeof(text), "%d\n", (int) getpid());

                (void) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
                if (snprintf(tmp, sizeof(tmp), "%s.tmp", s->conf.pid_file) >= (int) sizeof(tmp))
                        return -ENAMETOOLONG;
                fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0 || write(fd, text, (size_t) n) != n || close(fd) < 0 ||
                    rename(tmp, s->conf.pid_file) < 0)
                        return -EIO;
        }
        for (;;)
                pause();
        return 0;
}

static void on_async_spawned(void *userdata, int r, const sunkd_spawn_result *res) {
        State *s = userdata;

        /* -ESTALE after a cancel already ended the run: nothing to do. */
        (void) s->ctx->api->job_complete(s->async_job, r < 0                                 ? r
                                                       : res->exit_code == 0 && !res->signal ? 0
                                                                                             : -EIO);
}

static int prepare_async(void *state, void **ret_input) {
        State *s = state;
        const char *argv[] = { "/bin/sh", "-c", s->conf.async_command ?: "exit 0", NULL };
        sunkd_spawn_spec spec = { .size = sizeof(spec), .argv = argv, .uid = (uid_t) -1, .gid = (gid_t) -1 };

        return s->ctx->api->spawn(s->ctx, &spec, on_async_spawned, s);
}

static void cancel_async(void *state, void *input) {
        State *s = state;

        s->async_cancels++;
        (void) s->ctx->api->job_complete(s->async_job, -ECANCELED);
}

typedef struct GateRun {
        char *running, *release;
} GateRun;

static void gate_run_free(GateRun *g) {
        if (!g)
                return;
        free(g->running);
        free(g->release);
        free(g);
}

/* The paths are made on the loop: the worker only reads its input. */
static int prepare_gate(void *state, void **ret_input) {
        State *s = state;
        GateRun *g;
        long long n;

        if (!s->conf.gate_dir)
                return -EINVAL;
        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        n = (long long) ++s->gate_runs;
        if (asprintf(&g->running, "%s/running.%lld", s->conf.gate_dir, n) < 0 ||
            asprintf(&g->release, "%s/release.%lld", s->conf.gate_dir, n) < 0) {
                gate_run_free(g);
                return -ENOMEM;
        }
        *ret_input = g;
        return 0;
}

static int work_gate(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        GateRun *g = input;
        int fd = open(g->running, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

        if (fd < 0)
                return -errno;
        close(fd);
        while (access(g->release, F_OK) < 0 && !sunkd_cancelled(cancel))
                sleep_usec(USEC_PER_MSEC);
        return sunkd_cancelled(cancel) ? -ECANCELED : 0;
}

static int done_gate(void *state, int r, void *input, void *result) {
        gate_run_free(input);
        count_run(state, "other");
        return r;
}

static int method_echo(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        return s->ctx->api->reply(call, json_object_get(params));
}

static int method_whoami(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        json_object *o = json_object_new_object();

        json_object_object_add(o, "uid", json_object_new_int64(s->ctx->api->call_uid(call)));
        json_object_object_add(o, "pid", json_object_new_int64(s->ctx->api->call_pid(call)));
        return s->ctx->api->reply(call, o);
}

/* Answered only when its caller hangs up: the reply then just frees it. */
static void on_hold_gone(sunkd_call *call, void *userdata) {
        State *s = userdata;

        s->gone_calls++;
        s->held--;
        s->ctx->api->reply(call, NULL);
}

static int method_hold(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        int r = s->ctx->api->call_on_gone(call, on_hold_gone, s);

        if (r < 0)
                return r;
        s->held++;
        return SUNKD_CALL_PENDING;
}

static int method_later(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        PendingCall *p = calloc(1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        p->call = call;
        p->next = s->later;
        s->later = p;
        s->ctx->api->job_trigger(s->ok_job, "Later");
        return SUNKD_CALL_PENDING;
}

typedef struct SpawnCall {
        State *state;
        sunkd_call *call;
} SpawnCall;

static void on_spawned(void *userdata, int r, const sunkd_spawn_result *res) {
        SpawnCall *sc = userdata;
        const sunkd_host_api *api = sc->state->ctx->api;
        json_object *o;

        if (r < 0) {
                /* ABI 1.3: a program that never ran, with the errno why. */
                o = json_object_new_object();
                json_object_object_add(o, "errno", json_object_new_int(-r));
                api->reply_error(sc->call, "io.sunkd.Test.SpawnFailed", o);
                free(sc);
                return;
        }
        o = json_object_new_object();
        json_object_object_add(o, "exit_code", json_object_new_int(res->exit_code));
        json_object_object_add(o, "signal", json_object_new_int(res->signal));
        json_object_object_add(o, "timed_out", json_object_new_boolean(res->timed_out));
        json_object_object_add(o, "truncated", json_object_new_boolean(res->output_truncated));
        json_object_object_add(o, "output", json_object_new_string_len(res->output, (int) res->output_len));
        /* ABI 1.3: stderr apart. */
        json_object_object_add(o, "err_output",
                               json_object_new_string_len(res->err_output, (int) res->err_output_len));
        json_object_object_add(o, "err_truncated", json_object_new_boolean(res->err_output_truncated));
        api->reply(sc->call, o);
        free(sc);
}

/* Supplementary groups from the "groups" array, at most 8. */
static size_t spawn_groups(struct json_object *params, gid_t *groups, size_t max) {
        json_object *v;
        size_t n = 0;

        if (!json_object_object_get_ex(params, "groups", &v) || !json_object_is_type(v, json_type_array))
                return 0;
        for (; n < json_object_array_length(v) && n < max; n++)
                groups[n] = (gid_t) json_object_get_int64(json_object_array_get_idx(v, n));
        return n;
}

/* Params: arg (the sh -c script), timeout_ms, output_max; with ABI 1.2 also
 * kill (child_kill right after the start), grace_ms, uid (also the gid),
 * groups, and v1_0 (hand the host a spec of the 1.0 size); with ABI 1.3
 * merge (SUNKD_SPAWN_MERGE_STDERR) and exec (run this path, without
 * arguments, instead of the shell). */
static int method_spawn(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        json_object *v;
        const char *arg = json_object_object_get_ex(params, "arg", &v) ? json_object_get_string(v) : "";
        uint64_t timeout = json_object_object_get_ex(params, "timeout_ms", &v)
                                   ? (uint64_t) json_object_get_int64(v) * 1000
                                   : 0;
        size_t max =
                json_object_object_get_ex(params, "output_max", &v) ? (size_t) json_object_get_int64(v) : 0;
        bool kill = json_object_object_get_ex(params, "kill", &v) && json_object_get_boolean(v);
        bool v1_0 = json_object_object_get_ex(params, "v1_0", &v) && json_object_get_boolean(v);
        uid_t uid =
                json_object_object_get_ex(params, "uid", &v) ? (uid_t) json_object_get_int64(v) : (uid_t) -1;
        gid_t groups[8];
        const char *exec = json_object_object_get_ex(params, "exec", &v) ? json_object_get_string(v) : NULL;
        const char *argv[] = { exec ?: s->conf.spawn_command ?: "/bin/sh", exec ? NULL : "-c", arg, NULL };
        sunkd_spawn_spec spec = {
                .size = v1_0 ? offsetof(sunkd_spawn_spec, input_len) + sizeof(size_t) : sizeof(spec),
                .argv = argv,
                .timeout_usec = timeout,
                .output_max = max,
                .uid = uid,
                .gid = (gid_t) uid,
                .kill_grace_usec = json_object_object_get_ex(params, "grace_ms", &v)
                                           ? (uint64_t) json_object_get_int64(v) * 1000
                                           : 0,
                .groups = groups,
                .n_groups = spawn_groups(params, groups, sizeof(groups) / sizeof(groups[0])),
                .flags = json_object_object_get_ex(params, "merge", &v) && json_object_get_boolean(v)
                                 ? SUNKD_SPAWN_MERGE_STDERR
                                 : 0,
        };
        SpawnCall *sc = calloc(1, sizeof(*sc));
        sunkd_child *child;
        int r;

        if (!sc)
                return -ENOMEM;
        *sc = (SpawnCall){ .state = s, .call = call };
        r = kill ? s->ctx->api->spawn_start(s->ctx, &spec, on_spawned, sc, &child)
                 : s->ctx->api->spawn(s->ctx, &spec, on_spawned, sc);
        if (r < 0) {
                free(sc);
                return r;
        }
        if (kill)
                (void) s->ctx->api->child_kill(child);
        return SUNKD_CALL_PENDING;
}

/* ---- ABI 1.2: file watches and facts ---- */

static void on_watch(void *userdata, const char *path) {
        State *s = userdata;

        s->watch_changes++;
        sunkd_log_info(s->ctx, "'%s' changed (%lld).", path, (long long) s->watch_changes);
}

static int watch_apply(State *s) {
        s->ctx->api->watch_remove(s->watch);
        s->watch = NULL;
        if (!s->conf.watch_path)
                return 0;
        return s->ctx->api->watch_add(s->ctx, s->conf.watch_path, on_watch, s, &s->watch);
}

static int method_watched(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        json_object *o = json_object_new_object();

        json_object_object_add(o, "changes", json_object_new_int64(s->watch_changes));
        json_object_object_add(
                o, "secret_length",
                json_object_new_int64(s->conf.secret ? (int64_t) strlen(s->conf.secret) : -1));
        return s->ctx->api->reply(call, o);
}

static void on_fact(void *userdata, const char *name, struct json_object *value) {
        State *s = userdata;

        s->fact_changes++;
        json_object_put(s->fact_last);
        s->fact_last = json_object_get(value);
}

static int method_publish(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        json_object *name, *value = NULL, *o;
        int r;

        if (!json_object_object_get_ex(params, "name", &name))
                return -EINVAL;
        (void) json_object_object_get_ex(params, "value", &value);
        r = s->ctx->api->fact_publish(s->ctx, json_object_get_string(name), json_object_get(value));
        o = json_object_new_object();
        json_object_object_add(o, "r", json_object_new_int(r));
        return s->ctx->api->reply(call, o);
}

static int method_fact(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        json_object *name, *o = json_object_new_object();

        if (json_object_object_get_ex(params, "name", &name))
                json_object_object_add(o, "value",
                                       s->ctx->api->fact_get(s->ctx, json_object_get_string(name)));
        json_object_object_add(o, "seen", json_object_new_int64(s->fact_changes));
        json_object_object_add(o, "last", json_object_get(s->fact_last));
        return s->ctx->api->reply(call, o);
}

/* ---- ABI 1.3: metrics a module owns ---- */

static int reply_r(State *s, sunkd_call *call, int r) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "r", json_object_new_int(r));
        return s->ctx->api->reply(call, o);
}

static int method_metric_add(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        json_object *v;
        sunkd_metric_spec spec = { .size = sizeof(spec),
                                   .help = "Registered through io.sunkd.Test.MetricAdd.",
                                   .type = json_object_object_get_ex(params, "counter", &v) &&
                                                           json_object_get_boolean(v)
                                                   ? SUNKD_METRIC_COUNTER
                                                   : SUNKD_METRIC_GAUGE };
        sunkd_metric *m;
        size_t n = 0;

        if (!json_object_object_get_ex(params, "name", &v))
                return -EINVAL;
        spec.name = json_object_get_string(v);
        if (json_object_object_get_ex(params, "labels", &v) && json_object_is_type(v, json_type_array))
                for (; n < json_object_array_length(v) && n < SUNKD_METRIC_LABELS_MAX; n++)
                        spec.labels[n] = json_object_get_string(json_object_array_get_idx(v, n));
        return reply_r(s, call, s->ctx->api->metric_add(s->ctx, &spec, &m));
}

static int method_metric_remove(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        json_object *v;
        const char *labels[] = { NULL, NULL };

        if (json_object_object_get_ex(params, "job", &v))
                labels[0] = json_object_get_string(v);
        return reply_r(s, call, s->ctx->api->metric_remove(s->runs, labels[0] ? labels : NULL));
}

static const sunkd_method methods[] = {
        { "io.sunkd.Test.Echo", SUNKD_METHOD_ANY_UID, method_echo },
        { "io.sunkd.Test.Root", SUNKD_METHOD_ROOT, method_whoami },
        { "io.sunkd.Test.Allowed", SUNKD_METHOD_ALLOW, method_whoami },
        { "io.sunkd.Test.Later", SUNKD_METHOD_ANY_UID, method_later },
        { "io.sunkd.Test.Spawn", SUNKD_METHOD_ROOT, method_spawn },
        { "io.sunkd.Test.Watched", SUNKD_METHOD_ANY_UID, method_watched },
        { "io.sunkd.Test.Publish", SUNKD_METHOD_ROOT, method_publish },
        { "io.sunkd.Test.Fact", SUNKD_METHOD_ANY_UID, method_fact },
        { "io.sunkd.Test.Hold", SUNKD_METHOD_ANY_UID, method_hold },
        /* ABI 1.3 */
        { "io.sunkd.Test.MetricAdd", SUNKD_METHOD_ROOT, method_metric_add },
        { "io.sunkd.Test.MetricRemove", SUNKD_METHOD_ROOT, method_metric_remove },
};

static void state_free(State *s) {
        if (!s)
                return;
        free(s->ballast);
        while (s->later) {
                PendingCall *p = s->later;
                s->later = p->next;
                /* The host has answered p->call (io.sunkd.Unavailable) by now. */
                free(p);
        }
        s->ctx->api->watch_remove(s->watch);
        (void) s->ctx->api->fact_unsubscribe(s->ctx, "testmod.echo", on_fact, s);
        json_object_put(s->fact_last);
        s->ctx->api->cfg_clear(conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), &s->conf);
        free(s->child_result);
        free(s->ok_release);
        free(s);
}

static int add_jobs(State *s) {
        const sunkd_host_api *api = s->ctx->api;
        sunkd_job_spec specs[] = {
                { .name = "testmod.ok",
                  .interval_usec = s->conf.interval,
                  .splay_usec = s->conf.splay,
                  .flags = s->conf.ready_gate ? SUNKD_JOB_READY_GATE : 0,
                  .work = work_ok,
                  .done = done_ok },
                { .name = "testmod.fail",
                  .interval_usec = s->conf.interval,
                  .flags = s->conf.periodic_fail ? 0 : SUNKD_JOB_TRIGGER_ONLY,
                  .backoff_min_usec = 100 * USEC_PER_MSEC,
                  .backoff_max_usec = 800 * USEC_PER_MSEC,
                  .work = work_fail,
                  .done = done_count },
                { .name = "testmod.hang",
                  .flags = SUNKD_JOB_TRIGGER_ONLY,
                  .timeout_usec = s->conf.hang_timeout,
                  .work = work_hang,
                  .done = done_count },
                { .name = "testmod.flaky",
                  .flags = SUNKD_JOB_TRIGGER_ONLY,
                  .prepare = prepare_flaky,
                  .work = work_flaky,
                  .done = done_flaky },
                { .name = "testmod.block",
                  .flags = SUNKD_JOB_TRIGGER_ONLY,
                  .work = work_block,
                  .done = done_count },
                { .name = "testmod.gated",
                  .flags = SUNKD_JOB_TRIGGER_ONLY,
                  .prepare = prepare_gated,
                  .work = work_gated,
                  .done = done_gated },
                { .name = "testmod.child",
                  .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_CHILD,
                  .work = work_child,
                  .done = done_child,
                  .child_uid = (uid_t) s->conf.child_uid,
                  .child_gid = (gid_t) s->conf.child_uid },
                { .name = "testmod.childhang",
                  .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_CHILD,
                  .timeout_usec = s->conf.hang_timeout,
                  .work = work_childhang,
                  .done = done_count },
                { .name = "testmod.async",
                  .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_ASYNC,
                  .timeout_usec = s->conf.hang_timeout,
                  .prepare = prepare_async,
                  .done = done_count,
                  .cancel = cancel_async },
                { .name = "testmod.gate",
                  .flags = SUNKD_JOB_TRIGGER_ONLY,
                  .prepare = prepare_gate,
                  .work = work_gate,
                  .done = done_gate },
        };
        sunkd_job **handles[] = { [0] = &s->ok_job, [3] = &s->flaky_job, [8] = &s->async_job };
        /* ABI 1.3 refuses it: an async run needs a way to be ended early. */
        sunkd_job_spec nocancel = { .size = sizeof(nocancel),
                                    .name = "testmod.nocancel",
                                    .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_ASYNC,
                                    .prepare = prepare_async,
                                    .done = done_count };
        int r;

        if (s->conf.async_without_cancel) {
                r = api->job_add(s->ctx, &nocancel, NULL);
                if (r < 0)
                        return sunkd_log_error_errno(s->ctx, r, "Failed to add job '%s': %m", nocancel.name);
        }

        for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
                specs[i].size = sizeof(sunkd_job_spec);
                r = api->job_add(s->ctx, &specs[i],
                                 i < sizeof(handles) / sizeof(handles[0]) ? handles[i] : NULL);
                if (r < 0)
                        return sunkd_log_error_errno(s->ctx, r, "Failed to add job '%s': %m", specs[i].name);
        }
        return 0;
}

static int testmod_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        static const sunkd_metric_spec runs = { sizeof(sunkd_metric_spec),
                                                "testmod_runs_total",
                                                "Test runs.",
                                                SUNKD_METRIC_COUNTER,
                                                { "job" } };
        State *s;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->ctx = c;
        r = conf_load(c, cfg, &s->conf);
        if (r < 0) {
                free(s);
                return r;
        }
        if (s->conf.ballast) {
                s->ballast = malloc(s->conf.ballast);
                if (!s->ballast) {
                        state_free(s);
                        return -ENOMEM;
                }
                memset(s->ballast, 0x5a, s->conf.ballast);
        }
        if (s->conf.init_fail) {
                state_free(s);
                return sunkd_log_error_errno(c, -EIO, "init_fail is set, failing as asked.");
        }
        if (s->conf.ready_gate && s->conf.gate_dir &&
            asprintf(&s->ok_release, "%s/release.ok", s->conf.gate_dir) < 0) {
                s->ok_release = NULL;
                state_free(s);
                return -ENOMEM;
        }
        r = c->api->metric_add(c, &runs, &s->runs);
        if (r >= 0)
                r = add_jobs(s);
        if (r >= 0)
                r = c->api->methods_add(c, methods, sizeof(methods) / sizeof(methods[0]));
        if (r >= 0) {
                r = watch_apply(s);
                if (r < 0)
                        sunkd_log_error_errno(c, r, "Failed to watch '%s': %m", s->conf.watch_path);
        }
        if (r >= 0)
                r = c->api->fact_subscribe(c, "testmod.echo", on_fact, s);
        if (r < 0) {
                state_free(s);
                return r;
        }
        *ret_state = s;
        return 0;
}

static int testmod_check(sunkd_ctx *c, const sunkd_cfg *cfg) {
        Conf conf;
        int r = conf_load(c, cfg, &conf);

        if (r >= 0)
                c->api->cfg_clear(conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), &conf);
        return r;
}

static int testmod_reload(void *state, const sunkd_cfg *cfg) {
        State *s = state;
        Conf conf;
        int r;

        s->reloads++;
        r = conf_load(s->ctx, cfg, &conf);
        if (r < 0)
                return r;
        if (conf.reload_fail) {
                /* As the ABI asks of a failing hook: nothing applied. */
                s->ctx->api->cfg_clear(conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), &conf);
                return sunkd_log_error_errno(s->ctx, -EIO,
                                             "reload_fail is set, failing the reload as asked.");
        }
        s->ctx->api->cfg_clear(conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), &s->conf);
        s->conf = conf;
        r = watch_apply(s);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "Failed to watch '%s': %m", s->conf.watch_path);
        return s->ctx->api->job_set_interval(s->ok_job, conf.interval, conf.splay);
}

static void testmod_fini(void *state) {
        state_free(state);
}

static uint64_t testmod_linger(void *state) {
        State *s = state;

        return s->conf.linger;
}

static int testmod_status(void *state, struct json_object *out) {
        State *s = state;
        json_object_object_add(out, "flaky_runs", json_object_new_int64(s->flaky_runs));
        json_object_object_add(out, "gated_runs", json_object_new_int64(s->gated_runs));
        json_object_object_add(out, "async_cancels", json_object_new_int64(s->async_cancels));
        if (s->child_result)
                json_object_object_add(out, "child_result", json_object_new_string(s->child_result));
        json_object_object_add(out, "held_calls", json_object_new_int64(s->held));
        json_object_object_add(out, "gone_calls", json_object_new_int64(s->gone_calls));
        json_object_object_add(out, "reloads", json_object_new_int64(s->reloads));
        json_object_object_add(out, "interval_usec", json_object_new_int64((int64_t) s->conf.interval));
        return 0;
}

SUNKD_MODULE_DEFINE(.name = "testmod", .version = PACKAGE_VERSION, .init = testmod_init,
                    .check = testmod_check, .reload = testmod_reload, .fini = testmod_fini,
                    .status = testmod_status, .linger = testmod_linger);
