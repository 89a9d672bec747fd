/* The Manager and the daemon's lifecycle.
 *
 * Start: loop, signals, workers, scheduler, metrics, socket, then modules in
 * config order; READY=1 once every job flagged as a readiness gate has run
 * once (so systemd does not start slurmd before the first user cache is
 * written).  Reload (SIGHUP or Agent.Reload): the whole new file is parsed
 * and every module checks its section before anything changes; a bad file
 * is reported and the running config stays.  Then only the modules whose
 * section changed (config_module_same()) are reloaded or restarted; the
 * others keep their jobs, facts and state untouched.  A module whose reload
 * hook fails runs on with its old section, and the reload is reported as
 * failed, naming it.  The new file is checked by manager_check_config(), as
 * --check-config checks it; the settings that take effect at restart
 * (socket, workers, state_dir, module_dir, ...) keep the values sunkd
 * started with (m->started), and a reload names those that differ.
 * Stop (SIGTERM): lame duck —
 * stop accepting, cancel jobs and children, wait up to shutdown_timeout for
 * them, fini modules in reverse order, exit 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "activation.h"
#include "log.h"
#include "manager.h"
#include "notify.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/time-util.h"

static void manager_check_stopped(Manager *m);
static void manager_watch_stopping(Manager *m);

struct ReloadWait {
        ManagerReloadFn fn;
        void *userdata;
        ReloadWait *next;
};


/* The textfile is written with two fsyncs: by a worker, never on the loop.
 * One write at a time; a change meanwhile writes once more afterwards. */
static void textfile_run(void *userdata) {
        Manager *m = userdata;

        m->textfile_r = fileio_write_atomic(m->config->metrics_textfile, m->textfile_text, m->textfile_len, 0644,
                                            (uid_t) -1, (gid_t) -1);
}

static void manager_write_textfile(Manager *m);

static void textfile_done(void *userdata) {
        Manager *m = userdata;

        m->textfile_busy = false;
        m->textfile_text = mfree(m->textfile_text);
        if (m->textfile_r < 0)
                log_warning_errno(m->textfile_r, "Failed to write metrics to '%s', ignoring: %m",
                                  m->config->metrics_textfile);
        if (m->textfile_dirty && !m->stopping)
                manager_write_textfile(m);
        else if (m->stopping)
                manager_check_stopped(m);
}

static void manager_write_textfile(Manager *m) {
        int r;

        if (!m->config->metrics_textfile)
                return;
        if (m->textfile_busy) {
                m->textfile_dirty = true;
                return;
        }
        m->textfile_dirty = false;
        r = metrics_render(m->metrics, &m->textfile_text, &m->textfile_len);
        if (r >= 0)
                r = work_submit(m->host_pool, textfile_run, textfile_done, m);
        if (r < 0) {
                m->textfile_text = mfree(m->textfile_text);
                log_warning_errno(r, "Failed to write metrics to '%s', ignoring: %m", m->config->metrics_textfile);
                return;
        }
        m->textfile_busy = true;
}

static bool manager_gates_open(Manager *m) {
        for (size_t i = 0; i < sched_n_jobs(m->sched); i++) {
                Job *j = sched_job_at(m->sched, i);
                if (sched_job_runs(j) == 0 && sched_job_is_gate(j))
                        return false;
        }
        return true;
}

static void manager_maybe_ready(Manager *m) {
        if (m->ready || m->stopping || !manager_gates_open(m))
                return;
        m->ready = true;
        (void) notify_ready(&m->notify_fd, "Ready.");
        log_info("Ready: %zu module(s), socket '%s'.", m->n_modules, m->socket_path);
}

