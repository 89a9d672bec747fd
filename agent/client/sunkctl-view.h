/* What a module gives sunkctl so that `sunkctl MODULE [VERB]` reads its way:
 * one SunkctlView, exported by the module's render file
 * (modules/<name>/<name>-render.c) as sunkctl_view_<name>.  The build lists
 * the modules that have one (SUNKCTL_VIEWS in their local.mk) and generates
 * sunkctl's table of them (sunkctl-views.c), so sunkctl's own code names no
 * module.  A module without a view is called and shown generically. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include <json-c/json.h>

/* An option of sunkctl that goes with one verb of the module. */
typedef struct SunkctlFlag {
        const char *name; /* the long option without "--" */
        const char *arg;  /* its argument's name in --help ("TEXT"); NULL: none */
        const char *verb; /* the one verb it goes with */
        /* The call's parameter it sets: to the argument, or to true without
         * one.  NULL: the flag picks a view of the answer, passed to the
         * method's render and ok (one view at most). */
        const char *param;
        /* The call waits as long as it takes: --timeout, if given, goes to
         * the method as timeout_usec instead of bounding the call. */
        bool waits;
        const char *help; /* --help's text, after the option */
} SunkctlFlag;
/* A view flag named as its verb ({ "list", NULL, "list", NULL, ... }) also
 * stands for the verb: `sunkctl MODULE --list [KEY=VALUE...]` is
 * `sunkctl MODULE list [KEY=VALUE...]`. */

/* How the answer of one verb is shown. */
typedef struct SunkctlMethodView {
        const char *verb;
        /* @reply for a person on @out; what is missing on @err.  @view: the
         * view flag given, or NULL. */
        void (*render)(json_object *reply, const char *view, FILE *out, FILE *err);
        bool (*ok)(json_object *reply, const char *view); /* false: exit 1; NULL: always true */
} SunkctlMethodView;

typedef struct SunkctlView {
        const char *module;               /* the word on sunkctl's command line */
        const char *interface;            /* NULL: the module's name capitalised (io.sunkd.<Module>) */
        const char *default_verb;         /* what `sunkctl MODULE` alone calls; NULL: none */
        const char *help;                 /* its line in --help's commands; NULL: not listed */
        const SunkctlMethodView *methods; /* ends with an entry without a verb */
        const SunkctlFlag *flags;         /* ends with an entry without a name */
        /* The verbs whose answer sunkctl's -o FILE may write to a file
         * instead of stdout (whole or not at all: sunkctl-output.c);
         * NULL-terminated, or NULL: none. */
        const char *const *output_verbs;
} SunkctlView;

/* The views built in, generated from the modules' lists; NULL-terminated. */
extern const SunkctlView *const sunkctl_views[];
