/* sunkctl MODULE VERB [KEY=VALUE...]: any module's method without code in
 * sunkctl.  The words name io.sunkd.<Module>.<Verb>, each capitalised at
 * its start and after each '-' (test metric-add: io.sunkd.Test.MetricAdd);
 * a module whose interface is named otherwise says so in its view.  The
 * answer is shown by the module's view where it has one for the verb
 * (sunkctl-view.h: modules/<name>/<name>-render.c, linked in through the
 * generated table sunkctl_views), else by the generic renderer; the view's
 * flags become the call's parameters or pick how the answer is shown. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sunkctl-params.h"
#include "sunkctl-render.h"
#include "sunkctl-view.h"
#include "sunkctl.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "proto/varlink.h"

#define METHOD_PREFIX "io.sunkd."
#define WORD_SHOWN 64 /* of a word an error quotes */

const SunkctlView *ctl_view(const char *module) {
        for (const SunkctlView *const *v = sunkctl_views; *v; v++)
                if (streq((*v)->module, module))
                        return *v;
        return NULL;
}

const SunkctlFlag *ctl_flag_at(size_t i, const SunkctlView **ret_view) {
        for (const SunkctlView *const *v = sunkctl_views; *v; v++)
                for (const SunkctlFlag *f = (*v)->flags; f && f->name; f++)
                        if (i-- == 0) {
                                if (ret_view)
                                        *ret_view = *v;
                                return f;
                        }
        return NULL;
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
        const SunkctlView *v = ctl_view(module);
        const char *interface = v ? v->interface : NULL;
        int r;

        *ret_bad = module;
        if (len < sizeof(METHOD_PREFIX))
                return -ENAMETOOLONG;
        strcpy(buf, METHOD_PREFIX);
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

static const SunkctlView *view_for_method(const char *method);

/* "MetricAdd" (@n bytes of it) as "metric-add" into @buf. */
static int uncapitalise(const char *word, size_t n, char *buf, size_t len) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                char c = word[i];
                bool upper = c >= 'A' && c <= 'Z';

                if (k + 3 > len)
                        return -ENAMETOOLONG;
                if (upper && i > 0)
                        buf[k++] = '-';
                buf[k++] = upper ? (char) (c - 'A' + 'a') : c;
        }
        buf[k] = '\0';
        return k > 0 ? 0 : -EINVAL;
}

int method_words(const char *method, char *module, char *verb, size_t len) {
        const char *iface = method + strlen(METHOD_PREFIX), *dot;
        const SunkctlView *v;
        int r;

        if (strncmp(method, METHOD_PREFIX, strlen(METHOD_PREFIX)) != 0 || !(dot = strchr(iface, '.')) ||
            strchr(dot + 1, '.'))
                return -EINVAL;
        if (verb && (r = uncapitalise(dot + 1, strlen(dot + 1), verb, len)) < 0)
                return r;
        if (!module)
                return 0;
        v = view_for_method(method);
        if (v) {
                if (strlen(v->module) >= len)
                        return -ENAMETOOLONG;
                strcpy(module, v->module);
                return 0;
        }
        return uncapitalise(iface, (size_t) (dot - iface), module, len);
}

/* Whether @verb of @v's module names @method (words capitalised alike). */
static bool view_verb_is(const SunkctlView *v, const char *verb, const char *method) {
        char buf[256];
        const char *bad;

        return module_method_name(v->module, verb, buf, sizeof(buf), &bad) == 0 && streq(buf, method);
}

/* The view whose interface @method is of, however its module was written. */
static const SunkctlView *view_for_method(const char *method) {
        for (const SunkctlView *const *v = sunkctl_views; *v; v++) {
                char buf[256];
                const char *bad;

                if (module_method_name((*v)->module, "x", buf, sizeof(buf), &bad) == 0 &&
                    strncmp(buf, method, strlen(buf) - 1) == 0)
                        return *v;
        }
        return NULL;
}

static const SunkctlMethodView *method_view(const SunkctlView *v, const char *method) {
        for (const SunkctlMethodView *m = v ? v->methods : NULL; m && m->verb; m++)
                if (view_verb_is(v, m->verb, method))
                        return m;
        return NULL;
}

/* The flags given, into @params (or *ret_view_name, a view flag): each
 * must be one of @v's for @method's verb.  Returns 0 or EXIT_USAGE. */
