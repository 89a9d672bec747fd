/* One health check: its result, and the table of check types.  A type is a key
 * table for its section of `checks:` (each starting with the keys every
 * check has) and a `run` that reads the node through @root (a fake /proc,
 * /sys and mount table in the tests; "/" on a node) and changes nothing.
 * `run` is called in a child process or on a worker thread: it reads only
 * its own conf and the environment it is given, and allocates nothing that
 * outlives the call. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "health-code.h"
#include "health-genconf.h"
#include "sunkd/module.h"

typedef enum HealthStatus {
        HEALTH_PASS,
        HEALTH_FAIL,
        HEALTH_UNKNOWN, /* the input is missing: counts neither way */
} HealthStatus;

#define HEALTH_CODE_MAX 48
#define HEALTH_DETAIL_MAX 256
#define HEALTH_TARGET_MAX 64

typedef struct HealthResult {
        HealthStatus status;
        char code[HEALTH_CODE_MAX];     /* stable, for alerting rules: "mount-missing" */
        char detail[HEALTH_DETAIL_MAX]; /* one line for the drain reason and status */
        HealthRemedy remedy;            /* what a failure recommends (health-code.h); none otherwise */
        char target[HEALTH_TARGET_MAX]; /* what it is about, for a repair: a GPU's PCI bus id, or "" */
} HealthResult;

typedef enum HealthAction { HEALTH_ACTION_DRAIN, HEALTH_ACTION_REPORT } HealthAction;

/* The keys every check has; first member of each type's conf struct. */
typedef struct HealthCheckCommon {
        char *name;
        char *type;
        uint64_t timeout_usec;
        char *action;
} HealthCheckCommon;

#define HEALTH_COMMON_KEYS                                                                                  \
        { "name", SUNKD_CFG_STRING, offsetof(HealthCheckCommon, name), SUNKD_CFG_REQUIRED, 0, 0 },          \
                { "type", SUNKD_CFG_STRING, offsetof(HealthCheckCommon, type), SUNKD_CFG_REQUIRED, 0, 0 },  \
                { "timeout", SUNKD_CFG_DURATION, offsetof(HealthCheckCommon, timeout_usec), 0, 0, 0 }, {    \
                "action", SUNKD_CFG_STRING, offsetof(HealthCheckCommon, action), 0, 0, 0                    \
        }

typedef struct HealthEnv {
        const char *root; /* prefix of every path a check reads; "/" on a node */
} HealthEnv;

/* Who runs a type's checks. */
typedef enum HealthCheckRunner {
        HEALTH_RUNNER_BUILTIN, /* its `run`, in a killable child or on a worker */
        HEALTH_RUNNER_SCRIPT,  /* the module: `path` spawned under the host's reaper */
        HEALTH_RUNNER_GPU,     /* the module: its judge weighs the fact gres.gpus on the loop */
} HealthCheckRunner;

/* A script check's keys beyond the common ones; first member of the conf
 * of every type run as a script. */
typedef struct ScriptConf {
        HealthCheckCommon common;
        char *path;
        char **args;
} ScriptConf;

/* The gpu check's keys: its limits on what NVML reports beside memory and
 * XIDs (health-gpu-limits.h); -1 or empty: not judged. */
typedef struct GpuConf {
        HealthCheckCommon common;
        int64_t max_temperature; /* degrees C */
        char **fail_clocks_events;
        bool persistence_mode;
        bool nvlink_up;
        int64_t max_nvlink_replay_errors, max_nvlink_recovery_errors, max_nvlink_crc_flit_errors,
                max_nvlink_crc_data_errors;
        int64_t min_power_limit; /* W */
} GpuConf;

typedef struct HealthCheckType {
        const char *name;
        const sunkd_cfg_key *keys; /* HEALTH_COMMON_KEYS first */
        size_t n_keys;
        size_t conf_size; /* starts with HealthCheckCommon */
        /* Before cfg_parse, on the zeroed conf: the values of keys left out
         * that are not zero (`rw: true`).  Scalars only, nothing allocated.
         * NULL: every default is zero. */
        void (*defaults)(void *conf);
        /* After cfg_parse: what the key table cannot say (one of two keys
         * required, a regex that compiles).  A malloc'd "key 'x': reason" in
         * *ret_error on -EINVAL.  NULL: nothing to check. */
        int (*validate)(void *conf, char **ret_error);
        /* Frees what validate built beside the parsed keys (a compiled regex);
         * the keys themselves go with cfg_clear.  NULL: nothing. */
        void (*release)(void *conf);
        /* Fills *ret and returns 0; a negative errno (-ENOMEM) only when no
         * result could be made, *ret then UNKNOWN saying why. */
        int (*run)(const void *conf, const HealthEnv *env, HealthResult *ret);
        /* For `sunkctl health genconf`: add to @out (health_genconf_add())
         * the checks of this type that describe the node under env->root as
         * it is now, each one that --check-config accepts and that passes
         * on this node.  0 with nothing added where the node has nothing of
         * the kind (no InfiniBand); -errno only when nothing could be read.
         * NULL: the type makes no baseline. */
        int (*genconf)(const HealthEnv *env, HealthGenconf *out);
        /* HEALTH_RUNNER_SCRIPT only: the result of a run that ended by
         * itself (not killed, not timed out) from its exit status and
         * output; called on the loop.  NULL: a script's rule (exit 0
         * passes, the last line of output is the detail). */
        void (*judge)(const void *conf, const sunkd_spawn_result *res, HealthResult *ret);
        /* Reads file systems or talks to a daemon: runs in a killable child. */
        bool child;
        /* HEALTH_RUNNER_BUILTIN: `run` above; the others have none, the
         * module runs them by its own means. */
        HealthCheckRunner runner;
} HealthCheckType;

/* Every check type sunkd.yaml may name, NULL-terminated: the built-in ones,
 * then `command`, `script` and `gpu`, which the module runs. */
extern const HealthCheckType *const health_check_types[];
extern const HealthCheckType health_check_mount, health_check_disk_free, health_check_inodes_free,
        health_check_memory, health_check_process, health_check_file, health_check_load, health_check_ib,
        health_check_munge, health_check_process_limit, health_check_user_processes, health_check_tcp_port,
        health_check_command, health_check_cpu, health_check_dmi, health_check_edac, health_check_mce,
        health_check_ethernet, health_check_script, health_check_gpu;

const HealthCheckType *health_check_type_find(const char *name);

/* health_result_set() - fill @ret; detail is printf-style, cut to
 * HEALTH_DETAIL_MAX - 1 and made one line of valid UTF-8 by the rule of
 * util/text-escape.h (control bytes, invalid bytes and '\\' as "\xNN"), as
 * is the code.  A failure's remedy is its code's (health_code_remedy()). */
void health_result_set(HealthResult *ret, HealthStatus status, const char *code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
