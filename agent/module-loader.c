/* The module loader and each module's lifecycle.
 *
 * dlopen(RTLD_NOW | RTLD_LOCAL): unresolved symbols fail here, at load, with
 * dlerror() in the message, not at the first call in the middle of a job;
 * and nothing a module links leaks into another.  The only symbol looked up
 * is sunkd_module_v1; a module built against another major ABI does not
 * have it and is refused with both versions named.  Minor versions may be
 * older than ours (the host copes with shorter structs through `size`) but
 * not newer.
 *
 * Libraries are never dlclose'd: libcurl and OpenSSL keep process-wide state
 * and threads that make unloading unsafe; reload happens in place.
 *
 * A module's methods are bound through a MethodBinding so the handler gets
 * the module's current state even after a fini+init reload replaced it.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "abi-copy.h"
#include "conf-keys.h"
#include "module-loader.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"
#include "util/trusted-path.h"
#include "util/text-escape.h"

/* The most a module's linger may ask: a day, a prolog's longest total. */
#define LINGER_MAX_USEC (UINT64_C(86400) * USEC_PER_SEC)

static const char *const module_state_names[_MODULE_STATE_MAX] = {
        [MODULE_LOADED] = "loaded",
        [MODULE_RUNNING] = "running",
        [MODULE_STOPPING] = "stopping",
        [MODULE_FAILED] = "failed",
};

const char *module_state_to_string(ModuleState s) {
        return s < _MODULE_STATE_MAX ? module_state_names[s] : NULL;
}

static int fail(char **ret_error, int r, const char *fmt, ...) _printf_(3, 4);
static int fail(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        va_end(ap);
        return r;
}

/* The directory modules come from decides what runs as root: it, every
 * directory above it and the module must pass trusted_path_check(), as the
 * config file does.  The directory is checked first, to be named. */
static int check_module_path(const char *path, char **ret_error) {
        _cleanup_free_ char *dir = strdup(path);
        char *slash;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (slash)
                *slash = '\0';
        const struct {
                const char *what, *path, *lookup_prefix;
        } checks[] = {
                { "module directory", isempty(dir) ? "/" : dir, "" },
                { "module", path, "cannot load " },
        };

        for (size_t i = 0; i < ELEMENTSOF(checks); i++) {
                int r = trusted_path_check(checks[i].path, checks[i].what, 0, ret_error);

                if (r == -EPERM || r == -ENOMEM)
                        return r;
                if (r < 0) {
                        /* as "cannot load module 'x.so': No such file or directory" */
                        *ret_error = mfree(*ret_error);
                        return fail(ret_error, r, "%s%s '%s': %s", checks[i].lookup_prefix, checks[i].what,
                                    checks[i].path, strerror(-r));
                }
        }
        return 0;
}

int module_open(const char *dir, const char *name, void **ret_dl, const sunkd_module **ret_def,
                char **ret_error) {
        _cleanup_free_ char *path = NULL;
        const sunkd_module *def;
        void *dl;
        int r;

        if (asprintf(&path, "%s/%s.so", dir, name) < 0)
                return -ENOMEM;
        r = check_module_path(path, ret_error);
        if (r < 0)
                return r;

        dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!dl)
                return fail(
                        ret_error, -ELIBBAD,
                        "cannot load module '%s': %s (a missing dependency is the usual cause; check ldd)",
                        path, dlerror());
        def = dlsym(dl, "sunkd_module_v1");
        if (!def)
                return fail(
                        ret_error, -ELIBBAD,
                        "'%s' is not a sunkd module for ABI %d.x: no symbol sunkd_module_v1 (%s); built for "
                        "another ABI major version?",
                        path, SUNKD_MODULE_ABI_MAJOR, dlerror());
        if (def->abi_major != SUNKD_MODULE_ABI_MAJOR || def->abi_minor > SUNKD_MODULE_ABI_MINOR)
                return fail(ret_error, -EPROTO,
                            "module '%s' was built for ABI %u.%u, this sunkd speaks ABI %d.%d", path,
                            def->abi_major, def->abi_minor, SUNKD_MODULE_ABI_MAJOR, SUNKD_MODULE_ABI_MINOR);
        if (def->size < ABI_END_OF(sunkd_module, status) || !def->init || !def->fini || isempty(def->name))
                return fail(ret_error, -EPROTO,
                            "module '%s' has an incomplete definition (size %u, ABI %u.%u): name, init and "
                            "fini are required",
                            path, def->size, def->abi_major, def->abi_minor);
        if (!streq(def->name, name))
                return fail(ret_error, -EPROTO, "module '%s' calls itself '%s'", path, def->name);

        *ret_dl = dl;
        *ret_def = def;
        return 0;
}

