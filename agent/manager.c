/* The Manager and the daemon's lifecycle.
 *
 * Start: loop, signals, workers, scheduler, metrics, socket, then modules in
 * config order; READY=1 once every job flagged as a readiness gate has run
 * once (so systemd does not start slurmd before the first user cache is
 * written).  Reload (SIGHUP or Agent.Reload) is manager-reload.c's.
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
#include "manager-internal.h"
#include "manager.h"
#include "notify.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/time-util.h"

static void manager_watch_stopping(Manager *m);

/* The textfile is written with two fsyncs: by a worker, never on the loop.
 * One write at a time; a change meanwhile writes once more afterwards. */
static void textfile_run(void *userdata) {
        Manager *m = userdata;

        m->textfile_r = fileio_write_atomic(m->config->metrics_textfile, m->textfile_text, m->textfile_len,
                                            0644, (uid_t) -1, (gid_t) -1);
}

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

void manager_write_textfile(Manager *m) {
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
                log_warning_errno(r, "Failed to write metrics to '%s', ignoring: %m",
                                  m->config->metrics_textfile);
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

        (void) metrics_add_value(m->m_job_runs, 1,
                                 (const char *[]){ name, result >= 0 ? "success" : "failure" });
        (void) metrics_set(m->m_job_duration, (double) sched_job_last_duration(j) / USEC_PER_SEC,
                           (const char *[]){ name });
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
                { sizeof(sunkd_metric_spec),
                  "job_runs_total",
                  "Completed job runs by result.",
                  SUNKD_METRIC_COUNTER,
                  { "job", "result" } },
                { sizeof(sunkd_metric_spec),
                  "job_last_duration_seconds",
                  "Duration of the last run of a job.",
                  SUNKD_METRIC_GAUGE,
                  { "job" } },
                { sizeof(sunkd_metric_spec),
                  "job_last_success_timestamp_seconds",
                  "Wall-clock time of the last successful run.",
                  SUNKD_METRIC_GAUGE,
                  { "job" } },
                { sizeof(sunkd_metric_spec),
                  "build_info",
                  "sunkd version and module ABI.",
                  SUNKD_METRIC_GAUGE,
                  { "version", "abi" } },
                { sizeof(sunkd_metric_spec),
                  "module_up",
                  "1 if the module initialised, 0 if it failed.",
                  SUNKD_METRIC_GAUGE,
                  { "module" } },
        };
        MetricFamily **dst[] = { &m->m_job_runs, &m->m_job_duration, &m->m_job_last_success, &m->m_info,
                                 &m->m_modules };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(specs); i++) {
                r = metrics_add(m->metrics, &specs[i], dst[i]);
                if (r < 0)
                        return r;
        }
        return metrics_set(
                m->m_info, 1,
                (const char *[]){ PACKAGE_VERSION,
                                  STRINGIFY(SUNKD_MODULE_ABI_MAJOR) "." STRINGIFY(SUNKD_MODULE_ABI_MINOR) });
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
            (r = watch_set_new(m->event, &m->watches)) < 0 ||
            (r = fact_store_new(m->event, &m->facts)) < 0) {
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

int manager_add_module(Manager *m, Module *mod) {
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

void manager_module_metric(Manager *m, Module *mod) {
        (void) metrics_set(m->m_modules, mod->mstate == MODULE_RUNNING ? 1 : 0,
                           (const char *[]){ mod->name });
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

void manager_check_stopped(Manager *m) {
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
                           "Module has not stopped within shutdown_timeout (%" PRIu64
                           " s): %u run(s) still on worker threads; "
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
                if (sd_event_add_time(m->event, &m->stop_deadline, CLOCK_MONOTONIC, next, 0,
                                      on_stop_deadline, m) < 0) {
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

        log_warning("Shutdown deadline reached with %u job(s) and %u child process(es) still running; "
                    "exiting anyway.",
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
