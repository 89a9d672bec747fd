/* The daemon's own socket methods (io.sunkd.Agent.*, agent-methods.c, its
 * handlers as they are) on a Manager of the fuzzer's own: every answer
 * must be valid Varlink JSON whatever the parameters, the jobs' names and
 * messages, the modules' status and the metrics' label values.
 *
 * The Manager holds the real scheduler, metrics and (idle) socket server,
 * and two modules the fuzzer makes up.  Replies go through the fuzzer's
 * ipc_reply(), which aborts when varlink_format() refuses one: the real
 * server's last defence (varlink_repair_utf8()) would hide it.  The input is
 * a list of operations, each a byte then its operands:
 *   0 call     method (1 byte), params (2-byte length, JSON text; what does
 *              not parse as an object becomes {"job": the text escaped})
 *   1 job      module (1 byte), flags (1 byte), name (2-byte length, any
 *              bytes): the module registers a job
 *   2 message  job (1 byte), text (2-byte length, any bytes): the job's
 *              module sets its message, as a module does with text from
 *              outside
 *   3 end      job (1 byte), result (1 byte): a running run ends
 *   4 status   module (1 byte), state (1 byte), status (2-byte length, JSON
 *              text: the tree its status hook hands back)
 *   5 metric   value (1 byte), label (2-byte length): a module sets a
 *              series, its label value escaped as a module must
 *   6 reload   sunkd.yaml (2-byte length, any bytes): the reload waited on
 *              ends with the parser's verdict on it
 * At the end the runs end, the waits are answered and the jobs go. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text-escape.h"
#include "proto/varlink.h"
#include "fuzz-reply.h"

/* The handlers' replies and reloads come here. */
#define ipc_reply fuzz_reply
#define ipc_reply_error fuzz_reply_error
#define manager_reload fuzz_manager_reload
#include "agent-methods.c"
#undef ipc_reply
#undef ipc_reply_error
#undef manager_reload

#define MAX_CALLS 64
#define MAX_JOBS 16
#define N_MODULES 2

struct sunkd_call {
        bool replied;
};

static struct {
        Manager m;
        Module modules[N_MODULES];
        sunkd_module defs[N_MODULES];
        json_object *status[N_MODULES];
        MetricFamily *family;
        sunkd_call *calls[MAX_CALLS];
        size_t n_calls;
        Job *jobs[MAX_JOBS];
        size_t n_jobs;
        ManagerReloadFn reload_fn;
        void *reload_userdata;
} H;

/* ---- replies: checked by fuzz-reply.h ------------------------------------ */

int fuzz_reply_error(sunkd_call *call, const char *error, json_object *params) {
        return fuzz_reply_once(call ? &call->replied : NULL, error, params);
}

int fuzz_reply(sunkd_call *call, json_object *params) {
        return fuzz_reply_error(call, NULL, params);
}

int fuzz_manager_reload(Manager *m, ManagerReloadFn fn, void *userdata) {
        if (H.reload_fn)
                return -EBUSY;
        H.reload_fn = fn;
        H.reload_userdata = userdata;
        return 0;
}

/* ---- the Manager and its modules ------------------------------------------ */

static int module_status(void *state, json_object *out) {
        json_object *tree = H.status[(Module *) state - H.modules];

        if (!tree)
                return -EIO;
        json_object_object_foreach(tree, k, v) json_object_object_add(out, k, json_object_get(v));
        return 0;
}

static int job_prepare(void *state, void **ret_input) {
        return 0;
}

static int job_done(void *state, int r, void *input, void *result) {
        return r;
}

static void job_cancel(void *state, void *input) {
}

