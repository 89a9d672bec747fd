/* A module's socket methods on a host of the fuzzer's own: every answer
 * must be valid Varlink JSON whatever the parameters and whatever the text
 * from outside (a script's output, scontrol's answer, a file's name).
 *
 * The module (FUZZ_MODULE: health or prolog, linked in) is started with a
 * fixed section through the real config parser; the host's other entries
 * are the fuzzer's: replies are formatted as the host formats them and
 * abort when varlink_format() refuses them, which the real host's last
 * defence (varlink_repair_utf8()) would hide.  The input is a list of
 * operations, each a byte then its operands:
 *   0 call    method (1 byte), params (2-byte length, JSON text; what does
 *             not parse as an object becomes the parameters of the seeds)
 *   1 spawn   the oldest child ends: exit status (1 byte), its output
 *             (2-byte length, any bytes)
 *   2 run     a job (1 byte) runs: prepare, and for a job that is not
 *             async, work and done in place
 *   3 gone    the peer of the oldest call not answered hangs up
 * At the end every child ends with no output and the module stops. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "module-loader.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/text-escape.h"
#include "proto/varlink.h"

extern const sunkd_module sunkd_module_v1;

#define MAX_METHODS 16
#define MAX_JOBS 32
#define MAX_SPAWNS 16
#define MAX_CALLS 64

struct sunkd_call {
        bool replied;
        void (*gone)(sunkd_call *call, void *userdata);
        void *gone_userdata;
};

struct sunkd_job {
        sunkd_job_spec spec;
        bool running;
        void *input;
};

typedef struct Spawn {
        sunkd_spawn_cb cb;
        void *userdata;
} Spawn;

static struct {
        sunkd_ctx ctx;
        void *state;
        sunkd_method methods[MAX_METHODS];
        size_t n_methods;
        sunkd_job *jobs[MAX_JOBS];
        size_t n_jobs;
        Spawn spawns[MAX_SPAWNS];
        size_t n_spawns;
        sunkd_call *calls[MAX_CALLS];
        size_t n_calls;
        char dir[64], state_dir[96];
        Config *config;
        bool stopping;
} H;

/* ---- replies: the check ------------------------------------------------ */

static void check_reply(const char *error, json_object *params) {
        _cleanup_json_ json_object *msg = json_object_new_object();
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        if (!msg)
                abort();
        if (error)
                json_object_object_add(msg, "error", json_object_new_string(error));
        json_object_object_add(msg, "parameters", params ?: json_object_new_object());
        r = varlink_format(msg, &buf, &len);
        if (r == -ENOMEM)
                return;
        if (r < 0) {
                fprintf(stderr, "reply not valid Varlink JSON (%s): %s\n", strerror(-r),
                        json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN));
                abort();
        }
}

static void call_forget(sunkd_call *call) {
        for (size_t i = 0; i < H.n_calls; i++)
                if (H.calls[i] == call) {
                        memmove(H.calls + i, H.calls + i + 1, (H.n_calls - i - 1) * sizeof(*H.calls));
                        H.n_calls--;
                        break;
                }
        free(call);
}

static int f_reply_error(sunkd_call *call, const char *error, json_object *params) {
        if (!call || call->replied) {
                json_object_put(params);
                return -EALREADY;
        }
        call->replied = true; /* freed by op_call, or at the end */
        check_reply(error, params);
        return 0;
}

static int f_reply(sunkd_call *call, json_object *params) {
        return f_reply_error(call, NULL, params);
}

/* ---- the rest of the host ----------------------------------------------- */

static int f_log(sunkd_ctx *c, int level, int r, const char *fmt, ...) {
        return r < 0 ? r : -r;
}

static int f_log_fields(sunkd_ctx *c, int level, const char *const *fields, const char *fmt, ...) {
        return 0;
}

static const char *f_module_name(sunkd_ctx *c) {
        return sunkd_module_v1.name;
}

static const char *f_state_dir(sunkd_ctx *c) {
        return H.state_dir;
}

static int f_job_add(sunkd_ctx *c, const sunkd_job_spec *spec, sunkd_job **ret) {
        sunkd_job *j;

        if (H.stopping)
                return -ESHUTDOWN;
        if (H.n_jobs >= MAX_JOBS || !(j = calloc(1, sizeof(*j))))
                return -ENOMEM;
        j->spec = *spec;
        H.jobs[H.n_jobs++] = j;
        if (ret)
                *ret = j;
        return 0;
}

