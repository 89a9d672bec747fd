/* sunkd module ABI: the only header a module includes, and the only one
 * `make install` installs.  A module built outside sunkd's tree has this
 * alone; one built in the tree may also use agent/util/ (libsunkd-util).
 *
 * A module is a shared object that exports one data symbol,
 * `sunkd_module_v1` (the major ABI version is part of the name).  The host
 * owns the event loop, every thread and every child process: a module
 * describes work (jobs, socket methods, metrics) and the host runs it,
 * through the function table in `sunkd_ctx`.  Nothing is exported from the
 * executable; modules link with -Wl,-z,defs.
 *
 * Read in this order: the types by concern (jobs, socket methods, config,
 * metrics, child processes); sunkd_module, what a module exports, with its
 * lifecycle; "The host's functions, by concern", one static inline
 * sunkd_*() wrapper per host function (jobs, spawn and children, calls and
 * replies, facts, watches, config, metrics, places, files and log), where
 * each is documented and which new code calls; "Changes by minor" at the
 * end.  The table itself, sunkd_host_api, stays in release order.
 *
 * Compatibility: SUNKD_MODULE_ABI_MAJOR changes on any incompatible change,
 * and the symbol's name with it.  Additive changes bump the minor and
 * append fields to structs and functions to the table.  Every struct a
 * module hands the host starts with (or carries) its own size, and the
 * fields past it read as zero; a host loads modules of its minor and older.
 * tests/unit/test-abi-layout.c holds the layouts to the frozen 1.0 and 1.2
 * headers.
 *
 * Threads: unless a function says "[any thread]", it may be called only on
 * the loop: from init/reload/fini/status, a job's prepare/done, a method
 * handler or a spawn, watch or fact callback.  A job's `work` runs on a host
 * worker thread and may call only [any thread] functions.
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
#define SUNKD_MODULE_ABI_MINOR 7

#define SUNKD_USEC_PER_SEC UINT64_C(1000000)
#define SUNKD_USEC_PER_MSEC UINT64_C(1000)

struct json_object;

typedef struct sunkd_ctx sunkd_ctx;       /* host-owned, one per loaded module */
typedef struct sunkd_job sunkd_job;       /* host-owned handle of a job */
typedef struct sunkd_call sunkd_call;     /* one in-flight socket method call */
typedef struct sunkd_cfg sunkd_cfg;       /* a node of the parsed sunkd.yaml */
typedef struct sunkd_metric sunkd_metric; /* host-owned metric family */
typedef struct sunkd_child sunkd_child;   /* host-owned handle of a running child */
typedef struct sunkd_watch sunkd_watch;   /* host-owned file watch */

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

/* A job is one of three kinds: thread (the default: `work` on a worker
 * thread), SUNKD_JOB_CHILD (`work` in a forked child) or SUNKD_JOB_ASYNC
 * (no `work`: `prepare` starts the run).  Every run ends: at the timeout or
 * when the module stops, a thread run is told through its cancel flag, a
 * child is killed, an async run's `cancel` is called; a child or async run
 * still on 5 s after that is ended by the host (`done` sees -ETIMEDOUT, or
 * -ECANCELED when stopping), and the job starts no new run until the child
 * is reaped or the module's late job_complete() comes (which then returns
 * 0 and calls nothing).  A module can therefore always stop. */
enum {
        /* READY=1 waits until the first run of this job has finished. */
        SUNKD_JOB_READY_GATE = 1u << 0,
        /* No periodic runs: the job runs only when triggered. */
        SUNKD_JOB_TRIGGER_ONLY = 1u << 1,
        /* No `work`: `prepare` starts the run (spawns, say) and the run ends
         * when the module calls sunkd_job_complete().  The spec must give a
         * `cancel`, called at the timeout or when the module stops. */
        SUNKD_JOB_ASYNC = 1u << 2,
        /* `work` runs in a forked child instead of a thread, as
         * child_uid/child_gid when child_uid is not 0, and is killed
         * (SIGKILL to its process group) at the timeout or when the module
         * stops.  `work` must set *ret_result to a `struct json_object *` or
         * leave it NULL; it reaches `done` as its `result` (done puts it).
         * For work a thread cannot be trusted to return from: a check stuck
         * in statfs() on a dead NFS mount, a hung driver call.  The child is
         * a fork of a threaded process: use nothing a worker thread may hold
         * a lock in (libcurl, say) in such work.  A child that has not
         * exited 5 s after its SIGKILL (stuck in the kernel) is given up on
         * and kept reaped by the host, shown as "unreaped" by `sunkctl
         * status` and `sunkctl jobs --json`. */
        SUNKD_JOB_CHILD = 1u << 3,
        /* With SUNKD_JOB_CHILD and child_uid 0 (ABI 1.7): `work` may run in
         * a child the host forked before and keeps for further runs, of
         * this job and of others that say so.  A fork copies the daemon's
         * page tables and so costs more the larger the daemon (about 2 ms
         * at 110 MB); a request to a kept child costs tens of
         * microseconds.  Such work reads only what @userdata (or the
         * module's state) held when the job was added: the child is a copy
         * of the daemon made at some time after that, never updated; it
         * gets NULL for `prepare`'s input; and it leaves nothing behind in
         * the process (memory, fds, threads, signal handlers), which runs
         * other work next.  It is killed at the timeout as any child, and a
         * killed child is not used again. */
        SUNKD_JOB_CHILD_REUSE = 1u << 4,
};

