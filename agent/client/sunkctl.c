/* sunkctl: ask a running sunkd.
 *
 * A thin client over the control socket: each command is one Varlink call,
 * its reply printed for a person (or as JSON with --json).  The daemon's own
 * verbs have a file each (sunkctl-<verb>.c); `sunkctl MODULE VERB
 * [KEY=VALUE...]` calls any module's method (sunkctl-module.c).  Exit codes:
 * 0 success, 1 the call or the job failed, 2 usage, 3 sunkd not reachable.
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sunkctl-view.h"
#include "sunkctl.h"
#include "util/macro.h"
#include "util/time-util.h"

static const struct {
        const char *name;
        VerbFn fn;
        const char *args; /* one word per argument the verb takes */
        int n_args;       /* -1: any number, checked by the verb */
        const char *help;
} verbs[] = {
        { "status", verb_status, "", 0, "show the daemon and its modules" },
        { "jobs", verb_jobs, "", 0, "list jobs with their last and next runs" },
        { "run", verb_run, "JOB", 1, "run a job now, wait, exit non-zero if it failed" },
        { "reload", verb_reload, "", 0, "re-read the configuration (root)" },
        { "metrics", verb_metrics, "", 0, "print the metrics in Prometheus text format" },
        { "version", verb_version, "", 0, "show client and daemon versions" },
        { "ping", verb_ping, "", 0, "check that sunkd answers" },
};

/* The verbs of @v's view, each once: those it shows its way and those its
 * flags go with. */
static void print_view_verbs(const SunkctlView *v) {
        const char *seen[64];
        size_t n = 0;

        for (const SunkctlMethodView *m = v->methods; m && m->verb && n < ELEMENTSOF(seen); m++)
                seen[n++] = m->verb;
        for (const SunkctlFlag *f = v->flags; f && f->name && n < ELEMENTSOF(seen); f++) {
                bool dup = false;

                for (size_t i = 0; i < n && !dup; i++)
                        dup = streq(seen[i], f->verb);
                if (!dup)
                        seen[n++] = f->verb;
        }
        if (n == 0)
                return;
        printf("                verbs:");
        for (size_t i = 0; i < n; i++)
                printf(" %s%s", seen[i], i + 1 < n ? "," : "");
        printf("\n");
}