static void setup(void) {
        static const char *const names[N_MODULES] = { "alpha", "beta" };
        static const IpcLimits limits = { 0 };
        const sunkd_metric_spec spec = {
                sizeof(spec), "fuzz_series", "A series.", SUNKD_METRIC_GAUGE, { "label" }
        };
        Manager *m = &H.m;
        char *error = NULL;

        log_set_max_level(LOG_EMERG);
        m->config_path = (char *) "/etc/sunkd/sunkd.yaml";
        m->socket_path = (char *) "/run/sunkd/sunkd.sock";
        /* a configuration in force, the one sunkd started with: Status and
         * Reload name the settings that would take effect at restart */
        if (config_parse(m->config_path, "socket: /run/sunkd/sunkd.sock\n",
                         strlen("socket: /run/sunkd/sunkd.sock\n"), &m->config, &error) < 0)
                abort();
        m->started = m->config;
        m->module_host.module_dir = m->config->module_dir;
        m->module_host.state_dir = m->config->state_dir;
        m->module_host.socket = m->config->socket;
        if (sd_event_new(&m->event) < 0 || work_pool_new(m->event, 1, &m->pool) < 0 ||
            sched_new(m->event, m->pool, &m->sched) < 0 || ipc_new(m->event, &limits, &m->ipc) < 0 ||
            metrics_new(&m->metrics) < 0 || metrics_add(m->metrics, &spec, &H.family) < 0)
                abort();
        /* what the loader gives every module: the host it runs in */
        m->module_host.sched = m->sched;
        m->module_host.ipc = m->ipc;
        m->module_host.metrics = m->metrics;
        m->modules = calloc(N_MODULES, sizeof(Module *));
        if (!m->modules)
                abort();
        for (size_t i = 0; i < N_MODULES; i++) {
                Module *mod = &H.modules[i];

                H.defs[i] = (sunkd_module){ .size = sizeof(sunkd_module),
                                            .name = names[i],
                                            .version = "1.0",
                                            .status = module_status };
                mod->name = (char *) names[i];
                mod->def = &H.defs[i];
                mod->state = mod;
                mod->log.module = mod->name;
                mod->host = &m->module_host;
                m->modules[m->n_modules++] = mod;
        }
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

/* A copy ending in NUL (a NUL inside ends it early, as a C string does). */
static char *take_text(Input *in, size_t *ret_len) {
        size_t len = take_byte(in);
        char *s;

        len |= (size_t) take_byte(in) << 8;
        len = len < in->n ? len : in->n;
        s = strndup((const char *) in->p, len);
        in->p += len;
        in->n -= len;
        if (ret_len)
                *ret_len = len;
        return s;
}

static void loop_run(void) {
        for (int i = 0; i < 4 && sd_event_run(H.m.event, 0) > 0; i++)
                ;
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

static void op_call(Input *in) {
        unsigned k = take_byte(in);
        size_t len;
        _cleanup_free_ char *text = take_text(in, &len);
        _cleanup_json_ json_object *params = NULL;
        sunkd_call *call;
        int r;

        for (size_t i = H.n_calls; i-- > 0;)
                if (H.calls[i]->replied)
                        call_forget(H.calls[i]);
        if (!text || H.n_calls >= MAX_CALLS)
                return;
        if (varlink_parse(text, len, 65536, 16, &params) < 0) {
                _cleanup_free_ char *clean = text_escape(text, strlen(text), 0, 0);

                params = json_object_new_object();
                if (params && clean)
                        json_object_object_add(params, "job", json_object_new_string(clean));
                if (params && (k & 0x80))
                        json_object_object_add(params, "wait", json_object_new_boolean(true));
        }
        if (!params || !(call = calloc(1, sizeof(*call))))
                return;
        H.calls[H.n_calls++] = call;
        r = agent_methods[k % ELEMENTSOF(agent_methods)].fn(call, params, &H.m);
        if (!call->replied && r == SUNKD_CALL_PENDING)
                return;
        /* a handler's error: the server answers it */
        if (!call->replied)
                (void) fuzz_reply_error(call, "io.sunkd.InternalError", NULL);
        call_forget(call);
}

static void op_job(Input *in) {
        Module *mod = &H.modules[take_byte(in) % N_MODULES];
        unsigned flags = take_byte(in);
        _cleanup_free_ char *name = take_text(in, NULL);
        char *copy;
        sunkd_job_spec spec = {
                .size = sizeof(spec),
                .interval_usec = 3600 * SUNKD_USEC_PER_SEC,
                .timeout_usec = 3600 * SUNKD_USEC_PER_SEC,
                .flags = SUNKD_JOB_ASYNC | (flags & 1 ? SUNKD_JOB_TRIGGER_ONLY : 0),
                .prepare = job_prepare,
                .done = job_done,
                .cancel = job_cancel,
        };

        if (!name || H.n_jobs >= MAX_JOBS)
                return;
        /* "<module>.<verb>", as modules name theirs, unless the flag says otherwise */
        if (flags & 2 ? asprintf(&copy, "%s", name) < 0 : asprintf(&copy, "%s.%s", mod->name, name) < 0)
                return;
        spec.name = copy;
        if (sched_job_add(H.m.sched, &spec, &mod->state, mod, mod->name, &H.jobs[H.n_jobs]) >= 0)
                H.n_jobs++;
        free(copy);
}

static void op_message(Input *in) {
        unsigned k = take_byte(in);
        _cleanup_free_ char *text = take_text(in, NULL);

        if (text && H.n_jobs > 0)
                (void) sched_job_set_message(H.jobs[k % H.n_jobs], text);
}

static void op_end(Input *in) {
        unsigned k = take_byte(in), r = take_byte(in);

        if (H.n_jobs > 0 && sched_job_state(H.jobs[k % H.n_jobs]) == JOB_RUNNING)
                (void) sched_job_complete(H.jobs[k % H.n_jobs], -(int) r);
}

static void op_status(Input *in) {
        unsigned k = take_byte(in) % N_MODULES, state = take_byte(in);
        size_t len;
        _cleanup_free_ char *text = take_text(in, &len);

        H.modules[k].mstate = state % _MODULE_STATE_MAX;
        H.status[k] = json_object_put(H.status[k]) ? NULL : NULL;
        if (text)
                (void) varlink_parse(text, len, 65536, 16, &H.status[k]);
}

static void op_metric(Input *in) {
        unsigned v = take_byte(in);
        _cleanup_free_ char *text = take_text(in, NULL), *clean = NULL;
        const char *labels[2] = { NULL, NULL };

        if (!text || !(clean = text_escape(text, strlen(text), 0, 0)))
                return;
        labels[0] = clean;
        (void) metrics_set(H.family, v, labels);
}

static void reload_end(const char *text, size_t len) {
        ManagerReloadFn fn = H.reload_fn;
        _cleanup_free_ char *error = NULL;
        Config *c = NULL;
        int r;

        if (!fn)
                return;
        H.reload_fn = NULL;
        r = config_parse("/etc/sunkd/sunkd.yaml", text, len, &c, &error);
        config_free(c);
        fn(&H.m, H.reload_userdata, r < 0 ? r : 0, error);
}

static void op_reload(Input *in) {
        size_t len;
        const uint8_t *p;

        len = take_byte(in);
        len |= (size_t) take_byte(in) << 8;
        len = len < in->n ? len : in->n;
        p = in->p;
        in->p += len;
        in->n -= len;
        reload_end((const char *) p, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static void (*const ops[])(Input *) = { op_call,   op_job,    op_message, op_end,
                                                op_status, op_metric, op_reload };
        Input in = { data, size };

        if (!H.m.event)
                setup();
        for (unsigned steps = 0; in.n > 0 && steps < 64; steps++) {
                ops[take_byte(&in) % ELEMENTSOF(ops)](&in);
                loop_run();
        }
        /* the runs end (their waits answered), a reload is answered, the jobs go */
        for (size_t i = 0; i < H.n_jobs; i++)
                if (sched_job_state(H.jobs[i]) == JOB_RUNNING)
                        (void) sched_job_complete(H.jobs[i], -ECANCELED);
        loop_run();
        reload_end("", 0);
        for (size_t i = 0; i < H.n_jobs; i++)
                for (size_t c = 0; c < H.n_calls; c++)
                        sched_job_unwait(H.jobs[i], H.calls[c]);
        for (size_t i = 0; i < N_MODULES; i++) {
                sched_remove_owner(H.m.sched, &H.modules[i]);
                H.status[i] = json_object_put(H.status[i]) ? NULL : NULL;
                H.modules[i].mstate = MODULE_LOADED;
        }
        loop_run();
        (void) metrics_remove(H.family, NULL);
        while (H.n_calls > 0)
                call_forget(H.calls[0]);
        H.n_jobs = 0;
        return 0;
}
