/* sunkctl: ask a running sunkd.
 *
 * A thin client over the control socket: each verb is one Varlink call, its
 * reply printed as an aligned table (or raw JSON with --json).  Exit codes:
 * 0 success, 1 the call or the job failed, 2 usage, 3 sunkd not reachable.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

#define SOCKET_DEFAULT "/run/sunkd/io.sunkd"
#define REPLY_MAX (16 * 1024 * 1024)

enum { EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_UNREACHABLE = 3 };

typedef struct Ctl {
        const char *socket;
        bool json;
        bool slurmd_conf, check, block; /* gres only */
        uint64_t timeout_usec;
        bool timeout_set; /* given on the command line: bounds `run` too */
        int fd;
} Ctl;

typedef int (*VerbFn)(Ctl *c, int argc, char **argv);

static const char *jstr(json_object *o, const char *key) {
        json_object *v;
        return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static int64_t jint(json_object *o, const char *key, int64_t def) {
        json_object *v;
        return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : def;
}

static const char *fmt_ago(char *buf, size_t len, int64_t when_usec) {
        char d[FORMAT_DURATION_MAX];
        int64_t now = (int64_t) now_usec(CLOCK_REALTIME);

        if (when_usec <= 0)
                return "-";
        if (llabs(when_usec - now) < (int64_t) USEC_PER_SEC)
                snprintf(buf, len, "just now");
        else if (when_usec <= now)
                snprintf(buf, len, "%s ago", format_duration(d, sizeof(d), (uint64_t) (now - when_usec) / USEC_PER_SEC * USEC_PER_SEC));
        else
                snprintf(buf, len, "in %s", format_duration(d, sizeof(d), (uint64_t) (when_usec - now) / USEC_PER_SEC * USEC_PER_SEC));
        return buf;
}

static const char *fmt_dur(char *buf, size_t len, int64_t usec) {
        if (usec < 0)
                return "-";
        if (usec < (int64_t) USEC_PER_MSEC)
                return "<1ms";
        /* Milliseconds are enough for a human. */
        return format_duration(buf, len, (uint64_t) usec / USEC_PER_MSEC * USEC_PER_MSEC);
}

/* What a person should read for the errors everyone meets. */
static const char *error_hint(const char *error) {
        static const struct {
                const char *error;
                const char *hint;
        } hints[] = {
                { "io.sunkd.PermissionDenied", "permission denied: run as root, or be in the module's allow: list" },
                { "io.sunkd.NoSuchJob", "no such job (sunkctl jobs lists them)" },
                { "org.varlink.service.MethodNotFound", "this sunkd does not know that method (is the module enabled?)" },
                { "io.sunkd.ReloadFailed", "the new configuration was refused; the running one stays" },
        };

        for (size_t i = 0; error && i < ELEMENTSOF(hints); i++)
                if (streq(error, hints[i].error))
                        return hints[i].hint;
        return NULL;
}

/* One call; prints the error and returns an exit code, or 0 with *ret. */
static int call(Ctl *c, const char *method, json_object *params, json_object **ret) {
        _cleanup_free_ char *error = NULL;
        json_object *reply = NULL;
        int r;

        if (c->fd < 0) {
                r = client_connect(c->socket, c->timeout_usec, &c->fd);
                if (r < 0) {
                        fprintf(stderr, "sunkctl: cannot connect to %s: %s: is sunkd running?\n", c->socket, strerror(-r));
                        return EXIT_UNREACHABLE;
                }
        }
        /* Every verb makes one call. */
        r = client_call_last(c->fd, method, params, c->timeout_usec, REPLY_MAX, &reply, &error);
        if (r == -EREMOTEIO && streq_ptr(error, "io.sunkd.ReloadFailed") &&
            json_object_get_boolean(json_object_object_get(reply, "applied"))) {
                fprintf(stderr, "sunkctl: the new configuration is in force, except for %s (%s)\n",
                        jstr(reply, "reason") ?: "some modules", error);
                json_object_put(reply);
                return EXIT_FAILED;
        }
        if (r == -EREMOTEIO && streq_ptr(error, "io.sunkd.ReloadFailed")) {
                /* Nothing changed: a configuration error, as --check-config reports it. */
                fprintf(stderr, "sunkctl: %s: %s (%s)\n", error_hint(error), jstr(reply, "reason") ?: "invalid", error);
                json_object_put(reply);
                return EXIT_USAGE;
        }
        if (r == -EREMOTEIO) {
                const char *hint = error_hint(error), *reason = reply ? jstr(reply, "reason") : NULL;
                if (hint)
                        fprintf(stderr, "sunkctl: %s%s%s (%s)\n", hint, reason ? ": " : "", reason ?: "", error);
                else
                        fprintf(stderr, "sunkctl: %s failed: %s%s%s\n", method, error ?: "unknown error",
                                reply ? " " : "", reply ? json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN) : "");
                json_object_put(reply);
                return EXIT_FAILED;
        }
        if (r < 0) {
                fprintf(stderr, "sunkctl: %s: %s\n", method, strerror(-r));
                return EXIT_FAILED;
        }
        *ret = reply;
        return 0;
}

