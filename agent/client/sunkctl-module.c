/* sunkctl MODULE VERB [KEY=VALUE...]: any module's method without code in
 * sunkctl.  The words name io.sunkd.<Module>.<Verb>, each capitalised at
 * its start and after each '-' (gres list: io.sunkd.Gres.List; test
 * metric-add: io.sunkd.Test.MetricAdd); a module whose interface is named
 * otherwise has an alias here.  The answer is shown by the module's own
 * renderer where its output must differ (modules/<name>/<name>-render.c,
 * linked in), else by the generic one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gres/gres-render.h"
#include "health/health-render.h"
#include "prolog/prolog-render.h"
#include "sunkctl-params.h"
#include "sunkctl-render.h"
#include "sunkctl.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "varlink.h"

#define METHOD_PREFIX "io.sunkd."
#define WORD_SHOWN 64 /* of a word an error quotes */

/* Modules whose socket interface is not their name capitalised. */
static const struct {
        const char *module;
        const char *interface;
} aliases[] = {
        { "authkeys", "AuthorizedKeys" },
};

/* The verb `sunkctl MODULE` alone stands for. */
static const struct {
        const char *module;
        const char *verb;
} default_verbs[] = {
        { "gres", "list" },
        { "health", "status" },
        { "prolog", "status" },
};

typedef struct ModuleRenderer {
        const char *method;
        int (*view_from_string)(const char *view); /* NULL view: the default */
        void (*render)(json_object *reply, int view);
        bool (*ok)(json_object *reply, int view); /* false: exit 1 */
} ModuleRenderer;

static void gres_render_stdout(json_object *reply, int view) {
        gres_render(reply, (GresView) view, stdout, stderr);
}

static bool gres_ok(json_object *reply, int view) {
        return gres_render_ok(reply, (GresView) view);
}

static void health_render_stdout(json_object *reply, int view) {
        (void) view;
        health_render(reply, stdout);
}

static bool health_ok(json_object *reply, int view) {
        (void) view;
        return health_render_ok(reply);
}

static void prolog_render_stdout(json_object *reply, int view) {
        (void) view;
        prolog_render(reply, stdout);
}

static const ModuleRenderer renderers[] = {
        { "io.sunkd.Gres.List", gres_view_from_string, gres_render_stdout, gres_ok },
        { "io.sunkd.Health.Status", NULL, health_render_stdout, health_ok },
        { "io.sunkd.Health.Run", NULL, health_render_stdout, health_ok },
        { "io.sunkd.Health.Drain", NULL, health_render_stdout, health_ok },
        { "io.sunkd.Health.Undrain", NULL, health_render_stdout, health_ok },
        { "io.sunkd.Prolog.Status", NULL, prolog_render_stdout, NULL },
};

/* --reason and --wait-idle (health drain) as the call's parameters; with
 * --wait-idle the daemon gets --timeout too, and without one the call
 * waits as long as the node is busy. */
static int add_option_params(Ctl *c, const char *method, json_object *params) {
        bool drain = streq(method, "io.sunkd.Health.Drain");

        if ((c->reason || c->wait_idle) && !drain) {
                fprintf(stderr, "sunkctl: --reason and --wait-idle are for health drain only\n");
                return EXIT_USAGE;
        }
        if (c->reason)
                json_object_object_add(params, "reason", json_object_new_string(c->reason));
        if (c->wait_idle) {
                json_object_object_add(params, "wait_idle", json_object_new_boolean(true));
                if (c->timeout_set)
                        json_object_object_add(params, "timeout_usec", json_object_new_int64((int64_t) c->timeout_usec));
                else
                        c->timeout_usec = 0;
        }
        return 0;
}

/* Append @word to @buf capitalised at its start and after each '-', which
 * goes.  -EINVAL unless @word is [A-Za-z][A-Za-z0-9]* parts joined by '-'. */
