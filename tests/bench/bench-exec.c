/* bench-exec: the cost of running a command, as sshd pays it per login.
 *
 * Usage: bench-exec [-n RUNS] -- COMMAND [ARG...] [-- COMMAND [ARG...]]...
 *
 * Runs the commands in turn, RUNS times each (default 2000), interleaved so
 * that a busy moment of the machine weighs on all of them alike: fork,
 * exec with stdout on /dev/null, waitpid.  Prints one line per command,
 *   cmd=N p50_us=N p99_us=N failures=N
 * where a failure is a non-zero exit.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COMMANDS_MAX 8

static uint64_t now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static int cmp(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return (x > y) - (x < y);
}

/* Microseconds from fork to reaping; -1 if it could not run or failed. */
static long run(char **argv, int devnull) {
        uint64_t t0 = now_us();
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return -1;
        if (pid == 0) {
                dup2(devnull, STDOUT_FILENO);
                execv(argv[0], argv);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                return -1;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -1;
        return (long) (now_us() - t0);
}

int main(int argc, char **argv) {
        char **cmd[COMMANDS_MAX];
        uint32_t *lat[COMMANDS_MAX];
        unsigned n_cmd = 0, fails[COMMANDS_MAX] = {}, runs = 2000;
        size_t got[COMMANDS_MAX] = {};
        int i = 1, devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

        if (argc > 2 && strcmp(argv[1], "-n") == 0) {
                runs = (unsigned) strtoul(argv[2], NULL, 10);
                i = 3;
        }
        for (; i < argc; i++)
                if (strcmp(argv[i], "--") == 0 && i + 1 < argc && n_cmd < COMMANDS_MAX) {
                        argv[i] = NULL;
                        cmd[n_cmd++] = argv + i + 1;
                }
        if (n_cmd == 0 || runs == 0 || devnull < 0) {
                fprintf(stderr, "usage: bench-exec [-n RUNS] -- COMMAND [ARG...] [-- COMMAND...]\n");
                return 2;
        }
        for (unsigned c = 0; c < n_cmd; c++)
                if (!(lat[c] = calloc(runs, sizeof(uint32_t))))
                        return 1;
        for (unsigned r = 0; r < runs; r++)
                for (unsigned c = 0; c < n_cmd; c++) {
                        long us = run(cmd[c], devnull);

                        if (us < 0)
                                fails[c]++;
                        else
                                lat[c][got[c]++] = (uint32_t) us;
                }
        for (unsigned c = 0; c < n_cmd; c++) {
                qsort(lat[c], got[c], sizeof(uint32_t), cmp);
                printf("cmd=%u p50_us=%u p99_us=%u failures=%u\n", c, got[c] ? lat[c][got[c] / 2] : 0,
                       got[c] ? lat[c][got[c] * 99 / 100] : 0, fails[c]);
                free(lat[c]);
        }
        return 0;
}
