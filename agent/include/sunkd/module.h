/* sunkd module ABI: the only header a module includes.
 *
 * A module is a shared object that exports exactly one data symbol,
 * `sunkd_module_v1` (the major ABI version is part of the name, so a module
 * built for another major fails to resolve and the loader says so).  The host
 * owns the event loop, every thread and every child process: a module
 * describes work (jobs, socket methods, metrics) through the function table
 * in `sunkd_ctx` and the host runs it.  Nothing is exported from the sunkd
 * executable; modules link with -Wl,-z,defs.
 *
 * Compatibility rules:
 *   - SUNKD_MODULE_ABI_MAJOR changes on any incompatible change; the symbol
 *     name changes with it.
 *   - Additive changes bump SUNKD_MODULE_ABI_MINOR and append fields at the
 *     end of structs.  Every struct a module hands the host starts with (or
 *     carries) its own size, so the host can tell an old module's shorter
 *     struct apart.
 *
 * Threads: unless a function says "[any thread]", it may be called only on
 * the loop, i.e. from init/reload/fini/status, a job's prepare/done, a method
 * handler or a spawn callback.  A job's `work` runs on a host worker thread and
 * may call only [any thread] functions.
 *
 * Errors: every int-returning function returns 0 (or a positive value where
 * documented) on success and a negative errno value on failure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SUNKD_MODULE_ABI_MAJOR 1
#define SUNKD_MODULE_ABI_MINOR 2

#define SUNKD_USEC_PER_SEC  UINT64_C(1000000)
#define SUNKD_USEC_PER_MSEC UINT64_C(1000)

struct json_object;

typedef struct sunkd_ctx sunkd_ctx;       /* host-owned, one per loaded module */
typedef struct sunkd_job sunkd_job;       /* host-owned handle of a job */
typedef struct sunkd_call sunkd_call;     /* one in-flight socket method call */
typedef struct sunkd_cfg sunkd_cfg;       /* a node of the parsed sunkd.yaml */
typedef struct sunkd_metric sunkd_metric; /* host-owned metric family */

/* Log levels are syslog's. */
enum {
        SUNKD_LOG_ERR = 3,
        SUNKD_LOG_WARNING = 4,
        SUNKD_LOG_NOTICE = 5,
        SUNKD_LOG_INFO = 6,
        SUNKD_LOG_DEBUG = 7,
};

/* ---- Jobs ------------------------------------------------------------- */

/* Cancellation flag handed to `work`; poll it with sunkd_cancelled(). */
typedef struct sunkd_cancel {
        volatile int requested;
} sunkd_cancel;

static inline bool sunkd_cancelled(const sunkd_cancel *c) {
        return c && __atomic_load_n(&c->requested, __ATOMIC_RELAXED);
}

enum {
        /* READY=1 waits until the first run of this job has finished. */
        SUNKD_JOB_READY_GATE = 1u << 0,
        /* No periodic runs: the job runs only when triggered. */
        SUNKD_JOB_TRIGGER_ONLY = 1u << 1,
};

/**
 * sunkd_job_spec - a unit of periodic or triggered work.
 * @size:        sizeof(sunkd_job_spec) as the module saw it.
 * @name:        "<module>.<verb>", shown by `sunkctl jobs`, used by `sunkctl run`.
 * @interval_usec: period between runs; ignored with SUNKD_JOB_TRIGGER_ONLY.
 * @splay_usec:  the first run happens at now + U(0, splay).
 * @jitter_pct:  later runs at interval +/- jitter_pct percent.
 * @backoff_min_usec, @backoff_max_usec: after n consecutive failures the next
 *               run is at min(max, min * 2^(n-1)), drawn from [d/2, d];
 *               one success returns the job to its interval.
 * @timeout_usec: hard limit on `work`; on expiry the cancel flag is raised and
 *               the run counts as failed with -ETIMEDOUT.
 * @prepare:     optional, on the loop: snapshot what `work` needs (config,
 *               state) into *ret_input, so `work` never reads mutable state.
 * @work:        on a worker thread.  Result in *ret_result.
 * @done:        on the loop, always called once per run that was started,
 *               with r = work's return, -ETIMEDOUT or -ECANCELED; it owns
 *               (and frees) input and result.  Its return value is the
 *               run's result shown in status: 0 or negative errno.
 */