static void on_job_done(void *userdata, Job *j, int result) {
        Manager *m = userdata;
        const char *name = sched_job_name(j);

        (void) metrics_add_value(m->m_job_runs, 1, (const char *[]){ name, result >= 0 ? "success" : "failure" });
        (void) metrics_set(m->m_job_duration, (double) sched_job_last_duration(j) / USEC_PER_SEC, (const char *[]){ name });
        if (result >= 0)
                (void) metrics_set(m->m_job_last_success, (double) now_usec(CLOCK_REALTIME) / USEC_PER_SEC,
                                   (const char *[]){ name });
        manager_write_textfile(m);
        manager_maybe_ready(m);
}

/* A module that stops takes the series of its jobs along: dropped while
 * its jobs are still listed. */
static void on_module_finishing(void *userdata, Module *mod) {
        Manager *m = userdata;

        for (size_t i = 0; i < sched_n_jobs(m->sched); i++) {
                Job *j = sched_job_at(m->sched, i);
                const char *name = sched_job_name(j);

                if (sched_job_owner(j) != mod)
                        continue;
                (void) metrics_remove(m->m_job_runs, (const char *[]){ name, "success" });
                (void) metrics_remove(m->m_job_runs, (const char *[]){ name, "failure" });
                (void) metrics_remove(m->m_job_duration, (const char *[]){ name });
                (void) metrics_remove(m->m_job_last_success, (const char *[]){ name });
        }
}

static void manager_arm_stop_deadline(Manager *m);

static void on_module_stopping(void *userdata, Module *mod) {
        manager_watch_stopping(userdata);
        manager_arm_stop_deadline(userdata);
}

static const Config *module_host_config(void *userdata) {
        const Manager *m = userdata;
        return m->config;
}

static int on_signal_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload(userdata, NULL, NULL);
        return 0;
}

static int on_signal_stop(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        log_info("Received %s, shutting down.", strsignal((int) si->ssi_signo));
        manager_begin_shutdown(userdata);
        return 0;
}

static int add_core_metrics(Manager *m) {
        static const sunkd_metric_spec specs[] = {
                { sizeof(sunkd_metric_spec), "job_runs_total", "Completed job runs by result.", SUNKD_METRIC_COUNTER, { "job", "result" } },
                { sizeof(sunkd_metric_spec), "job_last_duration_seconds", "Duration of the last run of a job.", SUNKD_METRIC_GAUGE, { "job" } },
                { sizeof(sunkd_metric_spec), "job_last_success_timestamp_seconds", "Wall-clock time of the last successful run.", SUNKD_METRIC_GAUGE, { "job" } },
                { sizeof(sunkd_metric_spec), "build_info", "sunkd version and module ABI.", SUNKD_METRIC_GAUGE, { "version", "abi" } },
                { sizeof(sunkd_metric_spec), "module_up", "1 if the module initialised, 0 if it failed.", SUNKD_METRIC_GAUGE, { "module" } },
        };
        MetricFamily **dst[] = { &m->m_job_runs, &m->m_job_duration, &m->m_job_last_success, &m->m_info, &m->m_modules };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(specs); i++) {
                r = metrics_add(m->metrics, &specs[i], dst[i]);
                if (r < 0)
                        return r;
        }
        return metrics_set(m->m_info, 1, (const char *[]){ PACKAGE_VERSION, STRINGIFY(SUNKD_MODULE_ABI_MAJOR) "." STRINGIFY(SUNKD_MODULE_ABI_MINOR) });
}

/* Made absolute against the working directory but not resolved: a
 * Kubernetes ConfigMap file is a symlink whose target changes on update,
 * and a reload must follow the link again. */
static char *absolute_path(const char *path) {
        _cleanup_free_ char *cwd = NULL;
        char *p;

        if (path[0] == '/')
                return strdup(path);
        cwd = get_current_dir_name();
        if (!cwd || asprintf(&p, "%s/%s", cwd, path) < 0)
                return NULL;
        return p;
}