static int select_module_file(const struct dirent *d) {
        size_t n = strlen(d->d_name);
        return n > 3 && d->d_name[0] != '.' && streq(d->d_name + n - 3, ".so");
}

/* "a, b, c": the modules @dir holds, for a name that is not among them. */
static char *module_dir_list(const char *dir) {
        struct dirent **entries = NULL;
        char *list = NULL;
        size_t len = 0;
        FILE *f;
        int n;

        n = scandir(dir, &entries, select_module_file, alphasort);
        if (n < 0)
                return NULL;
        f = open_memstream(&list, &len);
        for (int i = 0; i < n; i++) {
                if (f)
                        fprintf(f, "%s%.*s", i ? ", " : "", (int) (strlen(entries[i]->d_name) - 3),
                                entries[i]->d_name);
                free(entries[i]);
        }
        free(entries);
        if (!f || fclose(f) != 0) {
                free(list);
                return NULL;
        }
        return list;
}

/* A module that is not there is most often a typo in sunkd.yaml: point at
 * the line and say what would have loaded. */
static char *module_missing_error(const ModuleHost *host, const char *module_dir, const ConfModule *cm,
                                  const char *error) {
        _cleanup_free_ char *list = module_dir_list(module_dir);
        const ConfNode *n = cm->cfg;
        char *out = NULL;

        if (asprintf(&out, "%s:%u:%u: module '%s': %s%s%s%s%s", n ? n->file : host->config_path,
                     n ? n->key_line : 0, n ? n->key_column : 0, cm->name, error,
                     list ? "; the modules in " : "", list ? module_dir : "", list ? " are: " : "",
                     list ? (isempty(list) ? "(none)" : list) : "") < 0)
                return NULL;
        return out;
}

/* Any other module that cannot be loaded (a library it links is missing, a
 * file that is no module): at its line too, as a configuration error. */
static char *module_load_error(const ModuleHost *host, const ConfModule *cm, const char *error) {
        const ConfNode *n = cm->cfg;
        char *out = NULL;

        if (asprintf(&out, "%s:%u:%u: module '%s': %s", n ? n->file : host->config_path, n ? n->key_line : 0,
                     n ? n->key_column : 0, cm->name, error) < 0)
                return NULL;
        return out;
}

/* <dirname(socket)>/<name>: beside the socket, so a client that is given
 * no more than the socket's path finds it. */
static int module_runtime_path(const char *socket, const char *name, char **ret) {
        const char *slash = strrchr(socket, '/');
        int n = slash ? (int) (slash - socket) : 1;

        if (asprintf(ret, "%.*s/%s", n, slash ? socket : ".", name) < 0) {
                *ret = NULL; /* left undefined */
                return -ENOMEM;
        }
        return 0;
}