static int append_capitalised(char *buf, size_t len, const char *word) {
        size_t n = strlen(buf);
        bool start = true;

        if (!((word[0] >= 'a' && word[0] <= 'z') || (word[0] >= 'A' && word[0] <= 'Z')))
                return -EINVAL;
        for (const char *p = word; *p; p++) {
                char c = *p;

                if (c == '-') {
                        if (start || !p[1])
                                return -EINVAL;
                        start = true;
                        continue;
                }
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
                        return -EINVAL;
                if (n + 1 >= len)
                        return -ENAMETOOLONG;
                buf[n++] = start && c >= 'a' && c <= 'z' ? (char) (c - 'a' + 'A') : c;
                start = false;
        }
        buf[n] = '\0';
        return 0;
}

int module_method_name(const char *module, const char *verb, char *buf, size_t len, const char **ret_bad) {
        const char *interface = NULL;
        int r;

        *ret_bad = module;
        if (len < sizeof(METHOD_PREFIX))
                return -ENAMETOOLONG;
        strcpy(buf, METHOD_PREFIX);
        for (size_t i = 0; i < ELEMENTSOF(aliases); i++)
                if (streq(aliases[i].module, module))
                        interface = aliases[i].interface;
        r = append_capitalised(buf, len, interface ?: module);
        if (r < 0)
                return r;
        *ret_bad = verb;
        if (strlen(buf) + 1 >= len)
                return -ENAMETOOLONG;
        strcat(buf, ".");
        r = append_capitalised(buf, len, verb);
        if (r < 0)
                return r;
        return varlink_method_name_is_valid(buf, strlen(buf)) ? 0 : -ENAMETOOLONG;
}

static const ModuleRenderer *renderer_for(const char *method) {
        for (size_t i = 0; i < ELEMENTSOF(renderers); i++)
                if (streq(renderers[i].method, method))
                        return &renderers[i];
        return NULL;
}

static const char *default_verb(const char *module) {
        for (size_t i = 0; i < ELEMENTSOF(default_verbs); i++)
                if (streq(default_verbs[i].module, module))
                        return default_verbs[i].verb;
        return NULL;
}

/* @word, if any, is quoted cut to WORD_SHOWN bytes. */
static int usage(const char *why, const char *word) {
        size_t n = word ? strlen(word) : 0;

        fprintf(stderr, "sunkctl: %s%.*s%s%s%s\nsunkctl: usage: sunkctl [OPTIONS] MODULE VERB [KEY=VALUE...]\n",
                word ? "'" : "", (int) MIN(n, (size_t) WORD_SHOWN), word ?: "", n > WORD_SHOWN ? "..." : "",
                word ? "': " : "", why);
        return EXIT_USAGE;
}

int verb_module(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *params = NULL, *reply = NULL;
        const char *module = argv[0], *verb = argc > 1 ? argv[1] : default_verb(module);
        const ModuleRenderer *rd;
        const char *bad;
        char method[256], err[256];
        int view = 0, r;

        if (!verb)
                return usage("a module needs a verb", module);
        r = module_method_name(module, verb, method, sizeof(method), &bad);
        if (r < 0)
                return usage(r == -ENAMETOOLONG
                                     ? "too long for a method name"
                                     : "a MODULE or VERB is letters and digits, words joined by -",
                             bad);
        r = params_parse(argv + MIN(argc, 2), (size_t) MAX(argc - 2, 0), &params, err, sizeof(err));
        if (r == -ENOMEM)
                return EXIT_FAILED;
        if (r < 0)
                return usage(err, NULL);
        r = add_option_params(c, method, params);
        if (r)
                return r;
        rd = renderer_for(method);
        if (c->view) {
                view = rd && rd->view_from_string ? rd->view_from_string(c->view) : -EINVAL;
                if (view < 0) {
                        fprintf(stderr, "sunkctl: --slurmd-conf, --check and --block are for gres only\n");
                        return EXIT_USAGE;
                }
        }
        r = ctl_call(c, method, params, &reply);
        if (r)
                return r;
        if (c->json)
                ctl_print_json(reply);
        else if (rd)
                rd->render(reply, view);
        else if (render_reply(stdout, reply) < 0)
                return EXIT_FAILED;
        return rd && rd->ok && !rd->ok(reply, view) ? EXIT_FAILED : 0;
}
