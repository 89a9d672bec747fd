/* The function table modules call the host through.
 *
 * Each entry recovers the Module from the sunkd_ctx (its first member) and
 * forwards to the subsystems of its ModuleHost, attaching the module as
 * owner so that fini can take everything back.  Nothing here is exported
 * from the executable: modules see only this table.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "abi-copy.h"
#include "conf-keys.h"
#include "facts.h"
#include "metrics.h"
#include "module-loader.h"
#include "sched.h"
#include "spawn.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "watch.h"

/* The in-tree constants are the ABI's, under shorter names. */
_Static_assert(USEC_PER_SEC == SUNKD_USEC_PER_SEC && USEC_PER_MSEC == SUNKD_USEC_PER_MSEC,
               "util/macro.h and sunkd/module.h disagree on time units");

typedef struct MethodBinding {
        Module *module;
        int (*fn)(sunkd_call *call, struct json_object *params, void *state);
} MethodBinding;

static Module *MOD(sunkd_ctx *c) {
        return (Module *) c;
}

_printf_(4, 5) static int host_log(sunkd_ctx *c, int level, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = log_internalv(level, r, &MOD(c)->log, "module", 0, MOD(c)->name, fmt, ap);
        va_end(ap);
        return r;
}

_printf_(4, 5) static int host_log_fields(sunkd_ctx *c, int level, const char *const *fields,
                                          const char *fmt, ...) {
        LogContext ctx = MOD(c)->log;
        size_t n = 0;
        va_list ap;
        int r;

        for (; fields && fields[n]; n++)
                if (n >= LOG_FIELDS_MAX || !log_field_is_valid(fields[n]))
                        return -EINVAL;
        ctx.fields = fields;
        va_start(ap, fmt);
        r = log_internalv(level, 0, &ctx, "module", 0, MOD(c)->name, fmt, ap);
        va_end(ap);
        return r;
}

static const char *host_module_name(sunkd_ctx *c) {
        return MOD(c)->name;
}

static const char *host_state_dir(sunkd_ctx *c) {
        return MOD(c)->state_dir;
}

static const char *host_runtime_dir(sunkd_ctx *c) {
        return module_runtime_dir(MOD(c));
}

static int host_cfg_parse(const sunkd_cfg *cfg, const sunkd_cfg_key *keys, size_t n_keys, void *out,
                          char **ret_error) {
        _cleanup_free_ char *all = NULL;
        char *e = NULL;
        int first = 0, r;

        /* both, so that one round shows every error of the section */
        r = conf_keys_parse(cfg, keys, n_keys, out, &e);
        if (errloc_join(&all, &first, r, e) == -ENOMEM)
                return -ENOMEM;
        e = NULL;
        r = conf_keys_check_written(cfg, keys, n_keys, out, &e);
        if (errloc_join(&all, &first, r, e) == -ENOMEM)
                return -ENOMEM;
        if (first < 0 && ret_error)
                *ret_error = TAKE_PTR(all);
        return first;
}

static void host_cfg_clear(const sunkd_cfg_key *keys, size_t n_keys, void *out) {
        conf_keys_clear(keys, n_keys, out);
}

static int host_cfg_where(const sunkd_cfg *cfg, char **ret) {
        if (asprintf(ret, "%s:%u:%u", cfg->file, cfg->key ? cfg->key_line : cfg->line,
                     cfg->key ? cfg->key_column : cfg->column) < 0)
                return -ENOMEM;
        return 0;
}

static const sunkd_cfg *host_cfg_get(const sunkd_cfg *cfg, const char *key) {
        return conf_node_get(cfg, key);
}

static const char *host_cfg_scalar(const sunkd_cfg *cfg) {
        return cfg && cfg->type == CONF_SCALAR ? cfg->value : NULL;
}

static const sunkd_cfg *host_cfg_child(const sunkd_cfg *cfg, size_t i, const char **ret_key) {
        if (!cfg || cfg->type == CONF_SCALAR || i >= cfg->n_children)
                return NULL;
        if (ret_key)
                *ret_key = cfg->children[i]->key;
        return cfg->children[i];
}

