/* Reload (SIGHUP or Agent.Reload): the whole new file is parsed
 * and every module checks its section before anything changes; a bad file
 * is reported and the running config stays.  Then only the modules whose
 * section changed (config_module_same()) are reloaded or restarted; the
 * others keep their jobs, facts and state untouched.  A module whose reload
 * hook fails runs on with its old section, and the reload is reported as
 * failed, naming it.  The new file is checked by manager_check_config(), as
 * --check-config checks it; the settings that take effect at restart
 * (socket, workers, state_dir, module_dir, ...) keep the values sunkd
 * started with (m->started), and a reload names those that differ.  A module
 * gone from the file stops in the background and is freed when its last run
 * has ended.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "manager-internal.h"
#include "manager.h"
#include "notify.h"
#include "util/cleanup.h"
#include "util/macro.h"

static Module *manager_find_module(Manager *m, const char *name) {
        for (size_t i = 0; i < m->n_modules; i++)
                if (streq(m->modules[i]->name, name))
                        return m->modules[i];
        for (size_t i = 0; i < m->n_retired; i++)
                if (streq(m->retired[i]->name, name))
                        return m->retired[i];
        return NULL;
}

/* Back into the configuration before its stop ended: it restarts then. */
static Module *manager_unretire(Manager *m, const char *name) {
        for (size_t i = 0; i < m->n_retired; i++) {
                Module *mod = m->retired[i];
                if (!streq(mod->name, name))
                        continue;
                memmove(m->retired + i, m->retired + i + 1, (m->n_retired - i - 1) * sizeof(Module *));
                m->n_retired--;
                return mod;
        }
        return NULL;
}

/* What --check-config, a start and a reload refuse, one check for all three:
 * every enabled module of @c loaded from c->module_dir as the next start
 * would load it, its state directory under c->state_dir trusted, and its
 * section checked by the module.  A module already loaded from that file is
 * not opened again (its file and directory are checked again).  Modules
 * newly opened from the module_dir and state_dir in force go into @ret_new
 * (dlopen only, not initialised); those opened from another (the file
 * moves module_dir or state_dir, which take effect at restart) only for the
 * check, and are freed again. */
static int manager_check_config(Manager *m, const Config *c, Module ***ret_new, size_t *ret_n_new) {
        bool in_force = streq(c->module_dir, m->module_host.module_dir) &&
                        streq(c->state_dir, m->module_host.state_dir);
        Module **fresh = NULL;
        size_t n = 0;
        int first = 0;

        /* Every module, past the first that fails: each logs its own
         * errors, so one round shows them all. */
        for (size_t i = 0; i < c->n_modules; i++) {
                const ConfModule *cm = &c->modules[i];
                Module *mod, *probe = NULL;
                int r;

                if (!cm->enabled)
                        continue;
                mod = manager_find_module(m, cm->name);
                if (!mod || !in_force) {
                        r = module_new(&m->module_host, c->module_dir, c->state_dir, cm, &probe);
                        if (r < 0) {
                                module_free(probe);
                                first = first ?: r;
                                if (r == -ENOMEM)
                                        break;
                                continue;
                        }
                }
                r = module_check(probe ?: mod, c->state_dir, cm);
                if (probe && (mod || !in_force))
                        /* never dlclose'd: its library stays mapped, unused */
                        module_free(probe);
                else if (probe) {
                        Module **l = realloc(fresh, (n + 1) * sizeof(Module *));

                        if (!l) {
                                module_free(probe);
                                first = log_oom();
                                break;
                        }
                        fresh = l;
                        fresh[n++] = probe;
                }
                if (r < 0)
                        first = first ?: r;
                if (r == -ENOMEM)
                        break;
        }
        if (first < 0) {
                for (size_t i = 0; i < n; i++)
                        module_free(fresh[i]);
                free(fresh);
                return first;
        }
        *ret_new = fresh;
        *ret_n_new = n;
        return 0;
}

