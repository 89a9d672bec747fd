/* Each sunkd_*() wrapper of <sunkd/module.h> calls its entry of the host
 * table, with its arguments as given, and hands back what the entry
 * returned.
 *
 * A fake host table records the entry called and its arguments; each row
 * of `wrappers` calls one wrapper once with arguments no two share and
 * checks the record.  The header itself is read: a wrapper added without a
 * row here fails test_every_wrapper_has_a_row, and an entry of the table
 * no wrapper reaches fails test_every_entry_is_reached. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sunkd/module.h"
#include "../lib/check-run.h"

#define MAX_ARGS 8
#define U(x) ((uintptr_t) (x))
/* A distinct pointer per @n, never dereferenced. */
#define P(n) ((void *) (uintptr_t) (0x5000 + (n)))
#define RESULT 4242

static struct {
        const char *entry;
        uintptr_t a[MAX_ARGS];
        size_t n;
        double d;
        unsigned calls;
} rec;

static void record(const char *entry, const uintptr_t *a, size_t n) {
        ck_assert_uint_le(n, MAX_ARGS);
        rec.entry = entry;
        memcpy(rec.a, a, n * sizeof(*a));
        rec.n = n;
        rec.calls++;
}
#define REC(name, ...)                                                                                      \
        record(name, (const uintptr_t[]){ __VA_ARGS__ },                                                    \
               sizeof((uintptr_t[]){ __VA_ARGS__ }) / sizeof(uintptr_t))

/* The last call went to @want, once, with the arguments given. */
#define EXPECT(want, ...)                                                                                   \
        do {                                                                                                \
                const uintptr_t want_[] = { __VA_ARGS__ };                                                  \
                ck_assert_str_eq(rec.entry ?: "(none)", want);                                              \
                ck_assert_uint_eq(rec.calls, 1);                                                            \
                ck_assert_uint_eq(rec.n, sizeof(want_) / sizeof(want_[0]));                                 \
                for (size_t i_ = 0; i_ < rec.n; i_++)                                                       \
                        ck_assert_msg(rec.a[i_] == want_[i_], "%s: argument %zu is %#jx, not %#jx", want,   \
                                      i_, (uintmax_t) rec.a[i_], (uintmax_t) want_[i_]);                    \
        } while (0)

/* ---- The fake host ------------------------------------------------------ */

