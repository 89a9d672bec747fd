/* bench-spawn: latency of a child process through the SpawnSet, next to
 * plain fork+exec in the same process as the reference.
 *
 * Usage: bench-spawn [-n RUNS] [-m MEGABYTES]
 *
 * First makes MEGABYTES (default 0) of heap resident, the way a daemon with
 * a large cache is.  Then RUNS times (default 300), alternating so that both
 * see the same machine: spawn_start() of /bin/true until its callback has
 * run on the loop, and fork(), execve() of /bin/true, waitpid().  Prints
 *   runs=N rss_kb=N spawn_p50_us=N spawn_p99_us=N fork_p50_us=N fork_p99_us=N
 * Exit 1 if a child fails.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"
#include "util/macro.h"
#include "util/time-util.h"

static const char *const true_argv[] = { "/bin/true", NULL };

typedef struct Run {
        bool done;
        int r, status;
} Run;

static void on_done(void *userdata, int r, const sunkd_spawn_result *res) {
        Run *x = userdata;

        x->done = true;
        x->r = r;
        x->status = r < 0 ? -1 : res->signal ? 128 + res->signal : res->exit_code;
}

static int spawn_once(sd_event *e, SpawnSet *set, uint32_t *ret_usec) {
        static const sunkd_spawn_spec spec = { .size = sizeof(spec), .argv = true_argv, .uid = (uid_t) -1 };
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        Run x = {};
        int r;

        r = spawn_start(set, &spec, on_done, &x, NULL, NULL);
        if (r < 0)
                return r;
        while (!x.done) {
                r = sd_event_run(e, UINT64_MAX);
                if (r < 0)
                        return r;
        }
        *ret_usec = (uint32_t) (now_usec(CLOCK_MONOTONIC) - t0);
        return x.status == 0 ? 0 : -ECHILD;
}

static int fork_once(uint32_t *ret_usec) {
        static char *const envp[] = { NULL };
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        int status;
        pid_t pid;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                execve(true_argv[0], (char *const *) true_argv, envp);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        *ret_usec = (uint32_t) (now_usec(CLOCK_MONOTONIC) - t0);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return (x > y) - (x < y);
}

static uint32_t percentile(uint32_t *v, size_t n, unsigned pct) {
        qsort(v, n, sizeof(*v), cmp_u32);
        return v[MIN(n - 1, n * pct / 100)];
}

static long rss_kb(void) {
        FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        long kb = -1;

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
                        break;
        fclose(f);
        return kb;
}

int main(int argc, char **argv) {
        size_t runs = 300, mb = 0;
        uint32_t *lat_spawn, *lat_fork;
        char *ballast = NULL;
        sd_event *e;
        SpawnSet *set;
        sigset_t ss;
        int opt, r;

        while ((opt = getopt(argc, argv, "n:m:")) >= 0) {
                if (opt == 'n')
                        runs = strtoul(optarg, NULL, 10);
                else if (opt == 'm')
                        mb = strtoul(optarg, NULL, 10);
                else
                        return fprintf(stderr, "usage: bench-spawn [-n RUNS] [-m MEGABYTES]\n"), 2;
        }
        if (runs == 0 || runs > 1000000 || mb > 1024 * 1024)
                return fprintf(stderr, "bench-spawn: bad -n or -m\n"), 2;
        if (mb > 0) {
                ballast = malloc(mb << 20);
                if (!ballast)
                        return fprintf(stderr, "bench-spawn: out of memory\n"), 1;
                memset(ballast, 1, mb << 20);
        }
        lat_spawn = calloc(runs, sizeof(*lat_spawn));
        lat_fork = calloc(runs, sizeof(*lat_fork));
        sigemptyset(&ss);
        sigaddset(&ss, SIGCHLD);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        if (!lat_spawn || !lat_fork || sd_event_new(&e) < 0 || spawn_set_new(e, &set) < 0)
                return fprintf(stderr, "bench-spawn: setup failed\n"), 1;

        for (size_t i = 0; i < runs; i++) {
                r = spawn_once(e, set, &lat_spawn[i]);
                if (r >= 0)
                        r = fork_once(&lat_fork[i]);
                if (r < 0)
                        return fprintf(stderr, "bench-spawn: run %zu: %s\n", i, strerror(-r)), 1;
        }
        printf("runs=%zu rss_kb=%ld spawn_p50_us=%u spawn_p99_us=%u fork_p50_us=%u fork_p99_us=%u\n", runs,
               rss_kb(), percentile(lat_spawn, runs, 50), percentile(lat_spawn, runs, 99),
               percentile(lat_fork, runs, 50), percentile(lat_fork, runs, 99));
        spawn_set_free(set);
        sd_event_unref(e);
        free(lat_spawn);
        free(lat_fork);
        free(ballast);
        return 0;
}