int module_new(const ModuleHost *host, const char *module_dir, const char *state_dir, const ConfModule *cm,
               Module **ret) {
        _cleanup_free_ char *error = NULL;
        Module *mod;
        int r;

        mod = calloc(1, sizeof(*mod));
        if (!mod)
                return -ENOMEM;
        mod->ctx.api = &host_api;
        mod->host = host;
        mod->name = strdup(cm->name);
        if (!mod->name || asprintf(&mod->state_dir, "%s/%s", state_dir, cm->name) < 0 ||
            module_runtime_path(host->socket ?: host->config(host->userdata)->socket, cm->name,
                                &mod->runtime_dir) < 0 ||
            asprintf(&mod->path, "%s/%s.so", module_dir, cm->name) < 0) {
                mod->path = NULL;
                module_free(mod);
                return -ENOMEM;
        }
        mod->log.module = mod->name;

        r = module_open(module_dir, cm->name, &mod->dl, &mod->def, &error);
        if (r < 0 && error) {
                char *located = r == -ENOENT ? module_missing_error(host, module_dir, cm, error)
                                             : module_load_error(host, cm, error);
                if (located) {
                        free(error);
                        error = located;
                }
        }
        if (r < 0) {
                log_error_errno(r, "%s", error ?: "Failed to load module");
                /* Handed back anyway, FAILED, so status can show why. */
                mod->mstate = MODULE_FAILED;
                mod->error = r;
                /* dlerror()'s text may quote a library's bytes */
                mod->error_message = text_escape_str(error, TEXT_ESCAPE_LINE);
                *ret = mod;
                return r;
        }
        /* Read only through the copy: an older module's definition is shorter. */
        (void) abi_copy(&mod->def_copy, sizeof(mod->def_copy), mod->def, mod->def->size,
                        ABI_END_OF(sunkd_module, status));
        mod->def = &mod->def_copy;
        if (!streq_ptr(mod->def->version, PACKAGE_VERSION))
                log_ctx_full_errno(&mod->log, LOG_WARNING, 0, "Module version '%s' differs from sunkd %s.",
                                   mod->def->version ?: "(none)", PACKAGE_VERSION);
        *ret = mod;
        return 0;
}

static void allow_clear(IpcAllow *a) {
        free(a->uids);
        free(a->gids);
        *a = (IpcAllow){};
}

/* A copy of what the configuration resolved (off the loop, with the file). */
static int allow_resolve(Module *mod, const ConfModule *cm) {
        IpcAllow a = {};

        a.uids = calloc(cm->n_allow_uids ?: 1, sizeof(uid_t));
        a.gids = calloc(cm->n_allow_gids ?: 1, sizeof(gid_t));
        if (!a.uids || !a.gids) {
                allow_clear(&a);
                return -ENOMEM;
        }
        if (cm->n_allow_uids)
                memcpy(a.uids, cm->allow_uids, cm->n_allow_uids * sizeof(uid_t));
        if (cm->n_allow_gids)
                memcpy(a.gids, cm->allow_gids, cm->n_allow_gids * sizeof(gid_t));
        a.n_uids = cm->n_allow_uids;
        a.n_gids = cm->n_allow_gids;
        allow_clear(&mod->allow);
        mod->allow = a;
        return 0;
}

static void module_set_failed(Module *mod, int r, const char *what);

static void on_failed_init_stopped(Module *mod, void *userdata) {
        module_set_failed(mod, mod->error, "init failed");
}

static void module_set_failed(Module *mod, int r, const char *what) {
        mod->mstate = MODULE_FAILED;
        mod->error = r;
        free(mod->error_message);
        if (asprintf(&mod->error_message, "%s: %s", what, strerror(-r)) < 0)
                mod->error_message = NULL;
}

/* What the module keeps there (nsscache's force-next-run, say) is its
 * orders: the directory must be no easier to change than the config. */
static int module_check_state_dir(Module *mod, const char *path) {
        _cleanup_free_ char *error = NULL;
        int r;

        r = trusted_path_check(path, "state directory", TRUSTED_PATH_WRITTEN, &error);
        if (r < 0)
                return log_ctx_full_errno(&mod->log, LOG_ERR, r, "%s", error ?: "untrusted state directory");
        return 0;
}

