/* Builds the sshkey map from a cache of USERS users (default 100000) with
 * two ed25519 keys each, in nsscache's list form; prints the median build
 * time of RUNS (default 5) and the heap the map holds.
 * Usage: bench-authkeys-map [USERS [RUNS]] */
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

int main(int argc, char **argv) {
        unsigned users = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 100000;
        int runs = argc > 2 ? atoi(argv[2]) : 5;
        char path[] = "/tmp/bench-authkeys-XXXXXX";
        double t[64];
        size_t heap = 0;
        int fd = mkstemp(path);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        long size;

        if (!f || runs < 1 || runs > 64)
                return 1;
        for (unsigned u = 0; u < users; u++) {
                fprintf(f, "user%u:[", u);
                key(f, 2 * u);
                fputs(", ", f);
                key(f, 2 * u + 1);
                fputs("]\n", f);
        }
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
        printf("authkeys map: %u users, 2 keys each, file %.1f MB: build median %.1f ms (min %.1f, max %.1f), map heap %.1f MB\n",
               users, (double) size / 1e6, t[runs / 2], t[0], t[runs - 1], (double) heap / 1e6);
        return 0;
}