static int f_log(sunkd_ctx *c, int level, int r, const char *fmt, ...) {
        REC("log", U(c), U(level), U(r), U(fmt));
        return -abs(r);
}
static const char *f_module_name(sunkd_ctx *c) {
        REC("module_name", U(c));
        return P(900);
}
static const char *f_state_dir(sunkd_ctx *c) {
        REC("state_dir", U(c));
        return P(901);
}
static int f_cfg_parse(const sunkd_cfg *cfg, const sunkd_cfg_key *keys, size_t n_keys, void *out,
                       char **ret_error) {
        REC("cfg_parse", U(cfg), U(keys), U(n_keys), U(out), U(ret_error));
        return RESULT;
}
static void f_cfg_clear(const sunkd_cfg_key *keys, size_t n_keys, void *out) {
        REC("cfg_clear", U(keys), U(n_keys), U(out));
}
static int f_cfg_where(const sunkd_cfg *cfg, char **ret) {
        REC("cfg_where", U(cfg), U(ret));
        return RESULT;
}
static const sunkd_cfg *f_cfg_get(const sunkd_cfg *cfg, const char *key) {
        REC("cfg_get", U(cfg), U(key));
        return P(902);
}
static const char *f_cfg_scalar(const sunkd_cfg *cfg) {
        REC("cfg_scalar", U(cfg));
        return P(903);
}
static int f_job_add(sunkd_ctx *c, const sunkd_job_spec *spec, sunkd_job **ret) {
        REC("job_add", U(c), U(spec), U(ret));
        return RESULT;
}
static int f_job_trigger(sunkd_job *j, const char *reason) {
        REC("job_trigger", U(j), U(reason));
        return RESULT;
}
static int f_job_set_interval(sunkd_job *j, uint64_t interval_usec, uint64_t splay_usec) {
        REC("job_set_interval", U(j), U(interval_usec), U(splay_usec));
        return RESULT;
}
static int f_methods_add(sunkd_ctx *c, const sunkd_method *methods, size_t n) {
        REC("methods_add", U(c), U(methods), U(n));
        return RESULT;
}
static int f_reply(sunkd_call *call, struct json_object *params) {
        REC("reply", U(call), U(params));
        return RESULT;
}
static int f_reply_error(sunkd_call *call, const char *error, struct json_object *params) {
        REC("reply_error", U(call), U(error), U(params));
        return RESULT;
}
static uid_t f_call_uid(sunkd_call *call) {
        REC("call_uid", U(call));
        return 4001;
}
static gid_t f_call_gid(sunkd_call *call) {
        REC("call_gid", U(call));
        return 4002;
}
static int f_metric_add(sunkd_ctx *c, const sunkd_metric_spec *spec, sunkd_metric **ret) {
        REC("metric_add", U(c), U(spec), U(ret));
        return RESULT;
}
static int f_metric_set(sunkd_metric *m, double value, const char *const *label_values) {
        REC("metric_set", U(m), U(label_values));
        rec.d = value;
        return RESULT;
}
static int f_metric_add_value(sunkd_metric *m, double delta, const char *const *label_values) {
        REC("metric_add_value", U(m), U(label_values));
        rec.d = delta;
        return RESULT;
}
static int f_spawn(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata) {
        REC("spawn", U(c), U(spec), U(cb), U(userdata));
        return RESULT;
}
static int f_file_stage(const char *path, const void *data, size_t len, mode_t mode, uid_t uid, gid_t gid,
                        char **ret_tmp) {
        REC("file_stage", U(path), U(data), U(len), U(mode), U(uid), U(gid), U(ret_tmp));
        return RESULT;
}
static int f_file_commit(const char *tmp, const char *path) {
        REC("file_commit", U(tmp), U(path));
        return RESULT;
}
static int f_file_write_atomic(const char *path, const void *data, size_t len, mode_t mode, uid_t uid,
                               gid_t gid) {
        REC("file_write_atomic", U(path), U(data), U(len), U(mode), U(uid), U(gid));
        return RESULT;
}
static int f_job_set_message(sunkd_job *j, const char *message) {
        REC("job_set_message", U(j), U(message));
        return RESULT;
}
static int f_job_update(sunkd_job *j, const sunkd_job_spec *spec) {
        REC("job_update", U(j), U(spec));
        return RESULT;
}
static int f_job_complete(sunkd_job *j, int r) {
        REC("job_complete", U(j), U(r));
        return RESULT;
}
static int f_spawn_start(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata,
                         sunkd_child **ret) {
        REC("spawn_start", U(c), U(spec), U(cb), U(userdata), U(ret));
        return RESULT;
}
static int f_child_kill(sunkd_child *child) {
        REC("child_kill", U(child));
        return RESULT;
}
static int f_watch_add(sunkd_ctx *c, const char *path, void (*cb)(void *userdata, const char *path),
                       void *userdata, sunkd_watch **ret) {
        REC("watch_add", U(c), U(path), U(cb), U(userdata), U(ret));
        return RESULT;
}
static void f_watch_remove(sunkd_watch *w) {
        REC("watch_remove", U(w));
}
static int f_fact_publish(sunkd_ctx *c, const char *name, struct json_object *value) {
        REC("fact_publish", U(c), U(name), U(value));
        return RESULT;
}
static struct json_object *f_fact_get(sunkd_ctx *c, const char *name) {
        REC("fact_get", U(c), U(name));
        return P(904);
}
static int f_fact_subscribe(sunkd_ctx *c, const char *name,
                            void (*cb)(void *userdata, const char *name, struct json_object *value),
                            void *userdata) {
        REC("fact_subscribe", U(c), U(name), U(cb), U(userdata));
        return RESULT;
}
static int f_fact_unsubscribe(sunkd_ctx *c, const char *name,
                              void (*cb)(void *userdata, const char *name, struct json_object *value),
                              void *userdata) {
        REC("fact_unsubscribe", U(c), U(name), U(cb), U(userdata));
        return RESULT;
}
static int f_call_on_gone(sunkd_call *call, void (*cb)(sunkd_call *call, void *userdata), void *userdata) {
        REC("call_on_gone", U(call), U(cb), U(userdata));
        return RESULT;
}
static pid_t f_call_pid(sunkd_call *call) {
        REC("call_pid", U(call));
        return 4003;
}
static int f_log_fields(sunkd_ctx *c, int level, const char *const *fields, const char *fmt, ...) {
        REC("log_fields", U(c), U(level), U(fields), U(fmt));
        return RESULT;
}
static const sunkd_cfg *f_cfg_child(const sunkd_cfg *cfg, size_t i, const char **ret_key) {
        REC("cfg_child", U(cfg), U(i), U(ret_key));
        return P(905);
}
static int f_metric_remove(sunkd_metric *m, const char *const *label_values) {
        REC("metric_remove", U(m), U(label_values));
        return RESULT;
}
static void f_linger_end(sunkd_ctx *c) {
        REC("linger_end", U(c));
}
static const char *f_runtime_dir(sunkd_ctx *c) {
        REC("runtime_dir", U(c));
        return P(906);
}

