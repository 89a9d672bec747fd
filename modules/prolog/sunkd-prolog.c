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
 * the scripts are run here, by the same code's rules (libprolog, and
 * libprolog-exec's fork and exec, which the client alone links), or the run
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
#include "prolog-environ.h"
#include "prolog-local.h"
#include "prolog-settings.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"

#define SOCKET_DEFAULT SUNKD_RUNSTATEDIR "/sunkd/io.sunkd"
/* Beside the socket: the module's runtime directory (module.h: runtime_dir). */
#define SETTINGS_BESIDE "<socket's directory>/prolog/" PROLOG_SETTINGS_FILE
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
               name_of(kind), prolog_kind_name(kind), SOCKET_DEFAULT, SETTINGS_BESIDE);
}

static PrologKind kind_from_name(const char *argv0) {
        const char *base = strrchr(argv0, '/');

        base = base ? base + 1 : argv0;
        return strstr(base, "epilog") ? PROLOG_KIND_EPILOG : PROLOG_KIND_PROLOG;
}

static int parse_args(int argc, char **argv, Args *a) {
        enum { ARG_VERSION = 0x100, ARG_SETTINGS, ARG_KIND, ARG_LOCAL, ARG_NO_DRAIN };
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "settings", required_argument, NULL, ARG_SETTINGS },
                { "kind", required_argument, NULL, ARG_KIND },
                { "local", no_argument, NULL, ARG_LOCAL },
                { "no-drain", no_argument, NULL, ARG_NO_DRAIN },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {},
        };
        int opt;

        *a = (Args){ .socket = SOCKET_DEFAULT, .kind = kind_from_name(argv[0]), .drain = true };
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
                                fprintf(stderr, "%s: --kind takes prolog or epilog, not '%s'\n",
                                        name_of(a->kind), optarg);
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
                fprintf(stderr, "%s: takes no arguments (the job's environment says it all)\n",
                        name_of(a->kind));
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
                r = client_call_last(fd, "io.sunkd.Health.Drain", params, DRAIN_TIMEOUT_USEC, 0, &reply,
                                     &error);
        if (r == -EREMOTEIO && error && streq(error, "org.varlink.service.MethodNotFound"))
                say(LOG_NOTICE, "%s: no health module in sunkd: the node's reason stays Slurm's",
                    name_of(a->kind));
        else if (r == -EREMOTEIO)
                say(LOG_WARNING, "%s: sunkd did not drain the node (%s: %s)", name_of(a->kind), error,
                    json_member_string(reply, "reason") ?: "no reason given");
        else if (r < 0)
                say(LOG_WARNING, "%s: could not ask sunkd to drain the node: %s", name_of(a->kind),
                    strerror(-r));
}

/* ---- Run here ---- */

static void local_logged(void *userdata, const PrologScript *s, int r, const PrologExecResult *res,
                         const char *error) {
        const Args *a = userdata;

        if (r < 0)
                say(LOG_ERR, "%s: %s", name_of(a->kind), error);
        else if (s->why)
                say(LOG_WARNING, "%s: script '%s' not run: %s", name_of(a->kind), s->name, s->why);
        else if (res->signal || res->exit_code)
                say(LOG_WARNING, "%s: script '%s' failed (%s %d%s); its output:\n%s", name_of(a->kind),
                    s->name, res->signal ? "signal" : "exit status", res->signal ?: res->exit_code,
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
                say(LOG_WARNING, "%s: sunkd is unreachable at %s: %s", name_of(a->kind), a->socket,
                    strerror(-r));
                return REACH_NONE;
        }
        r = client_call(fd, "io.sunkd.Agent.Ping", NULL, REACH_TIMEOUT_USEC, 0, &reply, NULL);
        if (r < 0) {
                say(LOG_WARNING, "%s: sunkd does not answer at %s: %s", name_of(a->kind), a->socket,
                    strerror(-r));
                return REACH_NONE;
        }
        *ret_fd = TAKE_FD(fd);
        return REACH_OK;
}

/* The job's environment byte for byte (prolog-environ.h): whatever bytes
 * and size slurmd passed, nothing of it can make the call fail. */