int manager_new(Config *config, const char *config_path, int notify_fd, Manager **ret) {
        Manager *m;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->config = m->started = config;
        m->notify_fd = notify_fd;
        m->start_usec = now_usec(CLOCK_REALTIME);
        m->config_path = absolute_path(config_path);
        if (!m->config_path) {
                manager_free(m);
                return -ENOMEM;
        }
        IpcLimits limits = IPC_LIMITS_DEFAULT;
        limits.max_connections = (unsigned) config->max_connections;
        limits.max_request = config->max_request;
        limits.idle_timeout_usec = config->idle_timeout_usec;
        limits.max_connections_per_uid = (unsigned) config->max_connections_per_uid;
        limits.max_calls_per_uid = (unsigned) config->max_calls_per_uid;
        limits.reserved_connections = (unsigned) config->reserved_connections;
        limits.request_timeout_usec = config->request_timeout_usec;

        if ((r = sd_event_default(&m->event)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGTERM, on_signal_stop, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGINT, on_signal_stop, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGHUP, on_signal_reload, m)) < 0 ||
            (r = sd_event_set_watchdog(m->event, true)) < 0 ||
            (r = work_pool_new(m->event, (unsigned) config->workers, &m->pool)) < 0 ||
            (r = work_pool_new(m->event, 1, &m->host_pool)) < 0 ||
            (r = sched_new(m->event, m->pool, &m->sched)) < 0 ||
            (r = spawn_set_new(m->event, &m->spawns)) < 0 || (r = metrics_new(&m->metrics)) < 0 ||
            (r = add_core_metrics(m)) < 0 || (r = ipc_new(m->event, &limits, &m->ipc)) < 0 ||
            (r = watch_set_new(m->event, &m->watches)) < 0 || (r = fact_store_new(m->event, &m->facts)) < 0) {
                log_error_errno(r, "Failed to set up the event loop: %m");
                manager_free(m);
                return r;
        }
        sched_set_done_hook(m->sched, on_job_done, m);
        m->module_host = (ModuleHost){
                .sched = m->sched,
                .spawns = m->spawns,
                .ipc = m->ipc,
                .watches = m->watches,
                .facts = m->facts,
                .metrics = m->metrics,
                .config_path = m->config_path,
                .module_dir = config->module_dir,
                .state_dir = config->state_dir,
                .socket = config->socket,
                .userdata = m,
                .config = module_host_config,
                .stopping = on_module_stopping,
                .finishing = on_module_finishing,
        };
        /* No module's stuck work can hold every worker. */
        sched_set_max_workers_per_owner(m->sched, MAX(1u, (unsigned) config->workers / 2));
        *ret = m;
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        /* Reverse of init order, as the modules were started. */
        for (size_t i = m->n_modules; i > 0; i--)
                module_free(m->modules[i - 1]);
        free(m->modules);
        for (size_t i = 0; i < m->n_retired; i++)
                module_free(m->retired[i]);
        free(m->retired);
        sd_event_source_disable_unref(m->stopping_watch);
        free(m->textfile_text);
        for (ReloadWait *w; (w = m->reload_next);) {
                m->reload_next = w->next;
                free(w);
        }
        m->watches = watch_set_free(m->watches);
        m->facts = fact_store_free(m->facts);
        m->ipc = ipc_free(m->ipc);
        m->spawns = spawn_set_free(m->spawns);
        m->sched = sched_free(m->sched);
        m->pool = work_pool_free(m->pool);
        m->host_pool = work_pool_free(m->host_pool);
        m->metrics = metrics_free(m->metrics);
        sd_event_source_disable_unref(m->shutdown_timer);
        sd_event_source_disable_unref(m->stop_deadline);
        sd_event_unref(m->event);
        if (m->started != m->config)
                config_free(m->started);
        config_free(m->config);
        if (m->notify_fd >= 0)
                close(m->notify_fd);
        free(m->config_path);
        free(m->socket_path);
        free(m);
        return NULL;
}