static int f_job_trigger(sunkd_job *j, const char *reason) {
        return 0;
}

static int f_job_set_interval(sunkd_job *j, uint64_t interval, uint64_t splay) {
        return 0;
}

static int f_job_set_message(sunkd_job *j, const char *message) {
        return 0; /* the host's (sched.c), fuzzed apart */
}

static int f_job_update(sunkd_job *j, const sunkd_job_spec *spec) {
        return 0;
}

static void *job_state(sunkd_job *j) {
        return j->spec.userdata ?: H.state;
}

static int f_job_complete(sunkd_job *j, int r) {
        if (!j->running)
                return -ESTALE;
        j->running = false;
        if (j->spec.done)
                (void) j->spec.done(job_state(j), r, TAKE_PTR(j->input), NULL);
        return 0;
}

static int f_methods_add(sunkd_ctx *c, const sunkd_method *methods, size_t n) {
        for (size_t i = 0; i < n && H.n_methods < MAX_METHODS; i++)
                H.methods[H.n_methods++] = methods[i];
        return 0;
}

static uid_t f_call_uid(sunkd_call *call) {
        return 0;
}

static gid_t f_call_gid(sunkd_call *call) {
        return 0;
}

static pid_t f_call_pid(sunkd_call *call) {
        return 1;
}

static int f_call_on_gone(sunkd_call *call, void (*cb)(sunkd_call *, void *), void *userdata) {
        if (!call || call->replied)
                return -EINVAL;
        call->gone = cb;
        call->gone_userdata = userdata;
        return 0;
}

static int f_metric_add(sunkd_ctx *c, const sunkd_metric_spec *spec, sunkd_metric **ret) {
        static char dummy;

        *ret = (sunkd_metric *) &dummy;
        return 0;
}

static int f_metric_set(sunkd_metric *m, double value, const char *const *labels) {
        return 0;
}

static int f_metric_remove(sunkd_metric *m, const char *const *labels) {
        return 0;
}

static int f_spawn_start(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata,
                         sunkd_child **ret) {
        if (H.stopping)
                return -ESHUTDOWN;
        if (H.n_spawns >= MAX_SPAWNS)
                return -EAGAIN;
        H.spawns[H.n_spawns++] = (Spawn) { .cb = cb, .userdata = userdata };
        if (ret)
                *ret = (sunkd_child *) &H.spawns[H.n_spawns - 1];
        return 0;
}

static int f_spawn(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata) {
        return f_spawn_start(c, spec, cb, userdata, NULL);
}

static int f_child_kill(sunkd_child *child) {
        return 0;
}

static int f_watch_add(sunkd_ctx *c, const char *path, void (*cb)(void *, const char *), void *userdata,
                       sunkd_watch **ret) {
        if (ret)
                *ret = NULL;
        return 0;
}

static void f_watch_remove(sunkd_watch *w) {
}

static int f_fact_publish(sunkd_ctx *c, const char *name, json_object *value) {
        json_object_put(value);
        return 0;
}

static json_object *f_fact_get(sunkd_ctx *c, const char *name) {
        return NULL;
}

static int f_fact_subscribe(sunkd_ctx *c, const char *name, void (*cb)(void *, const char *, json_object *),
                            void *userdata) {
        return 0;
}

static void f_linger_end(sunkd_ctx *c) {
}

static sunkd_host_api api;

static void api_init(void) {
        api = host_api; /* the config readers and file writers are the host's own */
        api.log = f_log;
        api.log_fields = f_log_fields;
        api.module_name = f_module_name;
        api.state_dir = f_state_dir;
        api.job_add = f_job_add;
        api.job_trigger = f_job_trigger;
        api.job_set_interval = f_job_set_interval;
        api.job_set_message = f_job_set_message;
        api.job_update = f_job_update;
        api.job_complete = f_job_complete;
        api.methods_add = f_methods_add;
        api.reply = f_reply;
        api.reply_error = f_reply_error;
        api.call_uid = f_call_uid;
        api.call_gid = f_call_gid;
        api.call_pid = f_call_pid;
        api.call_on_gone = f_call_on_gone;
        api.metric_add = f_metric_add;
        api.metric_set = f_metric_set;
        api.metric_add_value = f_metric_set;
        api.metric_remove = f_metric_remove;
        api.spawn = f_spawn;
        api.spawn_start = f_spawn_start;
        api.child_kill = f_child_kill;
        api.watch_add = f_watch_add;
        api.watch_remove = f_watch_remove;
        api.fact_publish = f_fact_publish;
        api.fact_get = f_fact_get;
        api.fact_subscribe = f_fact_subscribe;
        api.fact_unsubscribe = f_fact_subscribe;
        api.linger_end = f_linger_end;
        H.ctx.api = &api;
}

