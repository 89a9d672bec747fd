/* io.sunkd.Agent.*: the daemon's own socket methods.
 *
 * A table, like every method set: name, who may call it, handler.  Read-only
 * views are open to any local user (they show nothing secret); anything that
 * changes what the daemon does is root's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "manager.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

static int method_ping(sunkd_call *call, json_object *params, void *userdata) {
        return ipc_reply(call, NULL);
}

static int method_version(sunkd_call *call, json_object *params, void *userdata) {
        json_object *o = json_object_new_object();

        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
        json_object_object_add(o, "abi_major", json_object_new_int(SUNKD_MODULE_ABI_MAJOR));
        json_object_object_add(o, "abi_minor", json_object_new_int(SUNKD_MODULE_ABI_MINOR));
        return ipc_reply(call, o);
}

/* The keys of the file in force that wait for a restart, as an array. */
static json_object *pending_restart_json(const Manager *m) {
        const char *keys[MANAGER_RESTART_KEYS_MAX];
        size_t n = manager_pending_restart(m, keys);
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++)
                json_object_array_add(a, json_object_new_string(keys[i]));
        return a;
}

static int method_status(sunkd_call *call, json_object *params, void *userdata) {
        Manager *m = userdata;
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *mods = json_object_new_array();
        uint64_t oldest;
        unsigned n_unreaped;
        int r;

        if (!o || !mods) {
                json_object_put(mods);
                return -ENOMEM;
        }
        json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
        json_object_object_add(o, "pid", json_object_new_int((int) getpid()));
        json_object_object_add(o, "ready", json_object_new_boolean(m->ready));
        json_object_object_add(o, "stopping", json_object_new_boolean(m->stopping));
        json_object_object_add(o, "config", json_object_new_string(m->config_path));
        json_object_object_add(o, "socket", json_object_new_string(m->socket_path));
        json_object_object_add(o, "module_dir", json_object_new_string(m->module_host.module_dir));
        json_object_object_add(o, "state_dir", json_object_new_string(m->module_host.state_dir));
        json_object_object_add(o, "pending_restart", pending_restart_json(m));
        json_object_object_add(o, "start_usec", json_object_new_int64((int64_t) m->start_usec));
        json_object_object_add(o, "uptime_usec",
                               json_object_new_int64((int64_t) (now_usec(CLOCK_REALTIME) - m->start_usec)));
        json_object_object_add(o, "reloads", json_object_new_int64(m->n_reloads));
        json_object_object_add(o, "connections", json_object_new_int64(ipc_n_connections(m->ipc)));
        n_unreaped = sched_n_unreaped(m->sched, &oldest);
        if (n_unreaped > 0) {
                json_object_object_add(o, "unreaped_runs", json_object_new_int64(n_unreaped));
                json_object_object_add(o, "unreaped_since_usec", json_object_new_int64((int64_t) oldest));
        }
        json_object_object_add(o, "modules", mods);
        for (size_t i = 0; i < m->n_modules; i++) {
                json_object *s;
                r = module_status_json(m->modules[i], &s);
                if (r < 0)
                        return r;
                json_object_array_add(mods, s);
        }
        return ipc_reply(call, TAKE_PTR(o));
}

static int method_jobs(sunkd_call *call, json_object *params, void *userdata) {
        Manager *m = userdata;
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *jobs = json_object_new_array();
        int r;

        if (!o || !jobs) {
                json_object_put(jobs);
                return -ENOMEM;
        }
        json_object_object_add(o, "jobs", jobs);
        for (size_t i = 0; i < sched_n_jobs(m->sched); i++) {
                Job *j = sched_job_at(m->sched, i);
                json_object *jo;
                const void *owner = sched_job_owner(j);

                r = sched_job_to_json(j, &jo);
                if (r < 0)
                        return r;
                if (owner)
                        json_object_object_add(jo, "module",
                                               json_object_new_string(((const Module *) owner)->name));
                json_object_array_add(jobs, jo);
        }
        return ipc_reply(call, TAKE_PTR(o));
}

static void on_triggered_job_done(void *userdata, Job *j, int result) {
        sunkd_call *call = userdata;
        json_object *o;

        if (sched_job_to_json(j, &o) < 0) {
                (void) ipc_reply_error(call, "io.sunkd.InternalError", NULL);
                return;
        }
        json_object_object_add(o, "result", json_object_new_string(result >= 0 ? "success" : "failure"));
        if (result < 0) {
                json_object_object_add(o, "errno", json_object_new_int(-result));
                json_object_object_add(o, "error",
                                       json_object_new_string(sched_job_error(j) ?: strerror(-result)));
        }
        (void) ipc_reply(call, o);
}