/**
 * sunkd_job_spec - a unit of periodic or triggered work.
 * @size:        sizeof(sunkd_job_spec) as the module saw it.
 * @name:        "<module>.<verb>", shown by `sunkctl jobs`, used by `sunkctl run`;
 *               a name that is not UTF-8 is refused (-EINVAL).
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
 * @cancel:      SUNKD_JOB_ASYNC only, and required there: on the loop when
 *               the run times out or the module stops; end the run soon
 *               (kill its children) and call sunkd_job_complete().
 * @child_uid, @child_gid: SUNKD_JOB_CHILD only: run `work` as this uid/gid
 *               (no supplementary groups); 0 = as sunkd.  child_uid != 0
 *               needs a child_gid other than 0, as spawn does: a dropped
 *               child never keeps root's group.
 * @userdata:    when not NULL, what prepare, work, done and cancel get as
 *               their @state instead of the module's state: one set of
 *               callbacks serves many jobs (a check each), and each run knows
 *               its own.  It must outlive the job.
 *
 * sunkd_job_add() refuses a spec that breaks one of these rules with
 * -EINVAL and logs "Job '<name>' refused: <the rule>."
 *
 * Each module gets at most half of the host's workers (at least one) for
 * its thread jobs at a time; a due job beyond that waits for one of its
 * module's runs to end, so one module's stuck work cannot starve the rest.
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
        void (*cancel)(void *state, void *input);
        uid_t child_uid;
        gid_t child_gid;
        void *userdata;
} sunkd_job_spec;

/* ---- Socket methods: calls and replies -------------------------------- */

enum {
        /* Who may call.  A method must set exactly one of these. */
        SUNKD_METHOD_ROOT = 1u << 0,    /* uid 0 only */
        SUNKD_METHOD_ANY_UID = 1u << 1, /* any local peer */
        SUNKD_METHOD_ALLOW = 1u << 2,   /* root, plus the users/@groups in the
                                           module's `allow:` config list */
};

/* The handler returns 0 once it has replied, SUNKD_CALL_PENDING to keep the
 * call and reply later (the handle stays valid until then, even if the peer
 * hangs up), or a negative errno for a generic error reply.  While the
 * module stops, its runs' `done` and its children's callbacks may still
 * answer its pending calls, and so may fini; once fini has returned, the
 * host answers the rest itself (io.sunkd.Unavailable) and frees them. */
#define SUNKD_CALL_PENDING 1

/* A method is named "io.sunkd.<Module>.<Verb>", each part capitalised
 * (io.sunkd.Gres.List, io.sunkd.Test.MetricAdd): `sunkctl <module> <verb>
 * [key=value...]` then calls it with no code in sunkctl, capitalising each
 * word (metric-add: MetricAdd), and prints its answer with its generic
 * renderer (key: value lines, arrays of objects as tables). */
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
        /* char *: an inline string, or "file:/abs/path" whose contents are
         * read at parse time (a regular file, symlinks followed, owned by
         * root or sunkd's uid, no group/other permission bits).  Trailing
         * newlines are dropped; empty values and NUL bytes refused; at most
         * max bytes when max > 0 (up to 1M), else 64K.  Never in error
         * messages; wiped before free by cfg_clear. */
        SUNKD_CFG_SECRET,
        /* const sunkd_cfg *, borrowed as MAP is: a sequence of any nodes (a
         * list of mappings, say), walked with sunkd_cfg_child(). */
        SUNKD_CFG_SEQUENCE,
} sunkd_cfg_type;

