/* The prolog module's state, shared by its files (see prolog.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "prolog-dir.h"
#include "prolog-reason.h"
#include "prolog-settings.h"
#include "sunkd/module.h"

/* Runs at once; a node runs a prolog per job, never hundreds. */
#define PROLOG_RUNS_MAX 256
#define PROLOG_KEEP_RUNS_DEFAULT 100
#define PROLOG_KEEP_RUNS_MAX 10000
/* Of a failed script's output, what status keeps (the journal has it all). */
#define PROLOG_HISTORY_OUTPUT_MAX 2048

typedef struct State State;

typedef struct Conf {
        PrologSettings set;
        char *on_daemon_unreachable;
        int64_t keep_runs;
        char *missing_dir; /* "fail" (NULL) or "later" */
} Conf;

typedef enum RunResult {
        RUN_RUNNING,
        RUN_OK,
        RUN_FAILED,
        RUN_ABORTED, /* the client went away: slurmd's own timeout, or a kill */
} RunResult;

typedef struct ScriptResult {
        char *name;
        int r;     /* < 0: it never ran (exec failure, refusal, no time left) */
        char *why; /* r == 0: skipped, and why ("not executable (mode 0644)"); r < 0: the refusal's words */
        int exit_code;
        int signal;
        bool timed_out;
        uint64_t duration_usec;
        char last_line[PROLOG_LAST_LINE_MAX + 1];
} ScriptResult;

typedef struct Run {
        State *s;
        uint64_t id;
        PrologKind kind;
        char job_id[32];
        char **env;
        PrologScript *scripts;
        size_t n_scripts, next;
        ScriptResult *results;
        size_t n_results;
        sunkd_call *call; /* until answered */
        sunkd_child *child;
        uint64_t start_mono, start_real, duration_usec;
        RunResult result;
        bool timed_out; /* a script was stopped by its timeout */
        char *error;    /* the directory could not be listed */
        char reason[PROLOG_REASON_MAX + 1];
        char *failed_output; /* the failed script's last output, bounded */
} Run;

struct State {
        sunkd_ctx *ctx;
        Conf conf;
        char *settings_path;
        Run **runs; /* in flight */
        size_t n_runs;
        Run **history; /* finished, oldest first, at most keep_runs */
        size_t n_history;
        uint64_t next_id;
        bool lingering;
        uint64_t counts[_PROLOG_KIND_MAX][4]; /* runs, failures, timeouts, aborts */
        char *skipped_said[_PROLOG_KIND_MAX]; /* the entries not run, as last logged */
        sunkd_metric *m_runs, *m_failures, *m_timeouts, *m_aborts, *m_duration;
};

/* prolog-conf.c */
int conf_parse(sunkd_ctx *c, const sunkd_cfg *cfg, Conf *conf);
void conf_clear(sunkd_ctx *c, Conf *conf);
int conf_publish(State *s);

/* prolog-run.c */
int methods_add(State *s);
uint64_t runs_linger_usec(State *s);
/* org.varlink.service.InvalidParameter for @param (escaped), saying @why. */
int run_reply_invalid(State *s, sunkd_call *call, const char *param, const char *why);
Run *run_free(Run *run);

/* prolog-list.c: io.sunkd.Prolog.List */
int prolog_list_method(sunkd_call *call, json_object *params, void *state);

/* prolog-history.c */
void history_add(State *s, Run *run);
void history_trim(State *s);
json_object *run_to_json(const Run *run, bool with_output);
int history_method_status(sunkd_call *call, json_object *params, void *state);
void history_free(State *s);
