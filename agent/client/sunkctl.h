/* sunkctl: what its files share.  Each verb is one call; sunkctl.c picks it. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#include <json-c/json.h>

#define SUNKCTL_SOCKET_DEFAULT "/run/sunkd/io.sunkd"
#define SUNKCTL_FLAGS_MAX 32 /* the modules' views' flags, all together */

typedef struct SunkctlView SunkctlView;
typedef struct SunkctlFlag SunkctlFlag;

/* The exit codes of sunkctl(1). */
enum { EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_UNREACHABLE = 3 };

typedef struct Ctl {
        const char *socket;
        bool json;
        uint64_t timeout_usec;
        bool timeout_set; /* given on the command line: bounds `run` too */
        /* The modules' flags given, by ctl_flag_at()'s index: the argument,
         * "" for a flag without one; NULL: not given. */
        const char *flag_value[SUNKCTL_FLAGS_MAX];
        const char *output; /* -o FILE: the answer goes there */
        bool force;         /* --force: -o may replace a file */
        int fd;
} Ctl;

/* A verb: @argv[0] is its name, @argc counts it.  Returns an exit code. */
typedef int (*VerbFn)(Ctl *c, int argc, char **argv);

/**
 * ctl_call() - make the one call of a verb: connect, call @method with
 * @params (borrowed; NULL = {}).
 * Return: 0 and the reply's parameters in *ret; or, with the error printed,
 * EXIT_UNREACHABLE (no sunkd), EXIT_USAGE (a reload refused for an error in
 * the file) or EXIT_FAILED (any other error reply, a timeout, a reply that
 * could not be read).
 */
int ctl_call(Ctl *c, const char *method, json_object *params, json_object **ret);

/** ctl_print_json() - @reply as --json prints it.  Returns 0. */
int ctl_print_json(json_object *reply);

int verb_status(Ctl *c, int argc, char **argv);
int verb_jobs(Ctl *c, int argc, char **argv);
int verb_run(Ctl *c, int argc, char **argv);
int verb_reload(Ctl *c, int argc, char **argv);
/** print_pending_restart() - a reply's pending_restart keys, one line on @f, if it names any. */
void print_pending_restart(FILE *f, json_object *reply);
int verb_metrics(Ctl *c, int argc, char **argv);
int verb_version(Ctl *c, int argc, char **argv);

/** print_client_version() - sunkctl's version line: its version and module ABI. */
void print_client_version(void);
int verb_ping(Ctl *c, int argc, char **argv);

/**
 * verb_module() - sunkctl MODULE [VERB [KEY=VALUE...]]: io.sunkd.<Module>.<Verb>
 * with the parameters given, its answer shown by the module's renderer if it
 * has one (sunkctl-module.c), else by the generic one (sunkctl-render.c).
 */
int verb_module(Ctl *c, int argc, char **argv);

/* An answer on its way to a file (sunkctl-output.c). */
typedef struct SunkctlOutput {
        const char *path;
        char *tmp; /* beside it, until renamed */
        FILE *f;   /* what the answer is written to */
        bool force;
} SunkctlOutput;

/**
 * output_open() - start writing @path: a temporary file beside it, in @o.
 * Return: 0; or, with the error printed and nothing left behind,
 * EXIT_FAILED (@path exists and @force is false, a directory, a directory
 * that cannot be written) or EXIT_USAGE (an empty name).
 */
int output_open(SunkctlOutput *o, const char *path, bool force);
/** output_commit() - @o's file whole in place (synced, renamed).  Return: 0, or EXIT_FAILED printed. */
int output_commit(SunkctlOutput *o);
/** output_discard() - drop what @o wrote; @path is as it was. */
void output_discard(SunkctlOutput *o);

/** ctl_view() - the view of the module written @module on the command line, or NULL. */
const SunkctlView *ctl_view(const char *module);

/**
 * ctl_flag_at() - the @i-th flag of all the modules' views, its view in
 * *@ret_view (if not NULL); NULL past the last.
 */
const SunkctlFlag *ctl_flag_at(size_t i, const SunkctlView **ret_view);

/**
 * module_method_name() - io.sunkd.<Module>.<Verb> for the words @module and
 * @verb into @buf (@len bytes).
 * Return: 0; -EINVAL (a word that is not [A-Za-z][A-Za-z0-9]* parts joined
 * by '-') or -ENAMETOOLONG, with the word at fault in *ret_bad.
 */
int module_method_name(const char *module, const char *verb, char *buf, size_t len, const char **ret_bad);

/**
 * method_words() - the other way: the words of sunkctl's command line for
 * @method (io.sunkd.Health.Drain: "health" and "drain"; MetricAdd:
 * "metric-add"; a view's interface: its module's word), into @module and
 * @verb (@len bytes each; either may be NULL).  Return: 0, or -EINVAL for a
 * name that is not io.sunkd.<Interface>.<Method>.
 */
int method_words(const char *method, char *module, char *verb, size_t len);