enum {
        SUNKD_CFG_REQUIRED = 1u << 0,
        /* On a SUNKD_CFG_PATH key: a path sunkd writes, a file it creates or
         * replaces (by rename) or a directory it writes into.  cfg_parse
         * refuses it (-EPERM, the error naming the directory, its owner and
         * mode) unless only root and sunkd's uid can change what it resolves
         * to: every directory on the way, symlinks and their targets
         * included, owned by one of them and writable by its owner alone (a
         * sticky directory such as /tmp may be passed through to an entry
         * root or sunkd's uid owns, never written in).  Missing directories
         * are allowed: sunkd creates them.  A default the module set in
         * `out` before cfg_parse is checked too when the key is absent.  So
         * the check runs in check (sunkd --check-config, before a reload)
         * and init. */
        SUNKD_CFG_WRITE_PATH = 1u << 1,
        /* On a SUNKD_CFG_PATH: the file's contents are part of the
         * configuration, read when the section is (an nsscache.conf).  A
         * reload whose section is unchanged but whose file changed (as
         * stat() tells: inode, size, times) counts as a change and calls
         * @reload.  A SUNKD_CFG_SECRET's "file:" counts so without it. */
        SUNKD_CFG_RELOAD_FILE = 1u << 2,
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

/* A metric family belongs to the module that registered it:
 *   - Its name is "sunkd_<module>_...": @name is given without the "sunkd_"
 *     the host adds and must start with the module's name and '_' ('-' in
 *     the module's name written '_'), e.g. "gres_gpus" for module gres.
 *     Anything else is -EINVAL, logged by the host with the module's name
 *     and the metric's.
 *   - A name another module (or sunkd itself) registered is -EEXIST, logged
 *     as well; the module's own name again with the same type and labels
 *     returns the same family (registering again from reload is fine), with
 *     another type or labels it is -EEXIST.
 *   - When the module stops (removed by a reload, restarted because it has no
 *     `reload`, shutdown), after fini, its families and their series are
 *     removed, and the series of its jobs in sunkd's job metrics with them:
 *     they vanish from `sunkctl metrics` and the textfile (rewritten once a
 *     module removed by a reload is gone).  The handles are invalid from
 *     then on; a module that starts again registers afresh, and its
 *     counters start at 0 (Prometheus reads that as a counter reset).
 *   - sunkd_metric_remove() drops one series (a check removed from the
 *     config, a GPU that is gone) so that it does not linger with its last
 *     value.
 * Families, series and the functions on them are loop-only. */
typedef struct sunkd_metric_spec {
        size_t size;
        const char *name; /* "<module>_...", without the "sunkd_" prefix the host adds */
        const char *help;
        sunkd_metric_type type;
        const char *labels[SUNKD_METRIC_LABELS_MAX]; /* NULL-terminated if fewer */
} sunkd_metric_spec;

/* ---- Child processes -------------------------------------------------- */

/* Spawn flags. */
enum {
        /* stderr on the same pipe as stdout: both in `output`, in the order
         * written, and `err_output` empty. */
        SUNKD_SPAWN_MERGE_STDERR = 1u << 0,
        /* Nothing the program starts outlives it: the host runs it under a
         * reaper (a child subreaper) that, once the program has exited,
         * kills with SIGKILL every process it left behind, those that left
         * its process group or session (setsid, a double fork) too, and only
         * then reports the program's end.  A timeout or kill reaches them
         * too: SIGTERM, then SIGKILL at half the grace.  For checks and
         * helpers that must not leave a process running as root; never for
         * a program that is meant to start a daemon. */
        SUNKD_SPAWN_REAP = 1u << 1,
};

/* The spec and all it points to are read during the spawn call only. */
typedef struct sunkd_spawn_spec {
        size_t size;
        const char *const *argv; /* argv[0] is an absolute path */
        const char *const *envp; /* the whole environment; NULL = empty */
        uint64_t timeout_usec;   /* SIGTERM to the process group, SIGKILL after the grace */
        size_t output_max;       /* stdout, and stderr apart, each keep their LAST
                                    output_max bytes (0 = 64 KiB, at most 256 MiB);
                                    what came before is dropped */
        uid_t uid;               /* drop to uid/gid unless uid == (uid_t)-1; */
        gid_t gid;               /* a drop needs a gid too, not (gid_t)-1 */
        const char *cwd;         /* NULL = "/"; local disk, like argv[0]: the loop
                                    waits until the child has exec'd */
        const char *input;       /* written to stdin, then closed; NULL = /dev/null */
        size_t input_len;
        /* Between SIGTERM (timeout or child_kill) and SIGKILL; 0 = 5 s. */
        uint64_t kill_grace_usec;
        /* Supplementary groups of the child, set before the gid and uid;
         * only with a uid drop (-EINVAL otherwise), at most NGROUPS_MAX.  A
         * uid drop without them clears the supplementary groups: root's are
         * never inherited. */
        const gid_t *groups;
        size_t n_groups;
        /* SUNKD_SPAWN_* flags; unknown ones are -EINVAL.  stderr is captured
         * apart from stdout unless this asks for SUNKD_SPAWN_MERGE_STDERR. */
        unsigned flags;
} sunkd_spawn_spec;

typedef struct sunkd_spawn_result {
        pid_t pid;     /* of the child, already reaped */
        int exit_code; /* valid when signal == 0 */
        int signal;    /* the terminating signal, or 0 */
        bool timed_out;
        const char *output; /* stdout (and stderr when merged), its last
                               output_max bytes; NUL-terminated, borrowed
                               for the callback */
        size_t output_len;
        bool output_truncated; /* bytes were dropped from the front */
        uint64_t duration_usec;
        /* stderr, captured apart as `output` is: its last output_max bytes,
         * NUL-terminated, borrowed for the callback.  Empty ("", never
         * NULL) when merged into `output`. */
        const char *err_output;
        size_t err_output_len;
        bool err_output_truncated;
} sunkd_spawn_result;

/* r is 0 once the program ran and ended (its exit_code or signal in @res),
 * or a negative errno when it never ran: a failed execve() (-ENOENT,
 * -EACCES, -ENOEXEC, and -ENOENT for a missing #! interpreter), chdir() to
 * @cwd or privilege drop.  @res is never NULL: with r < 0 its pid and
 * duration are set, exit_code and signal are 0 and the outputs empty. */
typedef void (*sunkd_spawn_cb)(void *userdata, int r, const sunkd_spawn_result *res);

/* ---- The host function table ----------------------------------------- */

/* In release order, append-only: each entry is documented at its wrapper
 * below ("The host's functions, by concern"), and "Changes by minor" at the
 * end says which minor added it.  Call the wrappers; this table is the
 * binary contract. */
typedef struct sunkd_host_api {
        size_t size;

        /* ABI 1.0 */
        int (*log)(sunkd_ctx *c, int level, int r, const char *fmt, ...)
                __attribute__((format(printf, 4, 5)));
        const char *(*module_name)(sunkd_ctx *c);
        const char *(*state_dir)(sunkd_ctx *c);
        int (*cfg_parse)(const sunkd_cfg *cfg, const sunkd_cfg_key *keys, size_t n_keys, void *out,
                         char **ret_error);
        void (*cfg_clear)(const sunkd_cfg_key *keys, size_t n_keys, void *out);
        int (*cfg_where)(const sunkd_cfg *cfg, char **ret);
        const sunkd_cfg *(*cfg_get)(const sunkd_cfg *cfg, const char *key);
        const char *(*cfg_scalar)(const sunkd_cfg *cfg);
        int (*job_add)(sunkd_ctx *c, const sunkd_job_spec *spec, sunkd_job **ret);
        int (*job_trigger)(sunkd_job *j, const char *reason);
        int (*job_set_interval)(sunkd_job *j, uint64_t interval_usec, uint64_t splay_usec);
        int (*methods_add)(sunkd_ctx *c, const sunkd_method *methods, size_t n);
        int (*reply)(sunkd_call *call, struct json_object *params); /* takes params */
        int (*reply_error)(sunkd_call *call, const char *error, struct json_object *params);
        uid_t (*call_uid)(sunkd_call *call);
        gid_t (*call_gid)(sunkd_call *call);
        int (*metric_add)(sunkd_ctx *c, const sunkd_metric_spec *spec, sunkd_metric **ret);
        int (*metric_set)(sunkd_metric *m, double value, const char *const *label_values);
        int (*metric_add_value)(sunkd_metric *m, double delta, const char *const *label_values);
        int (*spawn)(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata);
        int (*file_stage)(const char *path, const void *data, size_t len, mode_t mode, uid_t uid, gid_t gid,
                          char **ret_tmp);
        int (*file_commit)(const char *tmp, const char *path);
        int (*file_write_atomic)(const char *path, const void *data, size_t len, mode_t mode, uid_t uid,
                                 gid_t gid);

        /* ABI 1.1 */
        int (*job_set_message)(sunkd_job *j, const char *message);
        int (*job_update)(sunkd_job *j, const sunkd_job_spec *spec);

        /* ABI 1.2 */
        int (*job_complete)(sunkd_job *j, int r);
        int (*spawn_start)(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata,
                           sunkd_child **ret);
        int (*child_kill)(sunkd_child *child);
        int (*watch_add)(sunkd_ctx *c, const char *path, void (*cb)(void *userdata, const char *path),
                         void *userdata, sunkd_watch **ret);
        void (*watch_remove)(sunkd_watch *w);
        int (*fact_publish)(sunkd_ctx *c, const char *name, struct json_object *value);
        struct json_object *(*fact_get)(sunkd_ctx *c, const char *name);
        int (*fact_subscribe)(sunkd_ctx *c, const char *name,
                              void (*cb)(void *userdata, const char *name, struct json_object *value),
                              void *userdata);
        int (*fact_unsubscribe)(sunkd_ctx *c, const char *name,
                                void (*cb)(void *userdata, const char *name, struct json_object *value),
                                void *userdata);
        int (*call_on_gone)(sunkd_call *call, void (*cb)(sunkd_call *call, void *userdata), void *userdata);
        pid_t (*call_pid)(sunkd_call *call);
        int (*log_fields)(sunkd_ctx *c, int level, const char *const *fields, const char *fmt, ...)
                __attribute__((format(printf, 4, 5)));
        const sunkd_cfg *(*cfg_child)(const sunkd_cfg *cfg, size_t i, const char **ret_key);

        /* ABI 1.3 */
        int (*metric_remove)(sunkd_metric *m, const char *const *label_values);

        /* ABI 1.5 */
        void (*linger_end)(sunkd_ctx *c);

        /* ABI 1.6 */
        const char *(*runtime_dir)(sunkd_ctx *c);
} sunkd_host_api;

struct sunkd_ctx {
        const sunkd_host_api *api;
};

/* ---- The module ------------------------------------------------------- */

/**
 * sunkd_module - what a module exports as `sunkd_module_v1`.
 *
 * Lifecycle: LOADED -> RUNNING (init) -> STOPPING -> LOADED (fini).  A stop
 * (removed by a reload, a reload that changed the section of a module
 * without `reload` or whose `reload` answered SUNKD_RELOAD_RESTART,
 * shutdown) turns timers off, cancels running work, signals children and
 * waits for their callbacks before fini; nothing the host holds points into
 * the module's state after fini.  A reload that leaves a module's section
 * as it was leaves the module alone (see @reload).
 *
 * @init:   register jobs, methods and metrics; parse config; hand state back
 *          through *ret_state.  A failure is reported and the module is shown
 *          as failed while the others run (unless `required: true`).
 * @check:  optional; validate @cfg without side effects (parse it through the
 *          key table, log what is wrong).  Used by `sunkd --check-config` and
 *          before a reload is applied, so a bad file never replaces a good one.
 * @reload: apply a new, already-checked section in place, keeping what it
 *          does not change (jobs and their last runs, facts, what was
 *          found).  Called only for a section that changed: a module whose
 *          keys and values are as they were, and so are the files its
 *          SUNKD_CFG_RELOAD_FILE and secret "file:" values name, is not
 *          called and not stopped at a reload (a file it reads at each run
 *          is its own business); `enabled`, `required` and `allow` are the
 *          host's, which applies them itself.  Return 0 once applied.  Return
 *          SUNKD_RELOAD_RESTART when the change cannot be made in place:
 *          the host then stops the module and calls init() with the new
 *          section, as for a module without the hook.  Return a negative
 *          errno only with the previous section still in force (apply
 *          nothing, or undo what was applied): the module runs on as it
 *          was, the host logs it, shows it in the module's status, reports
 *          the reload as failed (`sunkctl reload` exits 1 naming the
 *          module) while applying the rest of the file, and calls reload
 *          again at the next reload even with the section unchanged.  NULL
 *          means a changed section stops the module and calls init() again.
 * @fini:   undo everything; must accept a half-built state.  Called only once
 *          the module has stopped: no run of its jobs is in progress and no
 *          child of its is left (every `done` and spawn callback has run),
 *          and new calls to its methods are refused meanwhile.  fini may
 *          still answer its own pending calls; the host answers whatever is
 *          left `io.sunkd.Unavailable` after it returns.  While stopping,
 *          job_add and spawn fail with -ESHUTDOWN.
 * @status: optional; add fields to `out` for `sunkctl status`.  Integer keys
 *          ending in `_duration_usec` are durations and other `_usec` keys
 *          CLOCK_REALTIME times, both in microseconds; sunkctl shows them
 *          as "1.2s" and "5m ago".
 * @linger: optional; called once when a stop begins (shutdown, restart, a
 *          reload that stops the module), before anything of the module is
 *          cancelled.  It returns how long (usec) work in flight that must
 *          not be cut short may still take, 0 for none: the scripts of a
 *          job's prolog, which fail the job if killed.  For that long the
 *          module lingers: new calls to its methods are answered
 *          io.sunkd.Unavailable and its jobs no longer run, but its pending
 *          calls, children and spawn go on.  It ends when the module calls
 *          sunkd_linger_end() or the time is up; then the stop goes on as
 *          without the hook.  A shutdown waits the longest linger on top of
 *          shutdown_timeout; the service manager's stop timeout must allow
 *          for it.
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
        uint64_t (*linger)(void *state);
} sunkd_module;

/* What @reload returns to be stopped and initialised again with the new
 * section: for a change it cannot apply in place. */
#define SUNKD_RELOAD_RESTART 2

#define SUNKD_EXPORT __attribute__((visibility("default")))

#define SUNKD_MODULE_DEFINE(...)                                                                            \
        SUNKD_EXPORT extern const sunkd_module sunkd_module_v1;                                             \
        SUNKD_EXPORT const sunkd_module sunkd_module_v1 = { .abi_major = SUNKD_MODULE_ABI_MAJOR,            \
                                                            .abi_minor = SUNKD_MODULE_ABI_MINOR,            \
                                                            .size = sizeof(sunkd_module),                   \
                                                            __VA_ARGS__ }

/* ==== The host's functions, by concern ================================= */

/* Each takes the module's context first, so that code reads the same
 * whatever it acts on: sunkd_job_trigger(c, job, "reason"). */

/* ---- Jobs ------------------------------------------------------------- */

/* Register a job (see sunkd_job_spec); *ret may be NULL.  -EINVAL for a
 * spec that breaks a rule and -EEXIST for a name taken, both logged with
 * the job's name and the rule; -ESHUTDOWN while the module stops. */
static inline int sunkd_job_add(sunkd_ctx *c, const sunkd_job_spec *spec, sunkd_job **ret) {
        return c->api->job_add(c, spec, ret);
}

/* Run now; while a run is on, coalesce into one rerun.  @reason (may be
 * NULL) is logged. */
static inline int sunkd_job_trigger(sunkd_ctx *c, sunkd_job *j, const char *reason) {
        return c->api->job_trigger(j, reason);
}

/* A new period and splay.  A shorter interval takes effect now, an
 * unchanged one keeps its slot; a running job keeps its run.  A job made
 * periodic this way first runs within the splay. */
static inline int sunkd_job_set_interval(sunkd_ctx *c, sunkd_job *j, uint64_t interval_usec,
                                         uint64_t splay_usec) {
        return c->api->job_set_interval(j, interval_usec, splay_usec);
}

/* From reload: take a job's new timing (interval, splay, jitter, backoff,
 * timeout) from @spec; name, flags and callbacks must be the ones it was
 * added with (-EINVAL otherwise).  A running job keeps its current
 * deadline; the next run uses the new one. */
static inline int sunkd_job_update(sunkd_ctx *c, sunkd_job *j, const sunkd_job_spec *spec) {
        return c->api->job_update(j, spec);
}

/* From a job's done (or prepare): one line explaining the run's result,
 * shown by `sunkctl run` and `sunkctl jobs --json` instead of the bare
 * errno text.  Copied; cleared when the next run starts. */
static inline int sunkd_job_set_message(sunkd_ctx *c, sunkd_job *j, const char *message) {
        return c->api->job_set_message(j, message);
}

/* End the current run of a SUNKD_JOB_ASYNC job with result @r; its `done`
 * runs before this returns.  -ESTALE when the job is not running (already
 * completed). */
static inline int sunkd_job_complete(sunkd_ctx *c, sunkd_job *j, int r) {
        return c->api->job_complete(j, r);
}

/* ---- Spawn and children ----------------------------------------------- */

/* Run a program (see sunkd_spawn_spec) with output capture, timeout and
 * process-group kill; @cb runs exactly once, on the loop. */
static inline int sunkd_spawn(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb,
                              void *userdata) {
        return c->api->spawn(c, spec, cb, userdata);
}

/* sunkd_spawn(), handing back the child in *ret (may be NULL).  The handle
 * is valid until @cb has run, and only on the loop; @cb runs exactly once,
 * also after sunkd_child_kill(). */
static inline int sunkd_spawn_start(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb,
                                    void *userdata, sunkd_child **ret) {
        return c->api->spawn_start(c, spec, cb, userdata, ret);
}

/* SIGTERM to the child's process group (its own children included),
 * SIGKILL after the spec's kill_grace_usec.  @cb still runs, with the
 * signal the child died of.  Calling it again, or after a timeout has
 * fired, changes nothing. */
static inline int sunkd_child_kill(sunkd_ctx *c, sunkd_child *child) {
        return c->api->child_kill(child);
}

/* ---- Calls and replies ------------------------------------------------ */

/* Register socket methods (see sunkd_method). */
static inline int sunkd_methods_add(sunkd_ctx *c, const sunkd_method *methods, size_t n) {
        return c->api->methods_add(c, methods, n);
}

/* Answer @call with @params, which it takes. */
static inline int sunkd_reply(sunkd_ctx *c, sunkd_call *call, struct json_object *params) {
        return c->api->reply(call, params);
}

/* Answer @call with the error @error ("io.sunkd.<Module>.<Error>") and
 * its @params. */
static inline int sunkd_reply_error(sunkd_ctx *c, sunkd_call *call, const char *error,
                                    struct json_object *params) {
        return c->api->reply_error(call, error, params);
}

/* The caller's uid, gid and pid as the kernel saw them at connect
 * (SO_PEERCRED). */
static inline uid_t sunkd_call_uid(sunkd_ctx *c, sunkd_call *call) {
        return c->api->call_uid(call);
}

static inline gid_t sunkd_call_gid(sunkd_ctx *c, sunkd_call *call) {
        return c->api->call_gid(call);
}

static inline pid_t sunkd_call_pid(sunkd_ctx *c, sunkd_call *call) {
        return c->api->call_pid(call);
}

/* @cb runs on the loop once the peer of the pending @call has hung up (at
 * once, from the loop, if it already has), so the module can stop work
 * nobody waits for.  The handle stays valid until the module replies; that
 * reply only frees it.  @cb NULL removes it; -EINVAL for an answered call. */
static inline int sunkd_call_on_gone(sunkd_ctx *c, sunkd_call *call,
                                     void (*cb)(sunkd_call *call, void *userdata), void *userdata) {
        return c->api->call_on_gone(call, cb, userdata);
}

/* ---- Facts ------------------------------------------------------------ */

/* Facts: immutable JSON values named "<module>.<fact>" ([A-Za-z0-9_-]
 * segments joined by '.', at most 127 bytes) that a module publishes under
 * its own name and any module reads.  Loop-only: json-c 0.16's reference
 * counts are not atomic and json_object_to_json_string() writes a cache
 * into the object, so a value the loop shares must never be touched from a
 * worker. */

/* Takes @value (also on failure; NULL withdraws the fact) and replaces an
 * earlier one; the value must not be changed afterwards.  -EPERM for
 * another module's name, -EFBIG over 64K serialised, -E2BIG over 256
 * facts. */
static inline int sunkd_fact_publish(sunkd_ctx *c, const char *name, struct json_object *value) {
        return c->api->fact_publish(c, name, value);
}

/* The caller's own copy, which it puts, or NULL.  Take it in `prepare` and
 * hand it to `work` as input. */
static inline struct json_object *sunkd_fact_get(sunkd_ctx *c, const char *name) {
        return c->api->fact_get(c, name);
}

/* cb(userdata, name, value) on the loop after each change of @name, never
 * from inside fact_publish, with the value current then (the shared one,
 * borrowed for the call; changes in one loop iteration are seen once), and
 * once soon after subscribing if the fact exists.  value is NULL when the
 * fact was withdrawn or its module stopped.  A module's subscriptions end
 * when it stops; -EEXIST for a repeated (name, cb, userdata). */
static inline int sunkd_fact_subscribe(sunkd_ctx *c, const char *name,
                                       void (*cb)(void *userdata, const char *name,
                                                  struct json_object *value),
                                       void *userdata) {
        return c->api->fact_subscribe(c, name, cb, userdata);
}

/* Undo sunkd_fact_subscribe() with the same arguments; -ENOENT if none. */
static inline int sunkd_fact_unsubscribe(sunkd_ctx *c, const char *name,
                                         void (*cb)(void *userdata, const char *name,
                                                    struct json_object *value),
                                         void *userdata) {
        return c->api->fact_unsubscribe(c, name, cb, userdata);
}

/* ---- Watches ---------------------------------------------------------- */

/* Call cb(userdata, path) on the loop after the absolute @path may have
 * changed: written and closed, renamed over, deleted, created, chmod'ed, or
 * a symlink on the way to it re-pointed (Kubernetes Secret and ConfigMap
 * volumes).  A missing file, or directory on the way, is waited for.
 * Bursts give one call about 50ms after the first event; the callback
 * re-reads the file.  *ret may be NULL. */
static inline int sunkd_watch_add(sunkd_ctx *c, const char *path,
                                  void (*cb)(void *userdata, const char *path), void *userdata,
                                  sunkd_watch **ret) {
        return c->api->watch_add(c, path, cb, userdata, ret);
}

/* Safe from inside the watch's own callback; NULL is a no-op.  Watches
 * still there when the module stops are removed by the host. */
static inline void sunkd_watch_remove(sunkd_ctx *c, sunkd_watch *w) {
        c->api->watch_remove(w);
}

/* ---- Config ----------------------------------------------------------- */

/* Fill @out from @cfg through @keys.  Unknown keys, wrong types and
 * out-of-range values fail with -EINVAL and a malloc'd "file:line:column:
 * key 'x': reason" in *ret_error; -EPERM for a SUNKD_CFG_WRITE_PATH key
 * another uid controls.  Every error of the section is in *ret_error, one
 * "file:line:column: ..." line each (the host logs each line as a message).
 * The host keys `enabled`, `required`, `allow` are accepted and skipped. */
static inline int sunkd_cfg_parse(sunkd_ctx *c, const sunkd_cfg *cfg, const sunkd_cfg_key *keys,
                                  size_t n_keys, void *out, char **ret_error) {
        return c->api->cfg_parse(cfg, keys, n_keys, out, ret_error);
}

/* Free what sunkd_cfg_parse() put in @out (secrets wiped first). */
static inline void sunkd_cfg_clear(sunkd_ctx *c, const sunkd_cfg_key *keys, size_t n_keys, void *out) {
        c->api->cfg_clear(keys, n_keys, out);
}

/* "file:line:column" of a node, for messages about values (malloc'd). */
static inline int sunkd_cfg_where(sunkd_ctx *c, const sunkd_cfg *cfg, char **ret) {
        return c->api->cfg_where(cfg, ret);
}

/* A key of a map node (NULL if absent). */
static inline const sunkd_cfg *sunkd_cfg_get(sunkd_ctx *c, const sunkd_cfg *cfg, const char *key) {
        return c->api->cfg_get(cfg, key);
}

/* A scalar node's text (NULL for a map or sequence). */
static inline const char *sunkd_cfg_scalar(sunkd_ctx *c, const sunkd_cfg *cfg) {
        return c->api->cfg_scalar(cfg);
}

/* Walk a map or sequence node (a SUNKD_CFG_MAP or SUNKD_CFG_SEQUENCE
 * value): its child @i in file order, and for a map the child's key in
 * *ret_key (NULL for a sequence); NULL past the end or for a scalar. */
static inline const sunkd_cfg *sunkd_cfg_child(sunkd_ctx *c, const sunkd_cfg *cfg, size_t i,
                                               const char **ret_key) {
        return c->api->cfg_child(cfg, i, ret_key);
}

/* ---- Metrics ---------------------------------------------------------- */

/* Register a family (see sunkd_metric_spec); *ret is the module's own. */
static inline int sunkd_metric_add(sunkd_ctx *c, const sunkd_metric_spec *spec, sunkd_metric **ret) {
        return c->api->metric_add(c, spec, ret);
}

/* Set the series with @label_values (in the order of the spec's labels)
 * to @value. */
static inline int sunkd_metric_set(sunkd_ctx *c, sunkd_metric *m, double value,
                                   const char *const *label_values) {
        return c->api->metric_set(m, value, label_values);
}

/* Add @delta to a series (a counter's, say). */
static inline int sunkd_metric_add_value(sunkd_ctx *c, sunkd_metric *m, double delta,
                                         const char *const *label_values) {
        return c->api->metric_add_value(m, delta, label_values);
}

/* Drop the series of @m with @label_values, or every series of @m when
 * @label_values is NULL.  A later set or add_value makes it anew (the
 * latter counting from 0).  -ENOENT when no series has these values. */
static inline int sunkd_metric_remove(sunkd_ctx *c, sunkd_metric *m, const char *const *label_values) {
        return c->api->metric_remove(m, label_values);
}

/* A module's metrics as one table: each registered in turn, the first
 * failure logged with the metric's name and returned. */
typedef struct sunkd_metric_def {
        sunkd_metric_spec spec;
        sunkd_metric **ret;
} sunkd_metric_def;

/* ---- Places, files and log -------------------------------------------- */

/* The module's name, as sunkd.yaml's `modules:` has it. */
static inline const char *sunkd_module_name(sunkd_ctx *c) {
        return c->api->module_name(c);
}

/* <state_dir>/<module>, created 0700; refused by the host, as a
 * configuration error, unless it passes SUNKD_CFG_WRITE_PATH's rule. */
static inline const char *sunkd_state_dir(sunkd_ctx *c) {
        return c->api->state_dir(c);
}

/* <directory of sunkd's socket>/<module>, created 0700 on the first call:
 * what a client that knows the socket (a program slurmd or sshd runs with
 * no arguments) reads while sunkd is down, whatever state_dir says.  NULL,
 * logged, when it cannot be made or another uid could change it. */
static inline const char *sunkd_runtime_dir(sunkd_ctx *c) {
        return c->api->runtime_dir(c);
}

/* The module's work in flight, for which its @linger asked time, has
 * ended: the stop goes on at once (children killed, fini).  Only while it
 * lingers; a no-op otherwise. */
static inline void sunkd_linger_end(sunkd_ctx *c) {
        c->api->linger_end(c);
}

/* Files, for a module built outside sunkd's tree (one in the tree calls
 * agent/util/fileio.h's fileio_stage, fileio_commit and fileio_write_atomic,
 * the same code).  sunkd_file_stage writes a temp file next to @path (same
 * dir), fsyncs it, sets mode and owner (uid (uid_t)-1 = leave) and returns
 * its name; sunkd_file_commit renames it over @path and fsyncs the dir;
 * sunkd_file_write_atomic does both.  [any thread] */
static inline int sunkd_file_stage(sunkd_ctx *c, const char *path, const void *data, size_t len, mode_t mode,
                                   uid_t uid, gid_t gid, char **ret_tmp) {
        return c->api->file_stage(path, data, len, mode, uid, gid, ret_tmp);
}

static inline int sunkd_file_commit(sunkd_ctx *c, const char *tmp, const char *path) {
        return c->api->file_commit(tmp, path);
}

static inline int sunkd_file_write_atomic(sunkd_ctx *c, const char *path, const void *data, size_t len,
                                          mode_t mode, uid_t uid, gid_t gid) {
        return c->api->file_write_atomic(path, data, len, mode, uid, gid);
}

/* Log a line tagged with the module's name; returns -abs(r) so callers can
 * `return sunkd_log(...)`, and "%m" prints r.  [any thread] */
#define sunkd_log(c, level, r, ...) ((c)->api->log((c), (level), (r), __VA_ARGS__))
#define sunkd_log_error_errno(c, r, ...) sunkd_log(c, SUNKD_LOG_ERR, r, __VA_ARGS__)
#define sunkd_log_warning_errno(c, r, ...) sunkd_log(c, SUNKD_LOG_WARNING, r, __VA_ARGS__)
#define sunkd_log_error(c, ...) sunkd_log(c, SUNKD_LOG_ERR, 0, __VA_ARGS__)
#define sunkd_log_warning(c, ...) sunkd_log(c, SUNKD_LOG_WARNING, 0, __VA_ARGS__)
#define sunkd_log_notice(c, ...) sunkd_log(c, SUNKD_LOG_NOTICE, 0, __VA_ARGS__)
#define sunkd_log_info(c, ...) sunkd_log(c, SUNKD_LOG_INFO, 0, __VA_ARGS__)
#define sunkd_log_debug(c, ...) sunkd_log(c, SUNKD_LOG_DEBUG, 0, __VA_ARGS__)

/* sunkd_log() with journal fields of the module's own besides the host's:
 * @fields is NULL-terminated, at most 8 "SUNKD_<NAME>=value" strings
 * ([A-Z0-9_] names, no newline in the value; SUNKD_MODULE and SUNKD_JOB
 * are the host's).  On stderr only the message is written.  -EINVAL, and
 * nothing logged, for a field that breaks the rules.  [any thread] */
#define sunkd_log_fields(c, level, fields, ...) ((c)->api->log_fields((c), (level), (fields), __VA_ARGS__))

static inline int sunkd_metrics_add(sunkd_ctx *c, const sunkd_metric_def *defs, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int r = c->api->metric_add(c, &defs[i].spec, defs[i].ret);
                if (r < 0)
                        return sunkd_log_error_errno(c, r, "Failed to register metric '%s': %m",
                                                     defs[i].spec.name);
        }
        return 0;
}