static int manager_listen(Manager *m) {
        int r;

        r = activation_take(m->ipc, m->config, &m->socket_path);
        if (r != 0)
                return r < 0 ? r : 0;
        r = ipc_listen(m->ipc, m->config->socket, m->config->socket_mode, m->config->socket_gid);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on '%s': %m", m->config->socket);
        m->socket_path = strdup(m->config->socket);
        return m->socket_path ? 0 : log_oom();
}

static int manager_add_module(Manager *m, Module *mod) {
        Module **l = realloc(m->modules, (m->n_modules + 1) * sizeof(Module *));

        if (!l)
                return -ENOMEM;
        m->modules = l;
        m->modules[m->n_modules++] = mod;
        return 0;
}

/* The reserved socket slots follow the running modules' allow lists. */
static void manager_update_privileged(Manager *m) {
        _cleanup_free_ const IpcAllow **allows = calloc(m->n_modules ?: 1, sizeof(IpcAllow *));
        int r = allows ? 0 : -ENOMEM;

        for (size_t i = 0; allows && i < m->n_modules; i++)
                allows[i] = &m->modules[i]->allow;
        if (r >= 0)
                r = ipc_admit_set_privileged(m->ipc, allows, m->n_modules);
        if (r < 0)
                log_warning_errno(r, "Failed to update who may use the reserved socket slots: %m");
}

static void manager_module_metric(Manager *m, Module *mod) {
        (void) metrics_set(m->m_modules, mod->mstate == MODULE_RUNNING ? 1 : 0, (const char *[]){ mod->name });
        /* Every module (re)initialisation passes here, the last after the module list is final. */
        manager_update_privileged(m);
}

static int manager_start_module(Manager *m, const ConfModule *cm) {
        Module *mod = NULL;
        int r;

        r = module_new(&m->module_host, m->module_host.module_dir, m->module_host.state_dir, cm, &mod);
        if (mod) {
                int k = manager_add_module(m, mod);
                if (k < 0) {
                        module_free(mod);
                        return log_oom();
                }
                if (r >= 0)
                        r = module_init(mod, cm);
                manager_module_metric(m, mod);
        }
        if (r < 0 && cm->required)
                return log_error_errno(-ENOEXEC, "Required module '%s' failed, exiting.", cm->name);
        return 0;
}

static int manager_ensure_state_dir(Manager *m) {
        const char *dir = m->module_host.state_dir;

        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Failed to create state directory '%s': %m", dir);
        return 0;
}

int manager_start(Manager *m) {
        int r;

        log_set_max_level(m->config->log_level);
        r = manager_ensure_state_dir(m);
        if (r < 0)
                return r;
        r = manager_add_agent_methods(m);
        if (r < 0)
                return log_error_errno(r, "Failed to register the agent's methods: %m");
        r = manager_listen(m);
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->config->n_modules; i++) {
                const ConfModule *cm = &m->config->modules[i];
                if (!cm->enabled) {
                        log_info("Module '%s' is disabled.", cm->name);
                        continue;
                }
                r = manager_start_module(m, cm);
                if (r < 0)
                        return r;
        }
        manager_write_textfile(m);
        manager_maybe_ready(m);
        if (!m->ready)
                (void) notify_status("Waiting for the first run of readiness jobs...");
        return 0;
}

int manager_run(Manager *m) {
        int r = sd_event_loop(m->event);

        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m"), 1;
        return r;
}

static bool manager_any_stopping(Manager *m) {
        for (size_t i = 0; i < m->n_modules; i++)
                if (m->modules[i]->mstate == MODULE_STOPPING)
                        return true;
        return m->n_retired > 0;
}

static void manager_check_stopped(Manager *m) {
        if (!m->stopping || manager_any_stopping(m) || m->textfile_busy || m->reload_busy)
                return;
        (void) sd_event_exit(m->event, 0);
}

/* After every event while a module is stopping: its last run or child may
 * just have ended.  Cheaper and surer than a hook in every subsystem. */
