#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void gres_text_escape(const char *in, char *out, size_t size) {
        size_t o = 0;

        if (size == 0)
                return;
        for (const unsigned char *p = (const unsigned char *) (in ?: ""); *p; p++) {
                bool plain = *p >= 0x20 && *p < 0x7f && *p != '\\';

                if (o + (plain ? 1 : 4) >= size)
                        break;
                if (plain)
                        out[o++] = (char) *p;
                else
                        o += (size_t) snprintf(out + o, size - o, "\\x%02x", *p);
        }
        out[o] = 0;
}

char *gres_text_safe(const char *in) {
        char buf[GRES_TEXT_MAX];

        if (!in)
                return NULL;
        gres_text_escape(in, buf, sizeof(buf));
        return strdup(buf);
}
