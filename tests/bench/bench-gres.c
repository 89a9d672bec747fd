/* bench-gres: GPU discovery through NVML and through the /proc fallback.
 *
 * Usage: bench-gres NVML_LIBRARY PROC_ROOT [RUNS]
 *
 * $FAKE_NVML_CONFIG names the fake NVML's description.  Runs each discovery
 * RUNS times (default 200), alternating, and prints
 *   nvml_gpus=N nvml_p50_us=N proc_gpus=N proc_p50_us=N
 * The NVML figure includes loading and unloading the library, as each run
 * of the module's child does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "modules/gres/gres-nvml.h"
#include "modules/gres/gres-proc.h"

static uint64_t now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static int cmp(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return (x > y) - (x < y);
}

int main(int argc, char **argv) {
        unsigned runs = argc > 3 ? (unsigned) strtoul(argv[3], NULL, 10) : 200;
        uint64_t *tn, *tp;
        size_t nn = 0, np = 0;

        if (argc < 3 || runs == 0 || !(tn = calloc(runs, sizeof(*tn))) ||
            !(tp = calloc(runs, sizeof(*tp)))) {
                fprintf(stderr, "usage: bench-gres NVML_LIBRARY PROC_ROOT [RUNS]\n");
                return 2;
        }
        for (unsigned i = 0; i < runs; i++) {
                GresGpu *g = NULL;
                uint64_t t0 = now_us();

                if (gres_nvml_discover(argv[1], NULL, &g, &nn, NULL) < 0)
                        return 1;
                tn[i] = now_us() - t0;
                gres_gpus_free(g, nn);
                t0 = now_us();
                if (gres_proc_discover(argv[2], &g, &np) < 0)
                        return 1;
                tp[i] = now_us() - t0;
                gres_gpus_free(g, np);
        }
        qsort(tn, runs, sizeof(*tn), cmp);
        qsort(tp, runs, sizeof(*tp), cmp);
        printf("nvml_gpus=%zu nvml_p50_us=%llu proc_gpus=%zu proc_p50_us=%llu\n", nn,
               (unsigned long long) tn[runs / 2], np, (unsigned long long) tp[runs / 2]);
        free(tn);
        free(tp);
        return 0;
}
