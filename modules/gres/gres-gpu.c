#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strv.h"
#include "util/text-escape.h"

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
        *g = (GresGpu){};
}

void gres_gpus_free(GresGpu *gpus, size_t n) {
        for (size_t i = 0; i < n; i++)
                gres_gpu_done(&gpus[i]);
        free(gpus);
}

void gres_text_escape(const char *in, char *out, size_t size) {
        size_t len = 0;

        if (size == 0)
                return;
        out[0] = '\0';
        (void) text_escape_append(out, size, &len, in, in ? strlen(in) : 0,
                                  TEXT_ESCAPE_LINE | TEXT_ESCAPE_ASCII);
}

char *gres_text_safe(const char *in) {
        char buf[GRES_TEXT_MAX];

        if (!in)
                return NULL;
        gres_text_escape(in, buf, sizeof(buf));
        return strdup(buf);
}
