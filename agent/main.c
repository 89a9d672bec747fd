/* sunkd: the node agent.  Always runs in the foreground; systemd and s6
 * supervise it.  Exit codes (sunkd(8)): 0 clean stop, 1 runtime failure,
 * 2 usage or configuration error, 3 temporarily unavailable. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"
#include "manager.h"
#include "spawn.h"
#include "util/cleanup.h"
#include "util/macro.h"

enum {
        EXIT_RUNTIME = 1,
        EXIT_CONFIG = 2,
        EXIT_UNAVAILABLE = 3,
};

typedef struct Args {
        const char *config;
        bool check_config;
        int notify_fd;
} Args;

static void help(void) {
        printf("Usage: sunkd [OPTIONS]\n\n"
               "The sunkd node agent: runs its modules' jobs and answers on its socket.\n\n"
               "  -c, --config=FILE     configuration file (default %s)\n"
               "      --check-config    validate the configuration and the modules' sections, then exit\n"
               "      --notify-fd=N     write a newline to fd N and close it when ready (s6)\n"
               "      --foreground      accepted for compatibility; sunkd never daemonizes\n"
               "  -h, --help            show this help\n"
               "      --version         show the version\n\n"
               "Exit status: 0 stopped cleanly, 1 runtime failure, 2 usage or configuration error,\n"
               "3 temporarily unavailable.  See sunkd(8) and sunkd.yaml(5).\n",
               SUNKD_CONF_DEFAULT);
}

static int parse_args(int argc, char **argv, Args *a) {
        enum { ARG_CHECK = 0x100, ARG_NOTIFY, ARG_FOREGROUND, ARG_VERSION };
        static const struct option options[] = { { "config", required_argument, NULL, 'c' },
                                                 { "check-config", no_argument, NULL, ARG_CHECK },
                                                 { "notify-fd", required_argument, NULL, ARG_NOTIFY },
                                                 { "foreground", no_argument, NULL, ARG_FOREGROUND },
                                                 { "help", no_argument, NULL, 'h' },
                                                 { "version", no_argument, NULL, ARG_VERSION },
                                                 {} };
        char *end;
        long fd;
        int c;

        while ((c = getopt_long(argc, argv, "c:h", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        a->config = optarg;
                        break;
                case ARG_CHECK:
                        a->check_config = true;
                        break;
                case ARG_NOTIFY:
                        errno = 0;
                        fd = strtol(optarg, &end, 10);
                        if (errno || *end || fd < 3 || fd > 1024) {
                                fprintf(stderr,
                                        "sunkd: --notify-fd: '%s' is not a file descriptor number >= 3\n",
                                        optarg);
                                return -EINVAL;
                        }
                        a->notify_fd = (int) fd;
                        break;
                case ARG_FOREGROUND:
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("sunkd %s (module ABI %d.%d)\n", PACKAGE_VERSION, SUNKD_MODULE_ABI_MAJOR,
                               SUNKD_MODULE_ABI_MINOR);
                        return 0;
                default:
                        fprintf(stderr, "Try 'sunkd --help'.\n");
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "sunkd: unexpected argument '%s'. Try 'sunkd --help'.\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

/* Signals are taken through sd-event, so they must be blocked in every
 * thread, which means before the first worker starts. */
static void block_signals(void) {
        sigset_t ss;

        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        sigaddset(&ss, SIGCHLD);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        signal(SIGPIPE, SIG_IGN);
}

static int run(const Args *a) {
        _cleanup_free_ char *error = NULL;
        Config *config = NULL;
        Manager *m = NULL;
        int r, code;

        r = config_load_partial(a->config, &config, &error);
        if (r < 0) {
                log_error_errno(r, "%s", error ?: "Failed to load the configuration");
                /* the module sections' errors too, in the same round */
                if (config && manager_new(config, a->config, -1, &m) >= 0) {
                        (void) manager_check_modules(m);
                        manager_free(m);
                }
                return EXIT_CONFIG;
        }
        log_set_max_level(config->log_level);
        r = manager_new(config, a->config, a->notify_fd, &m);
        if (r < 0)
                return EXIT_RUNTIME;

        /* The same checks as --check-config: a module that cannot be loaded or
         * whose section is wrong is a configuration error, not a runtime one. */
        r = manager_check_modules(m);
        if (r < 0 || a->check_config) {
                manager_free(m);
                if (r < 0)
                        return EXIT_CONFIG;
                printf("Configuration '%s' is valid.\n", a->config);
                return 0;
        }

        r = manager_start(m);
        if (r < 0) {
                code = r == -EADDRINUSE ? EXIT_UNAVAILABLE : r == -ENOTSOCK ? EXIT_CONFIG : EXIT_RUNTIME;
                manager_free(m);
                return code;
        }
        code = manager_run(m);
        log_info("Stopped.");
        /* A job that ignored cancellation still runs module code: end the
         * process here, without freeing (or exit handlers touching) what
         * that thread uses. */
        if (!manager_quiescent(m)) {
                fflush(NULL);
                _exit(code);
        }
        manager_free(m);
        return code;
}

/* glibc raises its mmap and trim thresholds as large blocks are freed (up to
 * 32 MB and 64 MB), after which a worker thread's arena keeps the free top
 * of its heap for good, and malloc_trim() does not release an arena's top.
 * A daemon that builds 20 MB of maps once an hour and then idles would
 * hold them for the rest of its life: fixed thresholds give large blocks
 * their own mappings and hand a freed top back.  Set before any thread
 * exists; a threshold the admin sets in GLIBC_TUNABLES wins. */
static void malloc_tune(void) {
        const char *t = getenv("GLIBC_TUNABLES");

        if (!t || !strstr(t, "glibc.malloc.mmap_threshold"))
                (void) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        if (!t || !strstr(t, "glibc.malloc.trim_threshold"))
                (void) mallopt(M_TRIM_THRESHOLD, 256 * 1024);
}

int main(int argc, char **argv) {
        Args a = { .config = SUNKD_CONF_DEFAULT, .notify_fd = -1 };
        int r;

        /* sunkd run again by a spawn, as the reaper of a program (spawn-reap.c) */
        if (argc > 0 && streq(argv[0], SPAWN_REAP_ARGV0))
                return spawn_reap_main(argc, argv);
        log_open();
        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? EXIT_CONFIG : 0;
        block_signals();
        malloc_tune();
        return run(&a);
}