int manager_check_modules(Manager *m) {
        Module **fresh = NULL;
        size_t n = 0;
        int r;

        r = manager_check_config(m, m->config, &fresh, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                module_free(fresh[i]);
        free(fresh);
        return 0;
}

static void on_retired_stopped(Module *mod, void *userdata) {
        Manager *m = userdata;

        for (size_t i = 0; i < m->n_retired; i++)
                if (m->retired[i] == mod) {
                        memmove(m->retired + i, m->retired + i + 1,
                                (m->n_retired - i - 1) * sizeof(Module *));
                        m->n_retired--;
                        break;
                }
        log_info("Module '%s' stopped and unloaded.", mod->name);
        /* Gone from the config, its metrics are gone too, also from the textfile. */
        (void) metrics_remove(m->m_modules, (const char *[]){ mod->name });
        manager_write_textfile(m);
        module_free(mod);
}

/* A module leaves the configuration: it stops in the background and is
 * freed when its last run has ended, never before. */
static void manager_retire_module(Manager *m, Module *mod) {
        Module **l = realloc(m->retired, (m->n_retired + 1) * sizeof(Module *));

        if (!l) {
                log_oom();
                return; /* leaked rather than freed under a running job */
        }
        m->retired = l;
        m->retired[m->n_retired++] = mod;
        (void) metrics_set(m->m_modules, 0, (const char *[]){ mod->name });
        module_stop(mod, on_retired_stopped, m);
}

/* A running module whose section is as the one it runs is left alone: its
 * jobs, facts, calls and state stay as they are; only the host's own keys
 * (allow, required) are taken. */
static int manager_reload_module(Module *mod, const ConfModule *was, const ConfModule *cm) {
        if (was && mod->mstate == MODULE_RUNNING && !mod->config_stale && config_module_same(was, cm)) {
                log_ctx_full_errno(&mod->log, LOG_DEBUG, 0,
                                   "Section unchanged; the module is left as it is.");
                return module_apply_host_keys(mod, cm);
        }
        return module_reload(mod, cm);
}

/* "name (what)" of each module that could not take its new section. */
static void note_failure(char **failed, const Module *mod, int r, const char *what) {
        char *l;

        if (r >= 0)
                return;
        if (asprintf(&l, "%s%s%s (%s: %s)", *failed ?: "", *failed ? ", " : "", mod->name, what,
                     strerror(-r)) < 0)
                return;
        free(*failed);
        *failed = l;
}

/* Move the running modules into the order and set of @c; @was is the
 * configuration they ran with.  Modules that failed to take their section
 * are named in *ret_failed. */
static void manager_apply_modules(Manager *m, const Config *was, Config *c, Module **fresh, size_t n_fresh,
                                  char **ret_failed) {
        Module **old = m->modules;
        size_t n_old = m->n_modules;

        m->modules = NULL;
        m->n_modules = 0;
        for (size_t i = 0; i < c->n_modules; i++) {
                const ConfModule *cm = &c->modules[i];
                Module *mod = NULL;

                if (!cm->enabled)
                        continue;
                for (size_t k = 0; k < n_old && !mod; k++)
                        if (old[k] && streq(old[k]->name, cm->name)) {
                                int r;

                                mod = old[k];
                                old[k] = NULL;
                                r = manager_reload_module(mod, config_find_module(was, cm->name), cm);
                                note_failure(ret_failed, mod, r,
                                             mod->mstate == MODULE_RUNNING
                                                     ? "runs its previous configuration"
                                                     : "failed");
                        }
                if (!mod && (mod = manager_unretire(m, cm->name)))
                        note_failure(ret_failed, mod, module_reload(mod, cm), "failed");
                for (size_t k = 0; k < n_fresh && !mod; k++)
                        if (fresh[k] && streq(fresh[k]->name, cm->name)) {
                                mod = fresh[k];
                                fresh[k] = NULL;
                                note_failure(ret_failed, mod, module_init(mod, cm), "failed to start");
                        }
                /* checked in the file's module_dir, loaded from the one in force */
                if (!mod) {
                        int r = module_new(&m->module_host, m->module_host.module_dir,
                                           m->module_host.state_dir, cm, &mod);

                        if (mod)
                                note_failure(ret_failed, mod, r < 0 ? r : module_init(mod, cm),
                                             "failed to start");
                }
                if (mod && manager_add_module(m, mod) < 0) {
                        module_free(mod);
                        continue;
                }
                if (mod)
                        manager_module_metric(m, mod);
        }
        for (size_t k = n_old; k > 0; k--)
                if (old[k - 1]) {
                        log_info("Module '%s' removed from the configuration, stopping it.",
                                 old[k - 1]->name);
                        manager_retire_module(m, old[k - 1]);
                }
        free(old);
}

/* Settings bound into the socket, the worker pool and the modules' places
 * when sunkd started: a reload keeps them as they were. */
static const struct {
        const char *key;
        size_t offset, size;
        bool string;
} restart_keys[] = {
#define RESTART_KEY(key, field, string)                                                                     \
        { key, offsetof(Config, field), sizeof(((Config *) NULL)->field), string }
        RESTART_KEY("socket", socket, true),
        RESTART_KEY("socket_mode", socket_mode, false),
        RESTART_KEY("socket_group", socket_gid, false),
        RESTART_KEY("max_connections", max_connections, false),
        RESTART_KEY("max_request_size", max_request, false),
        RESTART_KEY("idle_timeout", idle_timeout_usec, false),
        RESTART_KEY("max_connections_per_uid", max_connections_per_uid, false),
        RESTART_KEY("max_calls_per_uid", max_calls_per_uid, false),
        RESTART_KEY("reserved_connections", reserved_connections, false),
        RESTART_KEY("request_timeout", request_timeout_usec, false),
        RESTART_KEY("workers", workers, false),
        RESTART_KEY("state_dir", state_dir, true),
        RESTART_KEY("module_dir", module_dir, true),
#undef RESTART_KEY
};
_Static_assert(ELEMENTSOF(restart_keys) <= MANAGER_RESTART_KEYS_MAX, "MANAGER_RESTART_KEYS_MAX");

size_t manager_pending_restart(const Manager *m, const char *ret[static MANAGER_RESTART_KEYS_MAX]) {
        const uint8_t *a = (const uint8_t *) m->started, *b = (const uint8_t *) m->config;
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(restart_keys); i++) {
                const void *x = a + restart_keys[i].offset, *y = b + restart_keys[i].offset;

                if (restart_keys[i].string ? !streq_ptr(*(char *const *) x, *(char *const *) y)
                                           : memcmp(x, y, restart_keys[i].size) != 0)
                        ret[n++] = restart_keys[i].key;
        }
        return n;
}