static const sunkd_host_api fake_api = {
        .size = sizeof(sunkd_host_api),
        .log = f_log,
        .module_name = f_module_name,
        .state_dir = f_state_dir,
        .cfg_parse = f_cfg_parse,
        .cfg_clear = f_cfg_clear,
        .cfg_where = f_cfg_where,
        .cfg_get = f_cfg_get,
        .cfg_scalar = f_cfg_scalar,
        .job_add = f_job_add,
        .job_trigger = f_job_trigger,
        .job_set_interval = f_job_set_interval,
        .methods_add = f_methods_add,
        .reply = f_reply,
        .reply_error = f_reply_error,
        .call_uid = f_call_uid,
        .call_gid = f_call_gid,
        .metric_add = f_metric_add,
        .metric_set = f_metric_set,
        .metric_add_value = f_metric_add_value,
        .spawn = f_spawn,
        .file_stage = f_file_stage,
        .file_commit = f_file_commit,
        .file_write_atomic = f_file_write_atomic,
        .job_set_message = f_job_set_message,
        .job_update = f_job_update,
        .job_complete = f_job_complete,
        .spawn_start = f_spawn_start,
        .child_kill = f_child_kill,
        .watch_add = f_watch_add,
        .watch_remove = f_watch_remove,
        .fact_publish = f_fact_publish,
        .fact_get = f_fact_get,
        .fact_subscribe = f_fact_subscribe,
        .fact_unsubscribe = f_fact_unsubscribe,
        .call_on_gone = f_call_on_gone,
        .call_pid = f_call_pid,
        .log_fields = f_log_fields,
        .cfg_child = f_cfg_child,
        .metric_remove = f_metric_remove,
        .linger_end = f_linger_end,
        .runtime_dir = f_runtime_dir,
};

static sunkd_ctx ctx = { .api = &fake_api };
#define C (&ctx)

/* ---- One row a wrapper ---------------------------------------------------- */

static void cb_spawn(void *userdata, int r, const sunkd_spawn_result *res) {
        (void) userdata, (void) r, (void) res;
}
static void cb_watch(void *userdata, const char *path) {
        (void) userdata, (void) path;
}
static void cb_fact(void *userdata, const char *name, struct json_object *value) {
        (void) userdata, (void) name, (void) value;
}
static void cb_gone(sunkd_call *call, void *userdata) {
        (void) call, (void) userdata;
}

