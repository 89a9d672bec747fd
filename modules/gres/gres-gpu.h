/* One discovered GPU, as every discovery back-end (NVML, /proc) fills it in
 * and gres-conf renders it.  Plain data: a GresGpu owns its strings. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "gres-health.h"

typedef struct GresGpu {
        unsigned index; /* NVML index: the order CUDA counts in without CUDA_DEVICE_ORDER */
        unsigned minor; /* /dev/nvidia<minor>; may differ from index */
        char *name;   /* as the driver reports it, e.g. "NVIDIA H100 80GB HBM3", through gres_text_safe() */
        char *uuid;   /* ... and so is this */
        char *bus_id; /* normalised "dddd:bb:dd.f", lower case */
        uint64_t memory;
        char *cpus;   /* CPU affinity as a range list of CPU ids, "0-47,96-143"; NULL if unknown */
        char *cores;  /* the same as Slurm's core indexes (gres-topo.h), "0-47"; NULL if unknown */
        char **peers; /* bus ids at the far end of each active NVLink, one entry per link */
        char *fabric; /* multi-node NVLink: the fabric's cluster UUID; NULL if not in one */
        /* A MIG instance of a GPU in MIG mode: an entry of its own after its
         * parent's bus id, minor and CPUs, with its profile for a name
         * ("NVIDIA A100_3g.20gb", as Slurm forms it) and its device files. */
        unsigned mig;    /* 0: a whole GPU; else the MIG instance's index + 1 */
        char *files;     /* MultipleFiles=: the GPU's and the GI's and CI's nvidia-caps */
        unsigned clique; /* ... and the clique (NVLink domain) in it */
        GresHealth health;
        GresTelemetry telemetry;
} GresGpu;

/* Text a driver hands over (a name, a UUID, an error message, from NVML or
 * from /proc) leaves the module in JSON answers and facts, which must be
 * UTF-8, in Prometheus labels, in the journal and in gres.conf: a broken or
 * hostile driver must not be able to make any of them invalid.  It goes
 * through sunkd's one rule for outside text (util/text-escape.h) as one
 * line of ASCII: printable ASCII is kept; every other byte (not UTF-8, a
 * control character, anything above 0x7e) and the backslash become "\xHH",
 * so the escape cannot be forged and two broken names stay apart.  NVIDIA's
 * names and UUIDs are ASCII. */
#define GRES_TEXT_MAX 96 /* NVML's name and UUID buffers; longer text is cut */

/* gres_text_escape() - @in as above into @out (at most @size - 1 bytes and a
 * NUL, never ending inside an escape); NULL reads as "". */
void gres_text_escape(const char *in, char *out, size_t size);
/* gres_text_safe() - the same as a new string of at most GRES_TEXT_MAX - 1
 * bytes, or NULL when out of memory or @in is NULL. */
char *gres_text_safe(const char *in);

void gres_gpu_done(GresGpu *g);
void gres_gpus_free(GresGpu *gpus, size_t n);
