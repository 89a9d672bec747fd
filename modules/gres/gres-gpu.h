/* One discovered GPU, as every discovery back-end (NVML, /proc) fills it in
 * and gres-conf renders it.  Plain data: a GresGpu owns its strings. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "gres-health.h"

typedef struct GresGpu {
        unsigned index; /* NVML index: the order CUDA counts in without CUDA_DEVICE_ORDER */
        unsigned minor; /* /dev/nvidia<minor>; may differ from index */
        char *name;     /* as the driver reports it, e.g. "NVIDIA H100 80GB HBM3" */
        char *uuid;
        char *bus_id;   /* normalised "dddd:bb:dd.f", lower case */
        uint64_t memory;
        char *cpus;     /* CPU affinity as a range list of CPU ids, "0-47,96-143"; NULL if unknown */
        char *cores;    /* the same as Slurm's core indexes (gres-topo.h), "0-47"; NULL if unknown */
        char **peers;   /* bus ids at the far end of each active NVLink, one entry per link */
        char *fabric;   /* multi-node NVLink: the fabric's cluster UUID; NULL if not in one */
        /* A MIG instance of a GPU in MIG mode: an entry of its own after its
         * parent's bus id, minor and CPUs, with its profile for a name
         * ("NVIDIA A100_3g.20gb", as Slurm forms it) and its device files. */
        unsigned mig;   /* 0: a whole GPU; else the MIG instance's index + 1 */
        char *files;    /* MultipleFiles=: the GPU's and the GI's and CI's nvidia-caps */
        unsigned clique; /* ... and the clique (NVLink domain) in it */
        GresHealth health;
} GresGpu;

void gres_gpu_done(GresGpu *g);
void gres_gpus_free(GresGpu *gpus, size_t n);