/* client_call() hands back the reply's parameters. */
static json_object *params_of(json_object *reply) {
        return reply;
}

static int print_json(json_object *reply) {
        json_object *p = params_of(reply);
        printf("%s\n", p ? json_object_to_json_string_ext(p, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED)
                         : "{}");
        return 0;
}

static bool has_suffix(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);
        return n >= k && streq(s + n - k, suffix);
}

/* One "key: value" line of a module's status.  By the convention in
 * sunkd/module.h, *_duration_usec is a duration and any other *_usec a
 * wall-clock time; both are shown for humans. */
static void print_status_value(const char *key, json_object *val) {
        char buf[64];
        const char *text;

        if (json_object_is_type(val, json_type_int) && has_suffix(key, "_usec"))
                text = has_suffix(key, "duration_usec") ? fmt_dur(buf, sizeof(buf), json_object_get_int64(val)) :
                                                          fmt_ago(buf, sizeof(buf), json_object_get_int64(val));
        else if (json_object_is_type(val, json_type_string))
                text = json_object_get_string(val);
        else
                text = json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN);
        printf("  %-18s %s\n", key, text);
}

static int verb_status(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        char d[FORMAT_DURATION_MAX];
        json_object *p, *mods;
        int r;

        r = call(c, "io.sunkd.Agent.Status", NULL, &reply);
        if (r)
                return r;
        if (c->json)
                return print_json(reply);
        p = params_of(reply);
        printf("sunkd %s, pid %" PRId64 ", up %s, %s\n", jstr(p, "version") ?: "?", jint(p, "pid", 0),
               jint(p, "uptime_usec", 0) < (int64_t) USEC_PER_SEC ? "<1s" :
               format_duration(d, sizeof(d), (uint64_t) jint(p, "uptime_usec", 0) / USEC_PER_SEC * USEC_PER_SEC),
               json_object_get_boolean(json_object_object_get(p, "ready")) ? "ready" : "starting");
        printf("config:  %s\nsocket:  %s\n", jstr(p, "config") ?: "-", jstr(p, "socket") ?: "-");
        if (jint(p, "unreaped_runs", 0) > 0) {
                char ago[64];
                printf("unreaped: %" PRId64 " run%s unreaped since %s\n", jint(p, "unreaped_runs", 0),
                       jint(p, "unreaped_runs", 0) == 1 ? "" : "s", fmt_ago(ago, sizeof(ago), jint(p, "unreaped_since_usec", 0)));
        }
        printf("\n");
        printf("%-14s %-9s %-9s %s\n", "MODULE", "STATE", "VERSION", "ERROR");
        if (!json_object_object_get_ex(p, "modules", &mods))
                return 0;
        for (size_t i = 0; i < json_object_array_length(mods); i++) {
                json_object *m = json_object_array_get_idx(mods, i);
                printf("%-14s %-9s %-9s %s\n", jstr(m, "name"), jstr(m, "state"), jstr(m, "version") ?: "-",
                       jstr(m, "error") ?: "");
        }
        /* Then each module's own status, one "key: value" per line. */
        for (size_t i = 0; i < json_object_array_length(mods); i++) {
                json_object *m = json_object_array_get_idx(mods, i), *st;
                if (!json_object_object_get_ex(m, "status", &st) || json_object_object_length(st) == 0)
                        continue;
                printf("\n%s:\n", jstr(m, "name"));
                json_object_object_foreach(st, key, val)
                        print_status_value(key, val);
        }
        return 0;
}

