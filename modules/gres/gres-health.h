/* A GPU's memory counters as NVML reports them: memory errors, pending
 * retirements and remaps, the driver's recovery action.  Observations only:
 * read by discovery (gres-nvml.c), shown in io.sunkd.Gres.List and the
 * gres.gpus fact, and judged by the health module's gpu check under its
 * memory policy (gres passes no verdict on them). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct json_object;

/* What NVML says about a GPU's memory and state (whole GPU; a MIG instance
 * carries its GPU's).  -1: the driver does not report it (NOT_SUPPORTED,
 * an older driver without the call, or discovery through /proc). */
typedef struct GresHealth {
        bool read;                         /* through NVML; false: nothing is known */
        int64_t ecc_uncorrected_volatile;  /* since the driver loaded */
        int64_t ecc_uncorrected_aggregate; /* over the GPU's life */
        int retired_pages_pending;         /* 0/1: a page retirement waits for a reset */
        int64_t remapped_rows_uncorrectable;
        int remap_pending;   /* 0/1: a row remap waits for a reset */
        int remap_failure;   /* 0/1: a remap failed: the GPU needs service */
        int recovery_action; /* NVML_GPU_RECOVERY_ACTION_*: 0 none */
} GresHealth;

/* gres_health_json() - each counter the driver reports (a key left out: not
 * reported), and "recovery", the recovery action in words; {} when the
 * driver reports none; NULL on OOM or when @h was not read. */
struct json_object *gres_health_json(const GresHealth *h);

/* gres_health_unknown() - every counter -1, read = false. */
void gres_health_unknown(GresHealth *h);