static int add_flags(Ctl *c, const SunkctlView *v, const char *method, json_object *params,
                     const char **ret_view_name) {
        const SunkctlView *fv;
        const SunkctlFlag *f;

        for (size_t i = 0; (f = ctl_flag_at(i, &fv)); i++) {
                if (!c->flag_value[i])
                        continue;
                if (fv != v || !view_verb_is(fv, f->verb, method)) {
                        fprintf(stderr, "sunkctl: --%s is for %s %s only\n", f->name, fv->module, f->verb);
                        return EXIT_USAGE;
                }
                if (!f->param) {
                        *ret_view_name = f->name;
                        continue;
                }
                json_object_object_add(params, f->param,
                                       f->arg ? json_object_new_string(c->flag_value[i])
                                              : json_object_new_boolean(true));
                if (!f->waits)
                        continue;
                if (c->timeout_set)
                        json_object_object_add(params, "timeout_usec",
                                               json_object_new_int64((int64_t) c->timeout_usec));
                else
                        c->timeout_usec = 0;
        }
        return 0;
}

/* Whether -o may write the answer of @method to a file. */
static bool view_writes(const SunkctlView *v, const char *method) {
        for (const char *const *o = v ? v->output_verbs : NULL; o && *o; o++)
                if (view_verb_is(v, *o, method))
                        return true;
        return false;
}

/* @word, if any, is quoted cut to WORD_SHOWN bytes. */
static int usage(const char *why, const char *word) {
        size_t n = word ? strlen(word) : 0;

        fprintf(stderr,
                "sunkctl: %s%.*s%s%s%s\nsunkctl: usage: sunkctl [OPTIONS] MODULE VERB [KEY=VALUE...]\n",
                word ? "'" : "", (int) MIN(n, (size_t) WORD_SHOWN), word ?: "", n > WORD_SHOWN ? "..." : "",
                word ? "': " : "", why);
        return EXIT_USAGE;
}

/* The verb a flag of @v given stands for (a view flag named as its verb:
 * sunkctl-view.h), or NULL. */
static const char *flag_verb(const Ctl *c, const SunkctlView *v) {
        const SunkctlView *fv;
        const SunkctlFlag *f;

        for (size_t i = 0; (f = ctl_flag_at(i, &fv)); i++)
                if (c->flag_value[i] && fv == v && !f->param && streq(f->name, f->verb))
                        return f->verb;
        return NULL;
}

int verb_module(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *params = NULL, *reply = NULL;
        const char *module = argv[0], *verb = argc > 1 ? argv[1] : NULL;
        const SunkctlView *v = ctl_view(module);
        const SunkctlMethodView *mv;
        const char *bad, *view_name = NULL, *output = c->output;
        char method[256], err[256];
        SunkctlOutput out = {};
        bool ok;
        FILE *f = stdout;
        int r, first = 2; /* the first KEY=VALUE word */

        /* `sunkctl prolog --list KEY=VALUE...`: the flag is the verb */
        if (flag_verb(c, v) && (!verb || strchr(verb, '='))) {
                verb = flag_verb(c, v);
                first = 1;
        }
        if (!verb && v)
                verb = v->default_verb;
        if (!verb)
                return usage("a module needs a verb", module);
        r = module_method_name(module, verb, method, sizeof(method), &bad);
        if (r < 0)
                return usage(r == -ENAMETOOLONG
                                     ? "too long for a method name"
                                     : "a MODULE or VERB is letters and digits, words joined by -",
                             bad);
        r = params_parse(argv + MIN(argc, first), (size_t) MAX(argc - first, 0), &params, err, sizeof(err));
        if (r == -ENOMEM)
                return EXIT_FAILED;
        if (r < 0)
                return usage(err, NULL);
        v = view_for_method(method);
        r = add_flags(c, v, method, params, &view_name);
        if (r)
                return r;
        if (c->force && !output)
                return usage("--force goes with --output", NULL);
        if (output && !view_writes(v, method))
                return usage("--output is not for this verb (sunkctl --help names those it is for)", NULL);
        mv = method_view(v, method);
        /* a file that cannot be written is said before sunkd is asked */
        if (output && (r = output_open(&out, output, c->force)))
                return r;
        if (output)
                f = out.f;
        r = ctl_call(c, method, params, &reply);
        if (r) {
                output_discard(&out);
                return r;
        }
        if (c->json)
                fprintf(f, "%s\n",
                        reply ? json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PRETTY |
                                                                              JSON_C_TO_STRING_SPACED)
                              : "{}");
        else if (mv && mv->render)
                mv->render(reply, view_name, f, stderr);
        else if (render_reply(f, reply) < 0) {
                output_discard(&out);
                return EXIT_FAILED;
        }
        ok = !mv || !mv->ok || mv->ok(reply, view_name);
        if (output && !ok) {
                fprintf(stderr, "sunkctl: '%s' not written: the answer is not whole\n", output);
                output_discard(&out);
        } else if (output)
                return output_commit(&out);
        return ok ? 0 : EXIT_FAILED;
}