typedef struct sunkd_job_spec {
        size_t size;
        const char *name;
        uint64_t interval_usec;
        uint64_t splay_usec;
        uint32_t jitter_pct;
        uint64_t backoff_min_usec;
        uint64_t backoff_max_usec;
        uint64_t timeout_usec;
        unsigned flags;
        int (*prepare)(void *state, void **ret_input);
        int (*work)(void *state, void *input, const sunkd_cancel *cancel, void **ret_result);
        int (*done)(void *state, int r, void *input, void *result);
} sunkd_job_spec;

/* ---- Socket methods --------------------------------------------------- */

enum {
        /* Who may call.  A method must set exactly one of these. */
        SUNKD_METHOD_ROOT = 1u << 0,    /* uid 0 only */
        SUNKD_METHOD_ANY_UID = 1u << 1, /* any local peer */
        SUNKD_METHOD_ALLOW = 1u << 2,   /* root, plus the users/@groups in the
                                           module's `allow:` config list */
};

/* The handler returns 0 once it has replied, SUNKD_CALL_PENDING to keep the
 * call and reply later (the handle stays valid until then, even if the peer
 * hangs up), or a negative errno for a generic error reply.  Once the host
 * starts stopping the module (fini), it answers the module's pending calls
 * itself (io.sunkd.Unavailable) and frees them: from fini on, a module must
 * not touch any pending call handle. */
#define SUNKD_CALL_PENDING 1

typedef struct sunkd_method {
        const char *name; /* "io.sunkd.<Module>.<Verb>" */
        unsigned flags;
        int (*fn)(sunkd_call *call, struct json_object *params, void *state);
} sunkd_method;

/* ---- Config ----------------------------------------------------------- */

typedef enum sunkd_cfg_type {
        SUNKD_CFG_STRING,   /* char *              (malloc'd; free with sunkd_cfg_clear) */
        SUNKD_CFG_INT,      /* int64_t, within [min, max] when max > min */
        SUNKD_CFG_BOOL,     /* bool: true/false/yes/no/on/off */
        SUNKD_CFG_DURATION, /* uint64_t usec: "30s", "15m", "1h", "500ms", "2d" */
        SUNKD_CFG_SIZE,     /* uint64_t bytes: "64K", "1M", "2G", plain bytes */
        SUNKD_CFG_PATH,     /* char *, absolute and without ".." */
        SUNKD_CFG_LIST,     /* char **, NULL-terminated, from a sequence of scalars */
        SUNKD_CFG_MAP,      /* const sunkd_cfg *, borrowed, valid during init/reload */
} sunkd_cfg_type;

enum {
        SUNKD_CFG_REQUIRED = 1u << 0,
};

typedef struct sunkd_cfg_key {
        const char *key;
        sunkd_cfg_type type;
        size_t offset; /* offsetof() the destination in the module's struct */
        unsigned flags;
        int64_t min, max; /* INT range; DURATION/SIZE upper bound when max > 0 */
} sunkd_cfg_key;

/* ---- Metrics ---------------------------------------------------------- */

typedef enum sunkd_metric_type {
        SUNKD_METRIC_COUNTER,
        SUNKD_METRIC_GAUGE,
} sunkd_metric_type;

#define SUNKD_METRIC_LABELS_MAX 4

typedef struct sunkd_metric_spec {
        size_t size;
        const char *name; /* without the "sunkd_" prefix the host adds */
        const char *help;
        sunkd_metric_type type;
        const char *labels[SUNKD_METRIC_LABELS_MAX]; /* NULL-terminated if fewer */
} sunkd_metric_spec;

/* ---- Child processes -------------------------------------------------- */

typedef struct sunkd_spawn_spec {
        size_t size;
        const char *const *argv; /* argv[0] is an absolute path */
        const char *const *envp; /* the whole environment; NULL = empty */
        uint64_t timeout_usec;   /* SIGTERM to the process group, SIGKILL 5s later */
        size_t output_max;       /* stdout+stderr captured up to this; rest dropped */
        uid_t uid;               /* drop to uid/gid unless uid == (uid_t)-1 */
        gid_t gid;
        const char *cwd;         /* NULL = "/" */
        const char *input;       /* written to stdin, then closed; NULL = /dev/null */
        size_t input_len;
} sunkd_spawn_spec;

