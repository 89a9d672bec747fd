/* sunkctl: ask a running sunkd.
 *
 * A thin client over the control socket: each command is one Varlink call,
 * its reply printed for a person (or as JSON with --json).  The daemon's own
 * verbs have a file each (sunkctl-<verb>.c); `sunkctl MODULE VERB
 * [KEY=VALUE...]` calls any module's method (sunkctl-module.c).  Exit codes:
 * 0 success, 1 the call or the job failed, 2 usage, 3 sunkd not reachable.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

static void help(void) {
        printf("Usage: sunkctl [OPTIONS] COMMAND [ARGS]\n"
               "       sunkctl [OPTIONS] MODULE VERB [KEY=VALUE...]\n\n"
               "Ask the sunkd node agent.\n\nCommands:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                printf("  %-7s %-5s %s\n", verbs[i].name, verbs[i].args, verbs[i].help);
        printf("  gres          the GPUs found, as gres.conf and Gres= see them (gres list)\n"
               "  health        the checks and the node's drain (health status); health run, health drain,\n"
               "                health undrain\n"
               "  MODULE VERB [KEY=VALUE...]\n"
               "                call the module's method io.sunkd.<Module>.<Verb>\n"
               "\nOptions:\n"
               "  -s, --socket=PATH   sunkd's socket (default %s)\n"
               "      --json          print replies as JSON\n"
               "  -t, --timeout=SECS  give up after this long (default 30; run waits for the job unless "
               "given)\n"
               "      --slurmd-conf   gres: print the Gres= for slurmd -Z --conf\n"
               "      --check         gres: compare with slurm.conf; exit 1 if they differ\n"
               "      --block         gres: print this node's topology/block line (multi-node NVLink)\n"
               "      --reason=TEXT   health drain: the reason, after sunkd's prefix\n"
               "      --wait-idle     health drain: return once no job runs on the node (bounded by --timeout)\n"
               "  -h, --help          show this help\n"
               "      --version       show the version\n\n"
               "Exit status: 0 success, 1 failure, 2 usage, 3 sunkd not reachable.\n",
               SUNKCTL_SOCKET_DEFAULT);
}

/* --slurmd-conf, --check, --block: views of gres list, one at most. */
static int set_view(Ctl *c, const char *view) {
        if (c->view && !streq(c->view, view)) {
                fprintf(stderr, "sunkctl: gres: --slurmd-conf, --check and --block do not go together\n");
                return -EINVAL;
        }
        c->view = view;
        return 0;
}

/* Returns -1 to go on, or the exit code. */
static int parse_options(Ctl *c, int argc, char **argv) {
        enum { ARG_JSON = 0x100, ARG_VERSION, ARG_SLURMD_CONF, ARG_CHECK, ARG_BLOCK, ARG_REASON, ARG_WAIT_IDLE };
        static const struct option options[] = { { "socket", required_argument, NULL, 's' },
                                                 { "json", no_argument, NULL, ARG_JSON },
                                                 { "timeout", required_argument, NULL, 't' },
                                                 { "help", no_argument, NULL, 'h' },
                                                 { "version", no_argument, NULL, ARG_VERSION },
                                                 { "slurmd-conf", no_argument, NULL, ARG_SLURMD_CONF },
                                                 { "check", no_argument, NULL, ARG_CHECK },
                                                 { "block", no_argument, NULL, ARG_BLOCK },
                                                 { "reason", required_argument, NULL, ARG_REASON },
                                                 { "wait-idle", no_argument, NULL, ARG_WAIT_IDLE },
                                                 {} };
        int opt;

        /* Options may follow the command too ("sunkctl status --json"). */
        while ((opt = getopt_long(argc, argv, "s:t:h", options, NULL)) >= 0) {
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
                case ARG_SLURMD_CONF:
                case ARG_CHECK:
                case ARG_BLOCK:
                        if (set_view(c, opt == ARG_SLURMD_CONF ? "slurmd-conf"
                                        : opt == ARG_CHECK     ? "check"
                                                               : "block") < 0)
                                return EXIT_USAGE;
                        break;
                case ARG_REASON:
                        c->reason = optarg;
                        break;
                case ARG_WAIT_IDLE:
                        c->wait_idle = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        print_client_version();
                        return 0;
                default:
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
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                if (!streq(verbs[i].name, argv[0]))
                        continue;
                if (argc - 1 != verbs[i].n_args) {
                        fprintf(stderr, "sunkctl: usage: sunkctl [OPTIONS] %s%s%s\n", verbs[i].name,
                                verbs[i].n_args ? " " : "", verbs[i].args);
                        return EXIT_USAGE;
                }
                if (c->view) {
                        fprintf(stderr, "sunkctl: --slurmd-conf, --check and --block are for gres only\n");
                        return EXIT_USAGE;
                }
                if (c->reason || c->wait_idle) {
                        fprintf(stderr, "sunkctl: --reason and --wait-idle are for health drain only\n");
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
