/* The health module's state, and what its files call of each other.
 * Private to health.la; the library (checks, signal rules, parsers) knows
 * nothing of it.  Loop-only, but for the snapshots a job's work reads. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "checks/health-check.h"
#include "health-count.h"
#include "health-gpu.h"
#include "health-signal.h"
#include "health-xid-policy.h"
#include "sunkd/module.h"

#define CHECKS_MAX 64
#define CHECK_NAME_MAX 32
#define WAITERS_MAX 16

typedef enum Transport {
        TRANSPORT_LIBSLURM,
        TRANSPORT_SCONTROL,
        TRANSPORT_SLURMRESTD,
        TRANSPORT_NONE
} Transport;
typedef enum CheckKind { CHECK_BUILTIN, CHECK_SCRIPT, CHECK_GPU } CheckKind;

typedef struct Check {
        struct State *s;
        CheckKind kind;
        const HealthCheckType *type; /* its row of health_check_types */
        void *conf;                  /* starts with HealthCheckCommon */
        const sunkd_cfg_key *keys;
        size_t n_keys;
        HealthAction action;
        sunkd_job *job;
        sunkd_child *child; /* CHECK_SCRIPT's running script */
        /* the last result and the hysteresis */
        HealthResult last;
        bool have_result;
        HealthCount count; /* the hysteresis */
        HealthDebounce debounce;
        uint64_t last_usec, duration_usec;
} Check;

/* The module's section of sunkd.yaml (health-settings.c). */
typedef struct Conf {
        uint64_t interval_usec;
        char *node_name;
        char *reason_prefix;
        char *transport;
        int64_t fail_after, pass_after, max_drained_pct;
        char *root;
        char *slurm_conf;
        const sunkd_cfg *scontrol; /* borrowed during init only */
        const sunkd_cfg *slurmrestd;
        const sunkd_cfg *xid_policy;
        const sunkd_cfg *memory_policy;
        const sunkd_cfg *checks;
        const sunkd_cfg *actions; /* health-repair.c */
        const sunkd_cfg *repair;
        const sunkd_cfg *debounce;
        const sunkd_cfg *reason_words;
        char *undrain_foreign_token;
} Conf;

#define DEBOUNCE_MAX 32

/* debounce: a code's observations in a row needed at start-up. */
typedef struct DebounceRule {
        char code[HEALTH_CODE_MAX];
        unsigned need;
} DebounceRule;

#define WORDS_MAX 32
#define WORDS_TEXT_MAX 64

/* reason_words: the text a code or a remedy puts in the reason after the prefix. */
typedef struct ReasonWord {
        char key[HEALTH_CODE_MAX];
        char text[WORDS_TEXT_MAX + 1];
} ReasonWord;

#define ACTIONS_MAX 64
#define REPAIR_HISTORY_MAX 16

/* One row of `actions:`: what a finding (by code, or by check) does. */
typedef struct ActionRule {
        char *code;  /* or NULL */
        char *check; /* or NULL */
        char *action;
        char *path; /* script's */
        char **args;
        HealthRepair repair;
} ActionRule;

/* `repair:`, the limits. */
typedef struct RepairConf {
        int64_t max_per_hour; /* per node */
        int64_t max_pct;      /* of the nodes in its partitions under repair at once */
        uint64_t verify_within_usec;
        uint64_t timeout_usec; /* of a reset-gpu or script child */
        char **reset_gpu_command;
} RepairConf;

/* A repair taken: kept in state.json, a reboot's across it. */
typedef enum RepairPhase {
        REPAIR_IDLE,
        REPAIR_RUNNING,   /* its child runs, or its reboot is asked */
        REPAIR_VERIFYING, /* done: the checks decide within verify_within */
} RepairPhase;

typedef struct Repair {
        RepairPhase phase;
        HealthRepair action;
        char check[CHECK_NAME_MAX + 1];
        char code[HEALTH_CODE_MAX];
        char target[64];                      /* reset-gpu's GPU (a PCI bus id) */
        char boot_id[40];                     /* at the reboot's request */
        uint64_t started_usec, ended_usec;    /* CLOCK_REALTIME */
        char reason[HEALTH_REASON_MAX];       /* what the node carries meanwhile */
        uint64_t history[REPAIR_HISTORY_MAX]; /* when the recent ones started */
        size_t n_history;
} Repair;

/* How scontrol is run. */
typedef struct ScontrolConf {
        char *path;
        char *user;
        char *token_file;
        char *jwt_key_file;
        uint64_t jwt_lifetime_usec;
} ScontrolConf;

/* How slurmrestd is asked (health-rest.c). */
typedef struct RestConf {
        char *url;     /* without a trailing '/' */
        char *version; /* "v0.0.40" */
        char *user;
        char *token_file;
        char *jwt_key_file;
        uint64_t jwt_lifetime_usec;
        char *ca_file;
        uint64_t timeout_usec; /* of each request */
} RestConf;

