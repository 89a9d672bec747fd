/* The Manager: the one object that owns all of sunkd's state. */
#pragma once

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

typedef struct Manager {
        sd_event *event;
        char *config_path;
        Config *config;
        Module **modules;
        size_t n_modules;
        WorkPool *pool;
        Sched *sched;
        Ipc *ipc;
        Metrics *metrics;
        SpawnSet *spawns;
        WatchSet *watches;
        FactStore *facts;
        int notify_fd;
        bool ready;
        bool stopping;
        sd_event_source *shutdown_timer;
        sd_event_source *shutdown_check;
        uint64_t start_usec;
        unsigned n_reloads;
        MetricFamily *m_job_runs, *m_job_duration, *m_job_last_success, *m_info, *m_modules;
        void (*libcurl_cleanup)(void); /* set once a module brought libcurl in (module-loader.c) */
} Manager;

/** manager_new() - take @config (owned from now on) and set up the loop. */
int manager_new(Config *config, const char *config_path, int notify_fd, Manager **ret);
Manager *manager_free(Manager *m);
/** manager_start() - bind the socket, load and init modules.  -ENOEXEC when
 * a required module failed. */
int manager_start(Manager *m);
/** manager_run() - run the loop until shutdown; returns the exit code. */
int manager_run(Manager *m);
/** manager_reload() - re-read the config file; keep the old one if invalid.
 * On failure *ret_error says why. */
int manager_reload(Manager *m, char **ret_error);
void manager_begin_shutdown(Manager *m);
/** manager_quiescent() - no worker runs module code, so all may be freed. */
bool manager_quiescent(Manager *m);
/** manager_check_modules() - dlopen and check every enabled module's section. */
int manager_check_modules(Manager *m);

int manager_add_agent_methods(Manager *m);
