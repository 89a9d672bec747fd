/* bench-ping: Ping throughput and latency, one new connection per query.
 *
 * Usage: bench-ping [-t THREADS] [-d SECONDS] [-k] [-m METHOD [-P PARAMS]] SOCKET
 *
 * Each of THREADS threads (default 2) loops for SECONDS (default 3):
 * connect to SOCKET, send io.sunkd.Agent.Ping in Varlink framing (JSON and a
 * NUL), shut down the sending side as sunkd's own one-shot clients do (-k:
 * keep it open, as a client that may send another call would), read up to
 * the reply's NUL, close.  A query's latency runs from
 * socket() to the NUL.  Prints
 *   queries=N errors=N qps=N p50_us=N p99_us=N max_us=N
 * A reply that carries an "error" key counts as an error.  Exit 1 if no
 * query succeeded.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"

#define THREADS_MAX 64
#define REPLY_MAX 4096

/* -m and -P: another method and its parameters (a JSON object). */
static char request[4096] = "{\"method\":\"io.sunkd.Agent.Ping\",\"parameters\":{}}";
static size_t request_size = sizeof("{\"method\":\"io.sunkd.Agent.Ping\",\"parameters\":{}}");
static bool keep_open;

typedef struct Worker {
        pthread_t thread;
        const char *path;
        uint64_t deadline;
        uint32_t *lat; /* microseconds */
        size_t n, cap;
        uint64_t errors;
} Worker;

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static int connect_unix(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/* One query.  Return: 0, or a negative errno (-EPROTO for an error reply). */
static int query(const char *path) {
        _cleanup_close_ int fd = connect_unix(path);
        char buf[REPLY_MAX];
        size_t got = 0;

        if (fd < 0)
                return fd;
        if (send(fd, request, request_size, MSG_NOSIGNAL) != (ssize_t) request_size)
                return -EIO;
        if (!keep_open && shutdown(fd, SHUT_WR) < 0)
                return -errno;
        for (;;) {
                ssize_t k = read(fd, buf + got, sizeof(buf) - 1 - got);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -EIO;
                if (memchr(buf + got, '\0', (size_t) k))
                        break;
                got += (size_t) k;
                if (got >= sizeof(buf) - 1)
                        return -EMSGSIZE;
        }
        return strstr(buf, "\"error\"") ? -EPROTO : 0;
}

static int record(Worker *w, uint64_t usec) {
        if (w->n == w->cap) {
                size_t cap = w->cap ? w->cap * 2 : 65536;
                uint32_t *l = reallocarray(w->lat, cap, sizeof(uint32_t));

                if (!l)
                        return -ENOMEM;
                w->lat = l;
                w->cap = cap;
        }
        w->lat[w->n++] = (uint32_t) (usec > UINT32_MAX ? UINT32_MAX : usec);
        return 0;
}

static void *worker_run(void *userdata) {
        Worker *w = userdata;

        for (;;) {
                uint64_t t0 = now_usec(), t1;

                if (t0 >= w->deadline)
                        break;
                if (query(w->path) < 0) {
                        w->errors++;
                        continue;
                }
                t1 = now_usec();
                if (record(w, t1 - t0) < 0)
                        break;
        }
        return NULL;
}

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

        return x < y ? -1 : x > y;
}

static uint32_t percentile(const uint32_t *v, size_t n, unsigned pct) {
        size_t i = (n * pct + 99) / 100;

        return v[i > 0 ? i - 1 : 0];
}

/* Merges the workers' samples into one sorted array. */
static int merge(Worker *w, unsigned n, uint32_t **ret, size_t *ret_n, uint64_t *ret_errors) {
        size_t total = 0, k = 0;
        uint32_t *all;

        *ret_errors = 0;
        for (unsigned i = 0; i < n; i++) {
                total += w[i].n;
                *ret_errors += w[i].errors;
        }
        all = calloc(total ?: 1, sizeof(uint32_t));
        if (!all)
                return -ENOMEM;
        for (unsigned i = 0; i < n; i++) {
                memcpy(all + k, w[i].lat, w[i].n * sizeof(uint32_t));
                k += w[i].n;
        }
        qsort(all, total, sizeof(uint32_t), cmp_u32);
        *ret = all;
        *ret_n = total;
        return 0;
}

int main(int argc, char *argv[]) {
        Worker w[THREADS_MAX] = {};
        _cleanup_free_ uint32_t *all = NULL;
        unsigned threads = 2;
        double seconds = 3;
        uint64_t start, elapsed, errors;
        size_t n;
        const char *method = NULL, *params = "{}";
        int opt;

        while ((opt = getopt(argc, argv, "t:d:km:P:")) >= 0)
                switch (opt) {
                case 't':
                        threads = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'k':
                        keep_open = true;
                        break;
                case 'm':
                        method = optarg;
                        break;
                case 'P':
                        params = optarg;
                        break;
                case 'd':
                        seconds = strtod(optarg, NULL);
                        break;
                default:
                        return 2;
                }
        if (method) {
                int len = snprintf(request, sizeof(request), "{\"method\":\"%s\",\"parameters\":%s}", method,
                                   params);

                if (len < 0 || (size_t) len >= sizeof(request))
                        return 2;
                request_size = (size_t) len + 1;
        }
        if (optind + 1 != argc || threads < 1 || threads > THREADS_MAX || seconds <= 0) {
                fprintf(stderr,
                        "usage: bench-ping [-t THREADS] [-d SECONDS] [-k] [-m METHOD [-P PARAMS]] SOCKET\n");
                return 2;
        }
        start = now_usec();
        for (unsigned i = 0; i < threads; i++) {
                w[i] = (Worker){ .path = argv[optind], .deadline = start + (uint64_t) (seconds * 1e6) };
                if (pthread_create(&w[i].thread, NULL, worker_run, &w[i]) != 0) {
                        fprintf(stderr, "bench-ping: cannot start a thread\n");
                        return 1;
                }
        }
        for (unsigned i = 0; i < threads; i++)
                pthread_join(w[i].thread, NULL);
        elapsed = now_usec() - start;
        if (merge(w, threads, &all, &n, &errors) < 0)
                return 1;
        for (unsigned i = 0; i < threads; i++)
                free(w[i].lat);
        if (n == 0) {
                fprintf(stderr, "bench-ping: no query succeeded (%" PRIu64 " errors)\n", errors);
                return 1;
        }
        printf("queries=%zu errors=%" PRIu64 " qps=%.0f p50_us=%" PRIu32 " p99_us=%" PRIu32
               " max_us=%" PRIu32 "\n",
               n, errors, (double) n * 1e6 / (double) elapsed, percentile(all, n, 50),
               percentile(all, n, 99), all[n - 1]);
        return 0;
}