static void w_job_add(void) {
        ck_assert_int_eq(sunkd_job_add(C, P(1), P(2)), RESULT);
        EXPECT("job_add", U(C), U(P(1)), U(P(2)));
}
static void w_job_trigger(void) {
        ck_assert_int_eq(sunkd_job_trigger(C, P(1), P(2)), RESULT);
        EXPECT("job_trigger", U(P(1)), U(P(2)));
}
static void w_job_set_interval(void) {
        ck_assert_int_eq(sunkd_job_set_interval(C, P(1), 301, 302), RESULT);
        EXPECT("job_set_interval", U(P(1)), 301, 302);
}
static void w_job_update(void) {
        ck_assert_int_eq(sunkd_job_update(C, P(1), P(2)), RESULT);
        EXPECT("job_update", U(P(1)), U(P(2)));
}
static void w_job_set_message(void) {
        ck_assert_int_eq(sunkd_job_set_message(C, P(1), P(2)), RESULT);
        EXPECT("job_set_message", U(P(1)), U(P(2)));
}
static void w_job_complete(void) {
        ck_assert_int_eq(sunkd_job_complete(C, P(1), -71), RESULT);
        EXPECT("job_complete", U(P(1)), U(-71));
}
static void w_spawn(void) {
        ck_assert_int_eq(sunkd_spawn(C, P(1), cb_spawn, P(2)), RESULT);
        EXPECT("spawn", U(C), U(P(1)), U(cb_spawn), U(P(2)));
}
static void w_spawn_start(void) {
        ck_assert_int_eq(sunkd_spawn_start(C, P(1), cb_spawn, P(2), P(3)), RESULT);
        EXPECT("spawn_start", U(C), U(P(1)), U(cb_spawn), U(P(2)), U(P(3)));
}
static void w_child_kill(void) {
        ck_assert_int_eq(sunkd_child_kill(C, P(1)), RESULT);
        EXPECT("child_kill", U(P(1)));
}
static void w_methods_add(void) {
        ck_assert_int_eq(sunkd_methods_add(C, P(1), 303), RESULT);
        EXPECT("methods_add", U(C), U(P(1)), 303);
}
static void w_reply(void) {
        ck_assert_int_eq(sunkd_reply(C, P(1), P(2)), RESULT);
        EXPECT("reply", U(P(1)), U(P(2)));
}
static void w_reply_error(void) {
        ck_assert_int_eq(sunkd_reply_error(C, P(1), P(2), P(3)), RESULT);
        EXPECT("reply_error", U(P(1)), U(P(2)), U(P(3)));
}
static void w_call_uid(void) {
        ck_assert_uint_eq(sunkd_call_uid(C, P(1)), 4001);
        EXPECT("call_uid", U(P(1)));
}
static void w_call_gid(void) {
        ck_assert_uint_eq(sunkd_call_gid(C, P(1)), 4002);
        EXPECT("call_gid", U(P(1)));
}
static void w_call_pid(void) {
        ck_assert_int_eq(sunkd_call_pid(C, P(1)), 4003);
        EXPECT("call_pid", U(P(1)));
}
static void w_call_on_gone(void) {
        ck_assert_int_eq(sunkd_call_on_gone(C, P(1), cb_gone, P(2)), RESULT);
        EXPECT("call_on_gone", U(P(1)), U(cb_gone), U(P(2)));
}
static void w_fact_publish(void) {
        ck_assert_int_eq(sunkd_fact_publish(C, P(1), P(2)), RESULT);
        EXPECT("fact_publish", U(C), U(P(1)), U(P(2)));
}
static void w_fact_get(void) {
        ck_assert_ptr_eq(sunkd_fact_get(C, P(1)), P(904));
        EXPECT("fact_get", U(C), U(P(1)));
}
static void w_fact_subscribe(void) {
        ck_assert_int_eq(sunkd_fact_subscribe(C, P(1), cb_fact, P(2)), RESULT);
        EXPECT("fact_subscribe", U(C), U(P(1)), U(cb_fact), U(P(2)));
}
static void w_fact_unsubscribe(void) {
        ck_assert_int_eq(sunkd_fact_unsubscribe(C, P(1), cb_fact, P(2)), RESULT);
        EXPECT("fact_unsubscribe", U(C), U(P(1)), U(cb_fact), U(P(2)));
}
static void w_watch_add(void) {
        ck_assert_int_eq(sunkd_watch_add(C, P(1), cb_watch, P(2), P(3)), RESULT);
        EXPECT("watch_add", U(C), U(P(1)), U(cb_watch), U(P(2)), U(P(3)));
}
static void w_watch_remove(void) {
        sunkd_watch_remove(C, P(1));
        EXPECT("watch_remove", U(P(1)));
}
static void w_cfg_parse(void) {
        ck_assert_int_eq(sunkd_cfg_parse(C, P(1), P(2), 304, P(3), P(4)), RESULT);
        EXPECT("cfg_parse", U(P(1)), U(P(2)), 304, U(P(3)), U(P(4)));
}
static void w_cfg_clear(void) {
        sunkd_cfg_clear(C, P(1), 305, P(2));
        EXPECT("cfg_clear", U(P(1)), 305, U(P(2)));
}
static void w_cfg_where(void) {
        ck_assert_int_eq(sunkd_cfg_where(C, P(1), P(2)), RESULT);
        EXPECT("cfg_where", U(P(1)), U(P(2)));
}
static void w_cfg_get(void) {
        ck_assert_ptr_eq(sunkd_cfg_get(C, P(1), P(2)), P(902));
        EXPECT("cfg_get", U(P(1)), U(P(2)));
}
static void w_cfg_scalar(void) {
        ck_assert_ptr_eq(sunkd_cfg_scalar(C, P(1)), P(903));
        EXPECT("cfg_scalar", U(P(1)));
}
static void w_cfg_child(void) {
        ck_assert_ptr_eq(sunkd_cfg_child(C, P(1), 306, P(2)), P(905));
        EXPECT("cfg_child", U(P(1)), 306, U(P(2)));
}
static void w_metric_add(void) {
        ck_assert_int_eq(sunkd_metric_add(C, P(1), P(2)), RESULT);
        EXPECT("metric_add", U(C), U(P(1)), U(P(2)));
}
static void w_metric_set(void) {
        ck_assert_int_eq(sunkd_metric_set(C, P(1), 2.5, P(2)), RESULT);
        EXPECT("metric_set", U(P(1)), U(P(2)));
        ck_assert_double_eq(rec.d, 2.5);
}
static void w_metric_add_value(void) {
        ck_assert_int_eq(sunkd_metric_add_value(C, P(1), -3.5, P(2)), RESULT);
        EXPECT("metric_add_value", U(P(1)), U(P(2)));
        ck_assert_double_eq(rec.d, -3.5);
}
static void w_metric_remove(void) {
        ck_assert_int_eq(sunkd_metric_remove(C, P(1), P(2)), RESULT);
        EXPECT("metric_remove", U(P(1)), U(P(2)));
}
/* A table: each def registered in turn through metric_add. */
static void w_metrics_add(void) {
        sunkd_metric *m = NULL;
        const sunkd_metric_def defs[] = {
                { { sizeof(sunkd_metric_spec), "x", "y", SUNKD_METRIC_GAUGE, { NULL } }, &m }
        };

        ck_assert_int_eq(sunkd_metrics_add(C, defs, 1), 0);
        EXPECT("metric_add", U(C), U(&defs[0].spec), U(&m));
}
static void w_module_name(void) {
        ck_assert_ptr_eq(sunkd_module_name(C), P(900));
        EXPECT("module_name", U(C));
}
static void w_state_dir(void) {
        ck_assert_ptr_eq(sunkd_state_dir(C), P(901));
        EXPECT("state_dir", U(C));
}
static void w_runtime_dir(void) {
        ck_assert_ptr_eq(sunkd_runtime_dir(C), P(906));
        EXPECT("runtime_dir", U(C));
}
static void w_linger_end(void) {
        sunkd_linger_end(C);
        EXPECT("linger_end", U(C));
}
static void w_file_stage(void) {
        ck_assert_int_eq(sunkd_file_stage(C, P(1), P(2), 307, 0640, 308, 309, P(3)), RESULT);
        EXPECT("file_stage", U(P(1)), U(P(2)), 307, 0640, 308, 309, U(P(3)));
}
static void w_file_commit(void) {
        ck_assert_int_eq(sunkd_file_commit(C, P(1), P(2)), RESULT);
        EXPECT("file_commit", U(P(1)), U(P(2)));
}
static void w_file_write_atomic(void) {
        ck_assert_int_eq(sunkd_file_write_atomic(C, P(1), P(2), 310, 0600, 311, 312), RESULT);
        EXPECT("file_write_atomic", U(P(1)), U(P(2)), 310, 0600, 311, 312);
}
/* The log macros reach their entries too. */
static void w_log(void) {
        ck_assert_int_eq(sunkd_log_warning_errno(C, 5, "x"), -5);
        ck_assert_uint_eq(rec.a[1], SUNKD_LOG_WARNING);
        ck_assert_uint_eq(rec.a[2], 5);
        ck_assert_str_eq(rec.entry, "log");
}
static void w_log_fields(void) {
        ck_assert_int_eq(sunkd_log_fields(C, SUNKD_LOG_INFO, P(1), "x"), RESULT);
        ck_assert_str_eq(rec.entry, "log_fields");
        ck_assert_uint_eq(rec.a[0], U(C));
        ck_assert_uint_eq(rec.a[1], SUNKD_LOG_INFO);
        ck_assert_uint_eq(rec.a[2], U(P(1)));
}
/* Not a table entry: the flag a worker polls. */
static void w_cancelled(void) {
        sunkd_cancel cancel = { 0 };

        ck_assert(!sunkd_cancelled(NULL));
        ck_assert(!sunkd_cancelled(&cancel));
        cancel.requested = 1;
        ck_assert(sunkd_cancelled(&cancel));
}