/* ---- the module's world ------------------------------------------------- */

static void write_file(const char *path, const char *text, mode_t mode) {
        FILE *f = fopen(path, "we");

        if (!f || fputs(text, f) < 0 || fclose(f) != 0 || chmod(path, mode) < 0)
                abort();
}

static const char *section(void) {
        static char text[2048];

        if (streq(sunkd_module_v1.name, "health"))
                snprintf(text, sizeof(text),
                         "modules:\n  health:\n    node_name: n1\n    interval: 1h\n    fail_after: 1\n"
                         "    transport: scontrol\n    root: %s/root\n"
                         "    scontrol: {path: /bin/true}\n    checks:\n"
                         "      - {name: s, type: script, path: /bin/true}\n"
                         "      - {name: r, type: script, path: /bin/true, action: report}\n"
                         "      - {name: m, type: memory, min_total: 1M}\n",
                         H.dir);
        else
                snprintf(text, sizeof(text),
                         "modules:\n  prolog:\n    prolog_dir: %s/p.d\n    epilog_dir: %s/e.d\n"
                         "    keep_runs: 3\n",
                         H.dir, H.dir);
        return text;
}

static void world_init(void) {
        char path[256];
        _cleanup_free_ char *error = NULL;

        api_init();
        strcpy(H.dir, "/tmp/fuzz-methods.XXXXXX");
        if (!mkdtemp(H.dir) || chmod(H.dir, 0755) < 0)
                abort();
        snprintf(H.state_dir, sizeof(H.state_dir), "%s/state", H.dir);
        mkdir(H.state_dir, 0700);
        snprintf(path, sizeof(path), "%s/root", H.dir);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/p.d", H.dir);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/e.d", H.dir);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/p.d/10-first", H.dir);
        write_file(path, "#!/bin/sh\nexit 0\n", 0755);
        snprintf(path, sizeof(path), "%s/p.d/20-caf\xe9\xff", H.dir);
        write_file(path, "#!/bin/sh\nexit 1\n", 0755);
        snprintf(path, sizeof(path), "%s/e.d/90-clean", H.dir);
        write_file(path, "#!/bin/sh\nexit 0\n", 0755);
        if (config_parse("fuzz.yaml", section(), strlen(section()), &H.config, &error) < 0) {
                fprintf(stderr, "fuzz.yaml: %s\n", error ?: "?");
                abort();
        }
}

/* What the last input's module kept (its state file, the prolog client's
 * settings) goes: each input starts from nothing. */