static int host_job_add(sunkd_ctx *c, const sunkd_job_spec *spec, sunkd_job **ret) {
        Module *mod = MOD(c);

        if (mod->mstate != MODULE_RUNNING)
                return -ESHUTDOWN;
        /* From ABI 1.3 an async job must say how to end it early; older
         * modules' runs are ended by the host at the timeout or stop. */
        if (mod->def->abi_minor >= 3 && spec && (spec->flags & SUNKD_JOB_ASYNC) &&
            (spec->size < ABI_END_OF(sunkd_job_spec, cancel) || !spec->cancel))
                return sched_job_refuse(
                        mod->name, spec->name,
                        "a SUNKD_JOB_ASYNC job needs cancel (modules built against ABI 1.3 or later)");
        return sched_job_add(mod->host->sched, spec, &mod->state, mod, mod->name, ret);
}

static int host_job_trigger(sunkd_job *j, const char *reason) {
        return sched_job_trigger(j, reason);
}

static int host_job_set_interval(sunkd_job *j, uint64_t interval_usec, uint64_t splay_usec) {
        return sched_job_set_interval(j, interval_usec, splay_usec);
}

static int host_job_set_message(sunkd_job *j, const char *message) {
        return sched_job_set_message(j, message);
}

static int host_job_update(sunkd_job *j, const sunkd_job_spec *spec) {
        return sched_job_update(j, spec);
}

static int host_job_complete(sunkd_job *j, int r) {
        return sched_job_complete(j, r);
}

static int method_trampoline(sunkd_call *call, json_object *params, void *userdata) {
        MethodBinding *b = userdata;

        return b->fn(call, params, b->module->state);
}