static int verb_jobs(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        json_object *jobs;
        int r;

        r = call(c, "io.sunkd.Agent.Jobs", NULL, &reply);
        if (r)
                return r;
        if (c->json)
                return print_json(reply);
        printf("%-24s %-10s %-10s %-12s %-9s %-8s %-12s %s\n", "JOB", "MODULE", "STATE", "LAST RUN", "DURATION",
               "RESULT", "NEXT RUN", "RUNS/FAILED");
        if (!json_object_object_get_ex(params_of(reply), "jobs", &jobs))
                return 0;
        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                json_object *j = json_object_array_get_idx(jobs, i);
                char last[64], next[64], dur[FORMAT_DURATION_MAX];
                printf("%-24s %-10s %-10s %-12s %-9s %-8s %-12s %" PRId64 "/%" PRId64 "\n", jstr(j, "name"),
                       jstr(j, "module") ?: "-", jstr(j, "state"), fmt_ago(last, sizeof(last), jint(j, "last_start_usec", 0)),
                       fmt_dur(dur, sizeof(dur), jint(j, "last_duration_usec", -1)), jstr(j, "last_result") ?: "-",
                       fmt_ago(next, sizeof(next), jint(j, "next_run_usec", 0)), jint(j, "runs", 0), jint(j, "failures", 0));
        }
        return 0;
}

static int verb_run(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL, *params = NULL;
        char dur[FORMAT_DURATION_MAX];
        const char *result;
        json_object *p;
        int r;

        params = json_object_new_object();
        if (!params)
                return EXIT_FAILED;
        json_object_object_add(params, "job", json_object_new_string(argv[1]));
        json_object_object_add(params, "wait", json_object_new_boolean(true));
        /* The job may legitimately take minutes: wait for it, not the default
         * socket timeout; a --timeout given on the command line still holds. */
        if (!c->timeout_set)
                c->timeout_usec = 0;
        r = call(c, "io.sunkd.Agent.Trigger", params, &reply);
        if (r)
                return r;
        p = params_of(reply);
        result = jstr(p, "result") ?: "unknown";
        if (c->json)
                print_json(reply);
        else if (streq(result, "success"))
                printf("%s: success in %s\n", argv[1], fmt_dur(dur, sizeof(dur), jint(p, "last_duration_usec", 0)));
        else
                printf("%s: failure after %s: %s\n", argv[1], fmt_dur(dur, sizeof(dur), jint(p, "last_duration_usec", 0)),
                       jstr(p, "error") ?: "unknown error");
        return streq(result, "success") ? 0 : EXIT_FAILED;
}

static int verb_reload(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        int r = call(c, "io.sunkd.Agent.Reload", NULL, &reply);

        if (r)
                return r;
        if (c->json)
                return print_json(reply);
        printf("Configuration reloaded.\n");
        return 0;
}

static int verb_metrics(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        int r = call(c, "io.sunkd.Agent.Metrics", NULL, &reply);

        if (r)
                return r;
        if (c->json)
                return print_json(reply);
        fputs(jstr(params_of(reply), "text") ?: "", stdout);
        return 0;
}

static int verb_version(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        json_object *p;
        int r;

        if (!c->json)
                printf("sunkctl %s\n", PACKAGE_VERSION);
        r = call(c, "io.sunkd.Agent.Version", NULL, &reply);
        if (r)
                return r;
        if (c->json)
                return print_json(reply);
        p = params_of(reply);
        printf("sunkd %s (module ABI %" PRId64 ".%" PRId64 ")\n", jstr(p, "version") ?: "?", jint(p, "abi_major", 0),
               jint(p, "abi_minor", 0));
        return 0;
}

static int verb_ping(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        int r = call(c, "io.sunkd.Agent.Ping", NULL, &reply);

        if (r)
                return r;
        if (!c->json)
                printf("pong\n");
        else
                print_json(reply);
        return 0;
}

