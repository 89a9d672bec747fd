/* The Manager: the one object that owns all of sunkd's state. */
#pragma once

#include <errno.h>

#include <stdbool.h>

#include <systemd/sd-event.h>

#include "conf.h"
#include "facts.h"
#include "ipc.h"
#include "metrics.h"
#include "module-loader.h"
#include "sched.h"
#include "spawn.h"
#include "watch.h"
#include "work.h"

typedef struct Manager Manager;
/* When a reload has been applied or refused: r < 0 with @error (may be NULL). */
typedef void (*ManagerReloadFn)(Manager *m, void *userdata, int r, const char *error);
typedef struct ReloadWait ReloadWait;

/* A reload's result when the file is in force but for modules whose new
 * section failed; any other negative result means nothing changed. */
#define MANAGER_RELOAD_PARTIAL (-EBADE)

/* The most keys manager_pending_restart() names. */
#define MANAGER_RESTART_KEYS_MAX 16

struct Manager {
        sd_event *event;
        char *config_path;
        Config *config;
        Config *started;   /* the one sunkd started with (config until the first reload): what the
                              settings that take effect at restart hold until then */
        char *socket_path; /* where the socket is served: sunkd.yaml's, or the one passed */
        Module **modules;
        size_t n_modules;
        Module **retired; /* removed from the configuration, still stopping */
        size_t n_retired;
        sd_event_source *stopping_watch; /* polls stopping modules after each event */
        WorkPool *pool;                  /* the modules' job work */
        WorkPool *host_pool;             /* one thread of the host's own: reload parse, metrics textfile,
                                            so modules' stuck work can never keep a SIGHUP from removing them */
        Sched *sched;
        Ipc *ipc;
        Metrics *metrics;
        SpawnSet *spawns;
        WatchSet *watches;
        FactStore *facts;
        ModuleHost module_host; /* the subsystems above and the hooks, as modules see them */
        int notify_fd;
        bool ready;
        bool stopping;
        bool abandoned; /* the shutdown deadline passed with module code still running */
        bool textfile_busy, textfile_dirty;
        char *textfile_text; /* rendered on the loop, written by a worker */
        size_t textfile_len;
        int textfile_r;
        sd_event_source *shutdown_timer;
        sd_event_source *stop_deadline; /* a module stopping outside shutdown */
        uint64_t start_usec;
        unsigned n_reloads;
        bool reload_busy, reload_again; /* the file is being read by a worker */
        ReloadWait *reload_waits, *reload_next;
        Config *reload_config;
        char *reload_error;
        int reload_r;
        MetricFamily *m_job_runs, *m_job_duration, *m_job_last_success, *m_info, *m_modules;
};

/** manager_new() - take @config (owned from now on) and set up the loop. */
int manager_new(Config *config, const char *config_path, int notify_fd, Manager **ret);
Manager *manager_free(Manager *m);
/** manager_start() - bind the socket, load and init modules.  -ENOEXEC when
 * a required module failed, -EADDRINUSE when another sunkd answers on the
 * socket, -ENOTSOCK when the service manager passed what cannot be it. */
int manager_start(Manager *m);
/** manager_run() - run the loop until shutdown; returns the exit code. */
int manager_run(Manager *m);
/**
 * manager_reload() - re-read the config file on a worker (parsing it runs
 * NSS for the names in it), then check and apply it on the loop; an invalid
 * file leaves the running one.  @fn (may be NULL) runs when that is done.
 * A request while a reload runs is served by one more reload after it.
 */
int manager_reload(Manager *m, ManagerReloadFn fn, void *userdata);
void manager_begin_shutdown(Manager *m);
/** manager_quiescent() - no worker runs module code, so all may be freed. */
bool manager_quiescent(Manager *m);
/** manager_check_modules() - dlopen and check every enabled module's section:
 * manager_check_config() of the file sunkd was started with. */
int manager_check_modules(Manager *m);
/**
 * manager_pending_restart() - the settings of the file in force that take
 * effect at restart and differ from what sunkd started with (socket,
 * workers, state_dir, module_dir, ...), their keys into @ret (static
 * strings, at most MANAGER_RESTART_KEYS_MAX).  Return: how many.
 */
size_t manager_pending_restart(const Manager *m, const char *ret[static MANAGER_RESTART_KEYS_MAX]);

int manager_add_agent_methods(Manager *m);
