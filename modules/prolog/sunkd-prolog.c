/* sunkd-prolog, sunkd-epilog: what slurm.conf's Prolog= and Epilog= name.
 *
 *   Prolog=/usr/libexec/sunkd/sunkd-prolog
 *   Epilog=/usr/libexec/sunkd/sunkd-epilog
 *
 * One program under two names; the name says which directory.  slurmd runs
 * it as root with the job's environment and no arguments.  It hands that
 * environment to sunkd (io.sunkd.Prolog.Run), waits, and exits 0 when every
 * script passed, 1 otherwise.  When a script failed it first asks the health
 * module to drain the node with the script's name as the reason (slurmctld
 * sets its bare "Prolog error" only on a node not drained already).
 *
 * sunkd is unreachable when connecting fails or Ping gets no answer within
 * 2 s (a socket-activated sunkd accepts even while it is not running), or
 * when it answers that the prolog module is not there or is stopping: then
 * the scripts are run here, by the same code's rules (libprolog), or the run
 * fails, as on_daemon_unreachable says.  Once Run has been sent, a lost
 * connection never falls back: scripts may have half run.
 *
 * slurmd ends a client past PrologEpilogTimeout with SIGTERM to its process
 * group and SIGKILL 10 ms later: sunkd sees the connection go and kills the
 * script; a script run here is in a group of its own, killed from the
 * SIGTERM handler.  Problems go to syslog and stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <json-c/json.h>

#include "client/client.h"
#include "prolog-local.h"
#include "prolog-settings.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"

#define SOCKET_DEFAULT SUNKD_RUNSTATEDIR "/sunkd/io.sunkd"
#define SETTINGS_DEFAULT SUNKD_LOCALSTATEDIR "/lib/sunkd/prolog/" PROLOG_SETTINGS_FILE
#define REACH_TIMEOUT_USEC (2 * UINT64_C(1000000))
#define DRAIN_TIMEOUT_USEC (5 * UINT64_C(1000000))
#define REPLY_MAX (4 * 1024 * 1024)

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

extern char **environ;

typedef struct Args {
        const char *socket;
        const char *settings;
        PrologKind kind;
        bool local;
        bool drain;
} Args;

static const char *name_of(PrologKind kind) {
        return kind == PROLOG_KIND_EPILOG ? "sunkd-epilog" : "sunkd-prolog";
}

static void say(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int prio, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsyslog(prio, fmt, ap);
        va_end(ap);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

static void help(PrologKind kind) {
        printf("Usage: %s [OPTIONS]\n\n"
               "Run the %s scripts of the job in this environment through sunkd's prolog\n"
               "module, or here when sunkd cannot be reached. For slurm.conf's Prolog= and\n"
               "Epilog= (installed as sunkd-prolog and sunkd-epilog).\n\n"
               "  -s, --socket PATH    sunkd's socket (default %s)\n"
               "      --settings FILE  the settings sunkd left for running scripts here\n"
               "                       (default %s)\n"
               "      --kind KIND      prolog or epilog, instead of the program's name\n"
               "      --local          always run the scripts here, never through sunkd\n"
               "                       (for PrologFlags=Contain or RunInJob)\n"
               "      --no-drain       on a failure, do not ask sunkd to drain the node\n"
               "  -h, --help           show this help\n"
               "      --version        show the version\n\n"
               "Exit status: 0 when every script passed, 1 when one failed or the run could\n"
               "not be done, 2 usage.\n",
               name_of(kind), prolog_kind_name(kind), SOCKET_DEFAULT, SETTINGS_DEFAULT);
}

static PrologKind kind_from_name(const char *argv0) {
        const char *base = strrchr(argv0, '/');

        base = base ? base + 1 : argv0;
        return strstr(base, "epilog") ? PROLOG_KIND_EPILOG : PROLOG_KIND_PROLOG;
}

static int parse_args(int argc, char **argv, Args *a) {
        enum { ARG_VERSION = 0x100, ARG_SETTINGS, ARG_KIND, ARG_LOCAL, ARG_NO_DRAIN };
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },        { "settings", required_argument, NULL, ARG_SETTINGS },
                { "kind", required_argument, NULL, ARG_KIND },     { "local", no_argument, NULL, ARG_LOCAL },
                { "no-drain", no_argument, NULL, ARG_NO_DRAIN },   { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },     {},
        };
        int opt;

        *a = (Args) { .socket = SOCKET_DEFAULT, .settings = SETTINGS_DEFAULT, .kind = kind_from_name(argv[0]), .drain = true };
        while ((opt = getopt_long(argc, argv, "s:h", options, NULL)) >= 0)
                switch (opt) {
                case 's':
                        a->socket = optarg;
                        break;
                case ARG_SETTINGS:
                        a->settings = optarg;
                        break;
                case ARG_KIND:
                        if (streq(optarg, "prolog"))
                                a->kind = PROLOG_KIND_PROLOG;
                        else if (streq(optarg, "epilog"))
                                a->kind = PROLOG_KIND_EPILOG;
                        else {
                                fprintf(stderr, "%s: --kind takes prolog or epilog, not '%s'\n", name_of(a->kind), optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_LOCAL:
                        a->local = true;
                        break;
                case ARG_NO_DRAIN:
                        a->drain = false;
                        break;
                case 'h':
                        help(a->kind);
                        exit(EXIT_OK);
                case ARG_VERSION:
                        printf("%s %s\n", name_of(a->kind), PACKAGE_VERSION);
                        exit(EXIT_OK);
                default:
                        return -EINVAL;
                }
        if (optind < argc) {
                fprintf(stderr, "%s: takes no arguments (the job's environment says it all)\n", name_of(a->kind));
                return -EINVAL;
        }
        return 0;
}

/* ---- The drain ---- */

