/* A GPU's health as NVML reports it: memory errors, pending retirements
 * and remaps, the driver's recovery action, XID errors; and what of it
 * makes the GPU unhealthy.  Read by discovery (gres-nvml.c), shown in
 * io.sunkd.Gres.List and the gres.gpus fact for the health module. */
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
        int remap_pending;                 /* 0/1: a row remap waits for a reset */
        int remap_failure;                 /* 0/1: a remap failed: the GPU needs service */
        int recovery_action;               /* NVML_GPU_RECOVERY_ACTION_*: 0 none */
} GresHealth;

/* gres_health_problems() - one line per finding that makes @h unhealthy, a
 * NULL-terminated strv (empty when healthy); NULL on OOM. */
char **gres_health_problems(const GresHealth *h);

/* gres_health_json() - {"healthy": bool, "problems": [...], and each
 * counter the driver reports}; NULL on OOM or when @h was not read. */
struct json_object *gres_health_json(const GresHealth *h);

/* gres_health_unknown() - every counter -1, read = false. */
void gres_health_unknown(GresHealth *h);