static void gres_table(json_object *p) {
        json_object *gpus = json_object_object_get(p, "gpus"), *check = json_object_object_get(p, "check");

        printf("source: %s, Gres=%s\ncheck: %s%s%s\n", jstr(p, "source") ?: "?", jstr(p, "gres") ?: "",
               jstr(check, "result") ?: "unknown", jstr(check, "message") ? ": " : "", jstr(check, "message") ?: "");
        if (jstr(p, "topology_block"))
                printf("topology/block: %s\n", jstr(p, "topology_block"));
        else if (jstr(p, "topology_block_error"))
                printf("topology/block: none: %s\n", jstr(p, "topology_block_error"));
        printf("\n");
        printf("%-5s %-5s %-28s %-12s %-8s %-12s %s\n", "INDEX", "MINOR", "TYPE", "BUS", "MEMORY", "CORES", "UUID");
        for (size_t i = 0; gpus && i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                char mem[32];

                /* /proc does not tell the memory: 0 means unknown, not none */
                if (jint(g, "memory", 0) > 0)
                        snprintf(mem, sizeof(mem), "%.0fG", (double) jint(g, "memory", 0) / (1024.0 * 1024 * 1024));
                else
                        snprintf(mem, sizeof(mem), "-");
                printf("%-5" PRId64 " %-5" PRId64 " %-28s %-12s %-8s %-12s %s\n", jint(g, "index", 0), jint(g, "minor", 0),
                       jstr(g, "type") ?: "-", jstr(g, "bus_id") ?: "-", mem, jstr(g, "cores") ?: "-",
                       jstr(g, "uuid") ?: "-");
        }
        /* what NVML reports wrong with a GPU, one line each, after the table */
        for (size_t i = 0, shown = 0; gpus && i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                json_object *problems = json_object_object_get(json_object_object_get(g, "health"), "problems");

                if (!json_object_is_type(problems, json_type_array) || json_object_array_length(problems) == 0)
                        continue;
                printf("%sGPU %" PRId64 " at %s is unhealthy:", shown++ == 0 ? "\n" : "", jint(g, "index", 0),
                       jstr(g, "bus_id") ?: "-");
                for (size_t k = 0; k < json_object_array_length(problems); k++)
                        printf("%s %s", k ? ";" : "", json_object_get_string(json_object_array_get_idx(problems, k)));
                printf("\n");
        }
}

static int verb_gres(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *reply = NULL;
        json_object *p, *check;
        const char *result;
        int r;

        if (c->slurmd_conf + c->check + c->block > 1) {
                fprintf(stderr, "sunkctl: gres: --slurmd-conf, --check and --block do not go together\n");
                return EXIT_USAGE;
        }
        r = call(c, "io.sunkd.Gres.List", NULL, &reply);
        if (r)
                return r;
        p = params_of(reply);
        check = json_object_object_get(p, "check");
        result = jstr(check, "result") ?: "unknown";
        if (c->json)
                print_json(reply);
        else if (c->slurmd_conf) {
                /* What `slurmd -Z --conf "..."` takes; nothing for a node without GPUs. */
                if (jstr(p, "gres") && *jstr(p, "gres"))
                        printf("Gres=%s\n", jstr(p, "gres"));
        } else if (c->check)
                printf("%s: %s\n", result, jstr(check, "message") ?: "");
        else if (c->block) {
                /* This node's line of a topology.conf for topology/block. */
                if (jstr(p, "topology_block"))
                        printf("%s\n", jstr(p, "topology_block"));
                else
                        fprintf(stderr, "sunkctl: gres: no topology/block line: %s\n",
                                jstr(p, "topology_block_error") ?: "the GPUs are in no multi-node NVLink domain");
        } else
                gres_table(p);
        if (c->block && !jstr(p, "topology_block"))
                return EXIT_FAILED;
        return c->check && !streq(result, "match") ? EXIT_FAILED : 0;
}