const char *module_runtime_dir(Module *mod) {
        _cleanup_free_ char *error = NULL;
        int r;

        if (mod->runtime_dir_made || !mod->runtime_dir)
                return mod->runtime_dir;
        if (mkdir(mod->runtime_dir, 0700) < 0 && errno != EEXIST) {
                log_ctx_full_errno(&mod->log, LOG_ERR, errno, "Failed to create runtime directory '%s': %m",
                                   mod->runtime_dir);
                return NULL;
        }
        r = trusted_path_check(mod->runtime_dir, "runtime directory", TRUSTED_PATH_WRITTEN, &error);
        if (r < 0) {
                log_ctx_full_errno(&mod->log, LOG_ERR, r, "%s", error ?: "untrusted runtime directory");
                return NULL;
        }
        mod->runtime_dir_made = true;
        return mod->runtime_dir;
}

int module_init(Module *mod, const ConfModule *cm) {
        int r;

        if (!mod->def)
                return mod->error;
        mod->required = cm->required;
        if (mkdir(mod->state_dir, 0700) < 0 && errno != EEXIST) {
                r = log_ctx_full_errno(&mod->log, LOG_ERR, errno,
                                       "Failed to create state directory '%s': %m", mod->state_dir);
                module_set_failed(mod, r, "state directory");
                return r;
        }
        r = module_check_state_dir(mod, mod->state_dir);
        if (r < 0) {
                module_set_failed(mod, r, "state directory");
                return r;
        }
        r = allow_resolve(mod, cm);
        if (r < 0) {
                module_set_failed(mod, r, "allow list");
                return r;
        }
        mod->state = NULL;
        mod->mstate = MODULE_RUNNING;
        r = mod->def->init(&mod->ctx, cm->cfg, &mod->state);
        if (r < 0) {
                log_ctx_full_errno(&mod->log, LOG_ERR, r, "Module failed to initialise: %m");
                /* Undo whatever init registered before failing, like any stop. */
                mod->error = r;
                module_stop(mod, on_failed_init_stopped, NULL);
                return r;
        }
        mod->error = 0;
        mod->error_message = mfree(mod->error_message);
        log_ctx_full_errno(&mod->log, LOG_INFO, 0, "Module initialised.");
        return 0;
}

int module_check(Module *mod, const char *state_dir, const ConfModule *cm) {
        _cleanup_free_ char *error = NULL, *path = NULL;
        int r;

        if (!mod->def)
                return mod->error;
        /* loaded at start: what a start would find there now */
        r = check_module_path(mod->path, &error);
        if (r < 0)
                return log_ctx_full_errno(&mod->log, LOG_ERR, r, "%s", error ?: "untrusted module");
        if (asprintf(&path, "%s/%s", state_dir, mod->name) < 0)
                return -ENOMEM;
        r = module_check_state_dir(mod, path);
        if (r < 0)
                return r;
        if (!mod->def->check || mod->def->size < offsetof(sunkd_module, check) + sizeof(mod->def->check))
                return 0;
        return mod->def->check(&mod->ctx, cm->cfg);
}

/* Init again with the configuration current when the stop ended: another
 * reload may have come meanwhile. */
static void on_restart_stopped(Module *mod, void *userdata) {
        const ConfModule *cm = config_find_module(mod->host->config(mod->host->userdata), mod->name);

        if (cm && cm->enabled)
                (void) module_init(mod, cm);
}

int module_apply_host_keys(Module *mod, const ConfModule *cm) {
        int r = allow_resolve(mod, cm);

        if (r < 0)
                return log_ctx_full_errno(&mod->log, LOG_ERR, r, "Failed to apply the new allow list: %m");
        mod->required = cm->required;
        return 0;
}

static int module_restart(Module *mod, const char *why) {
        mod->config_stale = false;
        log_ctx_full_errno(&mod->log, LOG_INFO, 0, "Restarting the module to apply the new configuration%s.",
                           why);
        module_stop(mod, on_restart_stopped, NULL);
        return mod->mstate == MODULE_FAILED ? mod->error : 0;
}