static void manager_note_restart_only(const Manager *m) {
        const char *keys[MANAGER_RESTART_KEYS_MAX];
        size_t n = manager_pending_restart(m, keys);

        for (size_t i = 0; i < n; i++)
                log_notice("%s: the new value takes effect at restart.", keys[i]);
}

/* Check and apply @c (taken) on the loop. */
static int manager_reload_apply(Manager *m, Config *c, char **error) {
        _cleanup_free_ char *failed = NULL;
        Module **fresh = NULL;
        size_t n_fresh = 0;
        Config *old;
        int r;

        /* What the refusing module said goes back to `sunkctl reload`. */
        log_capture_begin(error);
        r = manager_check_config(m, c, &fresh, &n_fresh);
        log_capture_end();
        if (r < 0) {
                log_error_errno(r, "New configuration refused by a module, keeping the running one.");
                if (!*error && asprintf(error, "a module refused its section: %s", strerror(-r)) < 0)
                        *error = NULL;
                config_free(c);
                return r;
        }
        log_set_max_level(c->log_level);
        old = m->config;
        m->config = c;
        manager_note_restart_only(m);
        manager_apply_modules(m, old, c, fresh, n_fresh, &failed);
        free(fresh);
        if (old != m->started)
                config_free(old);
        m->n_reloads++;
        if (!failed) {
                log_info("Configuration reloaded.");
                return 0;
        }
        /* The rest of the file is in force; these modules are not. */
        log_error("Configuration reloaded, keeping the running configuration of: %s.", failed);
        if (asprintf(error, "module(s) %s", failed) < 0)
                *error = NULL;
        return MANAGER_RELOAD_PARTIAL;
}

static void reload_run(void *userdata) {
        Manager *m = userdata;

        m->reload_r = config_load(m->config_path, &m->reload_config, &m->reload_error);
}

static void reload_start(Manager *m);

static void reload_done(void *userdata) {
        Manager *m = userdata;
        _cleanup_free_ char *error = TAKE_PTR(m->reload_error);
        Config *c = TAKE_PTR(m->reload_config);
        ReloadWait *waits = TAKE_PTR(m->reload_waits);
        int r = m->reload_r;

        m->reload_busy = false;
        if (m->stopping) {
                config_free(c);
                r = -ESHUTDOWN;
        } else if (r < 0)
                log_error_errno(r, "Failed to reload, keeping the running configuration: %s",
                                error ?: "invalid");
        else
                r = manager_reload_apply(m, c, &error);
        (void) notify_reloaded(r < 0 ? "Reload failed; running the previous configuration." : "Ready.");
        for (ReloadWait *w; (w = waits);) {
                waits = w->next;
                if (w->fn)
                        w->fn(m, w->userdata, r, error);
                free(w);
        }
        if (m->reload_again && !m->stopping)
                reload_start(m);
        manager_check_stopped(m);
}

static void reload_start(Manager *m) {
        int r;

        m->reload_again = false;
        m->reload_waits = TAKE_PTR(m->reload_next);
        (void) notify_reloading();
        log_info("Reloading configuration from '%s'.", m->config_path);
        r = work_submit(m->host_pool, reload_run, reload_done, m);
        if (r < 0) {
                m->reload_r = r;
                m->reload_error = strdup("cannot start reading the file");
                m->reload_busy = true;
                reload_done(m);
                return;
        }
        m->reload_busy = true;
}

int manager_reload(Manager *m, ManagerReloadFn fn, void *userdata) {
        ReloadWait *w;

        if (m->stopping)
                return -ESHUTDOWN;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (ReloadWait){ .fn = fn, .userdata = userdata, .next = m->reload_next };
        m->reload_next = w;
        if (m->reload_busy)
                m->reload_again = true;
        else
                reload_start(m);
        return 0;
}