static int run_params(PrologKind kind, json_object **ret) {
        _cleanup_json_ json_object *p = json_object_new_object();
        _cleanup_free_ char *block = NULL;
        json_object *e;
        int r;

        if (!p)
                return -ENOMEM;
        r = prolog_environ_encode(environ, &block);
        if (r < 0)
                return r;
        e = json_object_new_string(block);
        if (!e || json_object_object_add(p, "environ", e) < 0) {
                json_object_put(e);
                return -ENOMEM;
        }
        if (json_object_object_add(p, "kind", json_object_new_string(prolog_kind_name(kind))) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

/* What the Run reply says, said once, and the exit status. */
static int run_result(const Args *a, json_object *reply) {
        const char *result = json_member_string(reply, "result") ?: "unknown";
        const char *reason = json_member_string(reply, "reason");

        if (streq(result, "ok"))
                return EXIT_OK;
        say(LOG_WARNING, "%s of job %s failed: %s", prolog_kind_name(a->kind),
            json_member_string(reply, "job_id") ?: "-", reason ?: result);
        if (reason)
                drain(a, reason);
        return EXIT_FAILED;
}

/* Errors sunkd answers before any script ran: the call is not run, and the
 * scripts can be run here instead. */
static bool refused_before_run(const char *error) {
        static const char *const errors[] = {
                "org.varlink.service.MethodNotFound", /* no prolog module */
                "io.sunkd.Unavailable",               /* stopping, or reloading */
                "io.sunkd.InvalidMessage",            /* a limit of sunkd's */
                "org.varlink.service.InvalidParameter",
                "io.sunkd.Prolog.Busy",
                "io.sunkd.TooManyCalls",
        };

        for (size_t i = 0; error && i < ELEMENTSOF(errors); i++)
                if (streq(error, errors[i]))
                        return true;
        return false;
}

/* -1: nothing ran (fall back); else the exit status. */
static int run_remote(const Args *a, int fd, uint64_t timeout) {
        _cleanup_json_ json_object *params = NULL, *reply = NULL;
        _cleanup_free_ char *error = NULL;
        bool sent;
        int r;

        r = run_params(a->kind, &params);
        if (r < 0) {
                say(LOG_ERR, "%s: nothing was sent to sunkd: the job's environment cannot be encoded: %s",
                    name_of(a->kind), strerror(-r));
                return -1;
        }
        r = client_call_last_sent(fd, "io.sunkd.Prolog.Run", params, timeout, REPLY_MAX, &reply, &error,
                                  &sent);
        if (r == 0)
                return run_result(a, reply);
        if (r == -EREMOTEIO && refused_before_run(error)) {
                say(LOG_WARNING, "%s: sunkd ran no script: it answered %s%s%s", name_of(a->kind), error,
                    json_member_string(reply, "reason") ? ": " : "",
                    json_member_string(reply, "reason") ?: "");
                return -1;
        }
        if (r == -EREMOTEIO)
                say(LOG_ERR, "%s: sunkd refused the run: %s: %s", name_of(a->kind), error,
                    json_member_string(reply, "reason") ?: "");
        else if (!sent) {
                say(LOG_WARNING, "%s: nothing was sent to sunkd (%s): no script ran there", name_of(a->kind),
                    strerror(-r));
                return -1;
        } else
                say(LOG_ERR,
                    "%s: the connection to sunkd was lost after the run was asked for (%s); its scripts "
                    "may have run in part, so they are not run again here",
                    name_of(a->kind), strerror(-r));
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

/* sunkd's settings, left beside its socket (or in --settings): what the
 * fallback must run.  Without them the fallback cannot know which
 * directories sunkd.yaml names, so it fails (*@ret_why says why) rather
 * than run defaults that may be nothing; @set then holds the defaults,
 * for the timeouts of a call to sunkd. */
static int settings_load(const Args *a, PrologSettings *set, char **ret_why) {
        _cleanup_free_ char *path = NULL, *error = NULL;
        const char *slash = strrchr(a->socket, '/');
        int r = 0, k;

        if (a->settings)
                path = strdup(a->settings);
        else
                r = asprintf(&path, "%.*s/prolog/%s", slash ? (int) (slash - a->socket) : 1,
                             slash ? a->socket : ".", PROLOG_SETTINGS_FILE);
        if (r < 0)
                path = NULL; /* asprintf() leaves it undefined */
        if (!path)
                return -ENOMEM;
        r = prolog_settings_load(path, set, &error);
        if (r >= 0)
                return 0;
        prolog_settings_done(set);
        if (prolog_settings_default(set) < 0)
                return -ENOMEM;
        if (r == -ENOENT)
                k = asprintf(
                        ret_why,
                        "sunkd has left no settings at %s (its prolog module has not run since the node "
                        "booted, or it listens on another socket), so the directories sunkd.yaml names "
                        "are unknown",
                        path);
        else
                k = asprintf(ret_why, "%s", error ?: strerror(-r));
        if (k < 0) {
                *ret_why = NULL; /* asprintf() leaves it undefined */
                return -ENOMEM;
        }
        return r;
}

int main(int argc, char **argv) {
        _cleanup_free_ char *unknown = NULL;
        _cleanup_close_ int fd = -1;
        PrologSettings set;
        Args a;
        int r;

        if (parse_args(argc, argv, &a) < 0)
                return EXIT_USAGE;
        openlog(name_of(a.kind), LOG_PID, LOG_DAEMON);
        signals_setup();
        r = settings_load(&a, &set, &unknown);
        if (r == -ENOMEM)
                return EXIT_FAILED;
        if (!a.local && reach(&a, &fd) == REACH_OK) {
                r = run_remote(&a, fd,
                               set.total_timeout_usec + set.kill_grace_usec + 60 * UINT64_C(1000000));
                if (r >= 0) {
                        prolog_settings_done(&set);
                        return r;
                }
        }
        if (unknown) {
                say(LOG_ERR, "%s: cannot run the %s scripts here: %s", name_of(a.kind),
                    prolog_kind_name(a.kind), unknown);
                prolog_settings_done(&set);
                return EXIT_FAILED;
        }
        if (!a.local && set.unreachable_fail) {
                say(LOG_ERR, "%s: sunkd cannot run the %s and on_daemon_unreachable is fail",
                    name_of(a.kind), prolog_kind_name(a.kind));
                prolog_settings_done(&set);
                return EXIT_FAILED;
        }
        if (!a.local)
                say(LOG_NOTICE, "%s: running the %s scripts here", name_of(a.kind),
                    prolog_kind_name(a.kind));
        r = run_here(&a, &set);
        prolog_settings_done(&set);
        return r;
}