/* ==== Changes by minor ================================================= *
 *
 * What a rebuild against 1.3 or later changes.  A module declares the minor
 * it was built against (SUNKD_MODULE_DEFINE does) and hands structs of that
 * minor's size; the host keeps older modules working as they were built.
 * Rebuilt against 1.3 or later, a module gets:
 *   - stderr apart: a sunkd_spawn_spec that reaches @flags gets stderr in
 *     err_output, no longer mixed into output, unless it asks for
 *     SUNKD_SPAWN_MERGE_STDERR.  A shorter spec (1.0 to 1.2) always gets
 *     both in `output`.  Unknown spawn flags are -EINVAL.
 *   - metric names refused: a name outside "<module>_..." is -EINVAL, where
 *     a module built for 1.0 to 1.2 gets a warning and the family.
 *   - async jobs without `cancel` refused: sunkd_job_add() is -EINVAL, where
 *     a 1.2 module's async job is ended by the host at its timeout or stop
 *     (done sees -ETIMEDOUT or -ECANCELED).
 *
 * Changed for modules of every minor at 1.3: the last output_max bytes of
 * a child's output are kept (the first were before); a failed execve(),
 * chdir() or privilege drop reaches the spawn callback as r < 0 (it showed
 * as exit status 127 or 126 before); fact_get returns the caller's own copy
 * (a shared reference before); a child or async run always ends (see
 * SUNKD_JOB_CHILD, SUNKD_JOB_ASYNC); a SUNKD_JOB_CHILD job with a child_uid
 * other than 0 and child_gid 0 is refused.
 *
 * Kept only for old or out-of-tree modules:
 *   - file_stage, file_commit, file_write_atomic: in-tree modules call
 *     agent/util/fileio.h; these serve a module built outside the tree.
 *   - The direct table calls, c->api->fn(...): every table entry stays
 *     where it is for modules built against older minors; new code calls
 *     the sunkd_*() wrappers above.
 *   - SUNKD_SPAWN_MERGE_STDERR: what a pre-1.3 spec always gets; a new
 *     module asks for it only where one stream is what it wants.
 *   - The host's copies of shorter structs (agent/abi-copy.h): a 1.0
 *     module's sunkd_job_spec ends at @done, its sunkd_spawn_spec at
 *     @input_len, its sunkd_spawn_result at @duration_usec (it never sees
 *     err_output), its sunkd_module at @status.
 *
 * 1.0  The table up to file_write_atomic; sunkd_job_spec to @done,
 *      sunkd_spawn_spec to @input_len, sunkd_spawn_result to
 *      @duration_usec, sunkd_module to @status.
 * 1.1  job_set_message, job_update.
 * 1.2  SUNKD_JOB_ASYNC with sunkd_job_spec @cancel, and job_complete;
 *      SUNKD_JOB_CHILD with @child_uid, @child_gid; spawn_start and
 *      child_kill; sunkd_spawn_spec @kill_grace_usec, @groups, @n_groups;
 *      watch_add, watch_remove; facts (fact_publish, fact_get,
 *      fact_subscribe, fact_unsubscribe); call_on_gone, call_pid;
 *      log_fields; cfg_child; SUNKD_CFG_SECRET; sunkd_metric_def and
 *      sunkd_metrics_add().
 * 1.3  Every run ends (child and async runs given up on 5 s after their
 *      kill or cancel); the rules above for rebuilt modules; sunkd_spawn_spec
 *      @flags with SUNKD_SPAWN_MERGE_STDERR; sunkd_spawn_result
 *      @err_output, @err_output_len, @err_output_truncated; metric
 *      ownership and metric_remove; SUNKD_CFG_WRITE_PATH,
 *      SUNKD_CFG_RELOAD_FILE; SUNKD_RELOAD_RESTART; fact_get's copy.
 * 1.4  sunkd_job_spec @userdata; SUNKD_CFG_SEQUENCE.
 * 1.5  sunkd_module @linger and linger_end.
 * 1.6  runtime_dir; SUNKD_SPAWN_REAP.
 * 1.7  SUNKD_JOB_CHILD_REUSE.
 * Since 1.6 the sunkd_*() wrappers, grouped by concern, are the documented
 * way to call the table; they are static inline and change no layout.
 */

#ifdef __cplusplus
}
#endif