/* The hook failed: the module keeps what it runs, and says so until a reload succeeds. */
static int module_reload_failed(Module *mod, int r) {
        mod->config_stale = true;
        free(mod->error_message);
        if (asprintf(&mod->error_message, "reload failed: %s; running the previous configuration",
                     strerror(-r)) < 0)
                mod->error_message = NULL;
        return log_ctx_full_errno(
                &mod->log, LOG_ERR, r,
                "Module failed to apply the new configuration, keeping the running one: %m");
}

int module_reload(Module *mod, const ConfModule *cm) {
        int r;

        if (!mod->def)
                return mod->error;
        if (mod->mstate == MODULE_STOPPING) {
                /* Already on its way down; it comes back with the newest config. */
                module_stop(mod, on_restart_stopped, NULL);
                return 0;
        }
        if (mod->mstate != MODULE_RUNNING || !mod->def->reload)
                return module_restart(mod, "");
        r = module_apply_host_keys(mod, cm);
        if (r < 0)
                return r;
        log_ctx_full_errno(&mod->log, LOG_INFO, 0, "Applying the new configuration.");
        r = mod->def->reload(mod->state, cm->cfg);
        if (r == SUNKD_RELOAD_RESTART)
                return module_restart(mod, ", which it cannot apply in place");
        if (r < 0)
                return module_reload_failed(mod, r);
        mod->config_stale = false;
        mod->error_message = mfree(mod->error_message);
        return 0;
}

/* Nothing of the module runs any more: take back what the host holds for
 * it, then let it free its state. */
static void module_finish(Module *mod) {
        const ModuleHost *h = mod->host;
        ModuleStoppedFn fn = TAKE_PTR(mod->stopped_fn);

        h->finishing(h->userdata, mod);
        sched_remove_owner(h->sched, mod);
        if (mod->state)
                mod->def->fini(mod->state);
        mod->state = NULL;
        /* What fini left behind goes now, before anything can call into freed state. */
        watch_remove_owner(h->watches, mod);
        fact_remove_owner(h->facts, mod);
        metrics_remove_owner(h->metrics, mod);
        /* fini may answer its own pending calls; the rest get Unavailable here. */
        ipc_remove_methods(h->ipc, mod);
        mod->bindings = mfree(mod->bindings);
        mod->n_bindings = 0;
        mod->mstate = MODULE_LOADED;
        log_ctx_full_errno(&mod->log, LOG_DEBUG, 0, "Module stopped.");
        if (fn)
                fn(mod, mod->stopped_userdata);
}

static bool module_busy(Module *mod) {
        const ModuleHost *h = mod->host;
        return sched_n_running(h->sched, mod) > 0 || spawn_n_running(h->spawns, mod) > 0;
}

void module_stop_poll(Module *mod) {
        if (mod->mstate == MODULE_STOPPING && !mod->lingering && !module_busy(mod))
                module_finish(mod);
}

/* The stop proper: what the module runs is ended now. */
static void module_stop_children(Module *mod) {
        const ModuleHost *h = mod->host;

        spawn_kill_owner(h->spawns, mod);
        if (module_busy(mod))
                log_ctx_full_errno(&mod->log, LOG_INFO, 0,
                                   "Stopping: waiting for %u run(s) and %u child process(es) to end.",
                                   sched_n_running(h->sched, mod), spawn_n_running(h->spawns, mod));
}

/* Asks the module how long its work in flight may still take (module.h:
 * linger); 0 when it has none or no hook. */
static uint64_t module_ask_linger(Module *mod) {
        if (mod->def->size < ABI_END_OF(sunkd_module, linger) || !mod->def->linger || !mod->state)
                return 0;
        return mod->def->linger(mod->state);
}

