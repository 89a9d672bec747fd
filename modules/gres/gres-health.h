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

#define GRES_NVLINKS_MAX 18 /* NVML_NVLINK_MAX_LINKS */

/* One NVLink of a GPU: up or down, and its error counters since the driver
 * loaded (-1: not reported). */
typedef struct GresNvLink {
        int up;           /* 0/1 */
        int64_t replay;   /* data-link replays */
        int64_t recovery; /* data-link recoveries (the link retrained) */
        int64_t crc_flit;
        int64_t crc_data;
} GresNvLink;

/* What NVML says of a GPU's state beside its memory: temperature against
 * the board's thresholds, power against its enforced limit, why its clocks
 * are held down, persistence mode, and each NVLink the GPU has.  Read at
 * each discovery, with the same rule as GresHealth: -1 where the driver
 * does not report it.  A MIG instance carries its GPU's. */
typedef struct GresTelemetry {
        bool read;
        int temperature;              /* degrees C, the GPU's die */
        int temperature_slowdown;     /* ... where the board slows its clocks */
        int temperature_shutdown;     /* ... where it shuts down */
        int64_t power_mw;             /* drawn now */
        int64_t power_limit_mw;       /* the enforced limit */
        int64_t clocks_event_reasons; /* nvmlClocksEventReason* bits */
        int persistence_mode;         /* 0/1 */
        unsigned n_links;             /* the links the GPU has (0: no NVLink, or not reported) */
        GresNvLink links[GRES_NVLINKS_MAX];
} GresTelemetry;

/* gres_health_telemetry_unknown() - nothing known: every field -1, no link. */
void gres_health_telemetry_unknown(GresTelemetry *t);

/* gres_health_telemetry_json() - each field reported, "clocks_events" the
 * reasons' names ("hw_slowdown") and "links" each link; NULL on OOM or
 * when @t was not read. */
struct json_object *gres_health_telemetry_json(const GresTelemetry *t);

/* gres_health_json() - each counter the driver reports (a key left out: not
 * reported), and "recovery", the recovery action in words; {} when the
 * driver reports none; NULL on OOM or when @h was not read. */
struct json_object *gres_health_json(const GresHealth *h);

/* gres_health_unknown() - every counter -1, read = false. */
void gres_health_unknown(GresHealth *h);