typedef struct Wrapper {
        const char *name;  /* as the header names it */
        const char *entry; /* the host table's entry it reaches; NULL: none */
        void (*call)(void);
} Wrapper;

static const Wrapper wrappers[] = {
        { "sunkd_job_add", "job_add", w_job_add },
        { "sunkd_job_trigger", "job_trigger", w_job_trigger },
        { "sunkd_job_set_interval", "job_set_interval", w_job_set_interval },
        { "sunkd_job_update", "job_update", w_job_update },
        { "sunkd_job_set_message", "job_set_message", w_job_set_message },
        { "sunkd_job_complete", "job_complete", w_job_complete },
        { "sunkd_spawn", "spawn", w_spawn },
        { "sunkd_spawn_start", "spawn_start", w_spawn_start },
        { "sunkd_child_kill", "child_kill", w_child_kill },
        { "sunkd_methods_add", "methods_add", w_methods_add },
        { "sunkd_reply", "reply", w_reply },
        { "sunkd_reply_error", "reply_error", w_reply_error },
        { "sunkd_call_uid", "call_uid", w_call_uid },
        { "sunkd_call_gid", "call_gid", w_call_gid },
        { "sunkd_call_pid", "call_pid", w_call_pid },
        { "sunkd_call_on_gone", "call_on_gone", w_call_on_gone },
        { "sunkd_fact_publish", "fact_publish", w_fact_publish },
        { "sunkd_fact_get", "fact_get", w_fact_get },
        { "sunkd_fact_subscribe", "fact_subscribe", w_fact_subscribe },
        { "sunkd_fact_unsubscribe", "fact_unsubscribe", w_fact_unsubscribe },
        { "sunkd_watch_add", "watch_add", w_watch_add },
        { "sunkd_watch_remove", "watch_remove", w_watch_remove },
        { "sunkd_cfg_parse", "cfg_parse", w_cfg_parse },
        { "sunkd_cfg_clear", "cfg_clear", w_cfg_clear },
        { "sunkd_cfg_where", "cfg_where", w_cfg_where },
        { "sunkd_cfg_get", "cfg_get", w_cfg_get },
        { "sunkd_cfg_scalar", "cfg_scalar", w_cfg_scalar },
        { "sunkd_cfg_child", "cfg_child", w_cfg_child },
        { "sunkd_metric_add", "metric_add", w_metric_add },
        { "sunkd_metric_set", "metric_set", w_metric_set },
        { "sunkd_metric_add_value", "metric_add_value", w_metric_add_value },
        { "sunkd_metric_remove", "metric_remove", w_metric_remove },
        { "sunkd_metrics_add", "metric_add", w_metrics_add },
        { "sunkd_module_name", "module_name", w_module_name },
        { "sunkd_state_dir", "state_dir", w_state_dir },
        { "sunkd_runtime_dir", "runtime_dir", w_runtime_dir },
        { "sunkd_linger_end", "linger_end", w_linger_end },
        { "sunkd_file_stage", "file_stage", w_file_stage },
        { "sunkd_file_commit", "file_commit", w_file_commit },
        { "sunkd_file_write_atomic", "file_write_atomic", w_file_write_atomic },
        { "sunkd_log", "log", w_log },
        { "sunkd_log_fields", "log_fields", w_log_fields },
        { "sunkd_cancelled", NULL, w_cancelled },
};