void module_linger_end(Module *mod) {
        if (mod->mstate != MODULE_STOPPING || !mod->lingering)
                return;
        mod->lingering = false;
        /* shutdown_timeout counts from here, as for a stop without a linger */
        mod->stop_since = now_usec(CLOCK_MONOTONIC);
        log_ctx_full_errno(&mod->log, LOG_INFO, 0, "%s",
                           spawn_n_running(mod->host->spawns, mod) > 0
                                   ? "Stopping: its time for work in flight is up; ending it."
                                   : "Stopping: its work in flight has ended.");
        module_stop_children(mod);
        mod->host->stopping(mod->host->userdata, mod);
        module_stop_poll(mod);
}

void module_stop(Module *mod, ModuleStoppedFn fn, void *userdata) {
        const ModuleHost *h = mod->host;
        uint64_t linger;

        mod->stopped_fn = fn;
        mod->stopped_userdata = userdata;
        if (mod->mstate == MODULE_STOPPING)
                return;
        if (mod->mstate != MODULE_RUNNING) {
                /* Nothing was registered: LOADED, FAILED or never loaded. */
                mod->stopped_fn = NULL;
                if (fn)
                        fn(mod, userdata);
                return;
        }
        linger = module_ask_linger(mod);
        mod->mstate = MODULE_STOPPING;
        mod->stop_since = now_usec(CLOCK_MONOTONIC);
        mod->stop_overdue = false;
        mod->lingering = linger > 0;
        mod->linger_until = linger > 0 ? mod->stop_since + MIN(linger, LINGER_MAX_USEC) : 0;
        ipc_suspend_owner(h->ipc, mod);
        sched_stop_owner(h->sched, mod);
        if (mod->lingering)
                log_ctx_full_errno(&mod->log, LOG_INFO, 0,
                                   "Stopping: letting its work in flight end first, for up to %.1fs.",
                                   (double) (mod->linger_until - mod->stop_since) / USEC_PER_SEC);
        else
                module_stop_children(mod);
        h->stopping(h->userdata, mod);
        module_stop_poll(mod);
}

Module *module_free(Module *mod) {
        if (!mod)
                return NULL;
        /* Only at exit, with the loop and the workers idle: what is still
         * "running" can no longer call back. */
        if (mod->mstate == MODULE_RUNNING || mod->mstate == MODULE_STOPPING) {
                module_stop(mod, NULL, NULL);
                if (mod->mstate == MODULE_STOPPING)
                        module_finish(mod);
        }
        allow_clear(&mod->allow);
        free(mod->error_message);
        free(mod->state_dir);
        free(mod->runtime_dir);
        free(mod->path);
        free(mod->name);
        free(mod);
        return NULL;
}

int module_status_json(Module *mod, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "name", json_object_new_string(mod->name));
        json_object_object_add(o, "state", json_object_new_string(module_state_to_string(mod->mstate)));
        if (mod->mstate == MODULE_STOPPING)
                json_object_object_add(
                        o, "stopping_for_usec",
                        json_object_new_int64((int64_t) (now_usec(CLOCK_MONOTONIC) - mod->stop_since)));
        json_object_object_add(
                o, "version",
                json_object_new_string(mod->def && mod->def->version ? mod->def->version : ""));
        if (mod->error_message)
                json_object_object_add(o, "error", json_object_new_string(mod->error_message));
        if (mod->mstate == MODULE_RUNNING && mod->def->status) {
                _cleanup_json_ json_object *s = json_object_new_object();
                if (!s)
                        return -ENOMEM;
                uint64_t refused;

                r = mod->def->status(mod->state, s);
                if (r < 0)
                        log_ctx_full_errno(&mod->log, LOG_WARNING, r,
                                           "Failed to collect status, ignoring: %m");
                else {
                        /* the host's count: a refused call never reaches the module */
                        if (ipc_owner_refused(mod->host->ipc, mod, &refused) >= 0)
                                json_object_object_add(s, "calls_refused",
                                                       json_object_new_int64((int64_t) refused));
                        json_object_object_add(o, "status", TAKE_PTR(s));
                }
        }
        *ret = TAKE_PTR(o);
        return 0;
}