static const struct {
        const char *name;
        VerbFn fn;
        const char *args; /* one word per argument the verb takes */
        int n_args;
        const char *help;
} verbs[] = {
        { "status", verb_status, "", 0, "show the daemon and its modules" },
        { "jobs", verb_jobs, "", 0, "list jobs with their last and next runs" },
        { "run", verb_run, "JOB", 1, "run a job now, wait, exit non-zero if it failed" },
        { "reload", verb_reload, "", 0, "re-read the configuration (root)" },
        { "metrics", verb_metrics, "", 0, "print the metrics in Prometheus text format" },
        { "version", verb_version, "", 0, "show client and daemon versions" },
        { "ping", verb_ping, "", 0, "check that sunkd answers" },
        { "gres", verb_gres, "", 0, "the GPUs found, as gres.conf and Gres= see them" },
};

static void help(void) {
        printf("Usage: sunkctl [OPTIONS] COMMAND [ARGS]\n\nAsk the sunkd node agent.\n\nCommands:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                printf("  %-7s %-5s %s\n", verbs[i].name, verbs[i].args, verbs[i].help);
        printf("\nOptions:\n"
               "  -s, --socket=PATH   sunkd's socket (default %s)\n"
               "      --json          print replies as JSON\n"
               "  -t, --timeout=SECS  give up after this long (default 30; run waits for the job unless given)\n"
               "      --slurmd-conf   gres: print the Gres= for slurmd -Z --conf\n"
               "      --check         gres: compare with slurm.conf; exit 1 if they differ\n"
               "      --block         gres: print this node's topology/block line (multi-node NVLink)\n"
               "  -h, --help          show this help\n"
               "      --version       show the version\n\n"
               "Exit status: 0 success, 1 failure, 2 usage, 3 sunkd not reachable.\n", SOCKET_DEFAULT);
}

int main(int argc, char **argv) {
        enum { ARG_JSON = 0x100, ARG_VERSION, ARG_SLURMD_CONF, ARG_CHECK, ARG_BLOCK };
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' }, { "json", no_argument, NULL, ARG_JSON },
                { "timeout", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION }, { "slurmd-conf", no_argument, NULL, ARG_SLURMD_CONF },
                { "check", no_argument, NULL, ARG_CHECK }, { "block", no_argument, NULL, ARG_BLOCK }, {}
        };
        Ctl c = { .socket = getenv("SUNKD_SOCKET") ?: SOCKET_DEFAULT, .timeout_usec = 30 * USEC_PER_SEC, .fd = -1 };
        int opt, r;

        /* Options may follow the command too ("sunkctl status --json"). */
        while ((opt = getopt_long(argc, argv, "s:t:h", options, NULL)) >= 0) {
                switch (opt) {
                case 's':
                        c.socket = optarg;
                        break;
                case 't':
                        if (parse_duration(optarg, &c.timeout_usec) < 0) {
                                fprintf(stderr, "sunkctl: --timeout: '%s' is not a duration\n", optarg);
                                return EXIT_USAGE;
                        }
                        c.timeout_set = true;
                        break;
                case ARG_JSON:
                        c.json = true;
                        break;
                case ARG_SLURMD_CONF:
                        c.slurmd_conf = true;
                        break;
                case ARG_CHECK:
                        c.check = true;
                        break;
                case ARG_BLOCK:
                        c.block = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("sunkctl %s\n", PACKAGE_VERSION);
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
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, argv[optind])) {
                        if (argc - optind - 1 != verbs[i].n_args) {
                                fprintf(stderr, "sunkctl: usage: sunkctl [OPTIONS] %s%s%s\n",
                                        verbs[i].name, verbs[i].n_args ? " " : "", verbs[i].args);
                                return EXIT_USAGE;
                        }
                        if ((c.slurmd_conf || c.check || c.block) && verbs[i].fn != verb_gres) {
                                fprintf(stderr, "sunkctl: --slurmd-conf, --check and --block are for gres only\n");
                                return EXIT_USAGE;
                        }
                        r = verbs[i].fn(&c, argc - optind, argv + optind);
                        if (c.fd >= 0)
                                close(c.fd);
                        return r;
                }
        fprintf(stderr, "sunkctl: unknown command '%s'. Try 'sunkctl --help'.\n", argv[optind]);
        return EXIT_USAGE;
}