typedef struct Waiter {
        sunkd_call *call;
        uint64_t deadline_usec; /* CLOCK_MONOTONIC */
} Waiter;

typedef struct State {
        sunkd_ctx *ctx;
        Conf conf;
        ScontrolConf sc;
        RestConf rest;
        bool rest_ready; /* libcurl initialised (rest_init) */
        Transport transport;
        char *node_name;
        Check checks[CHECKS_MAX];
        size_t n_checks;
        HealthXidPolicy xid_policy;
        HealthGpuMemoryPolicy memory_policy;
        HealthGpu *gpu; /* the gpu check's judge, if there is one */
        /* what we told slurmctld, kept in state_dir (health-store.c) */
        char set_reason[HEALTH_REASON_MAX];
        char sticky_reason[HEALTH_REASON_MAX];
        char lifted_check[CHECK_NAME_MAX + 1]; /* its drain was resumed by someone else */
        char lifted_reason[HEALTH_REASON_MAX]; /* for this finding */
        /* the signal job */
        sunkd_job *signal_job;
        sunkd_child *signal_child;
        HealthSignal *signal; /* the round in progress */
        HealthWant forced;    /* a Drain or Undrain call's wish, for the next round */
        char forced_reason[HEALTH_REASON_MAX];
        bool forced_sticky; /* no passing check lifts the drain */
        sunkd_call *forced_call;
        char last_outcome[640];
        HealthOutcome outcome;
        bool have_outcome;
        /* drain --wait-idle */
        Waiter waiters[WAITERS_MAX];
        size_t n_waiters;
        bool node_busy;
        /* io.sunkd.Health.Run */
        sunkd_call *run_calls[WAITERS_MAX];
        size_t n_run_calls;
        unsigned run_pending;
        /* repairs (health-repair.c) */
        ActionRule actions[ACTIONS_MAX];
        size_t n_actions;
        RepairConf repair_conf;
        Repair repair;
        sunkd_child *repair_child;
        bool repair_waits; /* the last round found the node busy with a repair due */
        DebounceRule debounce[DEBOUNCE_MAX];
        size_t n_debounce;
        ReasonWord words[WORDS_MAX];
        size_t n_words;
        uint64_t token_seen_usec; /* a foreign reason with undrain_foreign_token, first seen */
        /* io.sunkd.Health.Genconf (health-genconf-job.c) */
        sunkd_job *genconf_job;
        sunkd_call *genconf_calls[WAITERS_MAX];
        size_t n_genconf_calls;
        sunkd_metric *m_result, *m_failing, *m_signals, *m_duration, *m_finding, *m_repairs;
        char *saved; /* the state file as last written */
} State;

/* health-settings.c */
int settings_parse(sunkd_ctx *c, const sunkd_cfg *cfg, State *s);
void settings_clear(State *s);
const char *check_name(const Check *k);

/* health-check-jobs.c */
int health_check_jobs_script_trusted(const char *path, char **ret_error);
int health_check_jobs_add(State *s);
void health_check_jobs_record(Check *k, const HealthResult *res, uint64_t duration_usec);

/* health-judge.c: the wish from the checks, and the signal job */
int health_judge_add_job(State *s);
void health_judge_kick(State *s, const char *why);
void health_judge_token_check(State *s);
void health_judge_apply_outcome(State *s, HealthSignal *sig);
int health_judge_result(const HealthSignal *sig);

/* health-scontrol.c */
int scontrol_start(State *s);
void scontrol_cancel(State *s);

/* health-rest.c: the round on a worker thread */
int rest_init(State *s);
void rest_fini(State *s);
void rest_round(HealthSignal *sig, const RestConf *c, const char *node_name, const sunkd_cancel *cancel);

/* health-repair.c */
int health_repair_parse(State *s, const sunkd_cfg *cfg);
void health_repair_clear(State *s);
void health_repair_fill(State *s, const Check *k, HealthSignal *sig);
void health_repair_outcome(State *s, const HealthSignal *sig);
void health_repair_check(State *s);
uint64_t health_repair_next_usec(const State *s);
json_object *health_repair_to_json(const State *s);
void health_repair_from_json(State *s, json_object *o);
void health_repair_cancel(State *s);

/* health-store.c */
void store_load(State *s);
void store_load_gpu(State *s);
void store_save(State *s);

/* health-methods.c */
int methods_add(State *s);
void methods_answer_waiters(State *s, bool idle, const char *error);
void methods_run_done(State *s);

/* health-genconf-job.c */
int health_genconf_job_add(State *s);
/* io.sunkd.Health.Genconf, root only (methods_add's table) */
int health_genconf_job_method(sunkd_call *call, json_object *params, void *state);

/* health-gpucheck.c */
int gpu_check_spec(State *s, Check *k, sunkd_job_spec *spec);
void methods_forced_done(State *s, const HealthSignal *sig);
int health_status_fill(State *s, json_object *out);