typedef struct sunkd_spawn_result {
        pid_t pid;
        int exit_code;      /* valid when signal == 0 */
        int signal;         /* the terminating signal, or 0 */
        bool timed_out;
        const char *output; /* NUL-terminated, borrowed for the callback */
        size_t output_len;
        bool output_truncated;
        uint64_t duration_usec;
} sunkd_spawn_result;

/* r is 0, or negative errno when the child could not be started. */
typedef void (*sunkd_spawn_cb)(void *userdata, int r, const sunkd_spawn_result *res);

/* ---- The host function table ----------------------------------------- */

typedef struct sunkd_host_api {
        size_t size;

        /* Logging; returns -abs(r) so callers can `return sunkd_log(...)`.
         * [any thread] */
        int (*log)(sunkd_ctx *c, int level, int r, const char *fmt, ...)
                __attribute__((format(printf, 4, 5)));

        /* Identity and places. */
        const char *(*module_name)(sunkd_ctx *c);
        const char *(*state_dir)(sunkd_ctx *c); /* <state_dir>/<module>, created 0700 */

        /* Config: fill `out` from `cfg` through `keys`.  Unknown keys, wrong
         * types and out-of-range values fail with -EINVAL and a malloc'd
         * "file:line:column: key 'x': reason" in *ret_error. The host keys
         * `enabled`, `required`, `allow` are accepted and skipped. */
        int (*cfg_parse)(const sunkd_cfg *cfg, const sunkd_cfg_key *keys, size_t n_keys, void *out,
                         char **ret_error);
        void (*cfg_clear)(const sunkd_cfg_key *keys, size_t n_keys, void *out);
        /* "file:line:column" of a node, for messages about values. */
        int (*cfg_where)(const sunkd_cfg *cfg, char **ret);
        /* Look up a key of a map node (NULL if absent) and its scalar text. */
        const sunkd_cfg *(*cfg_get)(const sunkd_cfg *cfg, const char *key);
        const char *(*cfg_scalar)(const sunkd_cfg *cfg);

        /* Jobs. */
        int (*job_add)(sunkd_ctx *c, const sunkd_job_spec *spec, sunkd_job **ret);
        int (*job_trigger)(sunkd_job *j, const char *reason);
        int (*job_set_interval)(sunkd_job *j, uint64_t interval_usec, uint64_t splay_usec);

        /* Socket methods and replies. */
        int (*methods_add)(sunkd_ctx *c, const sunkd_method *methods, size_t n);
        int (*reply)(sunkd_call *call, struct json_object *params);     /* takes params */
        int (*reply_error)(sunkd_call *call, const char *error, struct json_object *params);
        uid_t (*call_uid)(sunkd_call *call);
        gid_t (*call_gid)(sunkd_call *call);

        /* Metrics. */
        int (*metric_add)(sunkd_ctx *c, const sunkd_metric_spec *spec, sunkd_metric **ret);
        int (*metric_set)(sunkd_metric *m, double value, const char *const *label_values);
        int (*metric_add_value)(sunkd_metric *m, double delta, const char *const *label_values);

        /* Child processes, with output capture, timeout and process-group kill. */
        int (*spawn)(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata);

        /* Files.  file_stage writes a temp file next to `path` (same dir),
         * fsyncs it, sets mode and owner (uid (uid_t)-1 = leave) and returns
         * its name; file_commit renames it over `path` and fsyncs the dir.
         * file_write_atomic does both.  [any thread] */
        int (*file_stage)(const char *path, const void *data, size_t len, mode_t mode, uid_t uid,
                          gid_t gid, char **ret_tmp);
        int (*file_commit)(const char *tmp, const char *path);
        int (*file_write_atomic)(const char *path, const void *data, size_t len, mode_t mode,
                                 uid_t uid, gid_t gid);

        /* ABI 1.1.  From a job's done (or prepare): one line explaining the
         * run's result, shown by `sunkctl run` and `sunkctl jobs --json` instead
         * of the bare errno text.  Copied; cleared when the next run starts. */
        int (*job_set_message)(sunkd_job *j, const char *message);
        /* ABI 1.1.  From reload: take a job's new timing (interval, splay,
         * jitter, backoff, timeout) from @spec; name, flags and callbacks must
         * be the ones it was added with (-EINVAL otherwise).  A running job
         * keeps its current deadline; the next run uses the new one. */
        int (*job_update)(sunkd_job *j, const sunkd_job_spec *spec);

        /* ABI 1.2: calls that outlive their caller */
        /* @cb runs on the loop once the peer of the pending @call has hung up
         * (at once, from the loop, if it already has), so the module can stop
         * work nobody waits for.  The handle stays valid until the module
         * replies; that reply only frees it.  @cb NULL removes it; -EINVAL
         * for an answered call. */
        int (*call_on_gone)(sunkd_call *call, void (*cb)(sunkd_call *call, void *userdata),
                            void *userdata);
        /* The caller's pid as the kernel saw it at connect (SO_PEERCRED). */
        pid_t (*call_pid)(sunkd_call *call);
} sunkd_host_api;