static void state_clear(void) {
        DIR *d = opendir(H.state_dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        (void) unlinkat(dirfd(d), de->d_name, 0);
        closedir(d);
}

/* ---- the operations ------------------------------------------------------ */

typedef struct Input {
        const uint8_t *p;
        size_t n;
} Input;

static unsigned take_byte(Input *in) {
        if (in->n == 0)
                return 0;
        in->n--;
        return *in->p++;
}

static const char *take_text(Input *in, size_t *ret_len) {
        size_t len = take_byte(in);
        const char *s;

        len |= (size_t) take_byte(in) << 8;
        len = len < in->n ? len : in->n;
        s = (const char *) in->p;
        in->p += len;
        in->n -= len;
        *ret_len = len;
        return s;
}

static json_object *default_params(const char *text, size_t len) {
        _cleanup_free_ char *clean = text_escape(text, len, 0, 0);
        json_object *p = json_object_new_object(), *env = json_object_new_array();

        json_object_array_add(env, json_object_new_string("SLURM_JOB_ID=42"));
        json_object_array_add(env, json_object_new_string(clean ?: ""));
        json_object_object_add(p, "kind", json_object_new_string("prolog"));
        json_object_object_add(p, "env", env);
        json_object_object_add(p, "reason", json_object_new_string(clean ?: ""));
        return p;
}

static void op_call(Input *in) {
        unsigned m = take_byte(in);
        size_t len;
        const char *text = take_text(in, &len);
        _cleanup_json_ json_object *params = NULL;
        sunkd_call *call;
        int r;

        for (size_t i = H.n_calls; i-- > 0;)
                if (H.calls[i]->replied)
                        call_forget(H.calls[i]);
        if (H.n_methods == 0 || H.n_calls >= MAX_CALLS)
                return;
        if (varlink_parse(text, len, 65536, 16, &params) < 0)
                params = default_params(text, len);
        if (!params || !(call = calloc(1, sizeof(*call))))
                return;
        H.calls[H.n_calls++] = call;
        r = H.methods[m % H.n_methods].fn(call, params, H.state);
        if (!call->replied && r == SUNKD_CALL_PENDING)
                return;
        /* a handler's error: the host answers it */
        if (!call->replied)
                (void) f_reply_error(call, "io.sunkd.InternalError", NULL);
        call_forget(call);
}

static void spawn_end(unsigned status, const char *out, size_t len) {
        Spawn s;
        _cleanup_free_ char *copy = NULL;
        sunkd_spawn_result res;

        if (H.n_spawns == 0)
                return;
        s = H.spawns[0];
        memmove(H.spawns, H.spawns + 1, (--H.n_spawns) * sizeof(*H.spawns));
        copy = malloc(len + 1);
        if (!copy)
                return;
        memcpy(copy, out, len);
        copy[len] = 0;
        res = (sunkd_spawn_result) {
                .pid = 0,
                .exit_code = (int) (status & 0x7f),
                .signal = status & 0x80 ? 9 : 0,
                .timed_out = status == 0xff,
                .output = copy,
                .output_len = strlen(copy), /* a child's NUL ends what the host hands over */
                .err_output = "",
        };
        s.cb(s.userdata, 0, &res);
}

static void op_spawn(Input *in) {
        unsigned status = take_byte(in);
        size_t len;
        const char *text = take_text(in, &len);

        spawn_end(status, text, len);
}

static void op_run(Input *in) {
        unsigned k = take_byte(in);
        sunkd_job *j;
        void *input = NULL, *result = NULL;
        int r = 0;

        if (H.n_jobs == 0)
                return;
        j = H.jobs[k % H.n_jobs];
        if (j->running)
                return;
        if (j->spec.prepare && (r = j->spec.prepare(job_state(j), &input)) < 0)
                return;
        if (j->spec.flags & SUNKD_JOB_ASYNC) {
                j->running = true;
                j->input = input;
                return;
        }
        if (j->spec.work)
                r = j->spec.work(job_state(j), input, NULL, &result);
        if (j->spec.done)
                (void) j->spec.done(job_state(j), r, input, result);
}

static void op_gone(Input *in) {
        sunkd_call *call;

        for (size_t i = 0; i < H.n_calls; i++) {
                call = H.calls[i];
                if (call->replied)
                        continue;
                if (call->gone)
                        call->gone(call, call->gone_userdata);
                return;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static void (*const ops[])(Input *) = { op_call, op_spawn, op_run, op_gone };
        Input in = { data, size };
        const ConfModule *cm;

        if (!H.config)
                world_init();
        state_clear();
        cm = config_find_module(H.config, sunkd_module_v1.name);
        H.state = NULL;
        if (!cm || sunkd_module_v1.init(&H.ctx, (const sunkd_cfg *) cm->cfg, &H.state) < 0)
                abort();
        for (unsigned steps = 0; in.n > 0 && steps < 64; steps++)
                ops[take_byte(&in) % 4](&in);
        /* the children end, the async runs with them, and the module stops */
        for (unsigned i = 0; i < 64 && H.n_spawns > 0; i++)
                spawn_end(0, "", 0);
        for (size_t i = 0; i < H.n_jobs; i++)
                if (H.jobs[i]->running)
                        (void) f_job_complete(H.jobs[i], -ECANCELED);
        H.stopping = true;
        sunkd_module_v1.fini(H.state);
        H.stopping = false;
        while (H.n_calls > 0)
                call_forget(H.calls[0]);
        for (size_t i = 0; i < H.n_jobs; i++)
                free(H.jobs[i]);
        H.n_jobs = H.n_methods = H.n_spawns = 0;
        return 0;
}