static void help(void) {
        char output_verbs[256] = "";

        /* the verbs that take -o, from the views: "health genconf" */
        for (const SunkctlView *const *v = sunkctl_views; *v; v++)
                for (const char *const *o = (*v)->output_verbs; o && *o; o++)
                        snprintf(output_verbs + strlen(output_verbs),
                                 sizeof(output_verbs) - strlen(output_verbs), "%s%s %s",
                                 *output_verbs ? ", " : "", (*v)->module, *o);
        printf("Usage: sunkctl [OPTIONS] COMMAND [ARGS]\n"
               "       sunkctl [OPTIONS] MODULE VERB [KEY=VALUE...]\n\n"
               "Ask the sunkd node agent.\n\nCommands:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                printf("  %-7s %-5s %s\n", verbs[i].name, verbs[i].args, verbs[i].help);
        for (const SunkctlView *const *v = sunkctl_views; *v; v++)
                if ((*v)->help) {
                        printf("  %-13s %s\n", (*v)->module, (*v)->help);
                        print_view_verbs(*v);
                }
        printf("  MODULE VERB [KEY=VALUE...]\n"
               "                call the module's method io.sunkd.<Module>.<Verb>; a wrong VERB is\n"
               "                answered with the module's verbs\n"
               "\nOptions:\n"
               "  -s, --socket=PATH   sunkd's socket (default %s)\n"
               "      --json          print replies as JSON\n"
               "  -t, --timeout=SECS  give up after this long (default 30; run waits for the job unless "
               "given)\n"
               "  -o, --output=FILE   write the answer to FILE, whole or not at all, instead of stdout\n"
               "                      (%s)\n"
               "      --force         with --output: replace FILE if it is there\n",
               SUNKCTL_SOCKET_DEFAULT, output_verbs);
        for (size_t i = 0; ctl_flag_at(i, NULL); i++) {
                const SunkctlFlag *f = ctl_flag_at(i, NULL);
                char opt[64];

                snprintf(opt, sizeof(opt), "--%s%s%s", f->name, f->arg ? "=" : "", f->arg ?: "");
                printf("      %-15s %s\n", opt, f->help);
        }
        printf("  -h, --help          show this help\n"
               "      --version       show the version\n\n"
               "Environment:\n"
               "  SUNKD_SOCKET        sunkd's socket where --socket is not given\n\n"
               "Exit status: 0 success, 1 failure, 2 usage, 3 sunkd not reachable.\n");
}

/* A module's flag, the @i-th: its argument kept; of the flags that pick a
 * view of the answer (SunkctlFlag.param NULL), one at most. */
static int set_flag(Ctl *c, size_t i, const char *arg) {
        const SunkctlView *v;
        const SunkctlFlag *f = ctl_flag_at(i, &v);

        for (size_t k = 0; !f->param && ctl_flag_at(k, NULL); k++) {
                const SunkctlFlag *g = ctl_flag_at(k, NULL);

                if (k != i && !g->param && c->flag_value[k]) {
                        fprintf(stderr, "sunkctl: %s: --%s and --%s do not go together\n", v->module,
                                g->name, f->name);
                        return -EINVAL;
                }
        }
        c->flag_value[i] = arg ?: "";
        return 0;
}

/* The first flag given, or NULL. */
static const SunkctlFlag *flag_given(const Ctl *c, const SunkctlView **ret_view) {
        for (size_t i = 0; ctl_flag_at(i, NULL); i++)
                if (c->flag_value[i])
                        return ctl_flag_at(i, ret_view);
        return NULL;
}

/* Returns -1 to go on, or the exit code. */
static int parse_options(Ctl *c, int argc, char **argv) {
        enum { ARG_JSON = 0x100, ARG_VERSION, ARG_FORCE, ARG_FLAG = 0x200 };
        static const struct option base[] = {
                { "socket", required_argument, NULL, 's' },   { "json", no_argument, NULL, ARG_JSON },
                { "timeout", required_argument, NULL, 't' },  { "output", required_argument, NULL, 'o' },
                { "force", no_argument, NULL, ARG_FORCE },    { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION }
        };
        struct option options[ELEMENTSOF(base) + SUNKCTL_FLAGS_MAX + 1] = {};
        const SunkctlFlag *f;
        size_t n = ELEMENTSOF(base);
        int opt;

        memcpy(options, base, sizeof(base));
        /* the modules' flags after sunkctl's own (the unit test holds them apart) */
        for (size_t i = 0; (f = ctl_flag_at(i, NULL)) && i < SUNKCTL_FLAGS_MAX; i++)
                options[n++] = (struct option){ f->name, f->arg ? required_argument : no_argument, NULL,
                                                ARG_FLAG + (int) i };

        /* Options may follow the command too ("sunkctl status --json"). */
        while ((opt = getopt_long(argc, argv, "s:t:o:h", options, NULL)) >= 0) {
                switch (opt) {
                case 's':
                        c->socket = optarg;
                        break;
                case 't':
                        if (parse_duration(optarg, &c->timeout_usec) < 0) {
                                fprintf(stderr, "sunkctl: --timeout: '%s' is not a duration\n", optarg);
                                return EXIT_USAGE;
                        }
                        c->timeout_set = true;
                        break;
                case ARG_JSON:
                        c->json = true;
                        break;
                case 'o':
                        c->output = optarg;
                        break;
                case ARG_FORCE:
                        c->force = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        print_client_version();
                        return 0;
                default:
                        if (opt >= ARG_FLAG && opt < ARG_FLAG + SUNKCTL_FLAGS_MAX) {
                                if (set_flag(c, (size_t) (opt - ARG_FLAG), optarg) < 0)
                                        return EXIT_USAGE;
                                break;
                        }
                        fprintf(stderr, "Try 'sunkctl --help'.\n");
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                help();
                return EXIT_USAGE;
        }
        return -1;
}

static int dispatch(Ctl *c, int argc, char **argv) {
        const SunkctlView *v;
        const SunkctlFlag *f;

        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                if (!streq(verbs[i].name, argv[0]))
                        continue;
                if (argc - 1 != verbs[i].n_args) {
                        fprintf(stderr, "sunkctl: usage: sunkctl [OPTIONS] %s%s%s\n", verbs[i].name,
                                verbs[i].n_args ? " " : "", verbs[i].args);
                        return EXIT_USAGE;
                }
                f = flag_given(c, &v);
                if (f) {
                        fprintf(stderr, "sunkctl: --%s is for %s %s only\n", f->name, v->module, f->verb);
                        return EXIT_USAGE;
                }
                if (c->output || c->force) {
                        fprintf(stderr, "sunkctl: --%s is not for %s\n", c->output ? "output" : "force",
                                verbs[i].name);
                        return EXIT_USAGE;
                }
                return verbs[i].fn(c, argc, argv);
        }
        return verb_module(c, argc, argv);
}

int main(int argc, char **argv) {
        Ctl c = { .socket = getenv("SUNKD_SOCKET") ?: SUNKCTL_SOCKET_DEFAULT,
                  .timeout_usec = 30 * USEC_PER_SEC,
                  .fd = -1 };
        int r;

        r = parse_options(&c, argc, argv);
        if (r >= 0)
                return r;
        r = dispatch(&c, argc - optind, argv + optind);
        if (c.fd >= 0)
                close(c.fd);
        return r;
}