static void drain(const Args *a, const char *reason) {
        _cleanup_json_ json_object *params = json_object_new_object(), *reply = NULL;
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        if (!a->drain || !params)
                return;
        json_object_object_add(params, "reason", json_object_new_string(reason));
        json_object_object_add(params, "sticky", json_object_new_boolean(true));
        r = client_connect(a->socket, REACH_TIMEOUT_USEC, &fd);
        if (r >= 0)
                r = client_call_last(fd, "io.sunkd.Health.Drain", params, DRAIN_TIMEOUT_USEC, 0, &reply, &error);
        if (r == -EREMOTEIO && error && streq(error, "org.varlink.service.MethodNotFound"))
                say(LOG_NOTICE, "%s: no health module in sunkd: the node's reason stays Slurm's", name_of(a->kind));
        else if (r == -EREMOTEIO)
                say(LOG_WARNING, "%s: sunkd did not drain the node (%s: %s)", name_of(a->kind), error,
                    json_member_string(reply, "reason") ?: "no reason given");
        else if (r < 0)
                say(LOG_WARNING, "%s: could not ask sunkd to drain the node: %s", name_of(a->kind), strerror(-r));
}

/* ---- Run here ---- */

static void local_logged(void *userdata, const PrologScript *s, int r, const PrologExecResult *res, const char *error) {
        const Args *a = userdata;

        if (r < 0)
                say(LOG_ERR, "%s: %s", name_of(a->kind), error);
        else if (res->signal || res->exit_code)
                say(LOG_WARNING, "%s: script '%s' failed (%s %d%s); its output:\n%s", name_of(a->kind), s->name,
                    res->signal ? "signal" : "exit status", res->signal ?: res->exit_code,
                    res->timed_out ? ", timed out" : "", res->output ?: "");
        else
                syslog(LOG_INFO, "script '%s' passed", s->name);
}

static int run_here(const Args *a, const PrologSettings *set) {
        _cleanup_free_ char *error = NULL;
        char reason[PROLOG_REASON_MAX + 1];
        int r;

        r = prolog_run_local(set, a->kind, environ, local_logged, (void *) a, reason, &error);
        if (r < 0)
                say(LOG_ERR, "%s: %s", name_of(a->kind), error ?: strerror(-r));
        if (r != 0) {
                drain(a, reason);
                return EXIT_FAILED;
        }
        return EXIT_OK;
}

/* ---- Through sunkd ---- */

typedef enum Reach { REACH_OK, REACH_NONE } Reach;

static Reach reach(const Args *a, int *ret_fd) {
        _cleanup_json_ json_object *reply = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        r = client_connect(a->socket, REACH_TIMEOUT_USEC, &fd);
        if (r < 0) {
                say(LOG_WARNING, "%s: sunkd is unreachable at %s: %s", name_of(a->kind), a->socket, strerror(-r));
                return REACH_NONE;
        }
        r = client_call(fd, "io.sunkd.Agent.Ping", NULL, REACH_TIMEOUT_USEC, 0, &reply, NULL);
        if (r < 0) {
                say(LOG_WARNING, "%s: sunkd does not answer at %s: %s", name_of(a->kind), a->socket, strerror(-r));
                return REACH_NONE;
        }
        *ret_fd = TAKE_FD(fd);
        return REACH_OK;
}