static int on_stopping_watch(sd_event_source *s, void *userdata) {
        Manager *m = userdata;
        size_t i;

        for (i = 0; i < m->n_modules; i++)
                module_stop_poll(m->modules[i]);
        /* A finished retired module frees itself and leaves the list. */
        for (i = m->n_retired; i > 0; i--)
                module_stop_poll(m->retired[i - 1]);
        if (!manager_any_stopping(m))
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        manager_check_stopped(m);
        return 0;
}

/* A module began stopping: finish it (and any other) once its last run or
 * child has ended. */
static void manager_watch_stopping(Manager *m) {
        if (!m->stopping_watch) {
                if (sd_event_add_post(m->event, &m->stopping_watch, on_stopping_watch, m) < 0) {
                        log_oom();
                        return;
                }
                (void) sd_event_source_set_description(m->stopping_watch, "module-stopping");
        }
        (void) sd_event_source_set_enabled(m->stopping_watch, SD_EVENT_ON);
}

/* A reload's stop gets the deadline a shutdown has.  Child and async runs
 * always end by then (the kill grace); what can outlast it is work on a
 * worker thread, which cannot be taken back.  The module then stays
 * STOPPING, shown with its age in status, and the log says what holds it. */
static bool module_overdue(Manager *m, Module *mod, uint64_t now) {
        return mod->mstate == MODULE_STOPPING && !mod->lingering && !mod->stop_overdue &&
               now - mod->stop_since >= m->config->shutdown_timeout_usec;
}

static void warn_overdue(Manager *m, Module *mod) {
        mod->stop_overdue = true;
        log_ctx_full_errno(&mod->log, LOG_WARNING, 0,
                           "Module has not stopped within shutdown_timeout (%" PRIu64 " s): %u run(s) still on worker threads; "
                           "it stops when they return, and keeps its place meanwhile.",
                           m->config->shutdown_timeout_usec / USEC_PER_SEC, sched_n_running(m->sched, mod));
}

static Module *manager_module_at(Manager *m, size_t i) {
        return i < m->n_modules ? m->modules[i] : m->retired[i - m->n_modules];
}

static int on_stop_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        /* Ending a linger may finish the module, and a retired one then
         * leaves the list: look again from the start after each. */
        for (bool again = true; again;) {
                again = false;
                for (size_t i = 0; i < m->n_modules + m->n_retired && !again; i++) {
                        Module *mod = manager_module_at(m, i);

                        if (mod->mstate == MODULE_STOPPING && mod->lingering && now >= mod->linger_until) {
                                module_linger_end(mod);
                                again = true;
                        }
                }
        }
        for (size_t i = 0; i < m->n_modules + m->n_retired && !m->stopping; i++)
                if (module_overdue(m, manager_module_at(m, i), now))
                        warn_overdue(m, manager_module_at(m, i));
        manager_arm_stop_deadline(m);
        return 0;
}

/* The next stop to come due, if any: a linger's end, or (but at shutdown,
 * where its own deadline rules) a stop that outlasts shutdown_timeout. */
static void manager_arm_stop_deadline(Manager *m) {
        uint64_t next = UINT64_MAX;

        for (size_t i = 0; i < m->n_modules + m->n_retired; i++) {
                Module *mod = manager_module_at(m, i);

                if (mod->mstate != MODULE_STOPPING)
                        continue;
                if (mod->lingering)
                        next = MIN(next, mod->linger_until);
                else if (!mod->stop_overdue && !m->stopping)
                        next = MIN(next, mod->stop_since + m->config->shutdown_timeout_usec);
        }
        if (next == UINT64_MAX) {
                (void) sd_event_source_set_enabled(m->stop_deadline, SD_EVENT_OFF);
                return;
        }
        if (!m->stop_deadline) {
                if (sd_event_add_time(m->event, &m->stop_deadline, CLOCK_MONOTONIC, next, 0, on_stop_deadline, m) < 0) {
                        log_oom();
                        return;
                }
                (void) sd_event_source_set_description(m->stop_deadline, "module-stop-deadline");
                return;
        }
        (void) sd_event_source_set_time(m->stop_deadline, next);
        (void) sd_event_source_set_enabled(m->stop_deadline, SD_EVENT_ONESHOT);
}