START_TEST(test_wrapper) {
        const Wrapper *w = &wrappers[_i];

        memset(&rec, 0, sizeof(rec));
        w->call();
        if (w->entry)
                ck_assert_msg(rec.entry && strcmp(rec.entry, w->entry) == 0, "%s reached %s, not %s",
                              w->name, rec.entry ?: "nothing", w->entry);
}
END_TEST

/* The entries the table has, by name: every one is some row's. */
static const char *const entries[] = {
        "log",
        "module_name",
        "state_dir",
        "cfg_parse",
        "cfg_clear",
        "cfg_where",
        "cfg_get",
        "cfg_scalar",
        "job_add",
        "job_trigger",
        "job_set_interval",
        "methods_add",
        "reply",
        "reply_error",
        "call_uid",
        "call_gid",
        "metric_add",
        "metric_set",
        "metric_add_value",
        "spawn",
        "file_stage",
        "file_commit",
        "file_write_atomic",
        "job_set_message",
        "job_update",
        "job_complete",
        "spawn_start",
        "child_kill",
        "watch_add",
        "watch_remove",
        "fact_publish",
        "fact_get",
        "fact_subscribe",
        "fact_unsubscribe",
        "call_on_gone",
        "call_pid",
        "log_fields",
        "cfg_child",
        "metric_remove",
        "linger_end",
        "runtime_dir",
};

