/* Builds the sshkey map from a cache of USERS users (default 100000) with
 * two ed25519 keys each, in nsscache's list form; prints the median build
 * time of RUNS (default 5) and the heap the map holds, as
 *   users=N file_mb=N build_ms=N build_min_ms=N build_max_ms=N map_mb=N
 * With -o FILE it only writes that cache to FILE (for make bench's daemon
 * and client figures).
 * Usage: bench-authkeys-map [-o FILE] [USERS [RUNS]] */
#include <malloc.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "modules/authkeys/authkeys-map.h"

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void key(FILE *f, unsigned seed) {
        unsigned char blob[51] = "\0\0\0\x0bssh-ed25519\0\0\0\x20";
        char b64[80];

        for (int i = 0; i < 32; i++)
                blob[19 + i] = (unsigned char) (seed * 2654435761U >> (i % 24));
        EVP_EncodeBlock((unsigned char *) b64, blob, (int) sizeof(blob));
        fprintf(f, "'ssh-ed25519 %s user%u@laptop'", b64, seed);
}

static int cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static void write_cache(FILE *f, unsigned users) {
        for (unsigned u = 0; u < users; u++) {
                fprintf(f, "user%u:[", u);
                key(f, 2 * u);
                fputs(", ", f);
                key(f, 2 * u + 1);
                fputs("]\n", f);
        }
}

int main(int argc, char **argv) {
        const char *out = NULL;
        unsigned users;
        int runs;
        char path[] = "/tmp/bench-authkeys-XXXXXX";
        double t[64];
        size_t heap = 0;
        int fd;
        FILE *f;
        long size;

        if (argc > 2 && strcmp(argv[1], "-o") == 0) {
                out = argv[2];
                argc -= 2;
                argv += 2;
        }
        users = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 100000;
        runs = argc > 2 ? atoi(argv[2]) : 5;
        if (out) {
                f = fopen(out, "we");
                if (!f)
                        return 1;
                write_cache(f, users);
                return fclose(f) == 0 ? 0 : 1;
        }
        fd = mkstemp(path);
        f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f || runs < 1 || runs > 64)
                return 1;
        write_cache(f, users);
        fflush(f);
        size = ftell(f);
        for (int i = 0; i < runs; i++) {
                AuthkeysMap *m = NULL;
                size_t before = mallinfo2().uordblks + mallinfo2().hblkhd;
                double t0 = now_ms();
                int r = authkeys_map_build_file(path, NULL, NULL, NULL, &m);

                t[i] = now_ms() - t0;
                if (r < 0 || authkeys_map_stats(m)->keys != 2 * (size_t) users) {
                        fprintf(stderr, "build failed: %d\n", r);
                        unlink(path);
                        return 1;
                }
                heap = mallinfo2().uordblks + mallinfo2().hblkhd - before;
                authkeys_map_free(m);
        }
        fclose(f);
        unlink(path);
        qsort(t, (size_t) runs, sizeof(double), cmp);
        printf("users=%u file_mb=%.1f build_ms=%.1f build_min_ms=%.1f build_max_ms=%.1f map_mb=%.1f\n",
               users, (double) size / 1e6, t[runs / 2], t[0], t[runs - 1], (double) heap / 1e6);
        return 0;
}
