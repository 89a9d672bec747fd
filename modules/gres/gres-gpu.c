#include <stdlib.h>

#include "util/strv.h"

#include "gres-gpu.h"

void gres_gpu_done(GresGpu *g) {
        free(g->name);
        free(g->uuid);
        free(g->bus_id);
        free(g->cpus);
        free(g->cores);
        free(g->fabric);
        free(g->files);
        strv_free(g->peers);
        *g = (GresGpu) {};
}

void gres_gpus_free(GresGpu *gpus, size_t n) {
        for (size_t i = 0; i < n; i++)
                gres_gpu_done(&gpus[i]);
        free(gpus);
}