struct sunkd_ctx {
        const sunkd_host_api *api;
};

/**
 * sunkd_module - what a module exports as `sunkd_module_v1`.
 * @init:   register jobs, methods and metrics; parse config; hand state back
 *          through *ret_state.  A failure is reported and the module is shown
 *          as failed while the others run (unless `required: true`).
 * @check:  optional; validate @cfg without side effects (parse it through the
 *          key table, log what is wrong).  Used by `sunkd --check-config` and
 *          before a reload is applied, so a bad file never replaces a good one.
 * @reload: apply a new, already-checked config in place.  NULL means the host
 *          calls fini() and init() instead.
 * @fini:   undo everything; must accept a half-built state.  The host has
 *          stopped the module's jobs before calling it.
 * @status: optional; add fields to `out` for `sunkctl status`.  Integer keys
 *          ending in `_duration_usec` are durations and other `_usec` keys
 *          CLOCK_REALTIME times, both in microseconds; sunkctl shows them
 *          as "1.2s" and "5m ago".
 */
typedef struct sunkd_module {
        uint32_t abi_major;
        uint32_t abi_minor;
        uint32_t size;
        const char *name;
        const char *version;
        int (*init)(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state);
        int (*check)(sunkd_ctx *c, const sunkd_cfg *cfg);
        int (*reload)(void *state, const sunkd_cfg *cfg);
        void (*fini)(void *state);
        int (*status)(void *state, struct json_object *out);
} sunkd_module;

#define SUNKD_EXPORT __attribute__((visibility("default")))

#define SUNKD_MODULE_DEFINE(...)                                                                 \
        SUNKD_EXPORT extern const sunkd_module sunkd_module_v1;                                  \
        SUNKD_EXPORT const sunkd_module sunkd_module_v1 = {                                      \
                .abi_major = SUNKD_MODULE_ABI_MAJOR,                                             \
                .abi_minor = SUNKD_MODULE_ABI_MINOR,                                             \
                .size = sizeof(sunkd_module),                                                    \
                __VA_ARGS__}

/* ---- Convenience wrappers -------------------------------------------- */

#define sunkd_log(c, level, r, ...) ((c)->api->log((c), (level), (r), __VA_ARGS__))
#define sunkd_log_error_errno(c, r, ...) sunkd_log(c, SUNKD_LOG_ERR, r, __VA_ARGS__)
#define sunkd_log_warning_errno(c, r, ...) sunkd_log(c, SUNKD_LOG_WARNING, r, __VA_ARGS__)
#define sunkd_log_error(c, ...) sunkd_log(c, SUNKD_LOG_ERR, 0, __VA_ARGS__)
#define sunkd_log_warning(c, ...) sunkd_log(c, SUNKD_LOG_WARNING, 0, __VA_ARGS__)
#define sunkd_log_notice(c, ...) sunkd_log(c, SUNKD_LOG_NOTICE, 0, __VA_ARGS__)
#define sunkd_log_info(c, ...) sunkd_log(c, SUNKD_LOG_INFO, 0, __VA_ARGS__)
#define sunkd_log_debug(c, ...) sunkd_log(c, SUNKD_LOG_DEBUG, 0, __VA_ARGS__)

#ifdef __cplusplus
}
#endif