START_TEST(test_every_entry_is_reached) {
        /* the list above is the whole table: one function pointer a name */
        ck_assert_uint_eq((sizeof(sunkd_host_api) - offsetof(sunkd_host_api, log)) / sizeof(void (*)(void)),
                          sizeof(entries) / sizeof(entries[0]));
        for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
                bool found = false;

                for (size_t k = 0; k < sizeof(wrappers) / sizeof(wrappers[0]); k++)
                        if (wrappers[k].entry && strcmp(wrappers[k].entry, entries[i]) == 0)
                                found = true;
                ck_assert_msg(found, "no wrapper reaches the host table's entry %s", entries[i]);
        }
}
END_TEST

static bool has_row(const char *name) {
        for (size_t k = 0; k < sizeof(wrappers) / sizeof(wrappers[0]); k++)
                if (strcmp(wrappers[k].name, name) == 0)
                        return true;
        return false;
}

/* Every "static inline ... sunkd_NAME(" and every "#define sunkd_NAME(" of
 * the header but the log levels' shorthands has a row. */
START_TEST(test_every_wrapper_has_a_row) {
        const char *srcdir = getenv("SUNKD_SRCDIR");
        char path[4096], line[1024], name[128];
        unsigned n = 0;
        FILE *f;

        ck_assert_msg(srcdir, "SUNKD_SRCDIR is not set: run it through make check");
        snprintf(path, sizeof(path), "%s/agent/include/sunkd/module.h", srcdir);
        f = fopen(path, "re");
        ck_assert_msg(f, "cannot read %s", path);
        while (fgets(line, sizeof(line), f)) {
                const char *p = NULL, *q;

                if (strncmp(line, "static inline ", 14) == 0)
                        p = strstr(line, "sunkd_");
                else if (strncmp(line, "#define sunkd_log(", 18) == 0 ||
                         strncmp(line, "#define sunkd_log_fields(", 25) == 0)
                        p = line + 8;
                /* the return type may be a sunkd_ type itself: the name is
                 * the word just before the '(' */
                if (!p || !(q = strchr(p, '(')))
                        continue;
                p = q;
                while (p > line &&
                       (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9')))
                        p--;
                snprintf(name, sizeof(name), "%.*s", (int) (q - p), p);
                n++;
                ck_assert_msg(has_row(name),
                              "%s of module.h has no row in tests/unit/test-module-wrappers.c", name);
        }
        fclose(f);
        ck_assert_uint_eq(n, sizeof(wrappers) / sizeof(wrappers[0]));
}
END_TEST

int main(void) {
        Suite *s = suite_create("module-wrappers");
        TCase *tc = tcase_create("wrappers");

        tcase_add_loop_test(tc, test_wrapper, 0, (int) (sizeof(wrappers) / sizeof(wrappers[0])));
        tcase_add_test(tc, test_every_entry_is_reached);
        tcase_add_test(tc, test_every_wrapper_has_a_row);
        suite_add_tcase(s, tc);
        return check_run(s);
}