static int on_shutdown_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        log_warning("Shutdown deadline reached with %u job(s) and %u child process(es) still running; exiting anyway.",
                    sched_n_running(m->sched, NULL), spawn_n_running(m->spawns, NULL));
        /* Module code may still run on a worker: nothing it uses is freed. */
        m->abandoned = true;
        (void) sd_event_exit(m->event, 0);
        return 0;
}

static uint64_t manager_longest_linger(Manager *m) {
        uint64_t now = now_usec(CLOCK_MONOTONIC), longest = 0;

        for (size_t i = 0; i < m->n_modules + m->n_retired; i++) {
                Module *mod = manager_module_at(m, i);

                if (mod->mstate == MODULE_STOPPING && mod->lingering && mod->linger_until > now)
                        longest = MAX(longest, mod->linger_until - now);
        }
        return longest;
}

void manager_begin_shutdown(Manager *m) {
        if (m->stopping)
                return;
        m->stopping = true;
        (void) notify_stopping();
        ipc_stop_accepting(m->ipc);
        /* In reverse order of start, as their dependencies came up. */
        for (size_t i = m->n_modules; i > 0; i--)
                module_stop(m->modules[i - 1], NULL, NULL);
        /* shutdown_timeout begins once the longest linger has ended */
        (void) sd_event_add_time_relative(m->event, &m->shutdown_timer, CLOCK_MONOTONIC,
                                          m->config->shutdown_timeout_usec + manager_longest_linger(m), 0,
                                          on_shutdown_deadline, m);
        manager_watch_stopping(m);
        manager_check_stopped(m);
}

/* Whether everything may be freed: no worker still runs module code. */
bool manager_quiescent(Manager *m) {
        return !m->abandoned && work_pool_busy(m->pool) == 0 && work_pool_busy(m->host_pool) == 0;
}

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
        int r = 0;

        for (size_t i = 0; i < c->n_modules; i++) {
                const ConfModule *cm = &c->modules[i];
                Module *mod, *probe = NULL;

                if (!cm->enabled)
                        continue;
                mod = manager_find_module(m, cm->name);
                if (!mod || !in_force) {
                        r = module_new(&m->module_host, c->module_dir, c->state_dir, cm, &probe);
                        if (r < 0) {
                                module_free(probe);
                                break;
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
                                r = log_oom();
                                break;
                        }
                        fresh = l;
                        fresh[n++] = probe;
                }
                if (r < 0)
                        break;
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        module_free(fresh[i]);
                free(fresh);
                return r;
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
                        memmove(m->retired + i, m->retired + i + 1, (m->n_retired - i - 1) * sizeof(Module *));
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
                log_ctx_full_errno(&mod->log, LOG_DEBUG, 0, "Section unchanged; the module is left as it is.");
                return module_apply_host_keys(mod, cm);
        }
        return module_reload(mod, cm);
}

/* "name (what)" of each module that could not take its new section. */
static void note_failure(char **failed, const Module *mod, int r, const char *what) {
        char *l;

        if (r >= 0)
                return;
        if (asprintf(&l, "%s%s%s (%s: %s)", *failed ?: "", *failed ? ", " : "", mod->name, what, strerror(-r)) < 0)
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
                                note_failure(ret_failed, mod, r, mod->mstate == MODULE_RUNNING ?
                                             "runs its previous configuration" : "failed");
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
                        log_info("Module '%s' removed from the configuration, stopping it.", old[k - 1]->name);
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
                log_error_errno(r, "Failed to reload, keeping the running configuration: %s", error ?: "invalid");
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