static json_object *run_params(PrologKind kind) {
        json_object *p = json_object_new_object(), *env = json_object_new_array();

        if (!p || !env) {
                json_object_put(p);
                json_object_put(env);
                return NULL;
        }
        for (char **e = environ; e && *e; e++)
                json_object_array_add(env, json_object_new_string(*e));
        json_object_object_add(p, "kind", json_object_new_string(prolog_kind_name(kind)));
        json_object_object_add(p, "env", env);
        return p;
}

/* What the Run reply says, said once, and the exit status. */
static int run_result(const Args *a, json_object *reply) {
        const char *result = json_member_string(reply, "result") ?: "unknown";
        const char *reason = json_member_string(reply, "reason");

        if (streq(result, "ok"))
                return EXIT_OK;
        say(LOG_WARNING, "%s of job %s failed: %s", prolog_kind_name(a->kind), json_member_string(reply, "job_id") ?: "-",
            reason ?: result);
        if (reason)
                drain(a, reason);
        return EXIT_FAILED;
}

/* -1: nothing ran (fall back); else the exit status. */
static int run_remote(const Args *a, int fd, uint64_t timeout) {
        _cleanup_json_ json_object *params = run_params(a->kind), *reply = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        if (!params)
                return EXIT_FAILED;
        r = client_call_last(fd, "io.sunkd.Prolog.Run", params, timeout, REPLY_MAX, &reply, &error);
        if (r == 0)
                return run_result(a, reply);
        if (r == -EREMOTEIO && (streq(error, "org.varlink.service.MethodNotFound") || streq(error, "io.sunkd.Unavailable"))) {
                say(LOG_WARNING, "%s: sunkd has no prolog module running (%s)", name_of(a->kind), error);
                return -1;
        }
        if (r == -EREMOTEIO && streq(error, "io.sunkd.InvalidMessage")) {
                char reason[PROLOG_REASON_MAX + 1];

                say(LOG_ERR, "%s: sunkd refused the call (%s): the job's environment (%zu bytes as JSON) is over its "
                    "max_request_size", name_of(a->kind), json_member_string(reply, "reason") ?: "invalid",
                    strlen(json_object_to_json_string(params)));
                snprintf(reason, sizeof(reason), "%s: job environment over sunkd's max_request_size",
                         prolog_kind_name(a->kind));
                drain(a, reason);
                return EXIT_FAILED;
        }
        if (r == -EREMOTEIO)
                say(LOG_ERR, "%s: sunkd refused the run: %s: %s", name_of(a->kind), error,
                    json_member_string(reply, "reason") ?: "");
        else
                say(LOG_ERR, "%s: the connection to sunkd was lost after the run was asked for (%s); its scripts "
                    "may have run in part, so they are not run again here", name_of(a->kind), strerror(-r));
        return EXIT_FAILED;
}

static void on_term(int sig) {
        /* slurmd's SIGKILL follows in 10 ms: the script's group goes now */
        prolog_exec_kill_running();
        _exit(128 + sig);
}

static void signals_setup(void) {
        struct sigaction sa = { .sa_handler = on_term };

        sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGHUP, &sa, NULL);
        (void) signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv) {
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int fd = -1;
        PrologSettings set;
        Args a;
        int r;

        if (parse_args(argc, argv, &a) < 0)
                return EXIT_USAGE;
        openlog(name_of(a.kind), LOG_PID, LOG_DAEMON);
        signals_setup();
        r = prolog_settings_load(a.settings, &set, &error);
        if (r < 0 && r != -ENOENT)
                say(LOG_WARNING, "%s: %s; using the defaults", name_of(a.kind), error ?: strerror(-r));
        if (r < 0) {
                prolog_settings_done(&set);
                if (prolog_settings_default(&set) < 0)
                        return EXIT_FAILED;
        }
        if (!a.local && reach(&a, &fd) == REACH_OK) {
                r = run_remote(&a, fd, set.total_timeout_usec + set.kill_grace_usec + 60 * UINT64_C(1000000));
                if (r >= 0) {
                        prolog_settings_done(&set);
                        return r;
                }
        }
        if (!a.local && set.unreachable_fail) {
                say(LOG_ERR, "%s: sunkd cannot run the %s and on_daemon_unreachable is fail", name_of(a.kind),
                    prolog_kind_name(a.kind));
                prolog_settings_done(&set);
                return EXIT_FAILED;
        }
        if (!a.local)
                say(LOG_NOTICE, "%s: running the %s scripts here", name_of(a.kind), prolog_kind_name(a.kind));
        r = run_here(&a, &set);
        prolog_settings_done(&set);
        return r;
}
