/* Loaded modules: the dlopen side and the per-module context. */
#pragma once

#include <stdbool.h>

#include "conf.h"
#include "facts.h"
#include "ipc.h"
#include "log.h"
#include "metrics.h"
#include "sched.h"
#include "spawn.h"
#include "sunkd/module.h"
#include "watch.h"

typedef enum ModuleState {
        MODULE_LOADED,   /* dlopen'ed and checked, not initialised */
        MODULE_RUNNING,  /* init succeeded */
        MODULE_STOPPING, /* waiting for its runs and children to end before fini */
        MODULE_FAILED,   /* init failed; the others run on */
        _MODULE_STATE_MAX,
} ModuleState;

typedef struct Module Module;
/* Called once the module is back to LOADED (fini done), on the loop. */
typedef void (*ModuleStoppedFn)(Module *mod, void *userdata);

/* What modules run on: the subsystems that keep what they register, and
 * what the loader asks of the one that owns them all.  Filled in once by
 * that owner, which outlives every Module made with it; the loader calls
 * nothing of the owner's but these hooks. */
typedef struct ModuleHost {
        Sched *sched;
        SpawnSet *spawns;
        Ipc *ipc;
        WatchSet *watches;
        FactStore *facts;
        Metrics *metrics;
        const char *config_path; /* named in errors about a section */
        /* Where modules are loaded from and their state directories are:
         * the module_dir and state_dir sunkd started with, which a reload
         * does not move (they take effect at restart). */
        const char *module_dir;
        const char *state_dir;
        const char *socket; /* the one sunkd listens on: module_runtime_dir() is beside it */
        void *userdata;     /* the hooks' */
        /* The configuration in force: the section a module that restarts takes. */
        const Config *(*config)(void *userdata);
        /* @mod began stopping: module_stop_poll() it after each event until
         * it has stopped. */
        void (*stopping)(void *userdata, Module *mod);
        /* @mod's runs and children are over and it is about to be torn
         * down, its jobs still registered. */
        void (*finishing)(void *userdata, Module *mod);
} ModuleHost;

struct Module {
        sunkd_ctx ctx; /* first, so the host API finds the Module from it */
        const ModuleHost *host;
        char *name;
        char *path;
        char *state_dir;
        char *runtime_dir; /* made on the first module_runtime_dir() */
        bool runtime_dir_made;
        const sunkd_module *def; /* &def_copy once loaded */
        sunkd_module def_copy;   /* the module's definition in this host's layout */
        void *dl;
        void *state;
        ModuleState mstate;
        bool required;
        int error;
        char *error_message;
        IpcAllow allow;
        LogContext log;
        struct MethodBinding *bindings;
        size_t n_bindings;
        uint64_t stop_since;   /* CLOCK_MONOTONIC when the current stop began */
        bool stop_overdue;     /* its stop outlasted shutdown_timeout (logged once) */
        bool lingering;        /* its stop waits for work in flight (module.h: linger) */
        uint64_t linger_until; /* CLOCK_MONOTONIC: when the stop goes on regardless */
        ModuleStoppedFn stopped_fn;
        void *stopped_userdata;
        bool config_stale; /* its reload hook failed: it runs an older section than the file's */
};

/**
 * module_open() - dlopen <@dir>/<@name>.so and check its ABI.
 * Return: 0, or negative errno with a message naming the file, both ABI
 * versions or dlerror() in *ret_error.
 */
int module_open(const char *dir, const char *name, void **ret_dl, const sunkd_module **ret_def,
                char **ret_error);

/** module_new() - load @cm's module from @module_dir, its state directory in
 * @state_dir.  When loading fails the Module is still returned, FAILED with
 * the reason, along with the negative errno. */
int module_new(const ModuleHost *host, const char *module_dir, const char *state_dir, const ConfModule *cm,
               Module **ret);
/** module_init() - init with @cm's section; on failure the module is FAILED. */
int module_init(Module *mod, const ConfModule *cm);
/** module_check() - what a start would refuse of @cm: its module's file and
 * directory no longer trusted, a state directory <@state_dir>/<name> that
 * is not, and what the module's check hook says of the section. */
int module_check(Module *mod, const char *state_dir, const ConfModule *cm);

/**
 * module_runtime_dir() - <directory of the socket>/<module>, made (0700)
 * and checked on the first call; NULL, logged, when it cannot be.
 */
const char *module_runtime_dir(Module *mod);
/**
 * module_reload() - apply @cm in place, or, for a module without a reload
 * hook (or whose hook answers SUNKD_RELOAD_RESTART), stop it and init it
 * again with the configuration then current.  When the hook fails the
 * module runs on as it was, marked config_stale and with the error in its
 * status; the next reload calls the hook again.  Return: 0, or the hook's
 * (or a failed restart's) negative errno, logged.
 */
int module_reload(Module *mod, const ConfModule *cm);
/** module_apply_host_keys() - take @cm's enabled/required/allow, which the
 * host applies itself, without calling the module. */
int module_apply_host_keys(Module *mod, const ConfModule *cm);
/**
 * module_linger_end() - a lingering module's work in flight is over, or its
 * time is up: go on with its stop (children killed, then fini).  A no-op
 * unless it lingers.
 */
void module_linger_end(Module *mod);
/**
 * module_stop() - begin stopping: timers off, running work cancelled,
 * children killed, new calls answered io.sunkd.Unavailable.  Once no run
 * and no child of the module is left, its remaining calls are answered
 * Unavailable, its methods and jobs removed and fini called; then @fn.
 * That may happen before this returns.  Stopping a stopping module only
 * replaces @fn.
 */
void module_stop(Module *mod, ModuleStoppedFn fn, void *userdata);
/** module_stop_poll() - finish a stop whose last run or child has ended. */
void module_stop_poll(Module *mod);
/** module_free() - the module must not be RUNNING or STOPPING; the library
 * stays loaded (never dlclose). */
Module *module_free(Module *mod);
int module_status_json(Module *mod, json_object **ret);
const char *module_state_to_string(ModuleState s);

extern const sunkd_host_api host_api;