static int host_methods_add(sunkd_ctx *c, const sunkd_method *methods, size_t n) {
        Module *mod = MOD(c);
        MethodBinding *b;
        int r;

        if (mod->bindings)
                return -EBUSY; /* one table per module, registered in init */
        b = calloc(n ?: 1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        mod->bindings = b;
        for (size_t i = 0; i < n; i++) {
                /* Anonymous is the agent's own: a module's handler may ask who calls. */
                if (methods[i].flags & IPC_METHOD_ANONYMOUS)
                        return -EINVAL;
                b[i] = (MethodBinding){ .module = mod, .fn = methods[i].fn };
                r = ipc_add_method(mod->host->ipc, methods[i].name, methods[i].flags, method_trampoline,
                                   &b[i], &mod->allow, mod);
                if (r < 0)
                        return r;
                mod->n_bindings++;
        }
        return 0;
}

static int host_reply(sunkd_call *call, struct json_object *params) {
        return ipc_reply(call, params);
}

static int host_reply_error(sunkd_call *call, const char *error, struct json_object *params) {
        return ipc_reply_error(call, error, params);
}

/* A module's families are its own: named after it, removed when it stops.
 * A module built before ABI 1.3 may keep the names it has, with a warning. */
static int host_metric_add(sunkd_ctx *c, const sunkd_metric_spec *spec, sunkd_metric **ret) {
        Module *mod = MOD(c);
        _cleanup_free_ char *error = NULL;
        const char *name = spec && spec->name ? spec->name : "(null)";
        int r;

        r = metrics_add_owned(mod->host->metrics, mod, mod->name, mod->def->abi_minor >= 3, spec, ret,
                              &error);
        if (r < 0 && error)
                log_ctx_full_errno(&mod->log, LOG_ERR, r, "Module '%s' may not register metric '%s': %s",
                                   mod->name, name, error);
        else if (error)
                log_ctx_full_errno(
                        &mod->log, LOG_WARNING, 0,
                        "Module '%s' (ABI 1.%u) registers metric '%s' against the rule of ABI 1.3, "
                        "allowed for now: %s",
                        mod->name, (unsigned) mod->def->abi_minor, name, error);
        return r;
}

/* A lingering module finishes what it had begun: a prolog's next script. */
static bool may_spawn(const Module *mod) {
        return mod->mstate == MODULE_RUNNING || (mod->mstate == MODULE_STOPPING && mod->lingering);
}

static int host_spawn(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata) {
        if (!may_spawn(MOD(c)))
                return -ESHUTDOWN;
        return spawn_start(MOD(c)->host->spawns, spec, cb, userdata, MOD(c), NULL);
}

static int host_spawn_start(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata,
                            sunkd_child **ret) {
        if (!may_spawn(MOD(c)))
                return -ESHUTDOWN;
        return spawn_start(MOD(c)->host->spawns, spec, cb, userdata, MOD(c), ret);
}

static void host_linger_end(sunkd_ctx *c) {
        module_linger_end(MOD(c));
}

/* ABI 1.2: file watches and facts */

static int host_watch_add(sunkd_ctx *c, const char *path, void (*cb)(void *userdata, const char *path),
                          void *userdata, sunkd_watch **ret) {
        return watch_add(MOD(c)->host->watches, path, cb, userdata, MOD(c), ret);
}

static int host_fact_publish(sunkd_ctx *c, const char *name, struct json_object *value) {
        return fact_publish(MOD(c)->host->facts, MOD(c), MOD(c)->name, name, value);
}

static struct json_object *host_fact_get(sunkd_ctx *c, const char *name) {
        return fact_get_copy(MOD(c)->host->facts, name);
}

static int host_fact_subscribe(sunkd_ctx *c, const char *name,
                               void (*cb)(void *userdata, const char *name, struct json_object *value),
                               void *userdata) {
        return fact_subscribe(MOD(c)->host->facts, MOD(c), name, cb, userdata);
}

static int host_fact_unsubscribe(sunkd_ctx *c, const char *name,
                                 void (*cb)(void *userdata, const char *name, struct json_object *value),
                                 void *userdata) {
        return fact_unsubscribe(MOD(c)->host->facts, MOD(c), name, cb, userdata);
}

const sunkd_host_api host_api = {
        .size = sizeof(sunkd_host_api),
        .log = host_log,
        .module_name = host_module_name,
        .state_dir = host_state_dir,
        .cfg_parse = host_cfg_parse,
        .cfg_clear = host_cfg_clear,
        .cfg_where = host_cfg_where,
        .cfg_get = host_cfg_get,
        .cfg_scalar = host_cfg_scalar,
        .job_add = host_job_add,
        .job_trigger = host_job_trigger,
        .job_set_interval = host_job_set_interval,
        .job_set_message = host_job_set_message,
        .job_update = host_job_update,
        .job_complete = host_job_complete,
        .methods_add = host_methods_add,
        .reply = host_reply,
        .reply_error = host_reply_error,
        .call_uid = ipc_call_uid,
        .call_gid = ipc_call_gid,
        .metric_add = host_metric_add,
        .metric_set = metrics_set,
        .metric_add_value = metrics_add_value,
        .spawn = host_spawn,
        /* util's own functions: see module.h */
        .file_stage = fileio_stage,
        .file_commit = fileio_commit,
        .file_write_atomic = fileio_write_atomic,
        /* ABI 1.2: killable children */
        .spawn_start = host_spawn_start,
        .child_kill = spawn_kill,
        /* ABI 1.2: file watches and facts */
        .watch_add = host_watch_add,
        .watch_remove = watch_remove,
        .fact_publish = host_fact_publish,
        .fact_get = host_fact_get,
        .fact_subscribe = host_fact_subscribe,
        .fact_unsubscribe = host_fact_unsubscribe,
        /* ABI 1.2: calls that outlive their caller */
        .call_on_gone = ipc_call_on_gone,
        .call_pid = ipc_call_pid,
        /* ABI 1.2: structured log fields */
        .log_fields = host_log_fields,
        .cfg_child = host_cfg_child,
        /* ABI 1.3: metrics a module owns */
        .metric_remove = metrics_remove,
        /* ABI 1.5: work a stop lets end */
        .linger_end = host_linger_end,
        /* ABI 1.6: a place clients find without sunkd.yaml */
        .runtime_dir = host_runtime_dir,
};