static int method_trigger(sunkd_call *call, json_object *params, void *userdata) {
        Manager *m = userdata;
        json_object *name_o, *wait_o;
        bool wait = false;
        Job *j;
        int r;

        if (!json_object_object_get_ex(params, "job", &name_o) ||
            !json_object_is_type(name_o, json_type_string))
                return ipc_reply_error(call, "org.varlink.service.InvalidParameter",
                                       json_object_new_string_object("parameter", "job"));
        if (json_object_object_get_ex(params, "wait", &wait_o)) {
                if (!json_object_is_type(wait_o, json_type_boolean))
                        return ipc_reply_error(call, "org.varlink.service.InvalidParameter",
                                               json_object_new_string_object("parameter", "wait"));
                wait = json_object_get_boolean(wait_o);
        }
        j = sched_find(m->sched, json_object_get_string(name_o));
        if (!j)
                return ipc_reply_error(call, "io.sunkd.NoSuchJob",
                                       json_object_new_string_object("job", json_object_get_string(name_o)));
        r = sched_job_trigger(j, "socket request");
        if (r < 0)
                return ipc_reply_error(call, "io.sunkd.ShuttingDown", NULL);
        if (!wait)
                return ipc_reply(call, NULL);
        r = sched_job_wait(j, on_triggered_job_done, call);
        if (r < 0)
                return r;
        return SUNKD_CALL_PENDING;
}

/* The settings of the file that wait for a restart go with an applied reload. */
static void on_reloaded(Manager *m, void *userdata, int r, const char *error) {
        sunkd_call *call = userdata;
        json_object *o;

        if (r < 0 && r != MANAGER_RELOAD_PARTIAL) {
                o = json_object_new_string_object("reason", error ?: strerror(-r));
                if (o)
                        json_object_object_add(o, "applied", json_object_new_boolean(false));
                (void) ipc_reply_error(call, "io.sunkd.ReloadFailed", o);
                return;
        }
        o = r < 0 ? json_object_new_string_object("reason", error ?: strerror(-r))
                  : json_object_new_object();
        if (o)
                json_object_object_add(o, "pending_restart", pending_restart_json(m));
        if (r < 0) {
                if (o)
                        json_object_object_add(o, "applied", json_object_new_boolean(true));
                (void) ipc_reply_error(call, "io.sunkd.ReloadFailed", o);
        } else
                (void) ipc_reply(call, o);
}

static int method_reload(sunkd_call *call, json_object *params, void *userdata) {
        int r = manager_reload(userdata, on_reloaded, call);

        return r < 0 ? r : SUNKD_CALL_PENDING;
}

static int method_metrics(sunkd_call *call, json_object *params, void *userdata) {
        Manager *m = userdata;
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = metrics_render(m->metrics, &text, &len);
        if (r < 0)
                return r;
        return ipc_reply(call, json_object_new_string_object("text", text));
}

static const struct {
        const char *name;
        unsigned flags;
        IpcMethodFn fn;
} agent_methods[] = {
        { "io.sunkd.Agent.Ping", SUNKD_METHOD_ANY_UID | IPC_METHOD_ANONYMOUS, method_ping },
        { "io.sunkd.Agent.Version", SUNKD_METHOD_ANY_UID, method_version },
        { "io.sunkd.Agent.Status", SUNKD_METHOD_ANY_UID, method_status },
        { "io.sunkd.Agent.Jobs", SUNKD_METHOD_ANY_UID, method_jobs },
        { "io.sunkd.Agent.Metrics", SUNKD_METHOD_ANY_UID, method_metrics },
        { "io.sunkd.Agent.Trigger", SUNKD_METHOD_ROOT, method_trigger },
        { "io.sunkd.Agent.Reload", SUNKD_METHOD_ROOT, method_reload },
};

int manager_add_agent_methods(Manager *m) {
        int r;

        for (size_t i = 0; i < ELEMENTSOF(agent_methods); i++) {
                r = ipc_add_method(m->ipc, agent_methods[i].name, agent_methods[i].flags,
                                   agent_methods[i].fn, m, NULL, m);
                if (r < 0)
                        return r;
        }
        return 0;
}
